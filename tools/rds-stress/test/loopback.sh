#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side run of rds-stress over the shim (rds_shim.so, AF_RDS as unix
# datagrams): both sides on loopback (127.0.0.1 passive, 127.0.0.2
# active), a clean run, each corruption mode and the shapes (sizes,
# size mix, sockets, slow reader).  Usage: loopback.sh BUILD_DIR
set -u
out=${1:?build dir}
stress=$out/rds-stress
shim=$out/rds_shim.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((20000 + RANDOM % 20000))
fails=0

# run NAME WANT_RC PATTERN [ENV=VAL] -- ACTIVE_ARGS...
run() {
	local name=$1 want=$2 pat=$3 env=() prc arc
	shift 3
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	port=$((port + 100))
	LD_PRELOAD=$shim "$stress" -r 127.0.0.1 -p $port > "$tmp/p" 2>&1 &
	local pid=$!
	env "${env[@]}" LD_PRELOAD="$shim" "$stress" -r 127.0.0.2 \
		-s 127.0.0.1 -p $port --connect-retries 20 "$@" > "$tmp/a" 2>&1
	arc=$?
	wait $pid
	prc=$?
	if [ $arc = "$want" ] && [ $prc = "$want" ] &&
	   grep -q -- "$pat" "$tmp/p"; then
		echo "ok: $name"
	else
		echo "not ok: $name (active $arc, passive $prc, want $want, '$pat')"
		sed 's/^/  active: /' "$tmp/a"
		sed 's/^/  passive: /' "$tmp/p"
		fails=$((fails + 1))
	fi
}

run clean 0 '(average)$' -- -t 2 -d 2 -T 2
run one-way 0 '(average)$' -- -t 1 -d 2 -T 1 -o -q 8K
run byte 1 'payload checksum: expected' RDS_STRESS_CORRUPT=byte -- -d 4 -T 3
run drop 1 'seq 10 missing: dropped' RDS_STRESS_CORRUPT=drop -- -d 4 -T 3
run dup 1 'seq 10 was already received: a duplicate' RDS_STRESS_CORRUPT=dup \
	-- -d 4 -T 3
run reorder 1 'reordered: seq 10 arrived after seq 11' \
	RDS_STRESS_CORRUPT=reorder -- -d 4 -T 3

"$stress" -q 1 > /dev/null 2>&1
rc=$?
[ $rc = 2 ] && echo "ok: usage exits 2" ||
	{ echo "not ok: usage exits $rc"; fails=$((fails + 1)); }
[ $fails = 0 ]
