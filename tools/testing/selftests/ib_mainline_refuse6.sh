#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's RDS and ours over IPv6 refuse each other cleanly (issue 18:
# over IPv4 they talk, ib_mainline_pair; over IPv6 only two of ours do,
# Documentation/interop.md): host 1 on Debian's rds_rdma, host 2 on ours,
# each with fd00::H/64 on eth0.
#   1. host 1 sends to host 2: its request reaches our IPv6 listener (port
#      16385) with its 56-byte IPv6 layout; host 2 counts it as "mainline"
#      (not "not_rds"), accepts none, and logs that the peer runs the
#      kernel's RDS over IPv6; host 1 drops the refused attempt (its log
#      says so) and retries, so host 2 counts at least two.
#   2. host 2 sends to host 1: the kernel's RDS reads byte 32 of our
#      request as its major version; our IPv6 mark (0xff) makes it refuse
#      the request as version 255.0 (without the mark it would read 0 and
#      take it as 4.0), and host 2's log says the peer refused us as the
#      kernel's RDS does.
# No "load" before it in the plan (tools/testing/vm/rds-stress.tests): it
# loads each host's RDS itself and unloads it at the end.
. "$(dirname "$0")/lib.sh"

me=fd00::$RDS_HOST
peer=fd00::$((3 - RDS_HOST))
[ -d /sys/module/rds ] && { ksft_fail "no rds module before the test"; ksft_exit; }
# Twice on host 1: the first pass can leave rds held by rds_tcp's teardown.
unload() {
	modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	rmmod rds 2>/dev/null
	ip -6 addr del "$me/64" dev "$RDS_IFACE" 2>/dev/null
}
trap unload EXIT

# send6 FROM TO: one datagram from FROM to TO port 4000 (Python's own
# AF_RDS addresses are IPv4 only: bind and sendto through libc).
send6() {
	python3 -c '
import ctypes, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
def sa6(a, port):
    return (struct.pack("=H", socket.AF_INET6) + struct.pack("!H", port) +
            bytes(4) + socket.inet_pton(socket.AF_INET6, a) + bytes(4))
s = socket.socket(21, socket.SOCK_SEQPACKET, 0)   # AF_RDS
me, to = sa6(sys.argv[1], 0), sa6(sys.argv[2], 4000)
if libc.bind(s.fileno(), me, len(me)) < 0 or \
   libc.sendto(s.fileno(), b"interop", 7, 0, to, len(to)) != 7:
    sys.exit("bind/sendto: " + __import__("os").strerror(ctypes.get_errno()))
' "$1" "$2"
}
gid_listed() {
	grep -qix "$(python3 -c 'import ipaddress, sys
print(ipaddress.IPv6Address(sys.argv[1]).exploded)' "$1")" \
		/sys/class/infiniband/"$RDS_RXE"/ports/1/gids/* 2>/dev/null
}
klog_has() {
	test_klog | grep -q "$1"
}

check "$me on $RDS_IFACE" ip -6 addr add "$me/64" dev "$RDS_IFACE" nodad
check "rxe lists $me as a GID" wait_for 30 gid_listed "$me"
if [ "$RDS_HOST" = 1 ]; then
	check "modprobe rds_rdma (the kernel's RDS)" modprobe rds_rdma
else
	check "insmod rds.ko (ours)" rds_insmod
fi
barrier loaded 60 || ksft_fail "barrier loaded"

if [ "$RDS_HOST" = 1 ]; then
	barrier counted 60 || ksft_fail "barrier counted"
	check "host 1 (the kernel's RDS) queues a datagram to $peer" \
		send6 "$me" "$peer"
	check "the kernel's RDS drops its attempt on our refusal" \
		wait_for 60 klog_has "<$me, $peer> rejected, dropping connection"
	barrier phase1 120 || ksft_fail "barrier phase1"
	check "the kernel's RDS refused our IPv6 request as version 255.0" \
		wait_for 60 klog_has "using incompatible protocol version 255.0"
	test_klog | grep 'RDS' | tail -4 | sed 's/^/#   /'
	barrier phase2 120 || ksft_fail "barrier phase2"
else
	ml0=$(ib_handshakes mainline)
	nr0=$(ib_handshakes not_rds)
	ok0=$(ib_handshakes accepted)
	barrier counted 60 || ksft_fail "barrier counted"
	retried() {
		[ $(( $(ib_handshakes mainline) - ml0 )) -ge 2 ]
	}
	check "IPv6 requests counted as mainline, more than one (the peer retried)" \
		wait_for 60 retried
	echo "# ib_handshakes: $(cat /sys/module/rds/parameters/ib_handshakes)"
	check "none counted as not_rds" test "$(ib_handshakes not_rds)" = "$nr0"
	check "none accepted" test "$(ib_handshakes accepted)" = "$ok0"
	check "the log names the peer and the kernel's RDS over IPv6" \
		klog_has "peer $peer runs the kernel's RDS protocol 3.1 over IPv6: not supported, refused"
	barrier phase1 120 || ksft_fail "barrier phase1"
	check "host 2 (ours) queues a datagram to $peer" send6 "$me" "$peer"
	check "our log says the peer refused us as the kernel's RDS does" \
		wait_for 60 klog_has "$peer refused our connection as the kernel's RDS does"
	# It never takes ours over IPv6: no retry every second, one line.
	# 5 s more (a second attempt would have come by then before).
	sleep 5
	n=$(test_klog | grep -c "$peer refused our connection as the kernel's RDS does")
	check "said once, retried no sooner than a minute later ($n lines in 5 s)" \
		test "$n" = 1
	test_klog | grep 'rds:' | tail -4 | sed 's/^/#   /'
	barrier phase2 120 || ksft_fail "barrier phase2"
fi

barrier unload 60 || ksft_fail "barrier unload"
unload
check "rds unloaded" wait_for 10 test ! -d /sys/module/rds
ksft_exit
