#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds-stress over our module's loopback transport, one host: passive side
# on 127.0.0.1, active side on 127.0.0.2, 4 tasks each, depth 8, every
# message verified; then the same with the test hook dropping a message,
# which the passive side must catch.
. "$(dirname "$0")/lib.sh"

stress=$RDS_BUILD/rds-stress/rds-stress
[ -x "$stress" ] || { ksft_fail "rds-stress built"; ksft_exit; }
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }

run_pair() {	# run_pair PORT [ENV...]: passive rc in $prc, active in $arc
	local port=$1 pid
	shift
	timeout 120 "$stress" -r 127.0.0.1 -p "$port" > /tmp/passive.log 2>&1 &
	pid=$!
	timeout 100 env "$@" "$stress" -r 127.0.0.2 -s 127.0.0.1 -p "$port" \
		-t 4 -d 8 -T 5 --connect-retries 20 > /tmp/active.log 2>&1
	arc=$?
	wait $pid
	prc=$?
	sed 's/^/# active: /' /tmp/active.log
	sed 's/^/# passive: /' /tmp/passive.log | tail -n 5
}

run_pair 4000
check "verified run: active side exits 0" test $arc = 0
check "verified run: passive side exits 0" test $prc = 0
check "per-second lines and the average printed" \
	grep -q '(average)' /tmp/active.log

run_pair 4100 RDS_STRESS_CORRUPT=drop
check "a dropped message is caught (exit 1)" \
	bash -c "[ $prc = 1 ] || [ $arc = 1 ]"
check "and named" grep -qi 'missing' /tmp/passive.log /tmp/active.log
ksft_exit
