#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: rds-stress between the two hosts with verification.
# Host 1 is the passive side, host 2 the active side.
. "$(dirname "$0")/lib.sh"

stress=$RDS_BUILD/rds-stress/rds-stress
if [ ! -x "$stress" ]; then
	echo "# tools/rds-stress is not written yet (issue 6): this job will run"
	echo "#   host 1: rds-stress -r 10.0.0.1 -p 4000"
	echo "#   host 2: rds-stress -r 10.0.0.2 -s 10.0.0.1 -p 4000 -t 4 -d 8 -v -T 30"
	echo "# and print its per-second line.  The two hosts are up, the module"
	echo "# is loaded on both and rxe0 is ACTIVE (see the tests before this one)."
	ksft_skip "rds-stress between the hosts" "tool not built yet"
	ksft_exit
fi
if [ "$RDS_HOST" = 1 ]; then
	timeout 600 "$stress" -r "$RDS_ADDR" -p 4000 &
	pid=$!
	barrier passive-up 60
	wait $pid
	check "passive side exits 0" test $? = 0
else
	barrier passive-up 60
	check "active side exits 0" "$stress" -r "$RDS_ADDR" -s "$RDS_PEER" \
		-p 4000 -t 4 -d 8 -v -T 30 --connect-retries 30
fi
ksft_exit
