#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An attempt ends while receive completions of its QP wait in the device's
# shared receive CQ (issue 15, lead 3).  The CQ's handler reads the QP of
# each completion (wc->qp): the QP may be destroyed only once every one of
# its completions was handled (srq.c, rds_ib_srq_conn_drain()).  Before
# that fix only the send queue was drained and the handler read a freed
# QP: KASAN on a debug kernel (the negative control stalerx is that build,
# tools/testing/neg-controls.sh --debug).
#
# Host 1 reloads the module with its shared receive CQ polled from a
# workqueue (the test-only ib_rx_poll_wq), and a verifying rds-stress runs
# between the hosts.  Each round, host 1 arms ib_rx_fail_ms: the handler
# of the next receive completion fails its QP (the attempt ends) and then
# sleeps 300 ms (times the time scale) while the peer's frames go on
# landing in the CQ.  That completion, and those queued behind it, must
# be handled as stale (stale_rx) before the QP is destroyed; the
# connection comes back, the verifier sees nothing lost or duplicated
# and the kernel logs no report.
# ROUNDS (a plan word, 3 by default) such resets.
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
stress=$RDS_BUILD/rds-stress/rds-stress
rounds=${ROUNDS:-3}
out=/tmp/$RDS_TEST.out
js=$RDS_OUT/$RDS_TEST.json
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make rds-stress"; ksft_exit; }
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
if [ ! -e $P/ib_rx_fail_ms ]; then
	ksft_skip "stale receive completions" "module built without RDS_TEST_HOOKS"
	ksft_exit
fi

if [ "$RDS_HOST" = 1 ]; then
	check "reload with ib_rx_poll_wq=1" rds_reload ib_rx_poll_wq=1
fi
barrier loaded 120 || { ksft_fail "barrier loaded"; ksft_exit; }

# Host 2's rds-stress (active) runs until host 1 has done its rounds
# (barrier rounds), then stops on SIGINT: the last requests are drained
# and verified as at the end of -T.
if [ "$RDS_HOST" = 2 ]; then
	barrier stale-up 60 || ksft_fail "barrier stale-up"
	timeout -k 10 "$(scaled 900)" "$stress" -r "$RDS_ADDR" -s "$RDS_PEER" \
		-p 4500 --json "$js" -t 2 -d 16 -q 4096 -a 256 -T "$(scaled 800)" \
		--drain-timeout "$(scaled 120)" > "$out" 2>&1 &
	pid=$!
	barrier rounds 300 || ksft_fail "barrier rounds"
	# SIGINT to rds-stress itself: timeout would pass one on to it and
	# send another to its process group (rds-stress gives up on a second).
	pkill -INT -P $pid rds-stress
	wait $pid
	stress_rc=$?
	sed 's/^/# /' "$out" | tail -n 8
	check "rds-stress (active): every message verified" test "$stress_rc" = 0
else
	timeout -k 10 "$(scaled 900)" "$stress" -r "$RDS_ADDR" \
		-p 4500 --json "$js" > "$out" 2>&1 &
	pid=$!
	stress_passive_up stale 4500
	stale0=$(ib_counter stale_rx) drains0=$(ib_counter rx_drains)
	for i in $(seq 1 "$rounds"); do
		rx=$(ib_counter rx_frames)
		check "round $i: frames flow" \
			wait_for 60 ib_counter_above rx_frames $((rx + 100))
		resets=$(ib_counter resets) connects=$(ib_counter connects)
		stale=$(ib_counter stale_rx)
		# The attempt's end must have run within the sleep (or the
		# negative control stalerx would not have destroyed the QP yet).
		echo "$(( 300 * ${RDS_TIME_SCALE:-1} ))" > $P/ib_rx_fail_ms
		check "round $i: a receive handler failed its QP" \
			wait_for 60 file_is $P/ib_rx_fail_ms 0
		check "round $i: host 1 reset the connection" \
			wait_for 60 ib_counter_above resets "$resets"
		check "round $i: the connection came back" \
			wait_for 120 ib_counter_above connects "$connects"
		n=$(( $(ib_counter stale_rx) - stale ))
		check "round $i: completions of the ended attempt handled as stale ($n)" \
			test "$n" -ge 1
	done
	echo 0 > $P/ib_rx_fail_ms
	barrier rounds 300 || ksft_fail "barrier rounds"
	wait $pid
	stress_rc=$?
	sed 's/^/# /' "$out" | tail -n 8
	check "rds-stress (passive): every message verified" test "$stress_rc" = 0
	echo "# stale_rx +$(( $(ib_counter stale_rx) - stale0 )), rx_drains +$(( $(ib_counter rx_drains) - drains0 )) over $rounds resets"
fi
barrier done 300 || ksft_fail "barrier done"
echo "# ib_counters: $(cat $P/ib_counters)"
if [ "$RDS_HOST" = 1 ]; then
	check "reload as usual" rds_reload
fi
barrier end 120 || ksft_fail "barrier end"
ksft_exit
