#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds-stress catches what it must: the active side (host 2) runs with the
# test hook RDS_STRESS_CORRUPT, which makes it corrupt one payload byte,
# drop, duplicate or reorder one request; the passive side (host 1) must
# fail with a message naming what went wrong, and both sides exit 1.
# Runs over the kernel's own RDS (rds_rdma over rxe), unloaded at the end.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/stress_lib.sh"
check "modprobe rds_rdma (mainline)" modprobe rds_rdma
barrier loaded 60 || ksft_fail "barrier loaded"

port=4000
while read -r mode pattern; do
	port=$((port + 10))
	if [ "$RDS_HOST" = 1 ]; then
		timeout 90 "$stress" -r "$RDS_ADDR" -p "$port" \
			> "$log/$mode.out" 2>&1 &
		pid=$!
		barrier "$mode-up" 60
		wait $pid
		rc=$?
		sed 's/^/#   /' "$log/$mode.out"
		check "$mode: receiver exits 1" test "$rc" = 1
		check "$mode: receiver says '$pattern'" \
			grep -q "rds-stress: task .*$pattern" "$log/$mode.out"
	else
		barrier "$mode-up" 60
		RDS_STRESS_CORRUPT=$mode timeout 90 "$stress" -r "$RDS_ADDR" \
			-s "$RDS_PEER" -p "$port" --connect-retries 30 \
			-t 2 -d 4 -T 10 > "$log/$mode.out" 2>&1
		rc=$?
		sed 's/^/#   /' "$log/$mode.out"
		check "$mode: sender exits 1" test "$rc" = 1
		check "$mode: sender reports the peer's failure" \
			grep -q "the peer failed: .*$pattern" "$log/$mode.out"
	fi
	barrier "$mode-done" 120
done <<'MODES'
byte payload checksum: expected
drop seq 10 missing: dropped
dup seq 10 was already received: a duplicate
reorder reordered: seq 10 arrived after seq 11
MODES

barrier unload 60
unload
check "mainline rds unloaded" wait_for 10 test ! -d /sys/module/rds
ksft_exit
