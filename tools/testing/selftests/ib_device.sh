#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The IB transport takes every RoCE/IB device, gives it a shared receive
# queue, and follows the device being deleted and added again (an HCA
# lost and back) without leaking or hanging.
. "$(dirname "$0")/lib.sh"

rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
dev=$RDS_RXE
since() { dmesg | tail -n +"$(($1 + 1))"; }
seen() { since "$1" | grep -q "$2"; }

check "$dev was taken with a shared receive queue" \
	bash -c "dmesg | grep -q 'rds: $dev: added: shared-queue receive'"
dmesg | grep "rds: $dev: added" | tail -n 1

for round in 1 2; do
	mark=$(dmesg | wc -l)
	check "round $round: rdma link delete $dev" rdma link delete "$dev"
	check "round $round: $dev removed and released" \
		wait_for 20 seen "$mark" "rds: $dev: released"
	mark=$(dmesg | wc -l)
	check "round $round: rdma link add $dev" \
		rdma link add "$dev" type rxe netdev "$RDS_IFACE"
	check "round $round: $dev added again" \
		wait_for 20 seen "$mark" "rds: $dev: added: shared-queue receive"
done
check "$dev ACTIVE at the end" wait_for 20 bash -c \
	"rdma link show '$dev/1' | grep -q 'state ACTIVE'"
ksft_exit
