#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Passive attempts in flight per device (issue 17): host 1 sets
# net.rds.ib.accept_max to 2 (the parameter ib_accept_max must show it)
# and waits until its device has no accepted attempt in flight (accepting
# in /proc/net/rds/devices 0).  Host 2's user-space peer (hs_peer -N)
# leaves two requests half-open (answered, never completed), from two
# aliases of its own (TOS 231 from .212, 232 from .213): accepted,
# accepting 2.  A third request from a third alias (.214, TOS 233) is
# refused with the reason "accept limit", counted in ib_handshakes
# accept_limit (+1) and logged with the device and its count, and nothing
# is allocated for it (no connection row, accepting still 2): the bound
# is the device's, not a peer's.  With the bound off (0) the same request
# is accepted (the refusal was the bound's): accepting 3.  With the bound
# 2 again, the three end by the attempt timeout (accept_timeouts +3)
# within 15 s + 10 s (scaled) and give their places back (accepting 0,
# nothing refused meanwhile); a new half-open request from .214 (TOS 234)
# is then accepted (accepting 1), and once host 2's peer goes (its id
# destroyed: a refusal of the answer, or the timeout) its place comes
# back too (accepting 0).
. "$(dirname "$0")/lib.sh"

peer=$RDS_BUILD/peer/hs_peer
P=/sys/module/rds/parameters
S=/proc/sys/net/rds/ib
MAX=2
# The attempt timeout, host 1's ib_attempt_timeout_ms: 15 s, scaled
# with the test's clock (wait_for scales TIMEOUT + MARGIN), so that on a
# slow kernel the half-open attempts last while the next peers start (a
# debug kernel took 8 s for each hs_peer: the first attempt ended before
# the third request came).
TIMEOUT=15
MARGIN=10
NET=${RDS_ADDR%.*}
A1=$NET.212
A2=$NET.213
A3=$NET.214
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }

