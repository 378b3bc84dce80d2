#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Give-back (issue 17, Documentation/ib-transport.md): idle connections
# hand the credits they do not use back to the receiver's SRQ pool.  Host
# 2 sends, host 1 receives out of its device's SRQ.
#
#  1. Host 2 opens 4 new connections (TOS 211..214) and keeps each busy (a
#     message every 200 ms) for BUSY seconds: host 1's srq_free
#     (/proc/net/rds/devices) drops by 4 full grants (at least 4 x
#     (ib_credits - 4) below where it was).  Host 2 stops: within 20 s
#     (scaled; the returns come 2 to 4 s after the last data frame) host
#     1's srq_free climbs back by 4 x (ib_credits - 4) and credits_released
#     grows as much; host 2 counts 4 returns or more (credit_returns) of
#     that many credits (credits_returned), and each of the 4 connections
#     holds 4 credits (/proc/net/rds/connections).
#  2. Host 2 sends a burst on TOS 211: host 1 earns its grant back
#     (grants_earned + ib_credits - 4 at least), and once it idles again
#     host 2 gives it back again (credits_returned grows as much).
#  3. Negative run: give-back off on host 1 (net.rds.ib.credit_return_ms
#     0: its accepts ask for no returns), 4 more connections (TOS
#     215..218) busy then idle: the check of 1 must fail (nothing
#     released within the same 20 s), and host 2's 4 connections keep
#     more than 4 credits.
#  4. Ring mode: both hosts reload with ib_no_srq=1; a connection (TOS
#     219) busy then idle gives nothing back (credit_returns and
#     credits_released stay 0: a ring asks for none); then both reload as
#     usual.
# Host 1 drains the messages at port PORT in each phase (counted).
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
S=/proc/sys/net/rds/ib
PORT=4310
BUSY=6
KEEP=4		# RDS_IB_CREDIT_KEEP (net/ib/credit.h)
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
CREDITS=$(cat $P/ib_credits)
[ "$CREDITS" -le 128 ] || CREDITS=128
BACK=$(( CREDITS - KEEP ))	# what one idle connection gives back

# srq_free: the free receive buffers of this host's device (a level).
srq_free() {
	awk -v d="$RDS_RXE" '$1 == d { print $5 }' /proc/net/rds/devices
}
# credits TOS: "avail/granted" of the connection with the peer on TOS.
credits() {
	awk -v p="$RDS_PEER" -v t="$1" '$2 == p && $3 == t { print $7 }' \
		/proc/net/rds/connections
}
# avail_is N TOS...: every connection on TOS... holds N credits.
avail_is() {
	local n=$1 t
	shift
	for t in "$@"; do
		[ "$(credits "$t" | cut -d/ -f1)" = "$n" ] || return 1
	done
}
# above_keep TOS...: every connection on TOS... holds more than KEEP.
above_keep() {
	local t
	for t in "$@"; do
		[ "$(credits "$t" | cut -d/ -f1)" -gt "$KEEP" ] || return 1
	done
}
# grew KEY FROM BY: ib_counters KEY is at least FROM + BY.
grew() {
	[ "$(ib_counter "$1")" -ge $(( $2 + $3 )) ]
}
# gave_back RET RTD N: 4 returns or more since RET, of N credits or more
# since RTD.
gave_back() {
	grew credit_returns "$1" 4 && grew credits_returned "$2" "$3"
}
# released_from FREE REL N: N buffers came back to the SRQ (srq_free at
# least FREE + N, credits_released at least REL + N): the test's check.
released_from() {
	[ "$(srq_free)" -ge $(( $1 + $3 )) ] && grew credits_released "$2" "$3"
}

