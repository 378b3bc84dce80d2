#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# qperf in the test guests, sourced after lib.sh by qperf and
# ib_mainline_pair: a server on port 19765 and a client run that must
# print a figure.
# shellcheck disable=SC2034 # used by the scripts that source this
QPERF_BW='bw *= *[0-9.]+ [KMG]?B/sec'
# shellcheck disable=SC2034
QPERF_LAT='latency *= *[0-9.]+ [mun]?s'

# qperf_listening [HOST]: qperf's server listens (HOST: on that host,
# seen from here by a TCP connect).
qperf_listening() {
	if [ -n "$1" ]; then
		timeout 5 bash -c "exec 3<>/dev/tcp/$1/19765" 2> /dev/null
	else
		ss -ltn 2> /dev/null | grep -q ':19765 '
	fi
}

# qperf_run PATTERN SERVER QPERF-ARGS...: a qperf client toward SERVER
# must finish and print PATTERN; its output goes to stdout.  Each test's
# server child makes a TCP socket for its exchange with the client and
# writes the socket's port to the client *before* it calls listen() on
# it (strace in the guest: getsockname, write(port), listen): a client
# that connects in between is refused ("connect failed: Connection
# refused").  That is qperf's race, not RDS's (the RDS sockets come
# later); a server of its own per test does not avoid it (tried: 3 of 8
# refused).  Such an attempt is retried, counted with its reason, up to
# 8 a second apart.
qperf_run() {
	local pattern=$1 server=$2 attempt out rc=1
	shift 2
	out=$(mktemp)
	for attempt in 1 2 3 4 5 6 7 8; do
		[ "$attempt" = 1 ] || sleep 1
		if [ "$server" = 127.0.0.1 ] || [ "$server" = "$RDS_ADDR" ]; then
			wait_for 20 qperf_listening || break
		else
			wait_for 20 qperf_listening "$server" || break
		fi
		if timeout "$(scaled 60)" qperf -ws 20 -t 2 "$server" "$@" \
			> "$out" 2>&1; then
			cat "$out"
			grep -Eq "$pattern" "$out"
			rc=$?
			break
		fi
		cat "$out"
		grep -q 'connect failed' "$out" || break
		test_retry "qperf server wrote its exchange port before listening on it, client refused (qperf race, attempt $attempt)"
	done
	rm -f "$out"
	return $rc
}
