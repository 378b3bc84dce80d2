#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmark: qperf rds_bw / rds_lat between the two hosts over whichever
# RDS is loaded: ours (rds.ko from this tree, over its IB transport) or the
# kernel's own (RDS_BENCH_RDS=mainline: Debian's rds + rds_rdma).
# The same binary, the same link, the same run as bench_verbs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bench_lib.sh"

which=${RDS_BENCH_RDS:-ours}
case "$which" in
mainline)
	[ -d /sys/module/rds ] && { ksft_fail "no rds loaded before"; ksft_exit; }
	check "modprobe rds_rdma (mainline)" modprobe rds_rdma
	;;
ours)
	if ! rds_loaded; then
		check "insmod rds.ko" rds_insmod
	fi
	# SO_RDS_TRANSPORT of a socket bound to the test address says which
	# transport took it: 0 is RDS_TRANS_IB.
	t=$(python3 -c '
import socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], 0))
print(s.getsockopt(276, 8))' "$RDS_ADDR" 2>&1)
	if [ "$t" != 0 ]; then
		echo "# transport for $RDS_ADDR: $t"
		ksft_skip "qperf over our module" "no IB transport yet (issue 4)"
		ksft_exit
	fi
	;;
esac

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
slab_before=$(meminfo Slab)
free_before=$(meminfo MemFree)
check "qperf server listens (host 1)" qperf_serve
counters() {	# what our transport did during the last test (diagnosis)
	[ "$which" = ours ] &&
		echo "# $1 ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
	return 0
}
for m in 64K 8K 1K; do
	counters "before bw$m"
	if bench_runs "${which}_rds_bw_$m" MB/s "bw$m" "" \
		"qperf -ws 20 -t 5 -m $m $RDS_PEER rds_bw" \
		qperf_value /tmp/bench.out bw; then
		ksft_ok "$which rds_bw $m"
	else
		ksft_fail "$which rds_bw $m"
	fi
done
counters "after bw"
if bench_runs "${which}_rds_lat_1" us lat "" \
	"qperf -ws 20 -t 5 $RDS_PEER rds_lat" \
	qperf_value /tmp/bench.out latency; then
	ksft_ok "$which rds_lat"
else
	ksft_fail "$which rds_lat"
fi
# Kernel memory taken while one connection (and qperf's idle sockets)
# exists: slab growth, and the drop of free memory (receive buffers are
# whole pages, not slab).
bench "${which}_slab_growth_host$RDS_HOST" $(( $(meminfo Slab) - slab_before )) KiB
bench "${which}_memfree_drop_host$RDS_HOST" $(( free_before - $(meminfo MemFree) )) KiB

if [ "$RDS_HOST" = 1 ]; then
	kill $qperf_pid 2>/dev/null
	wait $qperf_pid 2>/dev/null
fi
if [ "$which" = mainline ]; then
	barrier unload 60
	modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	check "mainline rds unloaded" wait_for 30 test ! -d /sys/module/rds
fi
ksft_exit
