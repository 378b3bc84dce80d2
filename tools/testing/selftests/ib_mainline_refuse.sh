#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer that runs the kernel's own RDS is recognised and refused cleanly
# (issue 18, part 1; Documentation/interop.md): host 1 loads Debian's
# rds_rdma, host 2 our module.  Host 1 sends to host 2: host 2 counts the
# requests as "mainline" (not "not_rds"), logs that the peer runs the
# kernel's RDS, and refuses them in the form the kernel's RDS understands,
# so host 1 drops the attempt (its log says so) and tries again (a second
# request is counted).  Then host 2 sends to host 1: the kernel's RDS
# refuses our request, and host 2's log says why.  No "load" before it in
# the plan (tools/testing/vm/rds-stress.tests): it loads each host's RDS
# itself and unloads it at the end.
. "$(dirname "$0")/lib.sh"

if [ -d /sys/module/rds ]; then
	ksft_fail "no rds module loaded before the test"
	ksft_exit
fi
# Twice: the first pass can leave rds held by rds_tcp's teardown.
unload() {
	if [ "$RDS_HOST" = 1 ]; then
		modprobe -r rds_rdma rds_tcp rds 2>/dev/null
		modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	else
		rmmod rds 2>/dev/null
	fi
}
trap unload EXIT

# send FROM TO: queue one datagram from FROM to TO (nobody receives it:
# the connection is what the test is about).
send() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], 0))
s.sendto(b"interop", (sys.argv[2], 4000))
' "$1" "$2"
}

if [ "$RDS_HOST" = 1 ]; then
	check "modprobe rds_rdma (the kernel's RDS)" modprobe rds_rdma
else
	check "insmod rds.ko (ours)" rds_insmod
fi
barrier loaded 60 || ksft_fail "barrier loaded"

# 1. The kernel's RDS connects to ours.
if [ "$RDS_HOST" = 1 ]; then
	barrier counted 60 || ksft_fail "barrier counted"
	check "host 1 queues a datagram to host 2" send "$RDS_ADDR" "$RDS_PEER"
	dropped() {
		test_klog | grep -q "rejected, dropping connection"
	}
	check "the kernel's RDS drops its attempt on our refusal" \
		wait_for 60 dropped
	test_klog | grep 'RDS' | tail -4 | sed 's/^/#   /'
	barrier phase1 120 || ksft_fail "barrier phase1"
else
	ml0=$(ib_handshakes mainline)
	nr0=$(ib_handshakes not_rds)
	barrier counted 60 || ksft_fail "barrier counted"
	# The kernel's RDS retries only if it dropped the refused attempt.
	two_more() {
		[ $(( $(ib_handshakes mainline) - ml0 )) -ge 2 ]
	}
	check "requests counted as mainline, more than one (the peer retried)" \
		wait_for 60 two_more
	echo "# ib_handshakes: $(cat /sys/module/rds/parameters/ib_handshakes)"
	check "none counted as not_rds" \
		test "$(ib_handshakes not_rds)" = "$nr0"
	said() {
		test_klog | grep -q \
			"peer $RDS_PEER runs the kernel's RDS protocol 3.1; not supported yet"
	}
	check "the log names the peer and the kernel's RDS" said
	test_klog | grep 'rds:' | tail -4 | sed 's/^/#   /'
	barrier phase1 120 || ksft_fail "barrier phase1"
fi

# 2. Ours connects to the kernel's RDS.
if [ "$RDS_HOST" = 2 ]; then
	check "host 2 queues a datagram to host 1" send "$RDS_ADDR" "$RDS_PEER"
	told() {
		test_klog | grep -q \
			"refused our connection as the kernel's RDS refuses an incompatible version"
	}
	check "our log says the peer refused us as the kernel's RDS does" \
		wait_for 60 told
	barrier phase2 120 || ksft_fail "barrier phase2"
else
	incompat() {
		test_klog | grep -q "using incompatible protocol version"
	}
	check "the kernel's RDS refused our request as another version" \
		wait_for 60 incompat
	barrier phase2 120 || ksft_fail "barrier phase2"
fi

barrier unload 60 || ksft_fail "barrier unload"
unload
check "rds unloaded" wait_for 10 test ! -d /sys/module/rds
ksft_exit
