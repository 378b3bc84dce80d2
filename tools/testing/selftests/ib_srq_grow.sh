#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The SRQ grows under pressure up to ib_srq_max and shrinks back when
# idle (issue 17; Documentation/ib-transport.md, "Growing and shrinking
# the SRQ").  Host 2 sends, host 1 receives out of its device's SRQ.
#
#  0. Both hosts reload with ib_srq_size=SIZE (128) and ib_credits=16:
#     host 1's device line (/proc/net/rds/devices) shows SIZE buffers, all
#     posted, srq_max 4 x SIZE (ib_srq_max's default), and ib_rx_pages is
#     2 pages a buffer.
#  1. Both reload with ib_srq_max=MAX (160) as well, and set
#     net.rds.ib.heartbeat_ms to 0 (no heartbeat frames until 3's reload:
#     they would land in the buffers 2 retires).  Host 2 opens 16 new
#     connections (TOS 21..36) and keeps each busy for BUSY seconds with
#     messages of 5000 bytes (two frames), each carrying its TOS, its
#     sequence number and a pattern of it; then an end message with the
#     count.  Their first grants (17 buffers for the first 7, then what is
#     left, then 5) take 168 buffers of host 1's 128: the pool is short.
#     Host 1 checks every message (in order per connection, intact, the
#     count of the end message) and that while host 2 sent (sampled every
#     200 ms until host 2 says it stopped) its pool (srq_buffers less
#     srq_retiring) reached srq_max (MAX) and never passed it, srq_grown
#     moved by MAX - SIZE at least; once quiet, within 10 s srq_free is 0
#     or more (out of debt: the last of a debt is paid by give-back, no
#     frame lands), every buffer is posted and ib_rx_pages is 2 x
#     srq_buffers.
#  2. Idle, with no frames (give-back still runs, once a second with the
#     heartbeat off).  Host 2's connections give their credits back (2 s,
#     before the shrink can come), host 1's pool
#     has 80 buffers free, and within 40 s (10 s idle, then a step of 32)
#     it is back at SIZE (srq_shrunk moved); the 32 retired buffers stay
#     posted, since no frame lands in them.  Within 30 s (10 s without a
#     frame) every retiring buffer is stranded (srq_stranded of
#     /proc/net/rds/devices equals srq_retiring, above 0), the counter
#     srq_stranded moved by as many, the log says so with their bytes, and
#     the memory figures say what is held: ib_rx_pages 2 x srq_buffers,
#     srq_buffers SIZE + srq_stranded.
#     Then host 2 sets heartbeat_ms to 200 so that frames land in host
#     1's SRQ: within 20 s no buffer is retiring nor stranded any more,
#     srq_buffers is SIZE, ib_rx_pages 2 x SIZE, and srq_retired moved by
#     the stranded ones at least.
#  3. Negative run: both reload with ib_srq_max=SIZE; the same busy phase
#     on TOS 41..56 (every message checked): the check of 1 must fail
#     (the pool never grows: srq_grown stays 0, srq_buffers SIZE).
# Every wait ends on the state it waits for, within a deadline scaled by
# the harness' time scale (wait_for, barrier, scaled); the busy phases
# last BUSY seconds of host 2's clock, and host 1 watches until host 2
# says it stopped.
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
S=/proc/sys/net/rds/ib
PORT=4330
SIZE=128
MAX=160
CREDITS=16
BUSY=15
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }

# dev COLUMN: a column of this host's line in /proc/net/rds/devices
# (3 srq_buffers, 4 srq_posted, 5 srq_free, 6 srq_retiring, 7 srq_max,
# 8 srq_stranded).
dev() {
	awk -v d="$RDS_RXE" -v c="$1" '$1 == d { print $c }' \
		/proc/net/rds/devices
}
# pool: buffers in the pool (with a page, not retiring).
pool() {
	echo $(( $(dev 3) - $(dev 6) ))
}
pool_is() {
	[ "$(pool)" = "$1" ]
}
settled_at() {	# settled_at N: N buffers, none retiring, all posted
	[ "$(dev 3)" = "$1" ] && [ "$(dev 6)" = 0 ] && [ "$(dev 4)" = "$1" ]
}
pages_match() {	# ib_rx_pages is 2 pages (8 KiB) a buffer
	[ "$(cat $P/ib_rx_pages)" = $(( 2 * $(dev 3) )) ]
}
grew() {	# grew KEY FROM BY: ib_counters KEY is at least FROM + BY
	[ "$(ib_counter "$1")" -ge $(( $2 + $3 )) ]
}
stranded_all() {	# every retiring buffer stranded, and some are
	[ "$(dev 6)" -gt 0 ] && [ "$(dev 8)" = "$(dev 6)" ]
}

