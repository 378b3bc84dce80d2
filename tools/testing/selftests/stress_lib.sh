#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Common start of the rds-stress tests over the kernel's own RDS
# (stress_mainline, stress_verify, stress_rdma), sourced after lib.sh:
# the tool is built, no rds module is loaded yet, and the kernel's RDS is
# unloaded whatever happens (it must never meet our module).
stress=$RDS_BUILD/rds-stress/rds-stress
log=$RDS_OUT/$RDS_TEST.d
mkdir -p "$log"

if [ ! -x "$stress" ]; then
	ksft_fail "rds-stress is built" "run make -C tools/rds-stress"
	ksft_exit
fi
if [ -d /sys/module/rds ]; then
	ksft_fail "no rds module loaded before the test"
	ksft_exit
fi

# Twice: the first pass can leave rds held by rds_tcp's teardown.
unload() {
	modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	modprobe -r rds_rdma rds_tcp rds 2>/dev/null
}
trap unload EXIT
