#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Checks ib_rdma_test itself against the kernel's own rds_rdma (which
# refuses RDS_GET_MR over IB): RDS_RDMA_MAINLINE=1 skips what needs it.
# Then the negative controls: with RDS_RDMA_NEG=write / read one byte of
# each WRITE's / READ's source is spoilt behind the test's back, and the
# other host must name it.  Not in the suite: a tool for working on the
# test (tools/testing/vm/run-tests --topology two --plan FILE with the
# line "ib_rdma_mainline 900").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/stress_lib.sh"
t=$RDS_BUILD/selftests/ib_rdma_test
check "modprobe rds_rdma (mainline)" modprobe rds_rdma
barrier loaded 60 || ksft_fail "barrier loaded"
RDS_RDMA_MAINLINE=1 RDS_TEST=ib_rdma_test "$t" > "$log/all.out" 2>&1
rc=$?
cat "$log/all.out"
check "ib_rdma_test over mainline exits 0" test $rc = 0
barrier all-done 300

for n in write read; do
	RDS_RDMA_MAINLINE=1 RDS_RDMA_NEG=$n RDS_RDMA_CASES=sizes \
		RDS_TEST=ib_rdma_test_neg_$n "$t" > "$log/neg-$n.out" 2>&1
	rc=$?
	grep -E 'wrong|found|not ok' "$log/neg-$n.out" | head -8 | sed 's/^/#   /'
	check "RDS_RDMA_NEG=$n: fails" test $rc != 0
	# the side that did not spoil it names the byte
	if { [ $n = write ] && [ "$RDS_HOST" = 1 ]; } ||
	   { [ $n = read ] && [ "$RDS_HOST" = 2 ]; }; then
		: # host 1 owns the odd items, host 2 the even: both see both
	fi
	check "RDS_RDMA_NEG=$n: a range reported wrong" \
		grep -q "of range .* wrong" "$log/neg-$n.out"
	barrier "neg-$n-done" 300
done
barrier unload 120
unload
ksft_exit
