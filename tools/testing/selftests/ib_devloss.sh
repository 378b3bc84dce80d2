#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The HCA goes away under a live connection and comes back: host 2 sends
# numbered messages to host 1, deletes its rxe device in the middle,
# keeps sending while there is no device (the messages wait on the
# connection's queue), and adds the device back.  Host 1 must receive
# every message exactly once, in order, intact; host 2 must see the
# connection torn down and formed again, with no hang and no leak.
. "$(dirname "$0")/lib.sh"

rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
N1=${RDS_DEVLOSS_BEFORE:-50}	# sent with the device present
N2=${RDS_DEVLOSS_DURING:-50}	# sent while it is gone
PORT=4100
export PORT
A=$N1 B=$((N1 + N2))
run() {
	timeout 300 python3 "$(dirname "$0")/numbered.py" \
		"$RDS_ADDR" "$RDS_PEER" "$@"
}
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
resets=$(ib_counter resets)
connects=$(ib_counter connects)
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 received every message once, in order, intact" \
		run recv 0 "$B" up
else
	barrier bound.0 120 || ksft_fail "barrier bound.0"
	# Each sender keeps its socket until host 1 has everything.
	run send 0 "$A" "$B" > /tmp/devloss.1 2>&1 &
	p1=$!
	sent() { grep -q '^# sent' "$1"; }
	check "#0..#$((A - 1)) sent with the device present" \
		wait_for 120 sent /tmp/devloss.1
	# The second sender binds while the device is there (a socket bound
	# with no RDMA device on its address would take the loopback
	# transport), then sends once it is gone.
	rm -f /tmp/devloss.go
	run send "$A" "$B" "$B" /tmp/devloss.go > /tmp/devloss.2 2>&1 &
	p2=$!
	bound() { grep -q '^# bound' /tmp/devloss.2; }
	check "second sender bound" wait_for 120 bound
	check "rxe deleted" rdma link delete "$RDS_RXE"
	: > /tmp/devloss.go
	check "#$A..#$((B - 1)) queued with the device gone" \
		wait_for 120 sent /tmp/devloss.2
	check "rxe added back" \
		rdma link add "$RDS_RXE" type rxe netdev "$RDS_IFACE"
	waitpids() { local p rc=0; for p; do wait "$p" || rc=1; done; return $rc; }
	check "both senders exit 0" waitpids "$p1" "$p2"
	active() { rdma link show "$RDS_RXE/1" 2>/dev/null | grep -q 'state ACTIVE'; }
	check "$RDS_RXE active again" wait_for 30 active
	check "the connection was torn down" \
		bash -c "dmesg | grep -q 'connection lost: device removal'"
	check "and formed again" test "$(ib_counter connects)" -gt "$connects"
fi
echo "# resets: $resets -> $(ib_counter resets)"
ib_test_end
