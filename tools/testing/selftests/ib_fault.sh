#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every allocation failure while the IB transport sets a device up is
# handled: with fault_nth=N the Nth allocation from then on fails; the
# device is re-added (rdma link delete + add), left unused, and nothing it
# had allocated stays behind.  N walks up until an add sees no injected
# fault (every site was passed), which must then take the device.
. "$(dirname "$0")/lib.sh"

rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
P=/sys/module/rds/parameters
since() { dmesg | tail -n +"$(($1 + 1))"; }
dev=$RDS_RXE

sites=0
clean=0
for n in $(seq 1 30); do
	rdma link delete "$dev" || { ksft_fail "delete $dev (round $n)"; break; }
	pages=$(cat $P/ib_rx_pages)
	[ "$pages" = 0 ] || ksft_fail "round $n: $pages receive pages held with no device"
	mark=$(dmesg | wc -l)
	echo "$n" > $P/fault_nth
	rdma link add "$dev" type rxe netdev "$RDS_IFACE" ||
		{ ksft_fail "add $dev (round $n)"; break; }
	echo 0 > $P/fault_nth
	if since "$mark" | grep -q 'rds: fault injected'; then
		sites=$((sites + 1))
		since "$mark" | grep 'fault injected'
		since "$mark" | grep -q "rds: $dev: cannot set up" ||
			ksft_fail "fault $n: $dev reported as not set up"
		pages=$(cat $P/ib_rx_pages)
		[ "$pages" = 0 ] ||
			ksft_fail "fault $n: $pages receive pages left behind"
	else
		clean=1
		since "$mark" | grep -q "rds: $dev: added" ||
			ksft_fail "clean add: $dev taken"
		break
	fi
done
echo "# $sites allocation sites failed one by one"
check "every injected failure handled, then a clean add" test $clean = 1
check "at least 8 failure sites exercised ($sites)" test $sites -ge 8
check "receive pages held again after the clean add" \
	test "$(cat $P/ib_rx_pages)" -gt 0
check "$dev ACTIVE at the end" wait_for 20 bash -c \
	"rdma link show '$dev/1' | grep -q 'state ACTIVE'"
ksft_exit