# send: host 2's sender.  busy SECS TOS...: a message of 114 bytes on
# each TOS every 200 ms for SECS seconds; burst N TOS: N messages of 5000
# bytes back to back (two frames each: too large for a packed frame,
# which would carry several on one credit).
send_py=$(cat <<'PY'
import errno, fcntl, socket, struct, sys, time
me, peer, port, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
SIOCRDSSETTOS = 0x89E0
def sock(tos):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.bind((me, 0))
    fcntl.ioctl(s.fileno(), SIOCRDSSETTOS, struct.pack("B", tos))
    return s
def send(s, i, size=114):
    while True:
        try:
            s.sendto((b"giveback %06d" % i).ljust(size, b"x"), (peer, port))
            return
        except OSError as e:
            if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                raise
            time.sleep(0.01)
n = 0
if mode == "busy":
    secs, toses = float(sys.argv[5]), [int(t) for t in sys.argv[6:]]
    socks = [sock(t) for t in toses]
    end = time.time() + secs
    while time.time() < end:
        for s in socks:
            send(s, n)
            n += 1
        time.sleep(0.2)
else:
    count, s = int(sys.argv[5]), sock(int(sys.argv[6]))
    for n in range(count):
        send(s, n, 5000)
    n = count
print("sent", n)
PY
)
# drain: host 1's receiver at PORT, until killed; counts in $1 (written
# first once it is bound).
drain_py=$(cat <<'PY'
import socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], int(sys.argv[2])))
n = 0
with open(sys.argv[3], "w") as f:
    print(n, file=f)
while True:
    s.recv(10000)
    n += 1
    with open(sys.argv[3], "w") as f:
        print(n, file=f)
PY
)
drain_start() {	# drain_start FILE: returns once it is bound
	rm -f "$1"
	python3 -c "$drain_py" "$RDS_ADDR" "$PORT" "$1" &
	drain_pid=$!
	# (the guests' python takes seconds to start: messages sent before
	# the bind would be dropped)
	wait_for 60 test -s "$1" || ksft_fail "host 1's receiver bound"
}
drain_stop() {	# drain_stop FILE WHAT: at least one message came
	kill "$drain_pid" 2>/dev/null
	wait "$drain_pid" 2>/dev/null
	check "host 1 received the $2 messages ($(cat "$1"))" \
		test "$(cat "$1")" -gt 0
}
sender() {
	timeout 120 python3 -c "$send_py" "$RDS_ADDR" "$RDS_PEER" "$PORT" "$@"
}
# sample_min SECS: the lowest srq_free seen over SECS seconds.
sample_min() {
	local end=$(( $(date +%s) + $1 )) min v
	min=$(srq_free)
	while [ "$(date +%s)" -lt "$end" ]; do
		v=$(srq_free)
		[ "$v" -lt "$min" ] && min=$v
		sleep 0.2
	done
	echo "$min"
}

gb0=$(cat $S/credit_return_ms)
trap 'echo "$gb0" > $S/credit_return_ms' EXIT
echo "# host $RDS_HOST: ib_credits $CREDITS, credit_return_ms $gb0"
check "give-back on by default (credit_return_ms 2000)" test "$gb0" = 2000
# Earlier tests' connections give back within 4 s of their last frame.
sleep 5
barrier start 120 || { ksft_fail "barrier start"; ksft_exit; }

# 1 and 3: a busy phase on TOS... then idle; host 1 measures (expect:
# "release" or "hold"), host 2 counts its returns.
phase() {	# phase NAME EXPECT TOS...
	local name=$1 expect=$2 free0 rel0 low ret0 rtd0 tmo=20 got
	shift 2
	if [ "$RDS_HOST" = 1 ]; then
		drain_start "/tmp/giveback.$name"
		free0=$(srq_free)
		rel0=$(ib_counter credits_released)
		barrier "$name-go" 60 || ksft_fail "barrier $name-go"
		low=$(sample_min "$BUSY")
		barrier "$name-stopped" 120 || ksft_fail "barrier $name-stopped"
		echo "# $name: srq_free $free0, lowest $low while busy"
		check "$name: srq_free dropped by 4 full grants while busy ($free0 -> $low)" \
			test "$low" -le $(( free0 - 4 * BACK ))
		if wait_for "$tmo" released_from "$low" "$rel0" $(( 4 * BACK )); then
			got=release
		else
			got=hold
		fi
		echo "# $name: srq_free $(srq_free), credits_released +$(( $(ib_counter credits_released) - rel0 )): $got"
		if [ "$expect" = release ]; then
			check "$name: idle, the 4 grants came back ($(( 4 * BACK )) buffers released, srq_free up as much)" \
				test "$got" = release
		else
			check "negative $name: with give-back off on host 1 the check fails (nothing released)" \
				test "$got" = hold
		fi
		drain_stop "/tmp/giveback.$name" "$name"
	else
		ret0=$(ib_counter credit_returns)
		rtd0=$(ib_counter credits_returned)
		barrier "$name-go" 60 || ksft_fail "barrier $name-go"
		check "$name: host 2 kept 4 connections busy for $BUSY s" \
			sender busy "$BUSY" "$@"
		barrier "$name-stopped" 120 || ksft_fail "barrier $name-stopped"
		if [ "$expect" = release ]; then
			check "$name: host 2 gave back (credit_returns +4, credits_returned +$(( 4 * BACK )))" \
				wait_for "$tmo" gave_back "$ret0" "$rtd0" $(( 4 * BACK ))
			# (grants an ACK carried after a return go back at
			# the next interval)
			wait_for "$tmo" avail_is "$KEEP" "$@"
			check "$name: each of the 4 connections holds $KEEP credits ($(for t in "$@"; do credits "$t"; done | tr '\n' ' '))" \
				avail_is "$KEEP" "$@"
		else
			sleep "$(scaled "$tmo")"
			check "negative $name: the 4 connections kept their grants ($(for t in "$@"; do credits "$t"; done | tr '\n' ' '))" \
				above_keep "$@"
		fi
	fi
	barrier "$name-done" 120 || ksft_fail "barrier $name-done"
}

