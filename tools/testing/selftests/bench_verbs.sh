#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmark: raw verbs between the two hosts (perftest over rdma_cm), the
# ceiling of the link that RDS is judged against.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"

dev=$RDS_RXE
bw_value() {	# bw_value SIZE: MB/s of ib_send_bw's result line
	awk -v s="$1" '$1 == s && NF >= 4 { print $4; exit }' /tmp/bench.out
}
# t_typical is one-way latency (half the round trip).
lat_value() {
	awk '$1 == 1 && NF >= 5 { print $5; exit }' /tmp/bench.out
}
for size in 65536 8192 1024; do
	if bench_runs "verbs_send_bw_$size" MB/s "bw$size" \
		"ib_send_bw -d $dev -R -F -s $size -D 5" \
		"ib_send_bw -d $dev -R -F -s $size -D 5 $RDS_PEER" \
		bw_value "$size"; then
		ksft_ok "ib_send_bw $size B"
	else
		ksft_fail "ib_send_bw $size B"
	fi
done
if bench_runs verbs_send_lat_1 us lat \
	"ib_send_lat -d $dev -R -F -s 1 -n 500" \
	"ib_send_lat -d $dev -R -F -s 1 -n 500 $RDS_PEER" \
	lat_value; then
	ksft_ok "ib_send_lat 1 B"
else
	ksft_fail "ib_send_lat 1 B"
fi
ksft_exit
