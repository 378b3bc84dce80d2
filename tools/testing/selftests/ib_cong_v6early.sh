#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A congestion map that comes before our own request's handshake is read
# is kept.  Over IPv6 the frames of our request's attempt are delivered
# as they come, before its ESTABLISHED event is handled (IPv4 holds them
# until then: the protocol may be a guess); the peer sends its map when
# the connection comes up on its side if one of its ports is congested.
# When the handshake is then applied, it shows a generation the map had
# not been tagged with (first contact here): a map that came on this very
# attempt is of that generation and must stay (net/cong.c,
# m_gen_pending), where bits of an older generation go.
#   1. Both hosts reload the module (a first contact) and add fd00::H
#      (rxe lists it as a GID).  Host 1 congests
#      its own port PORT: a socket with a small receive buffer that never
#      reads, filled from a second local socket until ENOBUFS.
#   2. Host 2 arms ib_est_delay_ms (the next ESTABLISHED of its own
#      request handled that late) and sends one message to host 1 over
#      IPv6: the connection comes up on host 1, whose map (PORT
#      congested) reaches host 2 while its ESTABLISHED waits.
#   3. Once host 2's connection is up and the map was received, host 2's
#      send to PORT must meet ENOBUFS.  Before the fix the handshake,
#      applied after the map, cleared the bit: the send was taken.
# Documentation/ib-transport.md (Congestion maps).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ipv6_lib.sh"

PORT=4330
HELLO_PORT=4331
me=fd00::$RDS_HOST
peer=fd00::$((3 - RDS_HOST))
hook=/sys/module/rds/parameters/ib_est_delay_ms
py=$(cat <<'PY'
import ctypes, errno, socket, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
MSG_DONTWAIT = 0x40

def sa6(addr, port):
    return (struct.pack("=H", socket.AF_INET6) + struct.pack("!HI", port, 0) +
            socket.inet_pton(socket.AF_INET6, addr) + struct.pack("=I", 0))

def sock(addr, port, rcvbuf):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    a = sa6(addr, port)
    if libc.bind(s.fileno(), a, len(a)) != 0:
        raise OSError(ctypes.get_errno(), "bind %s %d" % (addr, port))
    return s

def send(s, data, addr, port, flags=0):
    """0 if taken, the errno otherwise."""
    a = sa6(addr, port)
    if libc.sendto(s.fileno(), data, len(data), flags, a, len(a)) < 0:
        return ctypes.get_errno()
    return 0

def say(line):
    print(line)
    sys.stdout.flush()

role, me = sys.argv[1], sys.argv[2]
if role == "hog":			# hog ME PORT: congest our own port
    port = int(sys.argv[3])
    hog = sock(me, port, 16384)
    s = sock(me, 0, 1 << 20)
    n = 0
    while n < 2000:
        e = send(s, b"x" * 4096, me, port, MSG_DONTWAIT)
        if e == errno.ENOBUFS:
            break
        if e:
            say("# send: %s" % errno.errorcode.get(e, e))
            sys.exit(1)
        n += 1
    say("# congested after %d messages" % n if n < 2000 else
        "# no ENOBUFS after %d messages" % n)
    while True:
        time.sleep(3600)
elif role == "hello":			# hello ME PEER PORT
    s = sock(me, 0, 1 << 20)
    e = send(s, b"hello", sys.argv[3], int(sys.argv[4]))
    say("# hello: %s" % (errno.errorcode.get(e, e) if e else "sent"))
    # kept until the connection is up (closing could cancel the message)
    time.sleep(float(sys.argv[5]))
elif role == "probe":			# probe ME PEER PORT: exit 3 on ENOBUFS
    s = sock(me, 0, 1 << 20)
    e = send(s, b"probe", sys.argv[3], int(sys.argv[4]), MSG_DONTWAIT)
    say("# probe: %s" % (errno.errorcode.get(e, e) if e else "taken"))
    sys.exit(3 if e == errno.ENOBUFS else (1 if e else 0))
PY
)
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
[ -w $hook ] || { ksft_fail "$hook (RDS_TEST_HOOKS=1 build)"; ksft_exit; }
log=/tmp/$RDS_TEST.$$
# a first contact: no IPv6 connection (nor map) an earlier test left
barrier reload 60 || { ksft_fail "barrier reload"; ksft_exit; }
check "module reloaded" rds_reload
ip -6 addr del "$me/64" dev "$RDS_IFACE" 2> /dev/null
check "$me on $RDS_IFACE" ip -6 addr add "$me/64" dev "$RDS_IFACE" nodad
check "rxe lists $me as a GID" wait_for 30 gid_listed "$me"
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }

if [ "$RDS_HOST" = 1 ]; then
	python3 -c "$py" hog "$me" $PORT > "$log.hog" 2>&1 &
	hog=$!
	check "host 1's own port $PORT congested" \
		wait_for 60 grep -q '^# congested' "$log.hog"
	sed 's/^/# /' "$log.hog"
	barrier congested 120 || ksft_fail "barrier congested"
	barrier probed "$((60 + 4 * 30))" || ksft_fail "barrier probed"
	kill "$hog"
	wait "$hog"
else
	barrier congested 120 || ksft_fail "barrier congested"
	# long enough for host 1's map to come first, under the time scale
	delay=$(scaled 3000)
	[ "$delay" -gt 30000 ] && delay=30000
	echo "$delay" > $hook
	recv0=$(ib_counter cong_recv)
	python3 -c "$py" hello "$me" "$peer" $HELLO_PORT \
		"$(( (delay / 1000) + $(scaled 30) ))" > "$log.hello" 2>&1 &
	hello=$!
	up() {
		awk -v p="$peer" '$2 == p && $5 == "up"' /proc/net/rds/connections |
			grep -q .
	}
	check "host 2's IPv6 connection to $peer up (its ESTABLISHED $delay ms late)" \
		wait_for "$(( (delay / 1000) + 30 ))" up
	check "the late ESTABLISHED was ours (ib_est_delay_ms fired)" \
		test "$(cat $hook)" = 0
	check "host 1's map came (cong_recv $recv0 -> $(ib_counter cong_recv))" \
		test "$(ib_counter cong_recv)" -gt "${recv0:-0}"
	python3 -c "$py" probe "$me" "$peer" $PORT
	check "a send to host 1's congested port $PORT meets ENOBUFS (the map that came before the handshake was kept)" \
		test $? = 3
	sed 's/^/# /' "$log.hello"
	kill "$hello" 2> /dev/null
	wait "$hello"
	barrier probed 60 || ksft_fail "barrier probed"
fi
ip -6 addr del "$me/64" dev "$RDS_IFACE" 2> /dev/null
rm -f "$log".*
ib_test_end
