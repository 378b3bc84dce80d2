#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Many connections on one device (issue 17): host 2 gets A address aliases
# (RDS_SCALE_NET.FIRST ..), and scale_drv sets up N = A x T connections
# from them to host 1, one per (alias, TOS 1..T), all carrying messages at
# once, verified both ways (see scale_drv.c).  Checked: every connection
# up and every message delivered once, in order, intact (scale_drv's exit
# status); no connection request refused on host 1 (ib_handshakes: only
# "accepted" moves); the module unloads with the N connections up within
# RDS_SCALE_UNLOAD_MAX seconds (default 60) on both hosts at once, and
# loads again; no connection reset or declared lost by its heartbeat
# (ib_counters' resets, hb_timeouts +0); on host 2 ib_gate never showed
# more attempts in flight than ib_connect_max and, when a stage started
# more at once, some waited (connect_waits).  Printed ("# scale: ..."):
# the setup time of each stage (1, 100, N), the time to close host 2's N
# sockets, the unload time, memory per connection at 1, 100 and N on both
# hosts.
#
# Parameters (plan line VAR=VAL, both hosts): RDS_SCALE_ALIASES (default
# 16), RDS_SCALE_TOS (4), RDS_SCALE_ROUNDS (4), RDS_SCALE_WAIT (600 s),
# RDS_SCALE_UNLOAD_MAX (60 s), RDS_SCALE_CONNECT_MAX (host 2's
# ib_connect_max while the test runs), RDS_SCALE_HB_MS (both hosts'
# net.rds.ib.heartbeat_ms while the test runs), RDS_SCALE_PARAMS (module
# parameters both hosts reload with first; the end loads it again
# without), RDS_SCALE_RDS=mainline (the kernel's RDS,
# rds_rdma, loaded here instead of ours; only the driver's outcome and the
# unload are checked).  The idle close (ib_idle_secs) is off while
# the test runs: a stage of 1000 connections under emulation can take
# longer than its default 300 s, and the first connections would close
# before the last came up.
. "$(dirname "$0")/lib.sh"

A=${RDS_SCALE_ALIASES:-16}
T=${RDS_SCALE_TOS:-4}
NET=${RDS_SCALE_NET:-10.0.0}
FIRST=${RDS_SCALE_FIRST:-3}
N=$((A * T))
export RDS_SCALE_ALIASES=$A RDS_SCALE_TOS=$T RDS_SCALE_NET=$NET \
	RDS_SCALE_FIRST=$FIRST
drv=$RDS_BUILD/selftests/scale_drv
P=/sys/module/rds/parameters

# aliases add|del: host 2's A addresses, in one ip(8) batch.
aliases() {
	local i
	for ((i = FIRST; i < FIRST + A; i++)); do
		echo "addr $1 $NET.$i/24 dev $RDS_IFACE"
	done | ip -batch -
}
which=${RDS_SCALE_RDS:-ours}
if [ "$which" = mainline ]; then
	# The kernel's own RDS (Debian's rds_rdma) on the same setup, as far
	# as it goes: the connections up, memory per connection, the unload.
	rds_loaded && { ksft_fail "no rds loaded before"; ksft_exit; }
	check "modprobe rds_rdma (the kernel's RDS)" modprobe rds_rdma
	[ "$RDS_HOST" = 2 ] && check "$A aliases" aliases add
	barrier aliases 120 || ksft_fail "barrier aliases"
	"$drv" > /tmp/scale.out 2>&1
	rc=$?
	cat /tmp/scale.out
	check "$N connections up over the kernel's RDS, every message verified" \
		test $rc = 0
	barrier unload "$((${RDS_SCALE_WAIT:-600} + 300))" || ksft_fail "barrier unload"
	t0=$(date +%s%N)
	check "modprobe -r rds_rdma rds" timeout "$(scaled 600)" modprobe -r rds_rdma rds
	echo "# scale: unload $N $((($(date +%s%N) - t0) / 1000000))"
	[ "$RDS_HOST" = 2 ] && check "aliases removed" aliases del
	barrier end 240 || ksft_fail "barrier end"
	ksft_exit
fi
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
if [ -n "${RDS_SCALE_PARAMS:-}" ]; then
	# shellcheck disable=SC2086 # a list of NAME=VALUE words
	check "reload with $RDS_SCALE_PARAMS" rds_reload $RDS_SCALE_PARAMS
fi

