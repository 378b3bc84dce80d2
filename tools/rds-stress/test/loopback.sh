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
passes=0

# run NAME WANT_RC PATTERN [ENV=VAL] -- ACTIVE_ARGS...
run() {
	local name=$1 want=$2 pat=$3 env=() prc arc
	shift 3
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	port=$((port + 100))
	rm -f "$tmp/p.json" "$tmp/a.json"
	LD_PRELOAD=$shim "$stress" -r 127.0.0.1 -p $port \
		--json "$tmp/p.json" > "$tmp/p" 2>&1 &
	local pid=$!
	env "${env[@]}" LD_PRELOAD="$shim" "$stress" -r 127.0.0.2 \
		-s 127.0.0.1 -p $port --connect-retries 20 --json "$tmp/a.json" \
		"$@" > "$tmp/a" 2>&1
	arc=$?
	wait $pid
	prc=$?
	if [ $arc = "$want" ] && [ $prc = "$want" ] &&
	   grep -q -- "$pat" "$tmp/p"; then
		echo "ok: $name"
		passes=$((passes + 1))
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

# Sends that fail ENOMEM (every 7th of each side): the run fails, unless
# --enomem-retry (which the passive side takes from the active) counts
# and retries them.
# (RDS_SHIM_ENOMEM is in both sides' environment.)
RDS_SHIM_ENOMEM=7 run enomem 1 'sendmsg of .*Cannot allocate memory' -- \
	-t 1 -d 2 -T 2
RDS_SHIM_ENOMEM=7 run enomem-retry 0 '(average)$' -- -t 1 -d 2 -T 2 \
	--enomem-retry

# jnum a|p KEY: a number of the active's / passive's JSON summary.
jnum() {
	grep -o "\"$2\": [0-9]*" "$tmp/$1.json" 2>/dev/null | head -n 1 |
		awk '{ print $2 }'
}

# expect NAME CMD...: one more check of the run before.
expect() {
	local name=$1
	shift
	if "$@"; then
		echo "ok: $name"
		passes=$((passes + 1))
	else
		echo "not ok: $name ($*)"
		fails=$((fails + 1))
	fi
}

expect "enomem-retry: both sides counted ENOMEM and went on" \
	test "$(jnum a enomem)" -gt 0 -a "$(jnum p enomem)" -gt 0

# Shapes: every boundary size from 0 to 1 MiB, both ways, verified.
run sizes 0 '(average)$' -- -t 2 -d 2 -T 2 \
	--sizes 0,1,1023,1024,4047,4048,4096,4097,8191,8192,8193,64K,1M
expect "sizes: empty REQs both ways" \
	test "$(jnum a rx_zero)" -gt 0 -a "$(jnum p rx_zero)" -gt 0
expect "sizes: 1 MiB REQs both ways" \
	test "$(jnum a rx_max)" = 1048576 -a "$(jnum p rx_max)" = 1048576
expect "sizes: counts agree" \
	test "$(jnum a tx_req)" = "$(jnum p rx_req)" -a "$(jnum a rx_req)" -gt 0

# --size-mix: the seed is printed on both sides; the same seed, the same
# sizes (--show-sizes), another seed, others.
run size-mix 0 '^size mix seed 4242 ' -- -t 2 -d 4 -T 2 -q 1M --size-mix 4242
expect "size-mix: the active side prints the seed" \
	grep -q '^size mix seed 4242 ' "$tmp/a"
expect "size-mix: short and long REQs" \
	test "$(jnum p rx_short)" -gt 0 -a "$(jnum p rx_max)" -gt 65536
"$stress" --size-mix 4242 -q 1M --show-sizes 200 > "$tmp/s1"
"$stress" --size-mix 4242 -q 1M --show-sizes 200 > "$tmp/s2"
"$stress" --size-mix 4243 -q 1M --show-sizes 200 > "$tmp/s3"
expect "size-mix: the same seed replays the sizes" cmp -s "$tmp/s1" "$tmp/s2"
differ() { ! cmp -s "$1" "$2"; }
expect "size-mix: another seed, other sizes" differ "$tmp/s1" "$tmp/s3"
run size-mix-random 0 '^size mix seed [0-9]' -- -t 1 -d 2 -T 1 \
	--size-mix random

# Short REQs (no header) are checked too: a flipped byte, a dropped one
# (its successor fails the pattern), a dropped empty one (the counts), a
# duplicated empty one (the ack of a REQ never sent).
run short-byte 1 '(no header): byte 20: expected' RDS_STRESS_CORRUPT=byte \
	-- -d 4 -T 3 --sizes 40
run short-drop 1 'REQ seq 10 of 40 bytes (no header)' \
	RDS_STRESS_CORRUPT=drop -- -d 4 -T 3 --sizes 40
run empty-drop 1 'requests, [0-9]* arrived (1 missing)' \
	RDS_STRESS_CORRUPT=drop -- -d 4 -T 3 --sizes 0
run empty-dup 1 '(no request is outstanding)' \
	RDS_STRESS_CORRUPT=dup -- -d 4 -T 3 --sizes 0

# Many sockets per task, consecutive ports, big buffers read back.
run sockets 0 '(average)$' -- -t 2 -d 2 -T 2 --sockets 16 --sndbuf 8M \
	--rcvbuf 8M --show-params
expect "sockets: 16 per task" test "$(jnum p sockets)" = 16
expect "sockets: 8M buffers set (the kernel's 16M), shown" \
	grep -Eq '^ +sndbuf +8388608 \(kernel: 16777216\)' "$tmp/a"
expect "sockets: counts agree" \
	test "$(jnum a tx_req)" = "$(jnum p rx_req)" -a "$(jnum a rx_req)" -gt 0

# A slow reader: the passive side pauses, nothing is lost.
run slow-reader 0 '^slow reader: nothing read for 400 ms' -- -t 2 -d 8 \
	-T 3 -q 4K --slow-reader 400
expect "slow-reader: paused every second" test "$(jnum p slow_pauses)" -ge 3
expect "slow-reader: counts agree" \
	test "$(jnum a tx_req)" = "$(jnum p rx_req)" -a "$(jnum a rx_req)" -gt 0

# A passive side whose peer never comes (it failed to start) ends on
# SIGTERM, as "timeout" in the tests expects: it used to restart its
# accept() for ever.
port=$((port + 100))
LD_PRELOAD=$shim "$stress" -r 127.0.0.1 -p $port > "$tmp/p" 2>&1 &
pid=$!
for i in $(seq 50); do
	ss -Hltn "sport = :$port" | grep -q . && break
	sleep 0.1
done
kill -TERM $pid
for i in $(seq 50); do
	kill -0 $pid 2> /dev/null || break
	sleep 0.1
done
if kill -0 $pid 2> /dev/null; then
	kill -KILL $pid
	alive=1
else
	alive=0
fi
wait $pid
rc=$?
expect "passive without a peer: SIGTERM ends it within 5 s (exit $rc)" \
	test $alive = 0 -a $rc = 1

"$stress" -q 1 > /dev/null 2>&1
rc=$?
expect "usage exits 2 ($rc)" test $rc = 2
for bad in "--sizes 1M --sndbuf 64K" "--sizes 2M" "--sizes 1,,2" \
	   "--sockets 0" "-t 64 --sockets 64" "--sockets 2 -D 4K" \
	   "--slow-reader 1000" "--size-mix x"; do
	# shellcheck disable=SC2086
	"$stress" -s 127.0.0.1 $bad > /dev/null 2>&1
	rc=$?
	expect "usage: $bad exits 2 ($rc)" test $rc = 2
done
echo "loopback: $passes passed, $fails failed"
[ $fails = 0 ]
