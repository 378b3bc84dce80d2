#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The HCA goes away under a live connection and comes back: host 2 sends
# numbered messages to host 1 on NUM_FLOWS flows (numbered_lib.sh),
# deletes its rxe device in the middle, keeps sending while there is no
# device (the messages wait on the connection's queue), and adds the
# device back.  Host 1 must receive every message of every flow exactly
# once, in order, intact; host 2 must see the connection torn down and
# formed again, with no hang and no leak.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/numbered_lib.sh"

rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
N1=${RDS_DEVLOSS_BEFORE:-50}	# sent with the device present
N2=${RDS_DEVLOSS_DURING:-50}	# sent while it is gone
A=$N1 B=$((N1 + N2))
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
resets=$(ib_counter resets)
connects=$(ib_counter connects)
if [ "$RDS_HOST" = 1 ]; then
	num_start r recv 0 "$B"
	check "host 1 received every message once, in order, intact" num_wait r
else
	# Each sender keeps its socket until host 1 has everything.
	num_start p1 send 0 "$A" "$B" bound:0
	check "#0..#$((A - 1)) sent with the device present" \
		wait_for 120 num_all p1 '^# sent'
	# The second senders bind while the device is there (with no RDMA
	# device on its address a bind fails: EADDRNOTAVAIL), then send once
	# it is gone.
	rm -f /tmp/devloss.go
	num_start p2 send "$A" "$B" "$B" /tmp/devloss.go
	check "second senders bound" wait_for 120 num_all p2 '^# bound'
	check "rxe deleted" rdma link delete "$RDS_RXE"
	: > /tmp/devloss.go
	check "#$A..#$((B - 1)) queued with the device gone" \
		wait_for 120 num_all p2 '^# sent'
	check "rxe added back" \
		rdma link add "$RDS_RXE" type rxe netdev "$RDS_IFACE"
	check "the first senders exit 0" num_wait p1
	check "the second senders exit 0" num_wait p2
	active() { rdma link show "$RDS_RXE/1" 2>/dev/null | grep -q 'state ACTIVE'; }
	check "$RDS_RXE active again" wait_for 30 active
	torn_down() { test_klog | grep -q 'connection lost: device removal'; }
	check "the connection was torn down (this test's kernel log)" torn_down
	check "and formed again" test "$(ib_counter connects)" -gt "$connects"
fi
echo "# resets: $resets -> $(ib_counter resets)"
ib_test_end
