#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: host 2 deletes its Soft-RoCE device under a verifying
# rds-stress load (the connection's queue pair goes with it, messages
# wait), and adds it back 5 s later.  Nothing may be lost, duplicated,
# reordered or corrupted, and the load must resume.  See fault_lib.sh
# (and ib_devloss, the same fault under a scripted sender).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

fault_init || ksft_exit
rxe_del() { rdma link delete "$RDS_RXE"; }
rxe_add() {
	rdma link show "$RDS_RXE" > /dev/null 2>&1 ||
		rdma link add "$RDS_RXE" type rxe netdev "$RDS_IFACE"
}
fault_case rxe 25 5 5 2 rxe_del rxe_add
if [ "$RDS_HOST" = 2 ]; then
	active() { rdma link show "$RDS_RXE/1" 2>/dev/null | grep -q 'state ACTIVE'; }
	check "rxe: $RDS_RXE active again" wait_for 30 active
fi
ksft_exit
