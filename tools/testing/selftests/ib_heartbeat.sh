#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The heartbeat notices a link that went silent, and asks only where a
# loss costs something.
#
# 1. Idle: with net.rds.ib.heartbeat_ms and heartbeat_idle_ms both 500 on
#    both hosts, a link cut under an idle connection (nothing in flight,
#    so no send would time out) is declared lost by both hosts within a
#    few seconds, and after the link returns the next message reconnects
#    and arrives.
# 2. At stake: heartbeat_ms 200 on host 2 with heartbeat_idle_ms at its
#    default (30 s; times the time scale), host 1's heartbeat off.  Host 1's link cut under
#    the idle connection: for 4 s (20 intervals of silence) host 2 asks
#    nothing and declares nothing (hb_sent, hb_timeouts +0: nothing at
#    stake, it waits for the idle interval), and its heartbeat work runs
#    at most twice (hb_runs: it is armed for the idle interval, 30 s
#    after the last frame, not every heartbeat_ms; 2 for another
#    connection's work that may come due); then it sends a message, which waits for the peer's ACK:
#    it asks at 200 ms (hb_sent +1 within 10 s: a request whose
#    frame is not acknowledged holds the control slot, so one).  After the
#    link returns the message arrives (retransmitted after the
#    reconnection, once).
. "$(dirname "$0")/lib.sh"

hb=/proc/sys/net/rds/ib/heartbeat_ms
hbi=/proc/sys/net/rds/ib/heartbeat_idle_ms
[ -w $hb ] || { ksft_fail "$hb exists"; ksft_exit; }
[ -w $hbi ] || { ksft_fail "$hbi exists"; ksft_exit; }
gbr=/proc/sys/net/rds/ib/credit_return_ms
saved=$(cat $hb) saved_idle=$(cat $hbi) saved_gbr=$(cat $gbr)
trap 'echo "$saved" > $hb; echo "$saved_idle" > $hbi; echo "$saved_gbr" > $gbr' EXIT
echo 500 > $hb
echo 500 > $hbi
py=$(cat <<'PY'
import os, socket, subprocess, sys
me, peer, role = sys.argv[1], sys.argv[2], sys.argv[3]
def barrier(name, tmo="120"):
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    os.environ["RDS_TEST"] + "." + name, tmo], check=True)
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4400))
s.settimeout(240)
barrier("bound")
# Host 1 tells its shell part about each arrival with a file; "after" is
# shared with the shell parts: the link was cut, the loss detected and the
# link restored.  The third message waits for host 2's shell (a file: a
# barrier's mark is per host, and the shell's own would let it through).
# The sender keeps its socket until the last message arrived: closing
# it would cancel a message still waiting for the connection.
if role == "recv":
    for i in range(3):
        data, addr = s.recvfrom(100)
        assert data == b"hb %d" % i, data
        print("got", data)
        open("/tmp/hb.got%d" % i, "w").close()
    barrier("got2", "240")
else:
    s.sendto(b"hb 0", (peer, 4400))
    barrier("after")
    s.sendto(b"hb 1", (peer, 4400))
    import time
    end = time.time() + 240
    while not os.path.exists("/tmp/hb.go2") and time.time() < end:
        time.sleep(0.05)
    s.sendto(b"hb 2", (peer, 4400))
    barrier("got2", "240")
PY
)
timeouts=$(ib_counter hb_timeouts)
rm -f /tmp/hb.got0 /tmp/hb.got1 /tmp/hb.got2 /tmp/hb.go2
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
if [ "$RDS_HOST" = 1 ]; then
	timeout 400 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" recv > /tmp/hb.out 2>&1 &
	pid=$!
else
	timeout 400 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" send > /tmp/hb.out 2>&1 &
	pid=$!
fi
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 got the first message" wait_for 120 test -e /tmp/hb.got0
fi
barrier got0 150 || ksft_fail "barrier got0"
if [ "$RDS_HOST" = 2 ]; then
	check "host cuts the link" host_request link off
