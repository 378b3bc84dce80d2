#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A mixed pair over IPv6 (issue 18, part 2; Documentation/interop.md):
# host ML_HOST (1 by default; ib_mainline_pair6_rev runs it the other way
# round) loads Debian's rds_rdma, the other host our module; each has
# fd00::H/64 on eth0.
#  1. Ours connects first: its request is its own marked handshake, which
#     the kernel's RDS refuses as version 255.0 (once); ours says so and
#     sends the kernel's own request next, which it accepts (3.1): 5 pings
#     from ours, 5 pongs.  The cost: exactly one refused attempt.
#  2. The kernel's RDS connects (ours reloaded: it reconnects on its own):
#     ours counts its request as "mainline" and accepts it in its protocol
#     (before this step: refused); 5 pings from it, 5 pongs.
#  3. rds-stress between the global addresses, every message verified,
#     acks the size of the requests: 1 KiB and 64 KiB, 4 tasks x depth 8,
#     8 s each; what one side sent the other received.  The kernel's RDS
#     read no request of ours as another version after the first.  Then
#     at TOS 3 (a connection of its own), between the link-local
#     addresses, and across a 5 s link cut pulled by the host running
#     ours: each new connection costs one refused attempt at most, and
#     so does the reconnection after the cut; the connection re-formed.
#  4. Ours counted no request as not_rds.
# It replaces ib_mainline_refuse6, which asserted the refusals of before.
# No "load" before it in the plan: it loads each host's RDS itself and
# unloads it at the end.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/stress_lib.sh"

. "$(dirname "$0")/mlpair_lib.sh"

. "$(dirname "$0")/ipv6_lib.sh"

a6=fd00::$RDS_HOST
p6=fd00::$((3 - RDS_HOST))
echo "# $a6 -> $p6"
ml_pair_cleanup() {
	ip -6 addr del "$a6/64" dev "$RDS_IFACE" 2>/dev/null
}

# klog_count TEXT: lines of this test's kernel log that hold TEXT.
klog_count() {
	test_klog | grep -cF -- "$1"
}
klog_has() {
	[ "$(klog_count "$1")" -gt 0 ]
}

# ping6 N: N pings (port 0) from $a6 to $p6, one at a time, up to 20 s
# each; prints the pongs that came back from the peer's port 0.  Python's
# own AF_RDS addresses are IPv4 only: bind, sendto and recvfrom through
# libc.
ping6() {
	python3 - "$a6" "$p6" "$1" <<'PY'
import ctypes, select, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
def sa6(a, port):
    return (struct.pack("=H", socket.AF_INET6) + struct.pack("!H", port) +
            bytes(4) + socket.inet_pton(socket.AF_INET6, a) + bytes(4))
s = socket.socket(21, socket.SOCK_SEQPACKET, 0)   # AF_RDS
me, to = sa6(sys.argv[1], 0), sa6(sys.argv[2], 0)
want = socket.inet_pton(socket.AF_INET6, sys.argv[2])
if libc.bind(s.fileno(), me, len(me)) < 0:
    sys.exit("bind: " + __import__("os").strerror(ctypes.get_errno()))
got = 0
for i in range(int(sys.argv[3])):
    if libc.sendto(s.fileno(), b"", 0, 0, to, len(to)) != 0:
        sys.exit("sendto: " + __import__("os").strerror(ctypes.get_errno()))
    if not select.select([s], [], [], 20)[0]:
        continue
    buf = ctypes.create_string_buffer(64)
    src = ctypes.create_string_buffer(28)
    sl = ctypes.c_uint32(28)
    if libc.recvfrom(s.fileno(), buf, 64, 0, src, ctypes.byref(sl)) < 0:
        continue
    raw = src.raw
    if struct.unpack("=H", raw[:2])[0] == socket.AF_INET6 and \
       raw[2:4] == b"\0\0" and raw[8:24] == want:
        got += 1
print(got)
PY
}