phase giveback release 211 212 213 214

# 2. A burst on TOS 211 earns its grant back; idle again, it goes back.
if [ "$RDS_HOST" = 1 ]; then
	drain_start /tmp/giveback.burst
	earn0=$(ib_counter grants_earned)
	barrier burst-go 60 || ksft_fail "barrier burst-go"
	barrier burst-sent 120 || ksft_fail "barrier burst-sent"
	check "burst: host 1 earned the grant back (grants_earned +$(( $(ib_counter grants_earned) - earn0 )) >= $BACK)" \
		wait_for 10 grew grants_earned "$earn0" "$BACK"
	drain_stop /tmp/giveback.burst burst
else
	rtd0=$(ib_counter credits_returned)
	barrier burst-go 60 || ksft_fail "barrier burst-go"
	check "burst: host 2 sent $(( 3 * CREDITS )) messages on TOS 211" \
		sender burst $(( 3 * CREDITS )) 211
	barrier burst-sent 120 || ksft_fail "barrier burst-sent"
	check "burst: idle again, TOS 211 gave its grant back again (credits_returned +$BACK)" \
		wait_for 20 grew credits_returned "$rtd0" "$BACK"
fi
barrier burst-done 120 || ksft_fail "barrier burst-done"

# 3. Negative: give-back off on host 1.
[ "$RDS_HOST" = 1 ] && echo 0 > $S/credit_return_ms
phase off hold 215 216 217 218
echo "$gb0" > $S/credit_return_ms

# 4. Ring mode gives nothing back.  (The reload resets the counters.)
check "no RNR, no bad frame before the reload" \
	test "$(ib_counter rnr)" = 0 -a "$(ib_counter bad_frames)" = 0
barrier ring 120 || ksft_fail "barrier ring"
check "reload with ib_no_srq=1" rds_reload ib_no_srq=1
barrier ring-loaded 120 || ksft_fail "barrier ring-loaded"
if [ "$RDS_HOST" = 1 ]; then
	drain_start /tmp/giveback.ring
	barrier ring-go 60 || ksft_fail "barrier ring-go"
	barrier ring-idle 120 || ksft_fail "barrier ring-idle"
	check "ring: host 1 released nothing (credits_released $(ib_counter credits_released))" \
		test "$(ib_counter credits_released)" = 0
	drain_stop /tmp/giveback.ring ring
else
	barrier ring-go 60 || ksft_fail "barrier ring-go"
	check "ring: host 2 kept TOS 219 busy for 2 s" sender busy 2 219
	sleep "$(scaled 10)"
	check "ring: host 2 gave nothing back (credit_returns $(ib_counter credit_returns)), the connection holds its grant ($(credits 219))" \
		bash -c "[ $(ib_counter credit_returns) = 0 ] && [ $(credits 219 | cut -d/ -f1) -gt $KEEP ]"
	barrier ring-idle 120 || ksft_fail "barrier ring-idle"
fi
barrier ring-done 120 || ksft_fail "barrier ring-done"
check "reload as usual" rds_reload
ib_test_end
