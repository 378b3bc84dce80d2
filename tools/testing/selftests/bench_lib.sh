#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the benchmark scripts (bench_*.sh), sourced after lib.sh.
# Results are printed as "BENCH <name> <value> <unit>" lines, which
# tools/testing/vm/run-bench collects into one table.

bench() {	# bench NAME VALUE UNIT
	echo "BENCH $1 $2 $3"
}

# Each figure is the median of BENCH_RUNS runs: under emulation one run
# differs from the next by 10% and more.  Every run's value is printed.
BENCH_RUNS=${BENCH_RUNS:-3}

median() {	# median V...: the middle value (the lower one of an even count)
	printf '%s\n' "$@" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# bench_runs NAME UNIT TAG "SERVER_CMD" "CLIENT_CMD" EXTRACT...: BENCH_RUNS
# runs of bench_pair (BENCH_ATTEMPTS attempts each, default 6: the qperf
# client sometimes ends "connect failed: Connection refused" while the
# server waits in accept(), over mainline RDS and ours alike, and once did
# three times in a row); on host 2, EXTRACT (a command printing the value
# from /tmp/bench.out) after each run; reports the median.  Fails if any
# run failed.
bench_runs() {
	local name=$1 unit=$2 tag=$3 srv=$4 cli=$5 r vals=()
	shift 5
	for ((r = 1; r <= BENCH_RUNS; r++)); do
		bench_pair "$tag.r$r" "${BENCH_ATTEMPTS:-6}" "$srv" "$cli" ||
			return 1
		[ "$RDS_HOST" = 2 ] && vals+=("$("$@")")
	done
	if [ "$RDS_HOST" = 2 ]; then
		echo "# $name runs: ${vals[*]}"
		bench "$name" "$(median "${vals[@]}")" "$unit"
	fi
	return 0
}

# Run CMD up to ATTEMPTS times, both hosts starting each attempt together
# (rdma_cm setup over rxe is sometimes refused at the first try).  Host 1
# runs SERVER_CMD (if not empty), host 2 runs CLIENT_CMD; the client's
# output is left in /tmp/bench.out.  Returns 0 when an attempt's client
# succeeded.
bench_pair() {	# bench_pair TAG ATTEMPTS "SERVER_CMD" "CLIENT_CMD"
	local tag=$1 attempts=$2 srv=$3 cli=$4 a rc pid
	for ((a = 1; a <= attempts; a++)); do
		rm -f "$RDS_SHARED/$RDS_TEST.$tag.$a.ok"
		if [ "$RDS_HOST" = 1 ]; then
			pid=
			if [ -n "$srv" ]; then
				timeout 120 bash -c "$srv" > /tmp/bench.srv 2>&1 &
				pid=$!
				sleep 1
			fi
			barrier "$tag.go.$a" 60 || return 1
			barrier "$tag.end.$a" 150 || return 1
			if [ -n "$pid" ]; then
				kill "$pid" 2>/dev/null
				wait "$pid" 2>/dev/null
			fi
		else
			barrier "$tag.go.$a" 60 || return 1
			timeout 110 bash -c "$cli" > /tmp/bench.out 2>&1
			rc=$?
			cat /tmp/bench.out
			[ $rc = 0 ] && : > "$RDS_SHARED/$RDS_TEST.$tag.$a.ok"
			barrier "$tag.end.$a" 150 || return 1
		fi
		[ -e "$RDS_SHARED/$RDS_TEST.$tag.$a.ok" ] && return 0
		echo "# $tag: attempt $a failed"
	done
	return 1
}

# qperf_serve: on host 1, one qperf server for the whole test (it serves
# test after test), killed at exit; returns once it listens: the client may
# start only then (its TCP port 19765, 4D35 in /proc/net/tcp; state 0A is
# LISTEN).  Nothing on host 2.
qperf_listens() {
	awk '$2 ~ /:4D35$/ && $4 == "0A" { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}
qperf_serve() {
	[ "$RDS_HOST" = 1 ] || return 0
	qperf > /tmp/qperf-server.log 2>&1 &
	qperf_pid=$!
	trap 'kill $qperf_pid 2>/dev/null' EXIT
	wait_for 30 qperf_listens
}

# Convert qperf's "123 MB/sec" / "1.2 GB/sec" / "456 KB/sec" to MB/s and
# "757 us" / "1.1 ms" to microseconds.
qperf_value() {	# qperf_value FILE bw|latency
	awk -v k="$2" '
	$1 == k && $2 == "=" {
		v = $3; u = $4
		if (k == "bw") {
			if (u ~ /^GB/) v *= 1000; else if (u ~ /^KB/) v /= 1000;
			else if (u ~ /^B/) v /= 1000000
		} else {
			if (u == "ms") v *= 1000; else if (u == "ns") v /= 1000;
			else if (u == "sec") v *= 1000000
		}
		printf "%.2f\n", v; exit
	}' "$1"
}
