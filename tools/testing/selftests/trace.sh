#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's tracepoints (events/rds, Documentation/tracepoints.md),
# each in a scenario that must fire it, in a tracefs instance of its own
# on each host.  First with the events off: a drop and a refused handshake
# happen (their counters move) and nothing is written.  Then on:
#  - rds_msg_drop: host 2 sends to a port of host 1 with no socket; host 1
#    traces it with both addresses, both ports, the length and "no socket";
#  - rds_ib_hs_refuse: host 2's hs_peer offers a handshake without the RDS
#    magic; host 1 traces host 2's address and "not RDS";
#  - rds_conn_state: host 1 fails its connection's queue pair
#    (ib_qp_event_irq): up -> down "QP fatal error", and the next send
#    brings it back (down -> connecting -> up "established");
#  - rds_ib_credit_stall: host 2 sends 60000-byte messages (15 fragments)
#    while host 1 grants 8 credits (the module is reloaded with
#    ib_credits=8 for this test): credits=0 with messages waiting;
#  - rds_rdma_complete: rds-stress -D (host 1 responds with RDMA READs and
#    WRITEs): both ops with status success;
#  - a cut of host 1's link (host 1's heartbeat 500 ms): host 1 traces
#    rds_ib_heartbeat_loss (silent 2500 ms at least); host 2, which sent
#    two messages after the cut, cancels one (rds_msg_drop "send
#    cancelled") and retransmits the other (rds_retransmit) once the link
#    is back: host 1 then drops it ("no socket") with the same sequence
#    number as host 2's retransmission.
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
T=/sys/kernel/tracing
I=$T/instances/rds_selftest
peer=$RDS_BUILD/peer/hs_peer
stress=$RDS_BUILD/rds-stress/rds-stress
hb=/proc/sys/net/rds/ib/heartbeat_ms
hbi=/proc/sys/net/rds/ib/heartbeat_idle_ms
shared=$RDS_SHARED/$RDS_TEST
me=${RDS_ADDR//./\\.}
them=${RDS_PEER//./\\.}
events="rds_conn_state rds_msg_drop rds_retransmit rds_rdma_complete
rds_ib_credit_stall rds_ib_heartbeat_loss rds_ib_hs_refuse"

rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
# 8 credits, fewer than the 15 fragments of one message of the burst:
# every message of section 4 waits for credits, however fast host 1
# grants them (with 64, 6.1 often never ran out).
barrier reload 120 || ksft_fail "barrier reload"
check "reload with ib_credits=8" rds_reload ib_credits=8
barrier reloaded 120 || ksft_fail "barrier reloaded"
[ -d $T/instances ] || mount -t tracefs tracefs $T ||
	{ ksft_fail "tracefs mounted"; ksft_exit; }
# The first use of tracing expands the top buffer to its full size (about
# 1.4 MiB per CPU, "7 (expanded: 1408)" before), for good: it is given
# back at the end, or unload.sh's check of the pages returned counts it.
top_kb=$(cat $T/buffer_size_kb)
rmdir $I 2>/dev/null
mkdir $I || { ksft_fail "tracefs instance created"; ksft_exit; }
hb_saved=$(cat $hb) hbi_saved=$(cat $hbi)
cleanup() {
	echo 0 > $I/events/rds/enable 2>/dev/null
	rmdir $I 2>/dev/null
	echo "$hb_saved" > $hb
	echo "$hbi_saved" > $hbi
	case $top_kb in
	*expanded*) echo "${top_kb%% *}" > $T/buffer_size_kb ;;
	esac
}
trap cleanup EXIT

# traced EVENT ERE: a line of EVENT matching ERE is in the trace.
traced() {
	grep -E ": $1: .*$2" $I/trace > /dev/null
}

# show EVENT: this host's lines of EVENT, as comments.
show() {
	grep ": $1: " $I/trace | tail -n 6 | sed 's/^ */# /'
}

# rds_lines: how many lines of rds events the trace holds.
rds_lines() {
	grep -c ': rds_' $I/trace
}

# send PORT LEN [COUNT [FILE]]: COUNT (1) messages of LEN bytes from a
# fresh socket of ours (port 4410, a send buffer of 8 MiB: all 40 of the
# burst may be in flight) to the peer's PORT.  With FILE, the socket stays
# open until FILE exists (the peer got them; 200 s at most): closing it
# cancels every message not yet acknowledged, those still queued included.
send() {
	python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.setsockopt(socket.SOL_SOCKET, 32, 8 << 20)	# SO_SNDBUFFORCE
s.bind((sys.argv[1], 4410))
for i in range(int(sys.argv[5])):
    s.sendto(b"t" * int(sys.argv[4]), (sys.argv[2], int(sys.argv[3])))
end = time.time() + int(sys.argv[7])
while sys.argv[6] and not os.path.exists(sys.argv[6]) and time.time() < end:
    time.sleep(0.1)
' "$RDS_ADDR" "$RDS_PEER" "$1" "$2" "${3:-1}" "${4:-}" "$(scaled 200)"
}

# burst_dump: what a failed burst leaves to look at (as comments).
burst_dump() {
	for f in $P/*; do
		[ -r "$f" ] && echo "# ${f##*/}: $(head -c 200 "$f" 2>/dev/null)"
	done
	echo "# rds events: $(rds_lines), the last 20:"
	grep ': rds_' $I/trace | tail -n 20 | sed 's/^ */# /'
}

