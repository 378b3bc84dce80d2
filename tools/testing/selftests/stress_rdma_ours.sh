#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds-stress -D (RDMA, every byte verified) between the two hosts over OUR
# module's IB transport: READ, WRITE and alternating, with RDS_CMSG_RDMA_MAP
# and with RDS_GET_MR + RDS_CMSG_RDMA_DEST, 4 local pieces, USE_ONCE; then
# the seed scenario of issue 7: many tasks and deep queues with the MR pool
# cut down (ib_mr_max) on both hosts, so that GET_MR / RDMA_MAP meet EAGAIN
# all the time: no task may die, nothing may be lost (both sides exit 0,
# the counts of the two sides agree) and traffic must keep flowing (the
# per-second lines).  Host 1 is passive, host 2 active.
. "$(dirname "$0")/lib.sh"

stress=$RDS_BUILD/rds-stress/rds-stress
log=$RDS_OUT/$RDS_TEST.d
mkdir -p "$log"
MR_MAX=/sys/module/rds/parameters/ib_mr_max
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make -C tools/rds-stress"; ksft_exit; }
rds_loaded || rds_insmod || { ksft_fail "our rds loaded"; ksft_exit; }

ours_has_ib() {
	[ "$(python3 -c '
import socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], 0))
print(s.getsockopt(276, 8))' "$RDS_ADDR" 2>/dev/null)" = 0 ]
}
check "our module serves $RDS_ADDR over IB" ours_has_ib

mr_max_old=$(cat $MR_MAX 2>/dev/null)
restore() { [ -n "$mr_max_old" ] && echo "$mr_max_old" > $MR_MAX; }
trap restore EXIT

# jnum FILE KEY: a number of an rds-stress JSON summary (each key used
# here appears once; no python: it takes seconds to start under TCG).
jnum() {
	grep -o "\"$2\": [0-9]*" "$1" 2>/dev/null | head -n 1 | awk '{ print $2 }'
}

# deltas BEFORE AFTER: the ib_counters of RDMA that moved.
deltas() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		n = split(a, x, " "); for (i = 1; i <= n; i++) { split(x[i], kv, "="); A[kv[1]] = kv[2] }
		n = split(b, y, " "); for (i = 1; i <= n; i++) { split(y[i], kv, "=")
			if (kv[1] ~ /^(mr_|rdma_|atomics|resets|connects)/ && kv[2] != A[kv[1]])
				printf "%s=+%d ", kv[1], kv[2] - A[kv[1]] } }'
}

# per_second OUT: the tx/s column of each per-second line.
per_second() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && !/average/ { print $2 }' "$1"
}

# flowing OUT MIN: at least MIN per-second lines, requests sent in at
# least half of them, never 5 seconds in a row without one, and requests
# in each of the last 2 seconds (under TCG with other guests on the
# machine a second without a request happens without anything wrong).
flowing() {
	local out=$1 min=$2
	per_second "$out" | awk -v min="$min" '
		{ n++; if ($1 == 0) { z++; zeros++; if (z > worst) worst = z } else z = 0
		  last[n % 2] = $1 }
		END { printf "# %d per-second lines, %d without requests, at most %d in a row\n", n, zeros, worst
		      if (n < min) { print "# only " n " per-second lines"; exit 1 }
		      if (zeros * 2 > n) { print "# more than half without requests"; exit 1 }
		      if (worst >= 5) { print "# " worst " seconds in a row without requests"; exit 1 }
		      if (last[0] == 0 || last[1] == 0) { print "# no requests at the end"; exit 1 } }'
}

