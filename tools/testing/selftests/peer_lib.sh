#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Common part of the wire-peer tests (peer_conform, peer_hostile,
# peer_fuzz): host 1 runs our module and AF_RDS sockets (peer_host.py),
# host 2 runs the user-space peer (build/peer/wire_peer), which is the only
# RDS endpoint at 10.0.0.2 while they run: host 2's module is unloaded for
# the test (so that host 1's module, connecting to 10.0.0.2, meets the
# peer) and loaded again at its end, or when the harness stops the test.
# Each test uses its own TOS (101..114, beyond ib_memory_test's 1..64), so
# host 1 gives it a fresh RDS connection.
. "$(dirname "$0")/lib.sh"

peer=$RDS_BUILD/peer/wire_peer
hostpy="python3 $RDS_TOP/tools/testing/selftests/peer_host.py"
P=/sys/module/rds/parameters

# Boundary sizes: around the header (48), the packing limit (4048), the
# fragment (4096) and its multiples, 64 KiB and the 1 MiB maximum.
PEER_SIZES=0,1,47,48,49,4047,4048,4049,4095,4096,4097,8191,8192,8193,12287,12288,12289,65535,65536,65537,1048575,1048576

# The mainline-mode tests' negative run: WIRE_PEER_NEG=1 (a plan
# variable) makes every check of the module expect what it must not do.
# neg: 0 or 1; hw: how long a check waits for host 1 (3 s when it must
# fail); the negative run's barriers apart from a run without it in the
# same boot.
neg=${WIRE_PEER_NEG:-0}
hw=30
if [ "$neg" = 1 ]; then
	export RDS_TEST=$RDS_TEST-neg
	hw=3
fi

# held_is TOS N: host 1 holds N messages of TOS (for wait_for).
held_is() { test "$($hostpy held "$1")" = "$2"; }

# peer_exit: what a test undoes however it ends (a test may define its
# own after sourcing this file; peer_begin sets the EXIT trap).
peer_exit() { :; }

# peer_begin: host 2 unloads its module (the peer takes its address).
peer_begin() {
	if [ "$RDS_HOST" = 2 ]; then
		# Whatever happens to the test, the module is loaded again.
		trap 'peer_exit; rds_loaded || rds_insmod' EXIT
		trap 'exit 1' TERM INT
		if rds_loaded; then
			check "host 2: our module unloaded for the peer" \
				timeout 60 rmmod rds
		fi
	else
		trap peer_exit EXIT
		trap 'exit 1' TERM INT
		rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
	fi
	barrier begin 120 || { ksft_fail "barrier begin"; ksft_exit; }
}

# peer_end: host 2 loads its module again; both check it is there.
peer_end() {
	barrier end.peer 900 || ksft_fail "barrier end.peer"
	if [ "$RDS_HOST" = 2 ]; then
		rds_loaded || check "host 2: module loaded again" rds_insmod
	fi
	check "rds loaded at the end" rds_loaded
	if [ $__ksft_fail -gt 0 ]; then
		echo w > /proc/sysrq-trigger
		dmesg | tail -60 | sed 's/^/# /'
	fi
	[ "$RDS_HOST" = 1 ] &&
		echo "# ib_counters: $(cat $P/ib_counters)" &&
		echo "# ib_handshakes: $(cat $P/ib_handshakes)"
	barrier end 240 || ksft_fail "barrier end"
	ksft_exit
}

# peer_up OUT: wait until the backgrounded peer printed "up" in OUT.
peer_up() {
	wait_for 120 grep -q '^up$' "$1"
}

# peer_result OUT PID NAME: wait for the peer, show its output, check it
# passed.
peer_result() {
	wait "$2"
	local rc=$?
	sed 's/^/  /' "$1"
	check "$3: peer passed (exit $rc)" \
		bash -c "[ $rc = 0 ] && grep -q '^result: pass' '$1'"
}

# counters: ib_counters KEY (host 1).
delta() { echo $(( $(ib_counter "$1") - ${base[$1]} )); }
declare -A base
snap() {
	local k
	for k in tx_frames rx_frames tx_ctrl tx_acks credit_waits rnr \
		 bad_frames resets connects rx_nomem stale_rx cong_sent cong_recv \
		 rx_copies; do
		base[$k]=$(ib_counter $k)
	done
	for k in mainline accepted; do
		base[hs_$k]=$(ib_handshakes $k)
	done
	base[klog]=$(dmesg | wc -l)
}
# hs_delta KEY: ib_handshakes KEY since snap (host 1).
hs_delta() { echo $(( $(ib_handshakes "$1") - ${base[hs_$1]} )); }
# klog_since TEXT: a line of host 1's kernel log since snap holds TEXT.
klog_since() {
	dmesg | tail -n +$((base[klog] + 1)) | grep -qF -- "$1"
}