# send: host 2's sender.  busy SECS TOS...: messages of 5000 bytes on
# each TOS in turn for SECS seconds, then on each an end message with
# the count it sent there; it waits for the receiver's answer to each
# (closing a socket drops what it has not sent yet).
send_py=$(cat <<'PY'
import errno, fcntl, os, socket, struct, sys, time
me, peer, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
secs, toses = float(sys.argv[4]), [int(t) for t in sys.argv[5:]]
scale = int(os.environ.get("RDS_TIME_SCALE", "1"))
SIOCRDSSETTOS = 0x89E0
SIZE = 5000
def sock(tos):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.bind((me, 0))
    fcntl.ioctl(s.fileno(), SIOCRDSSETTOS, struct.pack("B", tos))
    s.setblocking(False)
    return s
def send(s, data):
    while True:
        try:
            s.sendto(data, (peer, port))
            return
        except OSError as e:
            if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                raise
            time.sleep(0.005)
def msg(tos, seq):
    head = b"srqgrow %d %d " % (tos, seq)
    return head + bytes([seq & 0xff]) * (SIZE - len(head))
socks = {t: sock(t) for t in toses}
sent = {t: 0 for t in toses}
end = time.time() + secs
while time.time() < end:
    for t, s in socks.items():
        send(s, msg(t, sent[t]))
        sent[t] += 1
for t, s in socks.items():
    send(s, b"srqgrow-end %d %d" % (t, sent[t]))
for t, s in socks.items():
    s.setblocking(True)
    s.settimeout(120 * scale)
    if s.recv(100) != b"srqgrow-ok %d" % t:
        sys.exit("wrong answer on TOS %d" % t)
print("sent", sum(sent.values()))
PY
)
# recv: host 1's receiver at PORT: checks every message of TOS... until
# each sent its end message (at most 300 s), which it answers; writes
# "bound" to $1 once bound; once $2 exists (recv_check), exits 0 if
# every message came once, in order, intact.
recv_py=$(cat <<'PY'
import os, socket, sys, time
me, port, ready, quit = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    sys.argv[4]
toses = [int(t) for t in sys.argv[5:]]
SIZE = 5000
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, port))
s.settimeout(300 * int(os.environ.get("RDS_TIME_SCALE", "1")))
open(ready, "w").write("bound\n")
nxt = {t: 0 for t in toses}
done, bad, n = set(), 0, 0
while len(done) < len(toses):
    data, src = s.recvfrom(10000)
    w = data.split(b" ", 3)
    if w[0] == b"srqgrow-end":
        t, c = int(w[1]), int(w[2])
        if t not in nxt or nxt[t] != c or t in done:
            bad += 1
            print("# bad end", t, c, nxt.get(t))
        done.add(t)
        s.sendto(b"srqgrow-ok %d" % t, src)
        continue
    n += 1
    t, seq = int(w[1]), int(w[2])
    head = b"srqgrow %d %d " % (t, seq)
    want = head + bytes([seq & 0xff]) * (SIZE - len(head))
    if t not in nxt or seq != nxt[t] or t in done or data != want:
        bad += 1
        if bad < 10:
            print("# bad message: tos", t, "seq", seq, "expected",
                  nxt.get(t), "len", len(data))
    if t in nxt:
        nxt[t] = seq + 1
# A socket's close drops its messages not yet acknowledged, unsent ones
# included (rds_send_drop_to(), as in the kernel's RDS): the answers go
# on a connection of TOS 0 that the first of them sets up, and on 6.1
# host 2 waited 120 s in vain for one when this receiver exited right
# after sending them.  The socket stays open until the shell says host 2
# got them all (the barrier after host 2's sender exited).
deadline = time.time() + 300 * int(os.environ.get("RDS_TIME_SCALE", "1"))
while not os.path.exists(quit) and time.time() < deadline:
    time.sleep(0.05)
