#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Give-back (issue 17, Documentation/ib-transport.md): idle connections
# hand the credits they do not use back to the receiver's SRQ pool.  Host
# 2 sends, host 1 receives out of its device's SRQ.  Each phase holds
# until the state it needs is seen, not for a time: every wait is an
# event with a scaled deadline (lib.sh's wait_for and barrier), but for
# the one window of the negative run, where the event is an absence.
# Each measure is taken on the connections it began with (host 1's
# connects: one formed again, by a reset or ib_idle_secs, takes a fresh
# grant).
#
#  0. Each host waits until nothing was given back on it for
#     credit_return_ms and 2 heartbeat intervals: the connections of
#     earlier tests gave back what they would.
#  1. Host 2 opens 4 new connections (TOS 211..214) and keeps each busy (a
#     message every 200 ms) until host 1 has seen, in this order: the 4
#     up with their messages arriving, having taken their grants out of
#     the pool (srq_free at least 4 x (ib_credits - 4) below where it
#     was); its own side of the 4 (it sends no data: idle since the
#     setup, longer than credit_return_ms) giving its credits back to host
#     2 (host 1's credit_returns +4, each holds 4).  Then, the rule's time
#     having passed while host 2 sent: host 1 released nothing and srq_free
#     is still as low; host 2's receiver released what host 1 gave back
#     (its credits_released + 4 x (ib_credits - 4)) and its 4 busy
#     connections hold more than 4 credits each.  Host 2 stops: within
#     GB_WINDOW s (scaled; the returns come 2 to 4 s after the last data
#     frame) host 1's srq_free climbs back by 4 x (ib_credits - 4) and
#     credits_released grows as much; host 2 counts 4 returns or more
#     (credit_returns) of that many credits (credits_returned), and each
#     of its 4 connections holds 4 credits (/proc/net/rds/connections).
#  2. Host 2 sends a burst on TOS 211 and idles only once host 1 has
#     received all of it and earned the grant back (grants_earned +
#     ib_credits - 4 at least); idle, host 2 gives it back again
#     (credits_returned grows as much, TOS 211 holds 4).
#  3. Negative run: give-back off on host 1 (net.rds.ib.credit_return_ms
#     0: its accepts ask for no returns, and it gives none), 4 more
#     connections (TOS 215..218), busy until host 1 sees them take their
#     grants, then idle: the check of 1 must fail (less than 4 grants
#     released within the same GB_WINDOW s: the window, no event), host
#     2's 4 connections keep more than 4 credits and it counts no
#     return, and host 1 counts none either.
#  4. Ring mode: both hosts reload with ib_no_srq=1; a connection (TOS
#     219), busy until host 1 sees its messages, then idle until host 2
#     sent 2 heartbeat requests (hb_sent; each is sent at an interval at
#     which host 2 had received nothing for heartbeat_ms, and the second
#     comes after host 1's answer to the first, so after the last data
#     frame: host 2 had then sent no data for heartbeat_ms, at least
#     credit_return_ms, and a give-back due at that interval goes in the
#     same control frame; host 1's heartbeat is off meanwhile, so that
#     its own requests do not keep host 2 from hearing a silence): host
#     2 gave nothing back (credit_returns 0: a
#     ring asks for none; the SRQ's side of this oracle is 1) and still
#     holds more than 4 credits; host 1, idle since the setup, gave none
#     either; then both reload as usual.
# Host 1 drains the messages at port PORT in each phase (counted).
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
S=/proc/sys/net/rds/ib
PORT=4310
GB_WINDOW=10	# s, scaled: a return comes 2 to 4 s after the last frame
KEEP=4		# RDS_IB_CREDIT_KEEP (net/ib/credit.h)
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
CREDITS=$(cat $P/ib_credits)
[ "$CREDITS" -le 128 ] || CREDITS=128
BACK=$(( CREDITS - KEEP ))	# what one idle connection gives back

