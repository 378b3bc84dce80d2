#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test network works, and the host running the VMs can cut and restore
# it on request (what the fault tests build on).
. "$(dirname "$0")/lib.sh"

command -v ping > /dev/null || { ksft_fail "ping is installed"; ksft_exit; }

reach() { ping -c 1 -W 1 "$RDS_PEER" > /dev/null 2>&1; }
unreachable() { ! ping -c 1 -W 1 "$RDS_PEER" > /dev/null 2>&1; }

if ! wait_for 20 reach; then
	ksft_fail "peer $RDS_PEER answers"
	ksft_exit
fi
ksft_ok "peer $RDS_PEER answers"
barrier up 60 || ksft_fail "barrier up"
if [ "$RDS_HOST" = 1 ]; then
	check "host cuts the link" host_request link off
	check "peer unreachable while cut" unreachable
	sleep 2
	check "peer still unreachable 2 s later" unreachable
	check "host restores the link" host_request link on
fi
barrier restored 60 || ksft_fail "barrier restored"
check "peer answers again" wait_for 20 reach
ksft_exit
