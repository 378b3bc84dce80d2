#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmark: the 1 KiB message rate of the kernel's own RDS (rds_rdma) and
# of ours, alternated in one boot on the same link: round r runs qperf
# rds_bw -m 1K over mainline, then over ours, each module loaded for its
# run only.  Alternating takes the drift of an emulated machine (its load,
# its caches) out of the comparison: each round gives one ratio, and the
# figure is the median of BENCH_RATE_ROUNDS (default 7) ratios.  Every
# run's value is printed.  Host 1 serves, host 2 sends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"

rounds=${BENCH_RATE_ROUNDS:-7}
size=${BENCH_RATE_SIZE:-1K}

[ -d /sys/module/rds ] && { ksft_fail "no rds loaded before"; ksft_exit; }
check "qperf server listens (host 1)" qperf_serve

# qperf's msg_rate line: "msg_rate = 3.69 K/sec" -> messages per second
msg_rate() {
	awk '$1 == "msg_rate" {
		v = $3; u = $4
		if (u ~ /^K/) v *= 1000; else if (u ~ /^M/) v *= 1000000
		printf "%d\n", v }' /tmp/bench.out
}

load() {
	if [ "$1" = mainline ]; then
		modprobe rds_rdma
	else
		rds_insmod
	fi
}

unload() {
	if [ "$1" = mainline ]; then
		modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	else
		rmmod rds
	fi
	wait_for 30 test ! -d /sys/module/rds
}

m_vals=() o_vals=() ratios=() failed=0
for ((r = 1; r <= rounds; r++)); do
	for which in mainline ours; do
		if ! load "$which"; then
			ksft_fail "round $r: $which loaded"
			ksft_exit
		fi
		if bench_pair "$which.$r" "${BENCH_ATTEMPTS:-6}" "" \
			"qperf -v -ws 20 -t 8 -m $size $RDS_PEER rds_bw"; then
			if [ "$RDS_HOST" = 2 ]; then
				v=$(msg_rate)
				echo "# round $r $which: $v messages/s"
				[ "$which" = mainline ] && m_vals+=("$v") ||
					o_vals+=("$v")
			fi
		else
			failed=1
		fi
		barrier "unload.$which.$r" 60
		if ! unload "$which"; then
			ksft_fail "round $r: $which unloaded"
			ksft_exit
		fi
	done
	if [ "$RDS_HOST" = 2 ] && [ "${#m_vals[@]}" = "$r" ] &&
	   [ "${#o_vals[@]}" = "$r" ] && [ "${m_vals[r - 1]}" -gt 0 ]; then
		ratios+=("$(awk -v o="${o_vals[r - 1]}" -v m="${m_vals[r - 1]}" \
			'BEGIN { printf "%.3f", o / m }')")
	fi
done
if [ "$failed" = 1 ]; then
	ksft_fail "every run of qperf rds_bw -m $size"
	ksft_exit
fi
ksft_ok "qperf rds_bw -m $size, $rounds rounds mainline/ours"
if [ "$RDS_HOST" = 2 ]; then
	echo "# mainline runs: ${m_vals[*]}"
	echo "# ours runs: ${o_vals[*]}"
	echo "# ours/mainline per round: ${ratios[*]}"
	bench "alt_mainline_msg_rate_$size" "$(median "${m_vals[@]}")" msg/s
	bench "alt_ours_msg_rate_$size" "$(median "${o_vals[@]}")" msg/s
	bench "alt_ours_over_mainline_$size" "$(median "${ratios[@]}")" x
fi
ksft_exit
