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

# ml_pair_cut OUT: run by the host running ours, in the background, beside
# an rds-stress pair writing OUT: 3 s after the load's first second of
# figures, this host pulls its own cable for 5 s.  Only ours cuts: rxe
# kills its GSI queue pair for good when asked to send a connection
# message with no route (fault_lib.sh), which ours avoids and the
# kernel's RDS does not.  The cut is timed from the figures, not from the
# start (a debug kernel took more than 30 s to start the load, and a cut
# timed from the start missed it).
ml_pair_cut() {
	wait_for 120 grep -Eqs '^ +[0-9]+ +[0-9]+ ' "$1" ||
		echo "# the load did not start"
	sleep 3
	host_request link off || return 1
	echo "# $(date +%T) link off"
	sleep 5
	host_request link on || return 1
	echo "# $(date +%T) link on"
}
