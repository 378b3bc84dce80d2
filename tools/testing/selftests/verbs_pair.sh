#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Raw verbs between the two hosts: an RC connection set up by rdma_cm moves
# data both ways (ib_send_bw, perftest).  rdma_cm setup over rxe under
# emulation is sometimes rejected at the first attempt, so up to 5 attempts
# run, each started together on both hosts.
. "$(dirname "$0")/lib.sh"

ok=0
for attempt in 1 2 3 4 5; do
	if [ "$RDS_HOST" = 1 ]; then
		timeout 60 ib_send_bw -d "$RDS_RXE" -R -F -n 200 -s 4096 \
			> /tmp/bw.$attempt 2>&1 &
		srv=$!
		sleep 1
		barrier "srv$attempt" 60 || break
		wait $srv
		rc=$?
		cat /tmp/bw.$attempt
		barrier "res$attempt" 90 || break
	else
		barrier "srv$attempt" 60 || break
		timeout 50 ib_send_bw -d "$RDS_RXE" -R -F -n 200 -s 4096 "$RDS_PEER" \
			> /tmp/bw.$attempt 2>&1
		rc=$?
		cat /tmp/bw.$attempt
		barrier "res$attempt" 90 || break
	fi
	if [ $rc = 0 ] && grep -Eq '^ *4096 +200 ' /tmp/bw.$attempt; then
		: > "$RDS_SHARED/$RDS_TEST.ok.$attempt.$RDS_HOST"
	fi
	barrier "chk$attempt" 60 || break
	if [ -e "$RDS_SHARED/$RDS_TEST.ok.$attempt.1" ] &&
	   [ -e "$RDS_SHARED/$RDS_TEST.ok.$attempt.2" ]; then
		ok=1
		echo "# succeeded at attempt $attempt"
		break
	fi
	test_retry "ib_send_bw attempt $attempt failed (rc $rc)"
done
if [ $ok = 1 ]; then
	ksft_ok "ib_send_bw 200 x 4 KiB over RC between the hosts"
else
	ksft_fail "ib_send_bw 200 x 4 KiB over RC between the hosts"
fi
ksft_exit