# run NAME PORT SECS ARGS...: one pair (host 1 passive, host 2 active),
# verified; checks exit status, the RDMA bytes moved, that the counts of
# both sides agree, the per-second lines, and prints counter deltas.
run() {
	local name=$1 port=$2 secs=$3 rc out js c0 d0 peerjs
	shift 3
	out=$log/$name.out
	js=$log/$name.json
	c0=$(cat /sys/module/rds/parameters/ib_counters)
	d0=$(dmesg | wc -l)
	rdma statistic show link "$RDS_RXE/1" > "$log/$name.rxe0" 2>&1
	[ "$RDS_HOST" = 2 ] &&
		echo "# $name: rds-stress -s $RDS_PEER -p $port $* -T $secs"
	stress_pair "$name" "$port" $((secs + 120)) "$out" "$js" -- "$@" \
		-T "$secs"
	rc=$stress_rc
	grep -E 'rds-stress:|average' "$out" | sed 's/^/#   /'
	grep -E '"rdma"|"counts"|"errors"|"failure"' "$js" 2>/dev/null |
		sed 's/^/#   /'
	echo "# $name: counters moved: $(deltas "$c0" \
		"$(cat /sys/module/rds/parameters/ib_counters)")"
	rdma statistic show link "$RDS_RXE/1" > "$log/$name.rxe1" 2>&1
	echo "# $name: rxe counters moved: $(awk 'FNR == 1 { f++ }
	     { for (i = 3; i < NF; i += 2) v[f, $i] = $(i + 1); if (f == 2) for (i = 3; i < NF; i += 2) k[$i] = 1 }
	     END { for (n in k) if (v[2, n] != v[1, n] && n !~ /pkts|rdma_/) printf "%s +%d ", n, v[2, n] - v[1, n] }' \
		"$log/$name.rxe0" "$log/$name.rxe1" 2>/dev/null)"
	# what the module said meanwhile (why a connection reset, if one did)
	dmesg | tail -n +"$((d0 + 1))" | grep -E 'rds: ' | tail -n 12 |
		sed 's/^/#   dmesg: /'
	cp "$js" "$RDS_SHARED/$RDS_TEST.$name.json.$RDS_HOST" 2>/dev/null
	check "$name: exits 0 (every message and RDMA byte verified)" \
		test "$rc" = 0
	check "$name: RDMA bytes moved" \
		test "$(( $(jnum "$js" bytes_in) + $(jnum "$js" bytes_out) ))" -gt 0 -a \
		"$(jnum "$js" ops_as_responder)" -gt 0
	if [ "$FLOW" = 1 ]; then
		check "$name: traffic kept flowing" flowing "$out" $((secs - 3))
	else
		per_second "$out" | awk '
			{ n++; if ($1 == 0) z++ }
			END { printf "# %d per-second lines, %d without requests (not asserted)\n", n, z }'
	fi
	barrier "$name-json" 60
	peerjs=$RDS_SHARED/$RDS_TEST.$name.json.$((3 - RDS_HOST))
	check "$name: requests and acks sent here arrived there" \
		test "$(jnum "$js" tx_req)" = "$(jnum "$peerjs" rx_req)" -a \
		"$(jnum "$js" tx_ack)" = "$(jnum "$peerjs" rx_ack)" -a \
		-n "$(jnum "$js" tx_req)"
	LAST_JSON=$js
	barrier "$name-done" 120
}

barrier loaded 60 || ksft_fail "barrier loaded"

port=5000
# First the seed scenario of issue 7: 8 tasks a side, depth 16 (1024 requests in
# flight a side, each with its own MR) against a pool of 32 MRs per device.
if [ -w $MR_MAX ]; then
	for getmr in 1 0; do
		echo 32 > $MR_MAX
		ex0=$(ib_counter mr_exhausted)
		FLOW=1 run "pool-getmr$getmr" $port 12 -t 8 -d 16 -D 16K -I 4 -M 0 \
			--rdma-use-get-mr $getmr
		port=$((port + 10))
		ex1=$(ib_counter mr_exhausted)
		echo "# pool-getmr$getmr: mr_exhausted $ex0 -> $ex1"
		if [ "$getmr" = 1 ]; then
			check "pool-getmr1: RDS_GET_MR met EAGAIN (the pool ran out)" \
				test "$(jnum "$LAST_JSON" get_mr_eagain)" -gt 0
		else
			check "pool-getmr0: RDMA_MAP met EAGAIN (the pool ran out)" \
				test "$(jnum "$LAST_JSON" map_eagain)" -gt 0
		fi
		check "pool-getmr$getmr: mr_exhausted counted" \
			test "${ex1:-0}" -gt "${ex0:-0}"
		restore
	done
else
	ksft_fail "ib_mr_max writable" "$MR_MAX missing"
fi
# READ only, WRITE only and both alternating with buffers exposed by
# RDS_CMSG_RDMA_MAP; with RDS_GET_MR both alternating (the ops are the
# same, only how the buffer was registered differs), then USE_ONCE.
for getmr in 0 1; do
	modes="1 2 0"
	[ "$getmr" = 1 ] && modes=0
	for mode in $modes; do
		case $mode in 1) m=read ;; 2) m=write ;; 0) m=alt ;; esac
		run "$m-getmr$getmr" $port 5 -t 2 -d 4 -D 64K -I 4 -M $mode \
			--rdma-use-get-mr $getmr
		port=$((port + 10))
	done
	run "once-getmr$getmr" $port 5 -t 2 -d 4 -D 16K -I 4 -M 0 \
		--rdma-use-once 1 --rdma-use-get-mr $getmr
	port=$((port + 10))
done

# A link cut in the middle of an RDMA load: ops in flight at the cut end
# RDS_RDMA_DROPPED with their ACK (the message carrying them), rds-stress
# resends those ACKs with new ops, and both sides still verify every byte
# and agree on every count.
c0=$(ib_counter connects)
# The cutter waits for the pair's control connection, not for the barrier
# "cut-up": its own arrival there would let host 2 start before host 1's
# passive side listens.
if [ "$RDS_HOST" = 1 ]; then
	( wait_for 90 tcp_connected $port && sleep 5 &&
	  host_request link off && sleep 6 && host_request link on ) &
	cutter=$!
fi
run "cut" $port 30 -t 2 -d 8 -D 16K -I 4 -M 0
port=$((port + 10))
if [ "$RDS_HOST" = 1 ]; then
	check "cut: the link was cut and restored" wait $cutter
fi
echo "# cut: ACKs dropped with their op and resent here: $(jnum "$LAST_JSON" dropped_resent), overtaken: $(jnum "$LAST_JSON" acks_overtaking)"
check "cut: the connection was formed again" \
	test "$(ib_counter connects)" -gt "${c0:-0}"

ib_test_end