fi
hb_fired() { test "$(ib_counter hb_timeouts)" -gt "$timeouts"; }
check "idle: the heartbeat declared the connection lost" wait_for 30 hb_fired
barrier detected 60 || ksft_fail "barrier detected"
if [ "$RDS_HOST" = 2 ]; then
	check "host restores the link" host_request link on
fi
barrier after 60 || ksft_fail "barrier after"
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 got the second message (after the link returned)" \
		wait_for 120 test -e /tmp/hb.got1
fi
barrier got1 150 || ksft_fail "barrier got1"

# 2. At stake.  Host 2's give-back off: its return of credits (a
# control frame, 2 s after its last data) would go out into the cut and
# hold the control slot (rxe retries for ever), so that no request could
# be sent.  And nothing at stake before the cut: the second message
# acknowledged.
# the connection's line of /proc/net/rds/connections (state, queued,
# unacknowledged), as a comment
conn_line() {
	awk -v p="$RDS_PEER" 'NR == 1 || $2 == p' /proc/net/rds/connections |
		sed 's/^/# /'
}
if [ "$RDS_HOST" = 1 ]; then
	echo 0 > $hb
else
	echo 200 > $hb
	# The idle interval (the default, 30 s) under the time scale: the
	# silence below starts this long after the last frame in, which on
	# a debug kernel (scale 12) was 38 s: past the default, the idle
	# request was due.
	echo "$(scaled 30000)" > $hbi
	echo 0 > $gbr
	acked() { [ "$(awk -v p="$RDS_PEER" '$2 == p && $3 == 0 { print $9 }' /proc/net/rds/connections)" = 0 ]; }
	check "the second message acknowledged" wait_for 10 acked
	conn_line
fi
sent_above() { [ "$(ib_counter hb_sent)" -ge "$1" ]; }
barrier stake 60 || ksft_fail "barrier stake"
# Host 1's link this time: host 2's own NIC stays up, so that its frames
# go out and wait for acknowledgements that never come (its NIC down,
# rxe fails the send at once and the connection ends on that error:
# nothing for the heartbeat to notice).
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 cuts its link" host_request link off
fi
barrier cut2-done 60 || ksft_fail "barrier cut2-done"
if [ "$RDS_HOST" = 2 ]; then
	sent=$(ib_counter hb_sent) lost=$(ib_counter hb_timeouts)
	runs=$(ib_counter hb_runs)
	conn_line
	# The scenario is a silence with nothing at stake: time itself is
	# what it needs (20 intervals of 200 ms).
	sleep 4
	runs1=$(ib_counter hb_runs)
	# (hb_timeouts too: a request sent into the cut holds the control
	# slot, so hb_sent alone could stay still while the heartbeat asks
	# and then declares the loss at 200 ms: the negative module hbidle)
	check "nothing at stake: the heartbeat work ran at most twice in 4 s of silence (heartbeat_ms 200; hb_runs $runs -> $runs1)" \
		test "$runs1" -le $((runs + 2))
	check "nothing at stake: no request in 4 s of silence, no loss declared (heartbeat_ms 200, heartbeat_idle_ms $(cat $hbi); hb_sent $sent -> $(ib_counter hb_sent), hb_timeouts $lost -> $(ib_counter hb_timeouts))" \
		test "$(ib_counter hb_sent)" = "$sent" -a "$(ib_counter hb_timeouts)" = "$lost"
	conn_line
fi
barrier cut2 60 || ksft_fail "barrier cut2"
if [ "$RDS_HOST" = 2 ]; then
	: > /tmp/hb.go2
	check "a message at stake: a request at heartbeat_ms (hb_sent +1)" \
		wait_for 10 sent_above $((sent + 1))
	echo "# hb_sent $sent -> $(ib_counter hb_sent)"
	conn_line
fi
barrier asked 60 || ksft_fail "barrier asked"
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 restores its link" host_request link on
fi
wait $pid
rc=$?
cat /tmp/hb.out
check "every message delivered (one before each cut, one after)" test $rc = 0
dmesg | grep -E 'silent for|connected ::|connection lost' | tail -6 | sed 's/^/# /'
echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
ksft_exit
