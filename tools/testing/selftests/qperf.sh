#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# qperf's rds_bw and rds_lat between local addresses over the loopback
# transport.  The tests end on SIGALRM, so blocking RDS calls must return
# EINTR; a hang here means they do not.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/qperf_lib.sh"

if ! command -v qperf > /dev/null; then
	ksft_skip "qperf" "qperf is not installed"
	ksft_exit
fi

log=$(mktemp)
qperf > "$log.server" 2>&1 &
server=$!
check "qperf server listens" wait_for 30 qperf_listening
check "rds_bw 127.0.0.1" qperf_run "$QPERF_BW" 127.0.0.1 rds_bw
check "rds_lat 127.0.0.1" qperf_run "$QPERF_LAT" 127.0.0.1 rds_lat
check "rds_bw 64K $RDS_ADDR" qperf_run "$QPERF_BW" "$RDS_ADDR" -m 64K rds_bw
check "rds_lat $RDS_ADDR" qperf_run "$QPERF_LAT" "$RDS_ADDR" rds_lat
# For comparison only, last: the same exchange over TCP on this guest.
timeout 60 qperf -ws 20 -t 2 127.0.0.1 tcp_lat 2>&1 | sed 's/^/# /'

kill "$server" 2> /dev/null
wait "$server" 2> /dev/null
rm -f "$log" "$log.server"
ksft_exit