all_there=true
for e in $events; do
	[ -d $I/events/rds/$e ] || all_there=false
done
check "events/rds holds the 7 events" $all_there

# 1. Events off: a drop and a refusal happen, nothing is written.
echo 0 > $I/events/rds/enable
echo > $I/trace
[ "$RDS_HOST" = 1 ] && refused0=$(ib_handshakes not_rds)
barrier off 60 || ksft_fail "barrier off"
if [ "$RDS_HOST" = 2 ]; then
	check "off: a message to host 1's port 4999 (no socket)" send 4999 10
	out=$("$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -m magic 2>&1)
	echo "# off: hs_peer: $out"
fi
barrier off_done 120 || ksft_fail "barrier off_done"
if [ "$RDS_HOST" = 1 ]; then
	refused1=$(ib_handshakes not_rds)
	check "off: the refusal happened (not_rds $refused0 -> $refused1)" \
		test "$refused1" = $((refused0 + 1))
fi
check "off: events/rds/enable reads 0" file_is $I/events/rds/enable 0
check "off: no rds event written ($(rds_lines) lines)" test "$(rds_lines)" = 0

# 2. On.  A message to no socket, a refused handshake.
echo 1 > $I/events/rds/enable
check "events/rds/enable reads 1" file_is $I/events/rds/enable 1
barrier on 60 || ksft_fail "barrier on"
if [ "$RDS_HOST" = 2 ]; then
	check "a message of 123 bytes to host 1's port 4999" send 4999 123
	out=$("$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -m magic 2>&1)
	echo "# hs_peer: $out"
	check "hs_peer refused: not RDS" \
		bash -c "echo '$out' | grep -q '^refused: not RDS '"
fi
barrier sent 120 || ksft_fail "barrier sent"
if [ "$RDS_HOST" = 1 ]; then
	check "rds_msg_drop: $RDS_PEER:4410 -> $RDS_ADDR:4999, 123 bytes, no socket" \
		wait_for 30 traced rds_msg_drop \
		"laddr=$me faddr=$them sport=4410 dport=4999 seq=[0-9]+ len=123 reason=\"no socket\""
	show rds_msg_drop
	check "rds_ib_hs_refuse: peer=$RDS_PEER reason \"not RDS\"" \
		wait_for 30 traced rds_ib_hs_refuse "peer=$them reason=\"not RDS\""
	show rds_ib_hs_refuse
fi

# 3. Connection states: host 1 fails its queue pair, then sends.
barrier qp 200 || ksft_fail "barrier qp"
if [ "$RDS_HOST" = 1 ]; then
	if [ -e $P/ib_qp_event_irq ]; then
		echo > $I/trace
		echo 1 > $P/ib_qp_event_irq
		check "rds_conn_state: up -> down, \"QP fatal error\"" \
			wait_for 60 traced rds_conn_state \
			"laddr=$me faddr=$them tos=0 transport=infiniband old=up new=down reason=\"QP fatal error\""
		check "a message to host 2 after the reset" send 4999 5
		check "rds_conn_state: down -> connecting, then up \"established\"" \
			wait_for 120 traced rds_conn_state \
			"laddr=$me faddr=$them tos=0 transport=infiniband old=connecting new=up reason=\"established\""
		traced rds_conn_state "old=down new=connecting" ||
			ksft_fail "rds_conn_state: down -> connecting"
		show rds_conn_state
	else
		ksft_skip "rds_conn_state on a QP error" "no RDS_TEST_HOOKS"
	fi
fi

# 4. A credit stall: 40 messages of 60000 bytes (15 fragments each).
barrier burst 300 || ksft_fail "barrier burst"
if [ "$RDS_HOST" = 1 ]; then
	timeout "$(scaled 200)" python3 -c '
import socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)	# SO_RCVBUFFORCE
s.bind((sys.argv[1], 4401))
s.settimeout(180)
open("/tmp/trace.bound", "w").close()
for i in range(40):
    try:
        d, a = s.recvfrom(65536)
    except socket.timeout:
        sys.exit("# timed out after %d messages" % i)
    assert len(d) == 60000, len(d)
print("# got 40 messages")
' "$RDS_ADDR" &
	rpid=$!
	wait_for 60 test -e /tmp/trace.bound
	barrier bound 120 || ksft_fail "barrier bound"
	wait $rpid
	rc=$?
	check "host 1 received the 40 messages" test $rc = 0
	# host 2 may close its socket; it dumps its state too on a failure
	echo $rc > "$shared.burst"
	[ $rc = 0 ] || burst_dump
	rm -f /tmp/trace.bound
else
	barrier bound 120 || ksft_fail "barrier bound"
	rm -f "$shared.burst"
	check "40 messages of 60000 bytes to host 1" \
		send 4401 60000 40 "$shared.burst"
	check "rds_ib_credit_stall: credits=0, messages waiting" \
		wait_for 30 traced rds_ib_credit_stall \
		"laddr=$me faddr=$them tos=0 credits=0 waiting=[1-9]"
	show rds_ib_credit_stall
	check "the burst: no message cancelled by the sender's close" \
		bash -c "! grep -q ': rds_msg_drop: .*dport=4401 .*reason=\"send cancelled\"' $I/trace"
	[ "$(cat "$shared.burst" 2>/dev/null)" = 0 ] || burst_dump
fi
barrier burst_done 300 || ksft_fail "barrier burst_done"

# 5. RDMA: host 1 answers host 2's requests with READs and WRITEs.
if [ -x "$stress" ]; then
	stress_pair rdma 4600 120 /tmp/trace.stress /tmp/trace.json -- \
		-t 1 -d 2 -D 16K -I 1 -M 0 -T 3
	check "rds-stress -D exits 0" test "$stress_rc" = 0
	if [ "$RDS_HOST" = 1 ]; then
		for op in read write; do
			check "rds_rdma_complete: op=$op status=success" \
				traced rds_rdma_complete \
				"laddr=$me faddr=$them op=$op status=success"
		done
		show rds_rdma_complete
	fi
else
	ksft_fail "rds-stress built" "make -C tools/rds-stress"
fi
barrier rdma_done 120 || ksft_fail "barrier rdma_done"

# 6. A link cut: heartbeat loss, a cancelled send, a retransmission.
# Host 1 declares the loss (500 ms: 2.5 s of silence).  Host 2's heartbeat
# is off: it posts nothing after the cut until its two messages, so that
# they go out on the connection still up, however long the barriers take
# (a debug kernel: 6 s), and are retransmitted when it goes down (their
# transport retries run out).  With a heartbeat, host 2's own request for
# a sign of life could meet the cut first (the loss, or its retries
# running out) and the messages be queued on a connection already down:
# sent later, not retransmitted.
# (host 1's side is idle: heartbeat_idle_ms is its interval)
if [ "$RDS_HOST" = 1 ]; then
	echo 500 > $hb
	echo 500 > $hbi
else
	echo 0 > $hb
fi
echo > $I/trace
rm -f /tmp/trace.go /tmp/trace.sent /tmp/trace.ready
if [ "$RDS_HOST" = 2 ]; then
	# Ready before the cut: python takes seconds to start under TCG.
	timeout "$(scaled 300)" python3 -c '
import os, socket, struct, sys, time
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], 4410))
open("/tmp/trace.ready", "w").close()
while not os.path.exists("/tmp/trace.go"):
    time.sleep(0.05)