check "$a6 on $RDS_IFACE" ip -6 addr add "$a6/64" dev "$RDS_IFACE" nodad
check "rxe lists $a6 as a GID" wait_for 30 gid_listed "$a6"
check "$RDS_IFACE has a link-local address" wait_for 30 ll_ready
ll=$(ll_addr)
check "rxe lists $ll as a GID" wait_for 30 gid_listed "$ll"
echo "$ll" > "$RDS_SHARED/$RDS_TEST.ll.$RDS_HOST"
ml_pair_load
barrier loaded 60 || ksft_fail "barrier loaded"
peer_ll=$(cat "$RDS_SHARED/$RDS_TEST.ll.$((3 - RDS_HOST))")
echo "# link-local: $ll -> $peer_ll"

# 1. Ours connects first (both fresh: no connection yet; the kernel's RDS
# connects only when it has something to send).
refused="$p6 refused our connection as the kernel's RDS does: the next attempt speaks its protocol"
if [ $me = ours ]; then
	n=$(ping6 5)
	check "ours -> kernel's RDS over IPv6: 5 pings, $n pongs" test "$n" = 5
	n=$(klog_count "$refused")
	check "our marked handshake refused once, then its own request ($n refusal lines)" \
		test "$n" = 1
	check "our side read its accept: protocol 3.1 (log)" \
		klog_has "$p6 runs the kernel's RDS: protocol 3.1"
	check "connected in its protocol (log)" \
		klog_has "connected $a6 -> $p6 tos 0 (active, the kernel's RDS"
	test_klog | grep 'rds:' | tail -5 | sed 's/^/#   /'
else
	barrier ping1 180
	n=$(klog_count "using incompatible protocol version 255.0")
	check "the kernel's RDS refused our marked handshake once ($n lines)" \
		test "$n" = 1
	check "then accepted ours in 3.1 (its log)" \
		klog_has "Passive conn connected <$a6,$p6,0> version 3.1"
	test_klog | grep 'RDS' | tail -4 | sed 's/^/#   /'
fi
[ $me = ours ] && barrier ping1 180

# 2. The kernel's RDS connects to ours: ours reloads; it reconnects on its
# own after the loss.
if [ $me = ours ]; then
	check "reload ours (its connections go)" rds_reload
	came() {
		[ "$(ib_handshakes mainline)" -gt 0 ] &&
			[ "$(ib_handshakes accepted)" -gt 0 ]
	}
	check "its IPv6 request counted as mainline and accepted" \
		wait_for 120 came
	echo "# ib_handshakes: $(cat /sys/module/rds/parameters/ib_handshakes)"
	check "accepted in its protocol (log)" \
		klog_has "accepted a connection from $p6 (the kernel's RDS protocol 3.1)"
	barrier reconnected 180
	barrier ping2 180
else
	barrier reconnected 180
	n=$(ping6 5)
	check "kernel's RDS -> ours over IPv6: 5 pings, $n pongs" test "$n" = 5
	check "its side: connected in 3.1 (its log)" \
		klog_has "Active conn connected <$a6,$p6,0> version 3.1"
	barrier ping2 180
fi

# 3. Verified rds-stress between the global addresses (host 1 passive).
drain=$(scaled 30)
run6() {
	local name=$1 port=$2
	shift 2
	stress6 "$name" "$port" "$((90 + drain))" "$a6" "$p6" \
		--connect-retries 30 --drain-timeout "$drain" "$@"
}
run6 1k 4100 -t 4 -d 8 -q 1K -a 1K -T 8
run6 64k 4110 -t 4 -d 8 -q 64K -a 64K -T 8

# What the kernel's RDS logged about requests of ours it read as another
# version: one line so far (step 1).  Each later connection that ours
# starts (a TOS, an address pair) costs one refused attempt of our marked
# handshake at most; one that the kernel's RDS starts, none.
incompat="using incompatible protocol version"
n=$(klog_count "$incompat")
[ $me = ml ] && check "the kernel's RDS read no later request of ours as another version ($n lines)" \
	test "$n" = 1

