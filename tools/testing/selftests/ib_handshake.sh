#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The IB listener judges each connection request by its handshake: host 2
# runs the user-space peer (tools/testing/peer/hs_peer, built from the
# module's own net/ib/hs.c) against host 1's module with a valid handshake
# and with each kind of malformed one.  The valid one is accepted with our
# handshake in the answer; each other is refused with the right reason,
# which host 1 counts.  The flags of minor 2 (hs.h): a request of a
# build of minor 1 is answered without any flag, one of minor 2 with
# give-back asked for (host 1 receives from its SRQ, give-back on), a
# flag at minor 1 or one no build knows is refused.  Then each allocation of the accept path fails in
# turn (fault_nth): the request is refused as "busy", nothing leaks, and
# the next request is accepted.
. "$(dirname "$0")/lib.sh"

peer=$RDS_BUILD/peer/hs_peer
P=/sys/module/rds/parameters
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
# mode : what the answer must say
cases="valid:accepted magic:not-RDS major:version flags:flags gen0:generation-0
frag:fragment-size credits:credits short:generation-0 empty:not-RDS
old:accepted giveback:accepted oldflags:flags"

if [ "$RDS_HOST" = 1 ]; then
	keys="accepted not_rds version flags gen0 frag credits"
	declare -A before
	for k in $keys; do
		before[$k]=$(ib_handshakes "$k")
	done
	barrier ready 60 || { ksft_fail "barrier ready"; ksft_exit; }
	barrier done 600 || { ksft_fail "barrier done"; ksft_exit; }
	cat $P/ib_handshakes
	# Expected increments: "short" and "empty" read as gen0 and not_rds.
	declare -A want=([accepted]=3 [not_rds]=2 [version]=1 [flags]=2
			 [gen0]=2 [frag]=1 [credits]=1)
	for k in $keys; do
		check "host 1 counted $k +${want[$k]}" \
			test $(( $(ib_handshakes "$k") - before[$k] )) = "${want[$k]}"
	done
	refused_logged() {
		test_klog | grep -q "refused a connection from $RDS_PEER"
	}
	check "refusals logged with the peer's address" refused_logged
	for n in 1 2 3; do
		echo "$n" > $P/fault_nth
		barrier "fault$n" 60 || ksft_fail "barrier fault$n"
		barrier "faulted$n" 300 || ksft_fail "barrier faulted$n"
		echo 0 > $P/fault_nth
	done
	faults_logged() {
		[ "$(test_klog | grep -c 'rds: fault injected.*rds_ib_attempt_setup')" -ge 3 ]
	}
	check "accept-path faults injected and logged (this test's kernel log)" \
		faults_logged
	barrier last 300 || ksft_fail "barrier last"
else
	barrier ready 60 || { ksft_fail "barrier ready"; ksft_exit; }
	for c in $cases; do
		mode=${c%%:*}
		want=${c#*:}
		want=${want//-/ }
		out=$("$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -m "$mode" 2>&1)
		rc=$?
		echo "# $mode: $out (exit $rc)"
		if [ "$want" = accepted ]; then
			check "$mode handshake accepted" test $rc = 0
			# minor 1 gets none; minor 2 gets give-back asked for
			flags=0x1
			[ "$mode" = old ] && flags=0x0
			check "$mode handshake: the answer's flags are $flags" \
				bash -c "echo '$out' | grep -q 'flags $flags\$'"
		else
			check "$mode handshake refused: $want" \
				bash -c "[ $rc = 3 ] && echo '$out' | grep -q '^refused: $want '"
		fi
	done
	barrier done 60 || ksft_fail "barrier done"
	for n in 1 2 3; do
		barrier "fault$n" 60 || ksft_fail "barrier fault$n"
		out=$("$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -m valid 2>&1)
		rc=$?
		echo "# fault $n: $out (exit $rc)"
		check "allocation $n of the accept path fails: refused busy" \
			bash -c "[ $rc = 3 ] && echo '$out' | grep -q '^refused: busy '"
		barrier "faulted$n" 60 || ksft_fail "barrier faulted$n"
	done
	barrier last 300 || ksft_fail "barrier last"
	check "accepted again after the faults" \
		"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -m valid
fi
ksft_exit
