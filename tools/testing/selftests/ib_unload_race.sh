#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module is unloaded while an error of the connection's QP comes in
# (issue 15, lead 5).  The unload stops every connection (conn_stop:
# i_down_work cancelled, then the attempt ended, whose drain waits for
# every completion of the QP) and then frees them; an error met during
# that drain (a QP event, a failed completion) queues i_down_work again,
# so the work must be cancelled once more after the drain, before the
# connection is freed (5a53c40; rds_ib_conn_free() cancels it, and so
# does its second call of rds_ib_conn_stop()).  Without both the work is
# left pending on the freed connection (the negative control downwork is
# that build).
#
# Host 1 reloads the module with its shared receive CQ polled from a
# workqueue (ib_rx_poll_wq=1: the handler may sleep, rx_hook.c).
# Host 2 sends a stream of messages to host 1, which has no socket (they
# are dropped there, acknowledged all the same, so that the module can be
# unloaded).  Host 1 arms ib_rx_late_fail_ms (test-only): the handler of
# the next receive sleeps until its connection's attempt begins to end
# (60 s at most), then fails its QP and reports a data-path error whose
# end is due a second later.  Host 1 unloads the module during that
# sleep: rds_ib_conn_free() ends the attempt, whose drain waits for the
# handler, so the errors come in the middle of it and queue i_down_work
# again, pending.  The unload must finish, the event must have been
# logged during it, the kernel must log no report (and nothing may run
# on the freed connection a second later), and the module loads again
# (as usual).
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
if [ ! -e $P/ib_rx_late_fail_ms ]; then
	ksft_skip "unload under a QP error" "module built without RDS_TEST_HOOKS"
	ksft_exit
fi
sender=$(cat <<'PY'
import os, socket, sys, time
me, peer, stop, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4900))
s.setblocking(False)
sent = refused = 0
end = time.time() + secs
while not os.path.exists(stop) and time.time() < end:
    try:
        s.sendto(b"x" * 1024, (peer, 4900))
        sent += 1
    except OSError:
        refused += 1	# the send buffer is full while host 1 is away
        time.sleep(0.01)
    time.sleep(0.002)
print("# sent %d, refused %d" % (sent, refused))
PY
)

if [ "$RDS_HOST" = 1 ]; then
	check "reload with ib_rx_poll_wq=1" rds_reload ib_rx_poll_wq=1
fi
barrier loaded 120 || { ksft_fail "barrier loaded"; ksft_exit; }

if [ "$RDS_HOST" = 2 ]; then
	stop=/tmp/$RDS_TEST.stop
	rm -f "$stop"
	python3 -c "$sender" "$RDS_ADDR" "$RDS_PEER" "$stop" \
		"$(scaled 600)" > /tmp/$RDS_TEST.out 2>&1 &
	pid=$!
	barrier unloaded 600 || ksft_fail "barrier unloaded"
	: > "$stop"
	wait $pid
	check "the sender ran (exit $?)" test $? = 0
	cat /tmp/$RDS_TEST.out
else
	rx=$(ib_counter rx_frames)
	check "host 2's frames arrive" wait_for 60 ib_counter_above rx_frames $((rx + 50))
	echo 60000 > $P/ib_rx_late_fail_ms
	check "a receive handler took the late failure" \
		wait_for 60 file_is $P/ib_rx_late_fail_ms 0
	mark=$(dmesg | wc -l)
	check "rmmod rds while the handler sleeps" timeout "$(scaled 120)" rmmod rds
	check "the QP failed in the middle of the unload" \
		bash -c "dmesg | tail -n +$((mark + 1)) | grep -q 'queue pair error'"
	check "module gone" wait_for 10 test ! -d /sys/module/rds
	# The work a late error queued was due a second after it.
	sleep 2
	check "reload" rds_insmod
	barrier unloaded 600 || ksft_fail "barrier unloaded"
fi
barrier end 120 || ksft_fail "barrier end"
ksft_exit
