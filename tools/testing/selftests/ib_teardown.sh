#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An accepted IB connection is torn down cleanly when its device goes away
# (rxe deleted under it) and when the module is unloaded under it: host 2's
# user-space peer holds a connection to host 1's module while host 1 does
# each; host 1 must release the device / unload without a hang or splat,
# and the peer must be told the connection is gone.
. "$(dirname "$0")/lib.sh"

peer=$RDS_BUILD/peer/hs_peer
P=/sys/module/rds/parameters
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
since() { dmesg | tail -n +"$(($1 + 1))"; }
seen() { since "$1" | grep -q "$2"; }

for phase in device unload; do
	if [ "$RDS_HOST" = 2 ]; then
		"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -m valid -H 60 \
			> /tmp/held.$phase 2>&1 &
		pid=$!
		check "$phase: connection accepted" wait_for 60 \
			grep -q '^accepted' /tmp/held.$phase
		barrier "$phase.held" 90 || ksft_fail "barrier $phase.held"
		barrier "$phase.done" 120 || ksft_fail "barrier $phase.done"
		wait $pid
		cat /tmp/held.$phase
		check "$phase: the peer was told the connection is gone" \
			grep -q '^held: RDMA_CM_EVENT_\(DISCONNECTED\|TIMEWAIT_EXIT\|REJECTED\)' \
			/tmp/held.$phase
	else
		n=$(ib_handshakes accepted)
		barrier "$phase.held" 90 || { ksft_fail "barrier $phase.held"; break; }
		check "$phase: host 1 accepted it" test "$(ib_handshakes accepted)" -gt "$n"
		mark=$(dmesg | wc -l)
		if [ $phase = device ]; then
			check "device: rdma link delete $RDS_RXE under the connection" \
				rdma link delete "$RDS_RXE"
			check "device: $RDS_RXE removed and released" \
				wait_for 30 seen "$mark" "rds: $RDS_RXE: released"
			check "device: $RDS_RXE added back" \
				rdma link add "$RDS_RXE" type rxe netdev "$RDS_IFACE"
			check "device: taken again" \
				wait_for 30 seen "$mark" "rds: $RDS_RXE: added"
		else
			check "unload: rmmod rds under the connection" \
				timeout 60 rmmod rds
			check "unload: module gone" wait_for 10 test ! -d /sys/module/rds
			check "unload: reload" rds_insmod
		fi
		barrier "$phase.done" 120 || ksft_fail "barrier $phase.done"
	fi
done
ksft_exit
