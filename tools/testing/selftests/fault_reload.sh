#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: the peer's module is unloaded and loaded again while
# messages for it are held.  Host 2 sends numbered messages to host 1:
#   1. N1 with both up; host 1 reads them all, closes, unloads rds;
#   2. N2 while host 1 has no module: they wait on host 2's connection;
#   3. host 1 loads rds with its NIC down, binds, brings the NIC up (so
#      no message can reach the new module before the socket is bound;
#      one that did would be dropped as "no socket", by design), and
#      reads; host 2 then sends N3 more.
# Host 1 must get all N1 + N2 + N3 exactly once, in order, intact; host 2
# must see the new generation at the handshake.  Recovery: from host 1's
# NIC coming up to the first held message read.  The peer-restart rule:
# Documentation/reliability.md.
. "$(dirname "$0")/lib.sh"

N1=${RDS_RELOAD_BEFORE:-200}	# read by the first incarnation
N2=${RDS_RELOAD_HELD:-200}	# held by host 2 across the reload
N3=${RDS_RELOAD_AFTER:-200}	# sent to the new incarnation
PORT=4110
rds_loaded || rds_insmod || { ksft_fail "rds loaded"; ksft_exit; }

export PORT
run() {
	timeout 300 python3 "$(dirname "$0")/numbered.py" \
		"$RDS_ADDR" "$RDS_PEER" "$@"
}
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
A=$N1 B=$((N1 + N2)) C=$((N1 + N2 + N3))

if [ "$RDS_HOST" = 1 ]; then
	trap 'ip link set "$RDS_IFACE" up' EXIT
	check "first incarnation reads #0..#$((A - 1))" run recv 0 "$A" up
	check "rmmod rds (host 1)" rmmod rds
	barrier down 120 || ksft_fail "barrier down"
	barrier held 180 || ksft_fail "barrier held"
	check "NIC down" ip link set "$RDS_IFACE" down
	check "insmod rds (host 1)" rds_insmod
	check "new incarnation reads #$A..#$((C - 1)) once, in order, intact" \
		run recv "$A" "$C" nicup
else
	barrier bound.0 120 || ksft_fail "barrier bound.0"
	check "sent #0..#$((A - 1))" run send 0 "$A" "$A"
	connects=$(ib_counter connects)
	restarts=$(dmesg | grep -c 'restarted (generation' || true)
	barrier down 120 || ksft_fail "barrier down"
	# Held: the peer has no module.
	( run send "$A" "$B" "$C" > /tmp/reload.held 2>&1
	  echo $? > /tmp/reload.rc ) &
	held() { grep -q '^# sent' /tmp/reload.held; }
	check "#$A..#$((B - 1)) queued while the peer has no module" \
		wait_for 120 held
	barrier held 180 || ksft_fail "barrier held"
	barrier "bound.$A" 180 || ksft_fail "barrier bound.$A"
	check "#$B..#$((C - 1)) sent to the new incarnation" run send "$B" "$C" "$C"
	wait
	cat /tmp/reload.held
	check "the held messages' sender exits 0" test "$(cat /tmp/reload.rc)" = 0
	check "the peer's restart seen at the handshake" \
		test "$(dmesg | grep -c 'restarted (generation')" -gt "$restarts"
	check "a new connection formed" test "$(ib_counter connects)" -gt "$connects"
fi
ib_test_end