s.sendto(b"retransmit me", (sys.argv[2], 4999))
s.sendto(b"cancel me", (sys.argv[2], 4998))
# RDS_CANCEL_SENT_TO (SOL_RDS 276, 1): a sockaddr_in of port 4998
sin = struct.pack("=HH4s8x", socket.AF_INET, socket.htons(4998),
                  socket.inet_aton(sys.argv[2]))
s.setsockopt(276, 1, sin)
open("/tmp/trace.sent", "w").close()
# keep the socket: closing it would cancel the other message as well
time.sleep(int(sys.argv[3]))
' "$RDS_ADDR" "$RDS_PEER" "$(scaled 200)" &
	spid=$!
	wait_for 60 test -e /tmp/trace.ready ||
		ksft_fail "the sender of the link cut is ready"
fi
barrier cut 120 || ksft_fail "barrier cut"
# Host 1's link: host 2's port stays up, so its messages go out into the
# void and wait for their ACK until the attempt ends.
[ "$RDS_HOST" = 1 ] && check "host 1 cuts its link" host_request link off
barrier cut_done 60 || ksft_fail "barrier cut_done"
if [ "$RDS_HOST" = 2 ]; then
	touch /tmp/trace.go
	check "two messages sent after the cut, one cancelled" \
		wait_for 60 test -e /tmp/trace.sent
	check "rds_msg_drop: the cancelled one, \"send cancelled\"" \
		traced rds_msg_drop \
		"laddr=$me faddr=$them sport=4410 dport=4998 seq=[0-9]+ len=9 reason=\"send cancelled\""
	show rds_msg_drop
