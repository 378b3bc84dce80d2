#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds-stress over the kernel's own RDS (Debian's rds + rds_rdma over
# Soft-RoCE, then rds_tcp): the baseline our module is compared with, and
# a check that the tool itself works.  Host 1 is the passive side, host 2
# the active side.  Mainline is unloaded at the end: it must never be
# loaded together with our module.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/stress_lib.sh"

# expect_out NAME RC PATTERN CMD...: CMD exits RC and prints PATTERN.
expect_out() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$@" > "$log/out" 2>&1
	rc=$?
	sed 's/^/#   /' "$log/out"
	if [ "$rc" = "$want" ] && grep -q -- "$pat" "$log/out"; then
		ksft_ok "$name"
	else
		ksft_fail "$name" "exit $rc (want $want), output ${pat:+without '$pat'}"
	fi
}

# Before any RDS is loaded: the tool says so, and usage errors exit 2.
if [ "$RDS_HOST" = 2 ]; then
	expect_out "no AF_RDS: clear error, exit 1" 1 "AF_RDS not available" \
		"$stress" -r "$RDS_ADDR" -s "$RDS_PEER" -p 4000
	expect_out "usage error exits 2" 2 "requests must be" \
		"$stress" -s "$RDS_PEER" -q 10
fi

check "modprobe rds_rdma (mainline)" modprobe rds_rdma
check "modprobe rds_tcp (mainline)" modprobe rds_tcp
barrier loaded 60 || ksft_fail "barrier loaded"

if [ "$RDS_HOST" = 2 ]; then
	expect_out "address not local: clear error, exit 1" 1 "not local" \
		"$stress" -r 10.0.0.99 -s "$RDS_PEER" -p 4000
	# -r and --rdma-use-get-mr 1: the tool probes RDS_GET_MR before it
	# contacts the peer; mainline IB refuses it (FRWR needs a connection).
	expect_out "RDS_GET_MR on mainline IB: refused, exit 1" 1 \
		"lacks RDMA support" \
		"$stress" -r "$RDS_ADDR" -s "$RDS_PEER" -p 4000 -D 64K \
		--rdma-use-get-mr 1
fi

# run NAME PORT ARGS...: a verified run between the hosts.
run() {
	local name=$1 port=$2 rc lines
	shift 2
	stress_pair "$name" "$port" 120 "$log/$name.out" "$log/$name.json" \
		-- "$@"
	rc=$stress_rc
	sed 's/^/#   /' "$log/$name.out"
	sed 's/^/#   /' "$log/$name.json" 2>/dev/null
	check "$name: exits 0" test "$rc" = 0
	lines=$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ .*[0-9]$' \
		"$log/$name.out")
	check "$name: per-second lines ($lines)" test "$lines" -ge 3
	check "$name: (average) line" grep -q '(average)$' "$log/$name.out"
	check "$name: requests flowed" \
		grep -q '"rx_ack": [1-9]\|"rx_req": [1-9]' "$log/$name.json"
	barrier "$name-done" 120
}

# Over IB (rxe): the transport RDS picks first for 10.0.0.x.
run rdma 4000 -t 4 -d 8 -T 10
# Congestion: a 64K receive buffer under 16 x 32K in flight, one way; the
# sender sees ENOBUFS and waits for RDS_CMSG_CONG_UPDATE.
run cong 4050 -t 1 -d 16 -q 32K -o --rcvbuf 64K -T 5
# Pinned to TCP.  Mainline rds_tcp spreads a connection over several
# TCP paths (mprds); until the paths are negotiated, a non-blocking
# socket's first messages go on path 0 and later ones on the socket's own
# path, so they can arrive out of order, which rds-stress reports.  A
# first short run brings the paths up; its result is only reported.
warm() {
	if [ "$RDS_HOST" = 1 ]; then
		timeout 60 "$stress" -r "$RDS_ADDR" -p 4100 > "$log/warm.out" 2>&1 &
		local pid=$!
		barrier warm-up 60
		wait $pid
	else
		barrier warm-up 60
		timeout 60 "$stress" -r "$RDS_ADDR" -s "$RDS_PEER" -p 4100 \
			--connect-retries 30 -t 2 -d 4 -T 1 --transport tcp \
			> "$log/warm.out" 2>&1
	fi
	echo "# rds_tcp warm-up run: exit $? (not asserted)"
	grep 'rds-stress:' "$log/warm.out" | sed 's/^/#   /'
	barrier warm-done 60
}
warm
run tcp 4110 -t 2 -d 4 -T 5 --transport tcp
# One way, with the histogram and the option block, no cong monitor.
run oneway 4200 -t 1 -d 8 -q 8K -T 5 -o -Q 1 --use-cong-monitor 0 \
	--rcvbuf 32K --show-histogram --show-params

barrier unload 60
unload
check "mainline rds unloaded" wait_for 10 test ! -d /sys/module/rds
ksft_exit
