#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: host 2's cable pulled for 40 s under a verifying
# rds-stress load, longer than an RC retry budget on hardware, so the
# connection must end, fail to form again while the link is cut (attempts
# back off), and form again when it is back, retransmitting the
# unacknowledged messages: nothing lost, duplicated, reordered or
# corrupted.  Note: rxe treats the retry count 7 (what we connect with) as
# "retry forever" (rxe_comp.c), so on Soft-RoCE the queue pairs never fail
# with retry-exceeded; what ends the connection there is the heartbeat.
# See fault_lib.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

fault_init || ksft_exit
link_cut() { host_request link off; }
link_restore() { host_request link on; }
fault_case linklong 65 5 40 2 link_cut link_restore
if [ "$RDS_HOST" = 2 ]; then
	# The point of the long cut: the connection really was lost.
	check "linklong: the connection was reset and formed again" \
		test "${FAULT_RESETS:-0}" -gt 0
fi
ksft_exit
