#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The roles of a mixed pair (Documentation/interop.md), sourced after
# lib.sh and stress_lib.sh by ib_mainline_pair and ib_mainline_pair6:
# host ML_HOST (1 by default) runs Debian's rds_rdma, the other ours.
# Sets me (ml or ours); unload (the EXIT trap) unloads this host's RDS,
# then runs ml_pair_cleanup if the test defined one; ml_pair_load loads it.
ML_HOST=${ML_HOST:-1}
if [ "$RDS_HOST" = "$ML_HOST" ]; then
	me=ml
else
	me=ours
fi
echo "# host $RDS_HOST runs $me (ML_HOST=$ML_HOST)"

unload() {
	if [ $me = ml ]; then
		# twice: the first pass can leave rds held by rds_tcp's teardown
		modprobe -r rds_rdma rds_tcp rds 2>/dev/null
		modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	else
		rmmod rds 2>/dev/null
	fi
	if declare -F ml_pair_cleanup > /dev/null; then
		ml_pair_cleanup
	fi
	return 0
}
trap unload EXIT

ml_pair_load() {
	if [ $me = ml ]; then
		check "modprobe rds_rdma (the kernel's RDS)" modprobe rds_rdma
	else
		check "insmod rds.ko (ours)" rds_insmod
	fi
}
