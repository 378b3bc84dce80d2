#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lowering net.rds.ib.heartbeat_ms on a healthy idle connection must not
# declare it lost.  The connection is idle under a 10 s heartbeat (no
# request for a sign of life in that time, so silences of several seconds
# are normal), then host 1 lowers the interval to 500 ms: its first tick
# at the new interval sees a silence longer than 5 new intervals.
# The verdict must wait for the peer's answer to a request (before the
# fix it did not: trace.sh's link cut met a connection host 2 had already
# declared lost, "silent for 3152 ms", with the link up).  Only host 1
# lowers the interval: a request from one side is a sign of life to the
# other, so with both at 500 ms whichever host's tick comes first after
# an exchange does all the asking and the other sends none (CI at
# 7ed219e: host 2 "hb_sent 10 -> 10 in 31 s").  Host 2 stays at 60 s and
# never asks (checked: the scenario needs host 1's silence).  Checks:
# host 1 sends requests at the new interval (hb_sent moves by 3); on both hosts
# no heartbeat loss (hb_timeouts, conn_reset unchanged) and the
# connection up all along (/proc/net/rds/connections: state up, its
# seconds in the state cover the test); then the heartbeat off (0) on
# both for 2.5 s: no loss either; then heartbeat_ms 500 with
# heartbeat_idle_ms at its default on both for 2.5 s: the idle connection
# asks nothing (hb_sent +0); and a message still goes through.
. "$(dirname "$0")/lib.sh"

hb=/proc/sys/net/rds/ib/heartbeat_ms
hbi=/proc/sys/net/rds/ib/heartbeat_idle_ms
C=/proc/net/rds/connections
[ -w $hb ] || { ksft_fail "$hb exists"; ksft_exit; }
[ -w $hbi ] || { ksft_fail "$hbi exists"; ksft_exit; }
saved=$(cat $hb) saved_idle=$(cat $hbi)
trap 'echo "$saved" > $hb; echo "$saved_idle" > $hbi' EXIT
# hbw MS: both intervals MS (the connection is idle: nothing at stake
# asks at heartbeat_idle_ms).
hbw() { echo "$1" > $hb; echo "$1" > $hbi; }

# field NAME: this host's line for the peer (TOS 0), column NAME.
field() {
	awk -v me="$RDS_ADDR" -v peer="$RDS_PEER" -v f="$1" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == me && $2 == peer && $3 == 0 { print $(col[f]) }' "$C"
}
pstat() { awk -v n="$1" '$1 == n { print $2 }' /proc/net/rds/stats; }
sent_above() { [ "$(ib_counter hb_sent)" -ge "$1" ]; }

# one MSG: host 2 sends MSG to host 1, which checks it (the socket stays
# open until host 1 has it: a close would cancel it).
one() {
	python3 -c '
import os, socket, sys
me, peer, role, msg, flag = sys.argv[1:6]
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4420))
s.settimeout(120)
open(flag + ".bound." + role, "w").close()
if role == "1":
    data, addr = s.recvfrom(100)
    assert data == msg.encode(), data
    open(flag, "w").close()
else:
    import time
    while not os.path.exists(flag + ".bound.1"):
        time.sleep(0.05)
    s.sendto(msg.encode(), (peer, 4420))
    end = time.time() + 120
    while not os.path.exists(flag) and time.time() < end:
        time.sleep(0.1)
    sys.exit(0 if os.path.exists(flag) else 1)
' "$RDS_ADDR" "$RDS_PEER" "$RDS_HOST" "$1" "$RDS_SHARED/$RDS_TEST.$2"
}

rm -f "$RDS_SHARED/$RDS_TEST".*
# Host 2 at 60 s never asks during the test: a request of its own would
# end host 1's silence before host 1's first tick at the new interval
# (the negative module hbnow passed when host 2 was at 10 s: "hb_sent
# 0 -> 1" on host 2).
if [ "$RDS_HOST" = 1 ]; then
	hbw 10000
else
	hbw 60000
fi
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
check "a first message brings the connection up" one "hb first" first
barrier up 60 || ksft_fail "barrier up"
timeouts=$(ib_counter hb_timeouts)
resets=$(pstat conn_reset)
[ "$(field state)" = up ] || ksft_fail "the connection is up"
# The scenario is an idle stretch: time itself is what it needs.  4 s:
# every tick armed at the old 2 s interval has run and re-armed at 10 s
# (60 s on host 2), none asked (the silence was under 10 s).
sleep 4
barrier idle 60 || ksft_fail "barrier idle"
sent=$(ib_counter hb_sent)
t0=$(date +%s)
if [ "$RDS_HOST" = 1 ]; then
	hbw 500
	# The next tick (10 s at most away) sees 4 s or more of silence,
	# more than 5 new intervals.  3 requests at 500 ms: the verdict of
	# the first silence and two more have passed.
	check "requests for a sign of life at the new interval (hb_sent +3)" \
		wait_for 30 sent_above $((sent + 3))
	echo "# hb_sent $sent -> $(ib_counter hb_sent) in $(( $(date +%s) - t0 )) s"
fi
# host 2 answers host 1's requests until host 1 has counted them
barrier asked 60 || ksft_fail "barrier asked"
# Host 2's own request would have ended host 1's silence early (the
# negative module hbnow then passes): the scenario held only if it sent
# none.
[ "$RDS_HOST" = 1 ] ||
	check "host 2 asked nothing, host 1's silence was its own (hb_sent $sent -> $(ib_counter hb_sent))" \
		test "$(ib_counter hb_sent)" = "$sent"
check "no heartbeat loss (hb_timeouts $timeouts -> $(ib_counter hb_timeouts))" \
	test "$(ib_counter hb_timeouts)" = "$timeouts"
check "no connection reset (conn_reset $resets -> $(pstat conn_reset))" \
	test "$(pstat conn_reset)" = "$resets"
check "the connection stayed up ($(field state) for $(field secs) s)" \
	test "$(field state)" = up -a "$(field secs)" -ge $(( $(date +%s) - t0 ))
barrier checked 60 || ksft_fail "barrier checked"
# 0 turns the heartbeat off: its work still runs every second and must
# judge nothing (2.5 s: two runs or more), then back to 2 s.
echo 0 > $hb
sleep 2.5
check "heartbeat off: no loss (hb_timeouts $timeouts -> $(ib_counter hb_timeouts))" \
	test "$(ib_counter hb_timeouts)" = "$timeouts"
# heartbeat_ms 500 with heartbeat_idle_ms at its default: an idle
# connection asks nothing (2.5 s: 5 intervals of silence at 500 ms;
# the same settings but the idle interval asked 3 times above).  The
# default times the time scale: on the 6.12 debug kernel (scale 12) the
# last frame in was more than 30 s old by then, and the idle request due.
echo 500 > $hb
echo "$(scaled 30000)" > $hbi
sent=$(ib_counter hb_sent)
barrier idle-default 60 || ksft_fail "barrier idle-default"
sleep 2.5
check "idle, heartbeat_idle_ms $(cat $hbi): no request at heartbeat_ms 500 (hb_sent $sent -> $(ib_counter hb_sent))" \
	test "$(ib_counter hb_sent)" = "$sent"
hbw 2000
barrier off 60 || ksft_fail "barrier off"
check "a second message goes through" one "hb second" second
dmesg | grep -E 'silent for|connection lost' | tail -4 | sed 's/^/# /'
ksft_exit