# The IPv4 GIDs of our rxe port number at least $1 (one per address,
# whatever its RoCE type).
gids_at_least() {
	[ "$(cat /sys/class/infiniband/"$RDS_RXE"/ports/1/gids/* 2>/dev/null |
		grep '^0000:0000:0000:0000:0000:ffff:' | sort -u | wc -l)" -ge "$1" ]
}
# Sum of ib_handshakes' refusals (every key but "accepted").
refused() {
	tr ' ' '\n' < $P/ib_handshakes |
		awk -F= '$1 != "accepted" { n += $2 } END { print n + 0 }'
}

idle=$(cat $P/ib_idle_secs)
echo 0 > $P/ib_idle_secs
hb=/proc/sys/net/rds/ib/heartbeat_ms
hb0=$(cat $hb)
[ -n "${RDS_SCALE_HB_MS:-}" ] && echo "$RDS_SCALE_HB_MS" > $hb
cmax0=$(cat $P/ib_connect_max 2>/dev/null)
if [ "$RDS_HOST" = 2 ]; then
	[ -n "${RDS_SCALE_CONNECT_MAX:-}" ] &&
		echo "$RDS_SCALE_CONNECT_MAX" > $P/ib_connect_max
	check "$A aliases $NET.$FIRST..$((FIRST + A - 1)) on $RDS_IFACE" \
		aliases add
	check "$RDS_RXE has a GID for each" wait_for 60 gids_at_least $((A + 1))
fi
ref0=$(refused)
acc0=$(ib_handshakes accepted)
resets0=$(ib_counter resets)
hbt0=$(ib_counter hb_timeouts)
waits0=$(ib_counter connect_waits)
barrier aliases 120 || ksft_fail "barrier aliases"

"$drv" > /tmp/scale.out 2>&1
rc=$?
cat /tmp/scale.out
check "$N connections up, every message of both directions verified" \
	test $rc = 0
if [ "$RDS_HOST" = 1 ]; then
	echo "# host 1: ib_handshakes: $(cat $P/ib_handshakes)"
	check "no connection request refused" test "$(refused)" = "$ref0"
	check "at least $N requests accepted" \
		test $(($(ib_handshakes accepted) - acc0)) -ge "$N"
fi
echo "# ib_counters: $(cat $P/ib_counters)"
resets=$(($(ib_counter resets) - resets0))
hbt=$(($(ib_counter hb_timeouts) - hbt0))
check "no connection reset, no heartbeat timeout (resets +$resets, hb_timeouts +$hbt)" \
	test "$resets" = 0 -a "$hbt" = 0
if [ "$RDS_HOST" = 2 ]; then
	# The connect gate (ib_connect_max): scale_drv samples ib_gate.
	cmax=$(cat $P/ib_connect_max 2>/dev/null)
	gmax=$(awk '$2 == "scale:" && $3 == "gate_max_in_flight" { v = $4 }
		END { print v + 0 }' /tmp/scale.out)
	waits=$(($(ib_counter connect_waits) - ${waits0:-0}))
	echo "# scale: gate ib_connect_max $cmax max_in_flight $gmax connect_waits +$waits"
	check "at most ib_connect_max ($cmax) attempts in flight (ib_gate showed $gmax)" \
		test -n "$cmax" -a "$gmax" -ge 1 -a \( "$cmax" = 0 -o "$gmax" -le "${cmax:-0}" \)
	# the largest stage: 2..N, or 2..100 and 101..N
	batch=$((N <= 100 ? N - 1 : (N - 100 > 99 ? N - 100 : 99)))
	if [ -n "$cmax" ] && [ "$cmax" -gt 0 ] && [ "$batch" -gt "$cmax" ]; then
		check "attempts waited at the gate (connect_waits +$waits)" \
			test "$waits" -gt 0
	fi
fi

# Both hosts unload at once with the N connections up.
echo "$idle" > $P/ib_idle_secs
echo "$hb0" > $hb
[ -n "$cmax0" ] && echo "$cmax0" > $P/ib_connect_max
barrier unload "$((${RDS_SCALE_WAIT:-600} + 120))" || ksft_fail "barrier unload"
t0=$(date +%s%N)
check "rmmod with $N connections up" timeout "$(scaled 300)" rmmod rds
ms=$((($(date +%s%N) - t0) / 1000000))
echo "# scale: unload $N $ms"
check "unloaded within ${RDS_SCALE_UNLOAD_MAX:-60} s (took $ms ms)" \
	test "$ms" -le "$(($(scaled "${RDS_SCALE_UNLOAD_MAX:-60}") * 1000))"
check "module gone" wait_for 10 test ! -d /sys/module/rds
[ "$RDS_HOST" = 2 ] && check "aliases removed" aliases del
check "reload" rds_insmod
barrier end 240 || ksft_fail "barrier end"
ksft_exit