# srq_free: the free receive buffers of this host's device (a level).
srq_free() {
	awk -v d="$RDS_RXE" '$1 == d { print $5 }' /proc/net/rds/devices
}
# credits TOS: "avail/granted" of the connection with the peer on TOS
# (nothing, or "-", while it is not up).
credits() {
	awk -v p="$RDS_PEER" -v t="$1" '$2 == p && $3 == t { print $7 }' \
		/proc/net/rds/connections
}
credits_of() {	# credits_of TOS...: their credits, for the messages
	local t
	for t in "$@"; do
		printf '%s ' "$(credits "$t")"
	done
}
# is_up TOS...: every connection with the peer on TOS... is up.
is_up() {
	local t
	for t in "$@"; do
		[[ "$(credits "$t")" =~ ^[0-9]+/ ]] || return 1
	done
}
# avail_is N TOS...: every connection on TOS... holds N credits.
avail_is() {
	local n=$1 t
	shift
	for t in "$@"; do
		[ "$(credits "$t" | cut -d/ -f1)" = "$n" ] || return 1
	done
}
# above_keep TOS...: every connection on TOS... is up and holds more than
# KEEP.
above_keep() {
	local t c
	for t in "$@"; do
		c=$(credits "$t" | cut -d/ -f1)
		[[ "$c" =~ ^[0-9]+$ ]] && [ "$c" -gt "$KEEP" ] || return 1
	done
}
# grew KEY FROM BY: ib_counters KEY is at least FROM + BY.
grew() {
	[ "$(ib_counter "$1")" -ge $(( $2 + $3 )) ]
}
# delta KEY FROM: how much ib_counters KEY moved since FROM.
delta() {
	echo $(( $(ib_counter "$1") - $2 ))
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
# drained FILE N: host 1's receiver counted N messages or more.
drained() {
	[ "$(cat "$1" 2>/dev/null)" -ge "$2" ] 2>/dev/null
}
# took_grants FILE FREE TOS...: the connections on TOS... are up, their
# messages arrive (FILE: the receiver's count), and srq_free is at least
# a full grant each below FREE (what the pool promised them).
took_grants() {
	local file=$1 free=$2
	shift 2
	is_up "$@" && drained "$file" 1 &&
		[ "$(srq_free)" -le $(( free - $# * BACK )) ]
}
# gb_settled: nothing was given back on this host, either way, over one
# give-back time and two heartbeat intervals (the module's clock, real
# time): the connections of earlier tests, which sent their last data
# before this test began, gave back what they would.  Polled by wait_for
# until it holds (a give-back in the period starts another).
gb_settled() {
	local a b
	a="$(ib_counter credit_returns) $(ib_counter credits_released)"
	sleep "$settle"
	b="$(ib_counter credit_returns) $(ib_counter credits_released)"
	[ "$a" = "$b" ]
}
# returned_again RTD TOS: TOS gave back again (credits_returned at least
# RTD + BACK, it holds KEEP).
returned_again() {
	grew credits_returned "$1" "$BACK" && avail_is "$KEEP" "$2"
}
# ring_flowing FILE TOS: the connection on TOS is up, its messages arrive.
ring_flowing() {
	is_up "$2" && drained "$1" 1
}
# ring_kept TOS: this host gave nothing back, and the connection on TOS
# holds more than KEEP.
ring_kept() {
	[ "$(ib_counter credit_returns)" = 0 ] && above_keep "$1"
}
# own_back RET TOS...: this host's side of the connections on TOS... gave
# its credits back (credit_returns at least RET + their number, each
# holds KEEP).
own_back() {
	local ret=$1
	shift
	grew credit_returns "$ret" $# && avail_is "$KEEP" "$@"
}

# send: host 2's sender.  busy STOP SECS TOS...: a message of 114 bytes
# on each TOS every 200 ms until the file STOP exists (at most SECS
# seconds); burst N TOS: N messages of 5000 bytes back to back (two
# frames each: too large for a packed frame, which would carry several on
# one credit).
send_py=$(cat <<'PY'
import errno, fcntl, os, socket, struct, sys, time
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
    stop, secs = sys.argv[5], float(sys.argv[6])
    socks = [sock(int(t)) for t in sys.argv[7:]]
    end = time.time() + secs
    while not os.path.exists(stop):
        if time.time() > end:
            sys.exit("not told to stop within %d s (sent %d)" % (secs, n))
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
# first once it is bound, each count whole: written aside, renamed).
drain_py=$(cat <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], int(sys.argv[2])))
def count(n):    # whole, whenever read (or killed)
    with open(sys.argv[3] + ".tmp", "w") as f:
        print(n, file=f)
    os.replace(sys.argv[3] + ".tmp", sys.argv[3])
n = 0
count(n)
while True:
    s.recv(10000)
    n += 1
    count(n)
PY
)
drain_start() {	# drain_start FILE: returns once it is bound
	rm -f "$1" "$1.tmp"
	python3 -c "$drain_py" "$RDS_ADDR" "$PORT" "$1" &
	drain_pid=$!
	# (the guests' python takes seconds to start: messages sent before
	# the bind would be dropped)
	wait_for 60 test -s "$1" || ksft_fail "host 1's receiver bound"
}
drain_stop() {	# drain_stop FILE WHAT: at least one message came
	kill "$drain_pid" 2>/dev/null
	wait "$drain_pid" 2>/dev/null
	check "host 1 received the $2 messages ($(cat "$1"))" drained "$1" 1
}
sender() {
	timeout "$(scaled 120)" python3 -c "$send_py" "$RDS_ADDR" "$RDS_PEER" \
		"$PORT" "$@"
}
# busy_start NAME TOS...: host 2's busy sender in the background, until
# busy_stop.  busy_stop NAME WHAT: stop it, check that it sent.
busy_start() {
	local name=$1
	shift
	rm -f "/tmp/giveback.$name.stop"
	sender busy "/tmp/giveback.$name.stop" "$(scaled 100)" "$@" \
		> "/tmp/giveback.$name.sent" 2>&1 &
	busy_pid=$!
}
busy_stop() {
	local rc=0
	touch "/tmp/giveback.$1.stop"
	wait "$busy_pid" || rc=$?
	check "$1: host 2 kept $2 busy until host 1 had seen it ($(cat "/tmp/giveback.$1.sent"))" \
		test "$rc" = 0
}

gb0=$(cat $S/credit_return_ms)
hb_ms=$(cat $S/heartbeat_ms)
settle=$(( (gb0 + 2 * hb_ms) / 1000 + 1 ))	# s, for gb_settled
# No connection of an earlier test closes as idle meanwhile (ib_idle_secs
# 0 while this runs): its grant back in the pool moved srq_free, which
# the checks read (on the 6.12 debug kernel one closed within a check's
# window: srq_free +5 while host 1 released nothing).
idle0=$(cat $P/ib_idle_secs)
echo 0 > $P/ib_idle_secs
trap 'echo "$gb0" > $S/credit_return_ms; echo "$idle0" > $P/ib_idle_secs' EXIT
echo "# host $RDS_HOST: ib_credits $CREDITS, credit_return_ms $gb0, heartbeat_ms $hb_ms, time scale ${RDS_TIME_SCALE:-1}"
check "give-back on by default (credit_return_ms 2000)" test "$gb0" = 2000
check "earlier connections gave back what they would (nothing given back for $settle s)" \
	wait_for 60 gb_settled
barrier start 120 || { ksft_fail "barrier start"; ksft_exit; }

# 1 and 3: a busy phase on TOS... then idle; host 1 measures (expect:
# "release" or "hold"), host 2 counts its returns.
phase() {	# phase NAME EXPECT TOS...
	local name=$1 expect=$2 free0 rel0 ret0 rtd0 con0 low t0 got
	shift 2
	ret0=$(ib_counter credit_returns)
	rel0=$(ib_counter credits_released)
	con0=$(ib_counter connects)
	if [ "$RDS_HOST" = 1 ]; then
		drain_start "/tmp/giveback.$name"
		free0=$(srq_free)
		barrier "$name-go" 60 || ksft_fail "barrier $name-go"
		# host 2 sends until barrier $name-low
		wait_for 120 took_grants "/tmp/giveback.$name" "$free0" "$@"
		low=$(srq_free)
		echo "# $name: srq_free $free0 -> $low, host 1's credits $(credits_of "$@")"
		check "$name: the 4 connections are up, their messages arrive, they took their grants (srq_free $free0 -> $low)" \
			took_grants "/tmp/giveback.$name" "$free0" "$@"
		if [ "$expect" = release ]; then
			wait_for 30 own_back "$ret0" "$@"
			check "$name: host 1's side (no data sent) gave its credits back to host 2 (credit_returns +$(delta credit_returns "$ret0"), $(credits_of "$@"))" \
				own_back "$ret0" "$@"
			check "$name: while host 2 sent, host 1 released nothing (credits_released +$(delta credits_released "$rel0"), srq_free $(srq_free))" \
				test "$(delta credits_released "$rel0")" = 0 -a "$(srq_free)" -le "$low"
		fi
		barrier "$name-low" 240 || ksft_fail "barrier $name-low"
		barrier "$name-stopped" 120 || ksft_fail "barrier $name-stopped"
		t0=$(date +%s)
		if wait_for "$GB_WINDOW" released_from "$low" "$rel0" $(( 4 * BACK )); then
			got="release after $(( $(date +%s) - t0 )) s"
		else
			got="hold for $(scaled "$GB_WINDOW") s"
		fi
		echo "# $name: srq_free $(srq_free), credits_released +$(delta credits_released "$rel0"): $got"
		if [ "$expect" = release ]; then
			check "$name: idle, the 4 grants came back ($(( 4 * BACK )) buffers released, srq_free up as much)" \
				test "${got%% *}" = release
		else
			check "negative $name: with give-back off on host 1 the check fails (less than 4 grants released)" \
				test "${got%% *}" = hold
			check "negative $name: host 1 (credit_return_ms 0) gave nothing back (credit_returns +$(delta credit_returns "$ret0"))" \
				test "$(delta credit_returns "$ret0")" = 0
		fi
		# (a connection formed again, by a reset or the idle
		# timeout, would take a fresh grant: another measure)
		check "$name: the 4 connections formed once each (connects +$(delta connects "$con0"))" \
			test "$(delta connects "$con0")" = $#
		barrier "$name-judged" 120 || ksft_fail "barrier $name-judged"
		drain_stop "/tmp/giveback.$name" "$name"
	else
		rtd0=$(ib_counter credits_returned)
		barrier "$name-go" 60 || ksft_fail "barrier $name-go"
		busy_start "$name" "$@"
		barrier "$name-low" 240 || ksft_fail "barrier $name-low"
		if [ "$expect" = release ]; then
			wait_for 30 grew credits_released "$rel0" $(( 4 * BACK ))
			check "$name: host 2 released what host 1 gave back (credits_released +$(delta credits_released "$rel0") >= $(( 4 * BACK )))" \
				grew credits_released "$rel0" $(( 4 * BACK ))
		fi
		check "$name: busy, host 2's 4 connections kept their grants ($(credits_of "$@"))" \
			above_keep "$@"
		busy_stop "$name" "4 connections"
		barrier "$name-stopped" 120 || ksft_fail "barrier $name-stopped"
		if [ "$expect" = release ]; then
			wait_for "$GB_WINDOW" gave_back "$ret0" "$rtd0" $(( 4 * BACK ))
			check "$name: host 2 gave back (credit_returns +$(delta credit_returns "$ret0") >= 4, credits_returned +$(delta credits_returned "$rtd0") >= $(( 4 * BACK )))" \
				gave_back "$ret0" "$rtd0" $(( 4 * BACK ))
			# (grants an ACK carried after a return go back at
			# the next interval)
			wait_for "$GB_WINDOW" avail_is "$KEEP" "$@"
			check "$name: each of the 4 connections holds $KEEP credits ($(credits_of "$@"))" \
				avail_is "$KEEP" "$@"
		fi
		barrier "$name-judged" $(( GB_WINDOW + 120 )) ||
			ksft_fail "barrier $name-judged"
		if [ "$expect" = hold ]; then
			check "negative $name: the 4 connections kept their grants ($(credits_of "$@"))" \
				above_keep "$@"
			check "negative $name: host 2 gave nothing back (credit_returns +$(delta credit_returns "$ret0"))" \
				test "$(delta credit_returns "$ret0")" = 0
		fi
	fi
	barrier "$name-done" 120 || ksft_fail "barrier $name-done"
}

phase giveback release 211 212 213 214

# 2. A burst on TOS 211 earns its grant back; idle again, it goes back.
N=$(( 3 * CREDITS ))
if [ "$RDS_HOST" = 1 ]; then
	drain_start /tmp/giveback.burst
	earn0=$(ib_counter grants_earned)
	con0=$(ib_counter connects)
	barrier burst-go 60 || ksft_fail "barrier burst-go"
	wait_for 120 drained /tmp/giveback.burst "$N"
	check "burst: host 1 received the $N messages ($(cat /tmp/giveback.burst))" \
		drained /tmp/giveback.burst "$N"
	wait_for 30 grew grants_earned "$earn0" "$BACK"
	check "burst: host 1 earned the grant back (grants_earned +$(delta grants_earned "$earn0") >= $BACK)" \
		grew grants_earned "$earn0" "$BACK"
	# (TOS 211 formed again, after ib_idle_secs without traffic, would
	# come with a fresh grant and earn nothing)
	check "burst: on the same connection (connects +$(delta connects "$con0"))" \
		test "$(delta connects "$con0")" = 0
	barrier burst-earned 240 || ksft_fail "barrier burst-earned"
	drain_stop /tmp/giveback.burst burst
else
	rtd0=$(ib_counter credits_returned)
	barrier burst-go 60 || ksft_fail "barrier burst-go"
	check "burst: host 2 sent $N messages on TOS 211" sender burst "$N" 211
	barrier burst-earned 240 || ksft_fail "barrier burst-earned"
	wait_for "$GB_WINDOW" returned_again "$rtd0" 211
	check "burst: idle again, TOS 211 gave its grant back again (credits_returned +$(delta credits_returned "$rtd0") >= $BACK, $(credits 211))" \
		returned_again "$rtd0" 211
fi
barrier burst-done $(( GB_WINDOW + 120 )) || ksft_fail "barrier burst-done"

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
	# Host 1 asks nothing while host 2 idles: both ask only at their
	# own interval's tick, after heartbeat_ms without a frame, so the
	# one whose ticks come first may ask every time, and the other,
	# answering, never hears a silence (6.12 CI of stop 37: host 2's
	# hb_sent +0 in 30 s).  It still answers host 2's requests.
	hb1=$(cat $S/heartbeat_ms)
	echo 0 > $S/heartbeat_ms
	drain_start /tmp/giveback.ring
	barrier ring-go 60 || ksft_fail "barrier ring-go"
	wait_for 120 ring_flowing /tmp/giveback.ring 219
	check "ring: TOS 219 is up and its messages arrive ($(credits 219), $(cat /tmp/giveback.ring))" \
		ring_flowing /tmp/giveback.ring 219
	barrier ring-low 240 || ksft_fail "barrier ring-low"
	barrier ring-judged $(( GB_WINDOW + 120 )) ||
		ksft_fail "barrier ring-judged"
	check "ring: TOS 219 formed once (connects $(ib_counter connects))" \
		test "$(ib_counter connects)" = 1
	check "ring: host 1's side, idle since the setup, gave nothing back (credit_returns $(ib_counter credit_returns), credits_released $(ib_counter credits_released))" \
		test "$(ib_counter credit_returns)" = 0
	echo "$hb1" > $S/heartbeat_ms
	drain_stop /tmp/giveback.ring ring
else
	# (the reload put the module's parameters back)
	hb_ms=$(cat $S/heartbeat_ms)
	check "ring: heartbeat_ms $hb_ms at least credit_return_ms $(cat $S/credit_return_ms) (a heartbeat request then follows the give-back's time)" \
		test "$hb_ms" -ge "$(cat $S/credit_return_ms)" -a "$hb_ms" -gt 0
	barrier ring-go 60 || ksft_fail "barrier ring-go"
	busy_start ring 219
	barrier ring-low 240 || ksft_fail "barrier ring-low"
	busy_stop ring "TOS 219"
	# idle, nothing at stake: host 2 asks at heartbeat_idle_ms,
	# heartbeat_ms here
	hbi0=$(cat $S/heartbeat_idle_ms)
	echo "$hb_ms" > $S/heartbeat_idle_ms
	hb0=$(ib_counter hb_sent)
	# (the two hosts' requests alternate: an answer is a frame, and
	# a host asks only after heartbeat_ms without one)
	wait_for $(( 3 * GB_WINDOW )) grew hb_sent "$hb0" 2
	check "ring: idle, host 2 asked for 2 heartbeats (hb_sent +$(delta hb_sent "$hb0"))" \
		grew hb_sent "$hb0" 2
	echo "$hbi0" > $S/heartbeat_idle_ms
	check "ring: host 2 gave nothing back (credit_returns $(ib_counter credit_returns)), the connection holds its grant ($(credits 219))" \
		ring_kept 219
	barrier ring-judged $(( GB_WINDOW + 120 )) ||
		ksft_fail "barrier ring-judged"
fi
barrier ring-done 120 || ksft_fail "barrier ring-done"
check "reload as usual" rds_reload
ib_test_end