print("# received", n, "messages on", len(toses), "connections,", bad, "bad")
sys.exit(1 if bad or n == 0 else 0)
PY
)
recv_start() {	# recv_start TOS...: returns once bound
	rm -f /tmp/srq_grow.ready /tmp/srq_grow.quit
	python3 -c "$recv_py" "$RDS_ADDR" "$PORT" /tmp/srq_grow.ready \
		/tmp/srq_grow.quit "$@" \
		> /tmp/srq_grow.recv 2>&1 &
	recv_pid=$!
	wait_for 60 test -s /tmp/srq_grow.ready ||
		ksft_fail "host 1's receiver bound"
}
recv_check() {	# recv_check WHAT: every message checked
	local rc
	touch /tmp/srq_grow.quit
	wait "$recv_pid"
	rc=$?
	cat /tmp/srq_grow.recv
	check "$1: every message came once, in order, intact" test "$rc" = 0
}
# sampler FILE: the largest pool seen, read every 200 ms, kept in FILE
# until killed (each value renamed into place: a kill never leaves FILE
# half written).  Each change of the pool goes to FILE.log with the time
# since the start (ms) and srq_grown, the count of samples to FILE.n:
# what the busy phase prints.  Bash builtins read the pool (no process
# per sample), and busy() makes the sampler a real-time task: on a debug
# kernel the receive path of the busy phase takes the whole vCPU, and a
# sampler of normal priority read the pool once in 15 s (6.12 debug
# kernel: one sample, at 6 s) and never saw it grow.
sampler() {
	local v top=0 last=-1 t0 n=0 l
	t0=$(( ${EPOCHREALTIME/./} / 1000 ))
	echo 0 > "$1"
	: > "$1.log"
	while :; do
		v=-1
		while read -r -a l; do
			[ "${l[0]}" = "$RDS_RXE" ] && v=$(( l[2] - l[5] ))
		done < /proc/net/rds/devices
		printf '%d\n' $(( ++n )) > "$1.n"
		((v != last)) && { last=$v; echo "$(( ${EPOCHREALTIME/./} / 1000 - t0 )) ms: pool $v, srq_grown $(ib_counter srq_grown)" >> "$1.log"; }
		((v > top)) && { top=$v; echo "$top" > "$1.new"; mv "$1.new" "$1"; }
		sleep 0.2
	done
}
tos_range() {	# tos_range FIRST: FIRST .. FIRST + 15
	seq "$1" $(( $1 + 15 ))
}

hb0=$(cat $S/heartbeat_ms) hbi0=$(cat $S/heartbeat_idle_ms)
trap 'echo "$hb0" > $S/heartbeat_ms; echo "$hbi0" > $S/heartbeat_idle_ms' EXIT

# 0. The defaults: 4 x ib_srq_size.
barrier start 120 || { ksft_fail "barrier start"; ksft_exit; }
check "reload with ib_srq_size=$SIZE ib_credits=$CREDITS" \
	rds_reload ib_srq_size=$SIZE ib_credits=$CREDITS
barrier loaded 120 || ksft_fail "barrier loaded"
if [ "$RDS_HOST" = 1 ]; then
	wait_for 10 settled_at "$SIZE"
	echo "# $(head -1 /proc/net/rds/devices)"
	echo "# $(grep "^$RDS_RXE " /proc/net/rds/devices)"
	check "srq_buffers $(dev 3) = $SIZE, all posted, none retiring" \
		settled_at "$SIZE"
	check "srq_max $(dev 7) = 4 x $SIZE (ib_srq_max 0)" \
		test "$(dev 7)" = $(( 4 * SIZE ))
	check "ib_rx_pages $(cat $P/ib_rx_pages) = 2 x $SIZE" pages_match
	check "the log states the memory in bytes" bash -c \
		"dmesg | grep -q '$RDS_RXE: added: shared-queue receive, $SIZE buffers of 8240 bytes ($(( SIZE * 8240 )) bytes), up to $(( 4 * SIZE )) ($(( 4 * SIZE * 8240 )) bytes)'"
fi
barrier defaults 120 || ksft_fail "barrier defaults"

