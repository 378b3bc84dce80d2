#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A restarted peer's ports are not congested: what we knew of the old
# one's congestion goes at the handshake that shows its new generation.
#   1. Host 1 binds PORT with a small receive buffer and does not read;
#      host 2 sends to it until ENOBUFS (host 1's map came over the wire).
#   2. Host 1 cuts its link, closes the socket, unloads rds and loads it
#      again (a new generation): the map that closing the socket sends
#      (port no longer congested) never reaches host 2, as when a host
#      dies.  Host 2's send to PORT still meets ENOBUFS (control: the bit
#      was set, and only the new generation clears it).  Host 1 restores
#      its link.
#   3. Host 1 binds PORT with a large buffer and sends a message to host
#      2's HELLO_PORT: the connection comes up with the new generation,
#      which host 2 logs.
#   4. Host 2, once it has that message, sends to PORT: the send must be
#      taken within SEND_S seconds (the restarted peer has nothing
#      congested, so it sends no map: before the fix host 2 met ENOBUFS
#      for ever), and a blocking send asleep on PORT since step 1 (still
#      asleep in step 2) must be taken within SEND_S seconds too (before
#      the fix it slept until SO_SNDTIMEO, for ever by default).  Host 1
#      must receive both.
# Negative module congkeep (net/neg.h) keeps the bits: step 4 fails
# ("not ok ... takes a send within", "... is taken within").
# Documentation/ib-transport.md (Congestion maps).
. "$(dirname "$0")/lib.sh"

PORT=4320
HELLO_PORT=4321
SEND_S=10
py=$(cat <<'PY'
import errno, os, socket, struct, subprocess, sys, time
role, me = sys.argv[1], sys.argv[2]
MARK = b"after the restart"
BLOCKED = b"blocked since before the restart"
HELLO = b"hello from the new generation"

def sock(port, rcvbuf):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((me, port))
    return s

def barrier(name):
    # the socket stays open until the other host has the message: closing
    # it could cancel the message still queued
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    os.environ["RDS_TEST"] + "." + name,
                    str(180 * int(os.environ.get("RDS_TIME_SCALE", "1")))])

def say(line):
    print(line)
    sys.stdout.flush()

def send(s, data, dest):
    """0 if taken, the errno otherwise (ENOBUFS, EAGAIN)."""
    try:
        s.sendto(data, socket.MSG_DONTWAIT, dest)
        return 0
    except OSError as e:
        if e.errno in (errno.ENOBUFS, errno.EAGAIN):
            return e.errno
        raise

if role == "hog":			# hog ME PORT: bound, never read
    s = sock(int(sys.argv[3]), 16384)
    say("# bound")
    while True:
        time.sleep(3600)
elif role == "fill":			# fill ME PEER PORT
    s = sock(0, 1 << 20)
    dest = (sys.argv[3], int(sys.argv[4]))
    n = 0
    deadline = time.monotonic() + float(sys.argv[5])
    while time.monotonic() < deadline and n < 2000:
        e = send(s, b"%08d" % n + b"x" * 4088, dest)
        if e == errno.ENOBUFS:
            say("# ENOBUFS after %d messages" % n)
            sys.exit(0)
        if e == 0:
            n += 1
        # paced after the first 16: a map that never comes ends cleanly
        time.sleep(0.05 if n >= 16 or e else 0)
    say("# no ENOBUFS after %d messages" % n)
    sys.exit(1)
elif role == "probe":			# probe ME PEER PORT: exit 3 on ENOBUFS
    s = sock(0, 1 << 20)
    e = send(s, b"probe", (sys.argv[3], int(sys.argv[4])))
    say("# probe: %s" % (errno.errorcode[e] if e else "taken"))
    sys.exit(3 if e == errno.ENOBUFS else (1 if e else 0))
elif role == "until":			# until ME PEER PORT SECS: MARK taken
    s = sock(0, 1 << 20)
    dest = (sys.argv[3], int(sys.argv[4]))
    t0 = time.monotonic()
    tries = 0
    while time.monotonic() - t0 < float(sys.argv[5]):
        tries += 1
        e = send(s, MARK, dest)
        if e == 0:
            say("# taken after %.2f s, %d tries" % (time.monotonic() - t0,
                                                   tries))
            barrier("got")
            sys.exit(0)
        time.sleep(0.1)
    say("# not taken in %s s: %s at each of %d tries" %
        (sys.argv[5], errno.errorcode[e], tries))
    sys.exit(1)
elif role == "block":			# block ME PEER PORT SECS: SO_SNDTIMEO
    s = sock(0, 1 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                 struct.pack("ll", int(sys.argv[5]), 0))
    say("# sending")
    try:
        s.sendto(BLOCKED, (sys.argv[3], int(sys.argv[4])))
    except OSError as e:
        say("# %s" % errno.errorcode.get(e.errno, str(e.errno)))
        sys.exit(1)
    say("# taken")
    barrier("gotblocked")
elif role == "hello":			# hello ME PEER PORT
    s = sock(0, 1 << 20)
    s.sendto(HELLO, (sys.argv[3], int(sys.argv[4])))
    say("# sent")
    barrier("hello")
