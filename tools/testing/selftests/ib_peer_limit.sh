#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connections per peer address (issue 17): host 1 sets
# net.rds.ib.peer_conn_max to 3 (the parameter ib_peer_conn_max must show
# it).  From an address of its own (an alias, so that no other connection
# of the peer counts), host 2's user-space peer (hs_peer) opens TOS
# 221..223, each held open: all accepted.  A request for TOS 224 is refused
# with the reason "peer limit", counted in ib_handshakes peer_limit (+1)
# and logged with the peer's address and count, and nothing is allocated
# for it (no connection row); the three first are still
# up on host 1 and none was reset.  With the bound off (0) the same
# request is accepted: the refusal was the bound's.  Then the four go;
# once their connections are down on host 1, the bound is 3 again and
# three new ones (TOS 225..227) must be accepted: the places were given
# back.  Host 1's heartbeat is off meanwhile (the peer answers none).
. "$(dirname "$0")/lib.sh"

peer=$RDS_BUILD/peer/hs_peer
P=/sys/module/rds/parameters
S=/proc/sys/net/rds/ib
MAX=3
ALIAS=${RDS_ADDR%.*}.211
HOLD=60
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }

# up_tos T: host 1's connection with the alias on TOS T is up.
up_tos() {
	[ "$(awk -v p="$ALIAS" -v t="$1" '$2 == p && $3 == t { print $5 }' \
		/proc/net/rds/connections)" = up ]
}
not_up_tos() {
	! up_tos "$1"
}
# no_row_tos T: host 1 has no connection with the alias on TOS T at all.
no_row_tos() {
	! awk -v p="$ALIAS" -v t="$1" '$2 == p && $3 == t { f = 1 } END { exit !f }' \
		/proc/net/rds/connections
}
down_tos() {
	[ "$(awk -v p="$ALIAS" -v t="$1" '$2 == p && $3 == t { print $5 }' \
		/proc/net/rds/connections)" = down ]
}
# The alias has a GID on host 2's port (rdma_cm needs it).
# shellcheck disable=SC2086
gid=0000:0000:0000:0000:0000:ffff:$(printf '%02x%02x:%02x%02x' ${ALIAS//./ })
alias_gid() {
	grep -q "$gid" /sys/class/infiniband/"$RDS_RXE"/ports/1/gids/* 2>/dev/null
}

if [ "$RDS_HOST" = 1 ]; then
	max0=$(cat $S/peer_conn_max)
	hb0=$(cat $S/heartbeat_ms)
	# Whatever happens to the test, the next ones get them back.
	trap 'echo "$max0" > $S/peer_conn_max; echo "$hb0" > $S/heartbeat_ms' EXIT
	echo 0 > $S/heartbeat_ms
	echo $MAX > $S/peer_conn_max
	check "sysctl peer_conn_max $MAX is the parameter ib_peer_conn_max" \
		test "$(cat $P/ib_peer_conn_max)" = $MAX
	lim0=$(ib_handshakes peer_limit)
	acc0=$(ib_handshakes accepted)
	resets0=$(ib_counter resets)
	barrier ready 120 || { ksft_fail "barrier ready"; ksft_exit; }
	barrier refused 300 || ksft_fail "barrier refused"
	check "one refusal counted (ib_handshakes peer_limit +$(( $(ib_handshakes peer_limit) - lim0 )))" \
		test $(( $(ib_handshakes peer_limit) - lim0 )) = 1
	check "$MAX accepted before it (accepted +$(( $(ib_handshakes accepted) - acc0 )))" \
		test $(( $(ib_handshakes accepted) - acc0 )) -ge $MAX
	for t in 221 222 223; do
		check "TOS $t up" wait_for 10 up_tos $t
	done
	check "TOS 224 not up" not_up_tos 224
	# The bound is read before anything is allocated for the request.
	check "TOS 224: no connection allocated (no row in /proc/net/rds/connections)" \
		no_row_tos 224
	check "no connection reset (resets +$(( $(ib_counter resets) - resets0 )))" \
		test "$(ib_counter resets)" = "$resets0"
	logged() {
		test_klog | grep -q "refused a connection from $ALIAS tos 224: it has $MAX connections with us (ib_peer_conn_max $MAX)"
	}
	check "the refusal logged with the peer's address and count" logged
	echo 0 > $S/peer_conn_max
	barrier nobound 60 || ksft_fail "barrier nobound"
	barrier again 120 || ksft_fail "barrier again"
	check "with no bound it was accepted (peer_limit +$(( $(ib_handshakes peer_limit) - lim0 )), accepted +$(( $(ib_handshakes accepted) - acc0 )))" \
		test $(( $(ib_handshakes accepted) - acc0 )) -ge $((MAX + 1))
	barrier gone 120 || ksft_fail "barrier gone"
	for t in 221 222 223 224; do
		check "TOS $t down once its peer went" wait_for 60 down_tos $t
	done
	echo $MAX > $S/peer_conn_max
	lim1=$(ib_handshakes peer_limit)
	acc1=$(ib_handshakes accepted)
	barrier bound 60 || ksft_fail "barrier bound"
	barrier refill 300 || ksft_fail "barrier refill"
	check "bound $MAX again: $MAX new ones accepted (accepted +$(( $(ib_handshakes accepted) - acc1 )), peer_limit +$(( $(ib_handshakes peer_limit) - lim1 )))" \
		test $(( $(ib_handshakes accepted) - acc1 )) = $MAX -a \
		"$(ib_handshakes peer_limit)" = "$lim1"
	barrier end $((HOLD + 120)) || ksft_fail "barrier end"
else
	pids=()
	# Whatever happens to the test: the peers it started go, the alias
	# too.
	trap 'kill "${pids[@]}" 2> /dev/null; ip addr del "$ALIAS/24" dev "$RDS_IFACE" 2> /dev/null' EXIT
	check "alias $ALIAS on $RDS_IFACE" ip addr replace "$ALIAS/24" dev "$RDS_IFACE"
	check "$RDS_RXE has its GID" wait_for 60 alias_gid
	barrier ready 120 || { ksft_fail "barrier ready"; ksft_exit; }
	for t in 221 222 223; do
		"$peer" -s "$ALIAS" -d "$RDS_PEER" -q $t -H "$(scaled $HOLD)" \
			> /tmp/limit.$t 2>&1 &
		pids+=($!)
		check "TOS $t accepted" wait_for 60 grep -q '^accepted' /tmp/limit.$t
	done
	out=$("$peer" -s "$ALIAS" -d "$RDS_PEER" -q 224 2>&1)
	rc=$?
	echo "# TOS 224: $out (exit $rc)"
	check "TOS 224 refused: peer limit" \
		bash -c "[ $rc = 3 ] && echo '$out' | grep -q '^refused: peer limit '"
	barrier refused 300 || ksft_fail "barrier refused"
	barrier nobound 60 || ksft_fail "barrier nobound"
	out=$("$peer" -s "$ALIAS" -d "$RDS_PEER" -q 224 -H 1 2>&1)
	rc=$?
	echo "# TOS 224, no bound: $out (exit $rc)"
	check "TOS 224 accepted with no bound" test $rc = 0
	barrier again 120 || ksft_fail "barrier again"
	# The held peers were started here: they go now.
	kill "${pids[@]}"
	wait "${pids[@]}"
	pids=()
	for t in 221 222 223; do
		sed "s/^/# TOS $t: /" /tmp/limit.$t
		check "TOS $t: the module never ended it" \
			bash -c "! grep -q '^held: RDMA_CM_EVENT' /tmp/limit.$t"
	done
	barrier gone 120 || ksft_fail "barrier gone"
	barrier bound 60 || ksft_fail "barrier bound"
	for t in 225 226 227; do
		"$peer" -s "$ALIAS" -d "$RDS_PEER" -q $t -H "$(scaled $HOLD)" \
			> /tmp/limit.$t 2>&1 &
		pids+=($!)
		wait_for 60 grep -q '^\(accepted\|refused\)' /tmp/limit.$t
		check "TOS $t accepted ($(head -n 1 /tmp/limit.$t))" \
			grep -q '^accepted' /tmp/limit.$t
	done
	barrier refill 300 || ksft_fail "barrier refill"
	kill "${pids[@]}"
	wait "${pids[@]}"
	pids=()
	check "alias removed" ip addr del "$ALIAS/24" dev "$RDS_IFACE"
	barrier end $((HOLD + 120)) || ksft_fail "barrier end"
fi
ksft_exit