fi
if [ "$RDS_HOST" = 1 ]; then
	check "rds_ib_heartbeat_loss: $RDS_PEER silent 2500 ms or more" \
		wait_for 60 traced rds_ib_heartbeat_loss \
		"laddr=$me faddr=$them tos=0 silent_ms=(2[5-9][0-9]{2}|[3-9][0-9]{3}|[0-9]{5,})"
	show rds_ib_heartbeat_loss
fi
if [ "$RDS_HOST" = 2 ]; then
	check "rds_retransmit: the message to $RDS_PEER" \
		wait_for 120 traced rds_retransmit "laddr=$me faddr=$them tos=0 seq=[0-9]+"
	show rds_retransmit
fi
barrier detected 200 || ksft_fail "barrier detected"
[ "$RDS_HOST" = 1 ] && check "host 1 restores its link" host_request link on
barrier restored 180 || ksft_fail "barrier restored"
if [ "$RDS_HOST" = 1 ]; then
	check "the retransmitted message arrived: rds_msg_drop \"no socket\"" \
		wait_for 120 traced rds_msg_drop \
		"laddr=$me faddr=$them sport=4410 dport=4999 seq=[0-9]+ len=13 reason=\"no socket\""
	show rds_msg_drop
	grep ': rds_msg_drop: .*dport=4999 .*len=13 ' $I/trace |
		sed -n 's/.* seq=\([0-9]*\) .*/\1/p' | tail -n 1 > "$shared.seq"
	traced rds_conn_state "faddr=$them .*old=up new=down" ||
		ksft_fail "rds_conn_state: the cut took the connection down"
	show rds_conn_state
fi
barrier seq 200 || ksft_fail "barrier seq"
if [ "$RDS_HOST" = 2 ]; then
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	seq=$(cat "$shared.seq" 2>/dev/null)
	echo "# host 1 dropped seq ${seq:-none}"
	check "rds_retransmit's seq is the one host 1 received (${seq:-none})" \
		traced rds_retransmit "laddr=$me faddr=$them tos=0 seq=${seq:-none}\$"
	check "the cancelled message was not retransmitted" \
		bash -c "! grep -q ': rds_retransmit: .*seq=$((${seq:-0} + 1))\$' $I/trace"
fi
barrier end 120 || ksft_fail "barrier end"
cleanup
trap - EXIT
check "reload as usual" rds_reload
barrier reloaded_end 120 || ksft_fail "barrier reloaded_end"
ksft_exit
