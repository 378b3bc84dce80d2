#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: the peer host reboots (power-cycled by the harness) while
# messages for it are held.  Host 1 sends numbered messages to host 2:
#   1. N1 with both up; host 2 reads them all, then is power-cycled;
#   2. N2 once host 2 is gone: they wait on host 1's connection;
#   3. host 2, booted again, loads rds with its NIC down, binds, brings the
#      NIC up and reads; host 1 then sends N3 more.
# Host 2 must get all N1 + N2 + N3 exactly once, in order, intact; host 1
# must see the new generation at the handshake.  Recovery: from host 2's
# NIC coming up to the first held message read.  The same messages and
# sides as fault_reload (numbered.py).
. "$(dirname "$0")/lib.sh"

N1=${RDS_REBOOT_BEFORE:-200}	# read before the reboot
N2=${RDS_REBOOT_HELD:-200}	# held by host 1 across it
N3=${RDS_REBOOT_AFTER:-200}	# sent to the new incarnation
PORT=4120
export PORT
A=$N1 B=$((N1 + N2)) C=$((N1 + N2 + N3))
run() {
	timeout 300 python3 "$(dirname "$0")/numbered.py" \
		"$RDS_ADDR" "$RDS_PEER" "$@"
}
reach() { ping -c 1 -W 1 "$RDS_PEER" > /dev/null 2>&1; }

if [ "$RDS_HOST" = 2 ] && [ -n "${RDS_REBOOTED:-}" ]; then
	# Booted again: the harness set up the network and rxe0.
	trap 'ip link set "$RDS_IFACE" up' EXIT
	check "this boot is a new one" \
		test "$(cat /proc/sys/kernel/random/boot_id)" != "$(cat "$RDS_SHARED/$RDS_TEST.boot_id")"
	barrier held 240 || ksft_fail "barrier held"
	check "NIC down" ip link set "$RDS_IFACE" down
	check "insmod rds (host 2, new boot)" rds_insmod
	check "new incarnation reads #$A..#$((C - 1)) once, in order, intact" \
		run recv "$A" "$C" nicup
elif [ "$RDS_HOST" = 2 ]; then
	rds_loaded || rds_insmod || { ksft_fail "rds loaded"; ksft_exit; }
	cat /proc/sys/kernel/random/boot_id > "$RDS_SHARED/$RDS_TEST.boot_id"
	barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
	check "first incarnation reads #0..#$((A - 1))" run recv 0 "$A" up
	if [ $__ksft_fail -gt 0 ]; then
		ksft_exit
	fi
	host_reboot
else
	rds_loaded || rds_insmod || { ksft_fail "rds loaded"; ksft_exit; }
	barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
	barrier bound.0 120 || ksft_fail "barrier bound.0"
	check "sent #0..#$((A - 1))" run send 0 "$A" "$A"
	connects=$(ib_counter connects)
	restarts=$(dmesg | grep -c 'restarted (generation' || true)
	check "the peer goes down" wait_for 120 bash -c "! ping -c 1 -W 1 $RDS_PEER >/dev/null 2>&1"
	( run send "$A" "$B" "$C" > /tmp/reboot.held 2>&1
	  echo $? > /tmp/reboot.rc ) &
	held() { grep -q '^# sent' /tmp/reboot.held; }
	check "#$A..#$((B - 1)) queued while the peer is down" \
		wait_for 120 held
	barrier held 240 || ksft_fail "barrier held"
	barrier "bound.$A" 240 || ksft_fail "barrier bound.$A"
	check "#$B..#$((C - 1)) sent to the new incarnation" run send "$B" "$C" "$C"
	wait
	cat /tmp/reboot.held
	check "the held messages' sender exits 0" test "$(cat /tmp/reboot.rc)" = 0
	check "the peer's restart seen at the handshake" \
		test "$(dmesg | grep -c 'restarted (generation')" -gt "$restarts"
	check "a new connection formed" test "$(ib_counter connects)" -gt "$connects"
	check "peer answers" wait_for 30 reach
fi
ib_test_end