# busy NAME TOS_FIRST EXPECT: the busy phase; host 1 returns the largest
# pool seen in $seen and checks the messages; EXPECT grow or hold.
busy() {
	local name=$1 expect=$3 grown0 got
	if [ "$RDS_HOST" = 1 ]; then
		# shellcheck disable=SC2046 # one argument per TOS
		recv_start $(tos_range "$2")
		grown0=$(ib_counter srq_grown)
		sampler /tmp/srq_grow.seen &
		sampler_pid=$!
		chrt -f -p 50 "$sampler_pid" ||
			echo "# $name: the sampler runs at normal priority"
		barrier "$name-go" 60 || ksft_fail "barrier $name-go"
		# until host 2's sender is done (its answers received)
		barrier "$name-stopped" 300 || ksft_fail "barrier $name-stopped"
		kill "$sampler_pid"
		wait "$sampler_pid" 2> /dev/null
		seen=$(cat /tmp/srq_grow.seen)
		echo "# $name: sampler: $(cat /tmp/srq_grow.seen.n) samples"
		sed "s/^/# $name: sampler at /" /tmp/srq_grow.seen.log | head -n 20
		recv_check "$name"
		echo "# $name: largest pool $seen, srq_grown +$(( $(ib_counter srq_grown) - grown0 )), now: $(grep "^$RDS_RXE " /proc/net/rds/devices)"
		if [ "$seen" = "$MAX" ] && grew srq_grown "$grown0" $(( MAX - SIZE )); then
			got=grow
		else
			got=hold
		fi
		if [ "$expect" = grow ]; then
			check "$name: the pool grew to srq_max $MAX, never past it (largest $seen), srq_grown +$(( MAX - SIZE )) at least" \
				test "$got" = grow
			# At srq_max the busy connections end with the pool
			# in debt or not, as their last frames fell (the
			# grants outnumber the buffers; keep-backs and
			# earn-backs swing it around 0: -5 at the stop in
			# the first run).  Quiet, no frame pays it: the
			# give-back does (credit_return_ms 2000, looked at
			# once a second with the heartbeat off).
			echo "# $name: at the stop srq_free $(dev 5)"
			check "$name: quiet, out of debt within 10 s (give-back)" \
				wait_for 10 bash -c "awk -v d=$RDS_RXE '\$1 == d && \$5 >= 0 { ok = 1 } END { exit !ok }' /proc/net/rds/devices"
			check "$name: quiet, every buffer posted" \
				wait_for 10 bash -c "awk -v d=$RDS_RXE '\$1 == d && \$3 == \$4 { ok = 1 } END { exit !ok }' /proc/net/rds/devices"
			check "$name: ib_rx_pages $(cat $P/ib_rx_pages) = 2 x srq_buffers $(dev 3)" \
				pages_match
		else
			check "negative $name: with ib_srq_max = ib_srq_size the check fails (largest pool $seen, srq_grown $(ib_counter srq_grown))" \
				test "$got" = hold
			check "negative $name: srq_buffers stayed $SIZE" \
				wait_for 10 settled_at "$SIZE"
		fi
	else
		barrier "$name-go" 60 || ksft_fail "barrier $name-go"
		# shellcheck disable=SC2046 # one argument per TOS
		check "$name: host 2 kept 16 connections busy for $BUSY s" \
			timeout "$(scaled 300)" python3 -c "$send_py" "$RDS_ADDR" "$RDS_PEER" \
				"$PORT" "$BUSY" $(tos_range "$2")
		barrier "$name-stopped" 300 || ksft_fail "barrier $name-stopped"
	fi
	barrier "$name-done" 300 || ksft_fail "barrier $name-done"
}

# 1. Growth up to ib_srq_max.
check "reload with ib_srq_max=$MAX" \
	rds_reload ib_srq_size=$SIZE ib_credits=$CREDITS ib_srq_max=$MAX
# no heartbeat from here to the end of 2 (the reload of 3 restores it):
# no frame may land in host 1's SRQ once the connections are idle
echo 0 > $S/heartbeat_ms
barrier grow-loaded 120 || ksft_fail "barrier grow-loaded"
[ "$RDS_HOST" = 1 ] && check "srq_max $(dev 7) = $MAX" test "$(dev 7)" = "$MAX"
# 2's counters from before the busy phase (nothing shrinks, retires or
# strands while it is short): on the 6.12 debug kernel the busy phase's
# checks ran past the shrink (10 s quiet) and the strand (10 s more).
shrunk0=$(ib_counter srq_shrunk)
retired0=$(ib_counter srq_retired)
stranded0=$(ib_counter srq_stranded)
busy grow 21 grow

