#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: the peer's module is unloaded and loaded again while
# messages for it are held.  Host 2 sends numbered messages to host 1 on
# NUM_FLOWS flows (numbered_lib.sh), each:
#   1. N1 with both up; host 1 reads them all, closes, unloads rds;
#   2. N2 while host 1 has no module: they wait on host 2's connection;
#   3. host 1 loads rds with its NIC down, binds every flow's socket,
#      brings the NIC up (so no message can reach the new module before
#      the sockets are bound; one that did would be dropped as "no
#      socket", by design) and reads; host 2 then sends N3 more.
# Host 1 must get all N1 + N2 + N3 of every flow exactly once, in order,
# intact; host 2 must see the new generation at the handshake.  Recovery:
# from host 1's NIC coming up to the first held message read.  The
# peer-restart rule: Documentation/reliability.md.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/numbered_lib.sh"

N1=${RDS_RELOAD_BEFORE:-200}	# read by the first incarnation
N2=${RDS_RELOAD_HELD:-200}	# held by host 2 across the reload
N3=${RDS_RELOAD_AFTER:-200}	# sent to the new incarnation
NUM_PORT=4110
A=$N1 B=$((N1 + N2)) C=$((N1 + N2 + N3))
rds_loaded || rds_insmod || { ksft_fail "rds loaded"; ksft_exit; }
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }

if [ "$RDS_HOST" = 1 ]; then
	trap 'ip link set "$RDS_IFACE" up' EXIT
	num_start a recv 0 "$A"
	check "first incarnation reads #0..#$((A - 1)) on $NUM_FLOWS flows" num_wait a
	check "rmmod rds (host 1)" rmmod rds
	barrier down 120 || ksft_fail "barrier down"
	barrier held 180 || ksft_fail "barrier held"
	check "NIC down" ip link set "$RDS_IFACE" down
	check "insmod rds (host 1)" rds_insmod
	num_start b recv "$A" "$C"
	check "new incarnation's sockets bound" wait_for 60 num_all b '^# bound'
	check "NIC up" nic_up_now
	check "new incarnation reads #$A..#$((C - 1)) on every flow once, in order, intact" \
		num_wait b
	echo "# fault reload: $((NUM_FLOWS * C)) messages on $NUM_FLOWS flows, $((NUM_FLOWS * N2)) held; first held one read $(num_recovery b "$t_up") s after the NIC came up"
else
	num_start p1 send 0 "$A" "$A" bound:0
	check "#0..#$((A - 1)) sent on $NUM_FLOWS flows" wait_for 120 num_all p1 '^# sent'
	connects=$(ib_counter connects)
	restarts=$(dmesg | grep -c 'restarted (generation' || true)
	barrier down 120 || ksft_fail "barrier down"
	num_start p2 send "$A" "$B" "$C"
	check "#$A..#$((B - 1)) queued while the peer has no module" \
		wait_for 120 num_all p2 '^# sent'
	barrier held 180 || ksft_fail "barrier held"
	num_start p3 send "$B" "$C" "$C" "bound:$A"
	check "#$B..#$((C - 1)) sent to the new incarnation" num_wait p3
	check "the held messages' senders exit 0" num_wait p2
	check "the first senders exit 0" num_wait p1
	check "the peer's restart seen at the handshake" \
		test "$(dmesg | grep -c 'restarted (generation')" -gt "$restarts"
	check "a new connection formed" test "$(ib_counter connects)" -gt "$connects"
fi
ib_test_end
