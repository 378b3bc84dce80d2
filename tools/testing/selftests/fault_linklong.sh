#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: host 2's cable pulled for 40 s under a verifying
# rds-stress load: longer than the RC retry budget, so the queue pairs
# fail (retry exceeded), the connection ends and, while it cannot form,
# attempts fail and back off.  When the link is back the connection must
# form again and the unacknowledged messages be retransmitted: nothing
# lost, duplicated, reordered or corrupted.  See fault_lib.sh.
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
