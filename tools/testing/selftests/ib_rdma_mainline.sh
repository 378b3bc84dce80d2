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
# run NAME ENV...: the test with RDS_RDMA_MAINLINE=1 and ENV; sets rc.
run() {
	local name=$1
	shift
	env RDS_RDMA_MAINLINE=1 RDS_TEST=ib_rdma_test_$name "$@" "$t" \
		> "$log/$name.out" 2>&1
	rc=$?
}

# The negative controls first, on a fresh connection.
for n in write read; do
	run neg-$n RDS_RDMA_NEG=$n RDS_RDMA_CASES=sizes
	grep -E 'wrong|found|not ok' "$log/neg-$n.out" | head -8 |
		sed 's/^/#   /'
	check "RDS_RDMA_NEG=$n: fails" test $rc != 0
	# Host 1 owns the first half of the items: it sees the WRITEs go
	# wrong, host 2 the READs (the other host's notes are used up by
	# its own spoilt bytes).
	if { [ $n = write ] && [ "$RDS_HOST" = 1 ]; } ||
	   { [ $n = read ] && [ "$RDS_HOST" = 2 ]; }; then
		check "RDS_RDMA_NEG=$n: a range reported wrong" \
			grep -q "of range .* wrong" "$log/neg-$n.out"
	fi
	barrier "neg-$n-done" 300
done
# Then every case; atomics last (mainline posts masked atomics, which rxe
# lacks, and its connection does not survive that).
run all RDS_RDMA_CASES=sizes,iovecs,use_once,errors,args,mr_pool,exit
sed 's/^/#   /' "$log/all.out"
echo "# ib_rdma_test over mainline (all but atomics): exit $rc (not asserted: mainline fails some cases)"
barrier all-done 300
run atomics RDS_RDMA_CASES=atomics
sed 's/^/#   /' "$log/atomics.out"
echo "# ib_rdma_test atomics over mainline: exit $rc"
barrier atomics-done 300
barrier unload 120
unload
ksft_exit
