#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Soft-RoCE device the harness created on the test NIC is usable.
. "$(dirname "$0")/lib.sh"

active() {
	rdma link show "$RDS_RXE/1" 2>/dev/null | grep -q 'state ACTIVE'
}
check "$RDS_RXE is ACTIVE" wait_for 20 active
check "$RDS_RXE is bound to $RDS_IFACE" \
	bash -c "rdma link show '$RDS_RXE/1' | grep -q 'netdev $RDS_IFACE'"
check "$RDS_RXE has a RoCE GID for $RDS_ADDR" bash -c \
	"ibv_devinfo -v -d '$RDS_RXE' | grep -qi 'GID.*::ffff:$RDS_ADDR'"
ksft_exit