elif role == "wait":			# wait ME PORT SECS WHAT,...: bound, WHATs
    s = sock(int(sys.argv[3]), 4 << 20)
    names = {"mark": MARK, "blocked": BLOCKED, "hello": HELLO}
    want = set(names[w] for w in sys.argv[5].split(","))
    say("# bound")
    deadline = time.monotonic() + float(sys.argv[4])
    other = 0
    while want:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            data, addr = s.recvfrom(1 << 16)
        except socket.timeout:
            say("# not received in %s s: %r (%d others)" %
                (sys.argv[4], sorted(want), other))
            sys.exit(1)
        if data in want:
            want.discard(data)
            say("# got %r from %s" % (data, addr[0]))
        else:
            other += 1	# the old incarnation's messages, sent again
    say("# all received (%d others)" % other)
PY
)
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
log=/tmp/$RDS_TEST.$$

if [ "$RDS_HOST" = 1 ]; then
	python3 -c "$py" hog "$RDS_ADDR" $PORT > "$log.hog" 2>&1 &
	hog=$!
	check "host 1's port $PORT bound, not read" \
		wait_for 30 grep -q '^# bound' "$log.hog"
	barrier bound 60 || ksft_fail "barrier bound"
	barrier congested 300 || ksft_fail "barrier congested"
	barrier blocking 60 || ksft_fail "barrier blocking"
	# closing the socket clears the port and sends the map: cut first,
	# so that it never arrives (a host that died sends nothing either)
	check "host 1 cuts its link" host_request link off
	kill "$hog"
	wait "$hog"
	check "rmmod rds (host 1)" wait_for 30 rmmod rds
	check "insmod rds (host 1): a new generation" rds_insmod
	# bound before the link is back: host 2 may reconnect on its own
	# (its unacknowledged frames) and send at once
	python3 -c "$py" wait "$RDS_ADDR" $PORT "$(scaled 60)" mark,blocked \
		> "$log.recv" 2>&1 &
	recv=$!
	check "host 1's port $PORT bound again, large buffer" \
		wait_for 30 grep -q '^# bound' "$log.recv"
	# host 2 checks, while the link is still cut, that it still has
	# the old generation's bit
	barrier down 60 || ksft_fail "barrier down"
	barrier probed 60 || ksft_fail "barrier probed"
	check "host 1 restores its link" host_request link on
	check "host 1 (new generation) sends to host 2, who gets it" \
		python3 -c "$py" hello "$RDS_ADDR" "$RDS_PEER" $HELLO_PORT
	check "host 1 receives host 2's two messages to port $PORT" wait "$recv"
	sed 's/^/# /' "$log.recv"
	# host 2's senders wait for these (never there if their send failed)
	barrier got "$(scaled 30)" || true
	barrier gotblocked "$(scaled 30)" || true
else
	barrier bound 60 || ksft_fail "barrier bound"
	check "host 2 fills host 1's port $PORT: ENOBUFS" \
		python3 -c "$py" fill "$RDS_ADDR" "$RDS_PEER" $PORT \
		"$(scaled 120)"
	barrier congested 300 || ksft_fail "barrier congested"
	# a blocking sender (SO_SNDTIMEO 200 s) asleep on the congested port
	python3 -c "$py" block "$RDS_ADDR" "$RDS_PEER" $PORT "$(scaled 200)" \
		> "$log.block" 2>&1 &
	block=$!
	blocked() {
		grep -q '^# sending' "$log.block" &&
			! grep -q '^# taken' "$log.block" && kill -0 "$block"
	}
	# (python starts in about a second under TCG: wait for its line, then
	# give the send time to be taken if it were going to be)
	wait_for 30 grep -q '^# sending' "$log.block"
	sleep "$(scaled 2)"
	check "a blocking send to port $PORT waits (congested)" blocked
	barrier blocking 60 || ksft_fail "barrier blocking"
	python3 -c "$py" wait "$RDS_ADDR" $HELLO_PORT "$(scaled 180)" hello \
		> "$log.hello" 2>&1 &
	hello=$!
	wait_for 30 grep -q '^# bound' "$log.hello" ||
		ksft_fail "host 2's port $HELLO_PORT bound"
	barrier down 60 || ksft_fail "barrier down"
	python3 -c "$py" probe "$RDS_ADDR" "$RDS_PEER" $PORT
	check "host 1 restarted, its link still cut: port $PORT still congested here (ENOBUFS)" \
		test $? = 3
	check "host 1 restarted, its link still cut: the blocking send still waits" blocked
	barrier probed 60 || ksft_fail "barrier probed"
	check "host 2 receives the restarted host 1's message" wait "$hello"
	sed 's/^/# /' "$log.hello"
	barrier hello 60 || ksft_fail "barrier hello"
	restarted() {
		test_klog | grep -q "$RDS_PEER restarted (generation"
	}
	check "host 2 saw host 1's new generation at the handshake" restarted
	check "the blocking send asleep since before the restart is taken within $SEND_S s" \
		wait_for $SEND_S grep -q '^# taken' "$log.block"
	check "the port congested before host 1's restart takes a send within $SEND_S s" \
		python3 -c "$py" until "$RDS_ADDR" "$RDS_PEER" $PORT \
		"$(scaled $SEND_S)"
	kill -0 "$block" 2>/dev/null && ! grep -q '^# taken' "$log.block" &&
		kill "$block"
	wait "$block"
	sed 's/^/# block: /' "$log.block"
fi
rm -f "$log".*
ib_test_end
