#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# qperf's rds_bw and rds_lat between local addresses over the loopback
# transport.  The tests end on SIGALRM, so blocking RDS calls must return
# EINTR; a hang here means they do not.
. "$(dirname "$0")/lib.sh"

if ! command -v qperf > /dev/null; then
	ksft_skip "qperf" "qperf is not installed"
	ksft_exit
fi

log=$(mktemp)
qperf > "$log.server" 2>&1 &
server=$!
listening() {
	ss -ltn 2> /dev/null | grep -q ':19765 '
}
check "qperf server listens" wait_for 30 listening

# run PATTERN QPERF-ARGS...: qperf must finish and print PATTERN.  Each
# test's server child makes a TCP socket for its exchange with the client
# and writes the socket's port to the client *before* it calls listen()
# on it (strace in the guest: getsockname, write(port), listen): a client
# that connects in between is refused ("connect failed: Connection
# refused").  That is qperf's race, not RDS's (the RDS sockets come
# later); a server of its own per test does not avoid it (tried: 3 of 8
# refused).  Such an attempt is retried, counted with its reason, up to
# 8 a second apart.
run() {
	local pattern=$1 attempt
	shift
	for attempt in 1 2 3 4 5 6 7 8; do
		[ "$attempt" = 1 ] || sleep 1
		wait_for 20 listening || return 1
		if timeout 60 qperf -ws 20 -t 2 "$@" > "$log" 2>&1; then
			cat "$log"
			grep -Eq "$pattern" "$log"
			return
		fi
		cat "$log"
		grep -q 'connect failed' "$log" || return 1
		test_retry "qperf server wrote its exchange port before listening on it, client refused (qperf race, attempt $attempt)"
	done
	return 1
}
bw='bw *= *[0-9.]+ [KMG]?B/sec'
lat='latency *= *[0-9.]+ [mun]?s'
check "rds_bw 127.0.0.1" run "$bw" 127.0.0.1 rds_bw
check "rds_lat 127.0.0.1" run "$lat" 127.0.0.1 rds_lat
check "rds_bw 64K $RDS_ADDR" run "$bw" "$RDS_ADDR" -m 64K rds_bw
check "rds_lat $RDS_ADDR" run "$lat" "$RDS_ADDR" rds_lat
# For comparison only, last: the same exchange over TCP on this guest.
timeout 60 qperf -ws 20 -t 2 127.0.0.1 tcp_lat 2>&1 | sed 's/^/# /'

kill "$server" 2> /dev/null
wait "$server" 2> /dev/null
rm -f "$log" "$log.server"
ksft_exit