# accepting: host 1's device's passive attempts in flight (the column
# found by its name in the header: it is the last one, 13th).
accepting() {
	awk -v d="$RDS_RXE" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "accepting") c = i }
		c && $1 == d { print $c }' /proc/net/rds/devices
}
accepting_is() {
	[ "$(accepting)" = "$1" ]
}
# no_row A T: host 1 has no connection with A on TOS T at all.
no_row() {
	! awk -v p="$1" -v t="$2" '$2 == p && $3 == t { f = 1 } END { exit !f }' \
		/proc/net/rds/connections
}
# The alias A has a GID on host 2's port (rdma_cm needs it).
alias_gid() {
	local g
	# shellcheck disable=SC2086
	g=0000:0000:0000:0000:0000:ffff:$(printf '%02x%02x:%02x%02x' ${1//./ })
	grep -q "$g" /sys/class/infiniband/"$RDS_RXE"/ports/1/gids/* 2>/dev/null
}

if [ "$RDS_HOST" = 1 ]; then
	max0=$(cat $S/accept_max) tmo0=$(cat $P/ib_attempt_timeout_ms)
	# Whatever happens to the test, the next ones get it back.
	trap 'echo "$max0" > $S/accept_max; echo "$tmo0" > $P/ib_attempt_timeout_ms' EXIT
	echo $MAX > $S/accept_max
	scaled $((TIMEOUT * 1000)) > $P/ib_attempt_timeout_ms
	check "sysctl accept_max $MAX is the parameter ib_accept_max" \
		test "$(cat $P/ib_accept_max)" = $MAX
	check "no accepted attempt in flight on $RDS_RXE ($(accepting))" \
		wait_for 30 accepting_is 0
	lim0=$(ib_handshakes accept_limit)
	acc0=$(ib_handshakes accepted)
	to0=$(ib_counter accept_timeouts)
	barrier ready 120 || { ksft_fail "barrier ready"; ksft_exit; }
	barrier held 120 || { ksft_fail "barrier held"; ksft_exit; }
	check "two half-open attempts accepted (accepted +$(( $(ib_handshakes accepted) - acc0 )))" \
		test $(( $(ib_handshakes accepted) - acc0 )) -ge 2
	check "$RDS_RXE: accepting $MAX ($(accepting))" accepting_is $MAX
	barrier refused 120 || ksft_fail "barrier refused"
	check "one refusal counted (ib_handshakes accept_limit +$(( $(ib_handshakes accept_limit) - lim0 )))" \
		test $(( $(ib_handshakes accept_limit) - lim0 )) = 1
	check "$A3 TOS 233: no connection allocated (no row in /proc/net/rds/connections)" \
		no_row "$A3" 233
	check "$RDS_RXE: accepting still $MAX ($(accepting))" accepting_is $MAX
	logged() {
		test_klog | grep -q "refused a connection from $A3 tos 233: $RDS_RXE has $MAX accepted connections not up yet (ib_accept_max $MAX)"
	}
	check "the refusal logged with the device and its count" logged
	echo 0 > $S/accept_max
	barrier nobound 60 || ksft_fail "barrier nobound"
	barrier nobound_done 120 || ksft_fail "barrier nobound_done"
	check "with no bound it was accepted (accepted +$(( $(ib_handshakes accepted) - acc0 )), accept_limit +$(( $(ib_handshakes accept_limit) - lim0 )))" \
		test $(( $(ib_handshakes accepted) - acc0 )) -ge 3 -a \
		$(( $(ib_handshakes accept_limit) - lim0 )) = 1
	check "$RDS_RXE: accepting 3 ($(accepting))" accepting_is 3
	echo $MAX > $S/accept_max
	ended() {
		[ $(( $(ib_counter accept_timeouts) - to0 )) -ge 3 ] &&
			accepting_is 0
	}
	wait_for $((TIMEOUT + MARGIN)) ended
	rc=$?
	echo "# host 1: accept_timeouts +$(( $(ib_counter accept_timeouts) - to0 )), accepting $(accepting) (rc $rc)"
	check "the three ended by the timeout and gave their places back (accept_timeouts +$(( $(ib_counter accept_timeouts) - to0 )), accepting $(accepting))" \
		test $rc = 0
	lim1=$(ib_handshakes accept_limit)
	acc1=$(ib_handshakes accepted)
	barrier timedout 60 || ksft_fail "barrier timedout"
	barrier again 120 || ksft_fail "barrier again"
	check "bound $MAX again: a new one accepted (accepted +$(( $(ib_handshakes accepted) - acc1 )), accept_limit +$(( $(ib_handshakes accept_limit) - lim1 )))" \
		test $(( $(ib_handshakes accepted) - acc1 )) -ge 1 -a \
		"$(ib_handshakes accept_limit)" = "$lim1"
	check "$RDS_RXE: accepting 1 ($(accepting))" accepting_is 1
	# Host 2 keeps its peer until now: its end gives the place back.
	barrier counted 60 || ksft_fail "barrier counted"
	barrier gone $((TIMEOUT + MARGIN + 60)) || ksft_fail "barrier gone"
	check "its place back once its peer went ($(accepting); accept_timeouts +$(( $(ib_counter accept_timeouts) - to0 )))" \
		wait_for $((TIMEOUT + MARGIN)) accepting_is 0
	barrier end 120 || ksft_fail "barrier end"
else
	pids=()
	# Whatever happens to the test: the peers it started go, the
	# aliases too.
	trap 'kill "${pids[@]}" 2> /dev/null; for a in $A1 $A2 $A3; do ip addr del "$a/24" dev "$RDS_IFACE" 2> /dev/null; done' EXIT
	for a in $A1 $A2 $A3; do
		check "alias $a on $RDS_IFACE" ip addr replace "$a/24" dev "$RDS_IFACE"
		check "$RDS_RXE has its GID" wait_for 60 alias_gid "$a"
	done
	barrier ready 120 || { ksft_fail "barrier ready"; ksft_exit; }
	# halfopen A T: leave a request from A on TOS T half-open.
	halfopen() {
		"$peer" -s "$1" -d "$RDS_PEER" -q "$2" -N "$(scaled 300)" \
			> "/tmp/acclimit.$2" 2>&1 &
		pids+=($!)
		wait_for 60 grep -q '^\(half-open: answered\|refused\)' "/tmp/acclimit.$2"
		check "$1 TOS $2 answered, left half-open ($(head -n 1 "/tmp/acclimit.$2"))" \
			grep -q '^half-open: answered' "/tmp/acclimit.$2"
	}
	halfopen "$A1" 231
	halfopen "$A2" 232
	barrier held 120 || ksft_fail "barrier held"
	out=$("$peer" -s "$A3" -d "$RDS_PEER" -q 233 -N 1 2>&1)
	rc=$?
	echo "# $A3 TOS 233: $out (exit $rc)"
	check "$A3 TOS 233 refused: accept limit" \
		bash -c "[ $rc = 3 ] && echo '$out' | grep -q '^refused: accept limit '"
	barrier refused 120 || ksft_fail "barrier refused"
	barrier nobound 60 || ksft_fail "barrier nobound"
	halfopen "$A3" 233
	barrier nobound_done 120 || ksft_fail "barrier nobound_done"
	barrier timedout $((TIMEOUT + MARGIN + 60)) || ksft_fail "barrier timedout"
	halfopen "$A3" 234
	barrier again 120 || ksft_fail "barrier again"
	# Not before host 1 has seen the last one's place (accepting 1).
	barrier counted 60 || ksft_fail "barrier counted"
	# The peers were started here: they go now.
	kill "${pids[@]}"
	wait "${pids[@]}"
	pids=()
	for t in 231 232 233 234; do
		sed "s/^/# TOS $t: /" /tmp/acclimit.$t
	done
	rm -f /tmp/acclimit.*
	barrier gone $((TIMEOUT + MARGIN + 60)) || ksft_fail "barrier gone"
	for a in $A1 $A2 $A3; do
		check "alias $a removed" ip addr del "$a/24" dev "$RDS_IFACE"
	done
	barrier end 120 || ksft_fail "barrier end"
fi
ksft_exit