# 2. Idle with no frames (no heartbeat since the reload of 1): back to
# ib_srq_size, the retired buffers stranded (held, said so); then frames
# free them.
if [ "$RDS_HOST" = 1 ]; then
	barrier idle-go 60 || ksft_fail "barrier idle-go"
	check "idle: the pool shrank back to $SIZE (now $(pool), srq_free $(dev 5))" \
		wait_for 40 pool_is "$SIZE"
	check "idle: srq_shrunk moved ($(ib_counter srq_shrunk), was $shrunk0)" \
		grew srq_shrunk "$shrunk0" 1
	check "idle, no frames: every retiring buffer stranded within 10 s (retiring $(dev 6), stranded $(dev 8))" \
		wait_for 30 stranded_all
	n=$(dev 8)
	echo "# stranded: $(grep "^$RDS_RXE " /proc/net/rds/devices)"
	check "idle: the counter srq_stranded moved by $n ($(ib_counter srq_stranded), was $stranded0)" \
		grew srq_stranded "$stranded0" "$n"
	check "idle: the log says $n buffers ($(( n * 8240 )) bytes) still posted" \
		bash -c "dmesg | grep -q '$RDS_RXE: $n retired receive buffers ($(( n * 8240 )) bytes) still posted, none freed for 10 s'"
	check "idle: held: srq_buffers $(dev 3) = $SIZE + $n stranded, ib_rx_pages $(cat $P/ib_rx_pages) = 2 x srq_buffers" \
		bash -c "[ $(dev 3) = $(( SIZE + n )) ] && [ $(cat $P/ib_rx_pages) = $(( 2 * (SIZE + n) )) ]"
	barrier stranded 120 || ksft_fail "barrier stranded"
	check "frames again: no buffer retiring nor stranded, $SIZE left, all posted" \
		wait_for 20 bash -c "awk -v d=$RDS_RXE -v n=$SIZE '\$1 == d && \$3 == n && \$4 == n && \$6 == 0 && \$8 == 0 { ok = 1 } END { exit !ok }' /proc/net/rds/devices"
	echo "# idle: $(grep "^$RDS_RXE " /proc/net/rds/devices)"
	check "frames again: srq_retired moved by $n at least ($(ib_counter srq_retired), was $retired0)" \
		grew srq_retired "$retired0" "$n"
	check "frames again: ib_rx_pages $(cat $P/ib_rx_pages) = 2 x $SIZE" pages_match
	barrier idle-done 120 || ksft_fail "barrier idle-done"
else
	barrier idle-go 60 || ksft_fail "barrier idle-go"
	# until host 1 has seen its retired buffers stranded (at most 40 s
	# for the shrink and 30 s for the stranding, scaled)
	barrier stranded 120 || ksft_fail "barrier stranded"
	# (idle connections: heartbeat_idle_ms is their interval)
	echo 200 > $S/heartbeat_ms
	echo 200 > $S/heartbeat_idle_ms
	barrier idle-done 120 || ksft_fail "barrier idle-done"
fi
echo "$hb0" > $S/heartbeat_ms
echo "$hbi0" > $S/heartbeat_idle_ms
echo "# ib_counters: $(cat $P/ib_counters)"
check "no RNR, no bad frame before the reload" \
	test "$(ib_counter rnr)" = 0 -a "$(ib_counter bad_frames)" = 0

# 3. Negative: no room to grow.
barrier negative 120 || ksft_fail "barrier negative"
check "reload with ib_srq_max=$SIZE" \
	rds_reload ib_srq_size=$SIZE ib_credits=$CREDITS ib_srq_max=$SIZE
barrier negative-loaded 120 || ksft_fail "barrier negative-loaded"
busy fixed 41 hold

ib_test_end_reload() {
	echo "# ib_counters: $(cat $P/ib_counters)"
	check "no RNR, no bad frame" \
		test "$(ib_counter rnr)" = 0 -a "$(ib_counter bad_frames)" = 0
	barrier end-checked 240 || ksft_fail "barrier end-checked"
	check "reload as usual" rds_reload
	barrier end 240 || ksft_fail "barrier end"
	ksft_exit
}
ib_test_end_reload
