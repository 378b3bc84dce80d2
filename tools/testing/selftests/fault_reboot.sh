#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: the peer host reboots (power-cycled by the harness) while
# messages for it are held.  Host 1 sends numbered messages to host 2 on
# NUM_FLOWS flows (numbered_lib.sh), each:
#   1. N1 with both up; host 2 reads them all, then is power-cycled;
#   2. N2 once host 2 is gone: they wait on host 1's connection;
#   3. host 2, booted again, loads rds with its NIC down, binds every
#      flow's socket, brings the NIC up and reads; host 1 then sends N3.
# Host 2 must get all N1 + N2 + N3 of every flow exactly once, in order,
# intact; host 1 must see the new generation at the handshake.  Recovery:
# from host 2's NIC coming up to the first held message read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/numbered_lib.sh"

N1=${RDS_REBOOT_BEFORE:-200}	# read before the reboot
N2=${RDS_REBOOT_HELD:-200}	# held by host 1 across it
N3=${RDS_REBOOT_AFTER:-200}	# sent to the new incarnation
NUM_PORT=4120
A=$N1 B=$((N1 + N2)) C=$((N1 + N2 + N3))

if [ "$RDS_HOST" = 2 ] && [ -n "${RDS_REBOOTED:-}" ]; then
	# Booted again: the harness set up the network and rxe0.
	trap 'ip link set "$RDS_IFACE" up' EXIT
	check "this boot is a new one" \
		test "$(cat /proc/sys/kernel/random/boot_id)" != "$(cat "$RDS_SHARED/$RDS_TEST.boot_id")"
	barrier held 240 || ksft_fail "barrier held"
	check "NIC down" ip link set "$RDS_IFACE" down
	check "insmod rds (host 2, new boot)" rds_insmod
	num_start b recv "$A" "$C"
	check "new incarnation's sockets bound" wait_for 60 num_all b '^# bound'
	check "NIC up" nic_up_now
	check "new incarnation reads #$A..#$((C - 1)) on every flow once, in order, intact" \
		num_wait b
	echo "# fault reboot: $((NUM_FLOWS * C)) messages on $NUM_FLOWS flows, $((NUM_FLOWS * N2)) held; first held one read $(num_recovery b "$t_up") s after the NIC came up"
elif [ "$RDS_HOST" = 2 ]; then
	rds_loaded || rds_insmod || { ksft_fail "rds loaded"; ksft_exit; }
	cat /proc/sys/kernel/random/boot_id > "$RDS_SHARED/$RDS_TEST.boot_id"
	barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
	num_start a recv 0 "$A"
	check "first incarnation reads #0..#$((A - 1)) on $NUM_FLOWS flows" num_wait a
	[ $__ksft_fail -gt 0 ] && ksft_exit
	host_reboot
else
	rds_loaded || rds_insmod || { ksft_fail "rds loaded"; ksft_exit; }
	barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
	num_start p1 send 0 "$A" "$A" bound:0
	check "first senders exit 0" num_wait p1
	connects=$(ib_counter connects)
	restarts=$(dmesg | grep -c 'restarted (generation' || true)
	check "the peer goes down" \
		wait_for 120 bash -c "! ping -c 1 -W 1 $RDS_PEER >/dev/null 2>&1"
	num_start p2 send "$A" "$B" "$C"
	check "#$A..#$((B - 1)) queued while the peer is down" \
		wait_for 120 num_all p2 '^# sent'
	barrier held 240 || ksft_fail "barrier held"
	num_start p3 send "$B" "$C" "$C" "bound:$A"
	check "#$B..#$((C - 1)) sent to the new incarnation" num_wait p3
	check "the held messages' senders exit 0" num_wait p2
	check "the peer's restart seen at the handshake" \
		test "$(dmesg | grep -c 'restarted (generation')" -gt "$restarts"
	check "a new connection formed" test "$(ib_counter connects)" -gt "$connects"
fi
ib_test_end