# refusals PEER: the lines so far that say a request of ours to PEER was
# taken for another version: on the kernel's side its own, on ours the
# one that turns our memory to its protocol (not a refusal in a
# connection race, which the kernel's RDS makes with the same int).
refusals() {
	if [ $me = ours ]; then
		klog_count "$1 refused our connection as the kernel's RDS does: the next attempt speaks its protocol"
	else
		klog_count "$incompat"
	fi
}
# refused_at_most_once NAME PEER BEFORE: the rule above for the
# connection of step NAME (BEFORE: refusals before it).
refused_at_most_once() {
	local n
	n=$(refusals "$2")
	check "$1: at most one refused attempt for its connection ($3 -> $n lines)" \
		test "$((n - $3))" -le 1
}

# 3b. TOS 3: a connection of its own, set up by the same rules.
r0=$(refusals "$p6")
run6 tos3 4120 -t 2 -d 4 -q 1K -a 1K -Q 3 -T 6
refused_at_most_once tos3 "$p6" "$r0"
if [ $me = ours ]; then
	tos3_up() {
		awk -v a="$a6" -v p="$p6" '$1 == a && $2 == p && $3 == 3' \
			/proc/net/rds/connections | grep -q .
	}
	check "tos3: its own connection (TOS 3) in /proc/net/rds/connections" \
		tos3_up
fi
barrier tos3-checked 60

# 3c. Between the link-local addresses (scope: this host's $RDS_IFACE).
r0=$(refusals "$peer_ll")
stress6 ll 4130 "$((90 + drain))" "$ll%$RDS_IFACE" "$peer_ll%$RDS_IFACE" \
	--connect-retries 30 --drain-timeout "$drain" -t 2 -d 4 -q 1K -a 1K -T 6
refused_at_most_once ll "$peer_ll" "$r0"

# 3d. A link cut in the middle, over IPv6: the host running ours pulls
# its own cable for 5 s.  Nothing lost, duplicated or reordered; the
# connection re-formed, at the cost of one refused attempt of our
# handshake at most (the rule above; race refusals aside).  The TOS 0 connection was opened by the kernel's RDS
# (step 2), which sets no memory of it on our side, so our first request
# after the cut may be our handshake, refused once (that line on ours,
# "incompatible protocol version" on the kernel's).  Both sides
# reconnecting at once, the kernel's RDS then refuses the request in its
# own layout that ours sends next, with the same int 1, until its own
# request reaches ours, which accepts it: that keeps the memory
# (rds_ib_ml6_remember(); the 32nd such refusal in a row would clear it,
# 11 s or more of attempts).  Stop 35's rule cleared it at the first:
# 3 rounds of our handshake and its request, 6 refused attempts in
# 250 ms, 3 of them our handshake.
c0=$(ib_counter connects 2>/dev/null)
r0=$(refusals "$p6")
secs=30
[ "${RDS_TIME_SCALE:-1}" -gt 1 ] && secs=90
rm -f "$log/cut6.out"
if [ $me = ours ]; then
	ml_pair_cut "$log/cut6.out" &
	cutter=$!
fi
stress6 cut6 4140 "$((secs + 90 + drain))" "$a6" "$p6" \
	--connect-retries 30 --drain-timeout "$drain" -t 2 -d 4 -q 1K -a 1K \
	-T "$secs"
if [ $me = ours ]; then
	check "cut6: the link was cut and restored" wait "$cutter"
	check "cut6: the connection was re-formed (connects $c0 -> $(ib_counter connects))" \
		test "$(ib_counter connects)" -gt "$c0"
fi
refused_at_most_once cut6 "$p6" "$r0"
barrier cut6-checked 60

# 4. Over the whole test: nothing taken for something else.
if [ $me = ours ]; then
	echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
	check "no request counted as not_rds" \
		test "$(ib_handshakes not_rds)" = 0
	grep -F "$p6" /proc/net/rds/connections | sed 's/^/#   /'
fi

barrier unload 60 || ksft_fail "barrier unload"
unload
check "rds unloaded" wait_for 10 test ! -d /sys/module/rds
ksft_exit
