#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Hostile input from the user-space peer (wire_peer -t hostile) to host
# 1's module (peer_lib.sh): each malformed frame on a fresh connection
# (TOS 107) — wrong header checksum, a frame shorter than a header, lengths
# not matching fragments, fragments of another message, a fragment count
# beyond 1 MiB, ACKs of messages never sent, absurd credit grants,
# give-backs of 0 credits, on a data frame or leaving fewer than 4, broken
# packed frames, a SEND larger than a receive buffer, sequence numbers
# outside the receive window (2^62 ahead, a retransmission 2^33 behind) —
# must make the module reset the connection (counted in bad_frames); a
# congestion map of the wrong size is counted and ignored, a correct
# give-back (the module's accept asked for it) is taken; a message to a
# port nobody bound is dropped and acknowledged.  Then handshakes: 56 bytes with junk after ours, truncated
# ones, a reserved byte, an rdma_cm port nobody listens on, a flood of 30
# valid and 30 garbage requests.  Throughout, a witness connection (TOS 108)
# must answer a ping after every case; afterwards a new connection works,
# host 1's counters moved by exactly what the peer expects, and the
# receive pages are back to where they were (nothing leaked).
# Then the module as the active side (wire_peer -t active): host 1 sends
# to the peer on TOS 112; the peer, listening on 18634, answers the first
# request with a bad magic and the second with an rx_next acknowledging
# 1000 messages never sent: each is counted (bad_frames) and the attempt
# ended; the third is answered properly and the messages arrive.
# Last, an ACK of messages queued but never sent (wire_peer -t ackahead,
# TOS 105): the peer grants 4 credits and withholds the refills, so host
# 1's module sends what fits and keeps the rest of its 12 messages queued;
# the peer acknowledges the first message not sent whole (the module may
# hold it for a packed frame or a credit although its transport has it).
# The module must
# take that as a bad frame (bad_frames +1, the connection reset), not free
# the queued messages as delivered: it connects to the peer again and all
# 12 arrive, those sent before flagged RETRANSMITTED.  A module that
# bounds an ACK by the sequence numbers it assigned loses 3 of them, one
# that bounds it by what it handed to its transport loses 4.
. "$(dirname "$0")/peer_lib.sh"

if [ "$RDS_HOST" = 1 ]; then
	# Before the barrier: the peer starts right after it.
	snap
	hs0=$(ib_handshakes accepted)
	pages0=$(cat $P/ib_rx_pages)
	nosock=$($hostpy counter recv_drop_no_sock)
	mark=$(dmesg | wc -l)
	echo "# $(date +%T) host 1: counters taken"
fi
peer_begin
if [ "$RDS_HOST" = 2 ]; then
	echo "# $(date +%T) host 2: peer starts"
	timeout 900 "$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t hostile -q 107 -w 108 \
		-c 16 -P 7007 > /tmp/peer.hostile 2>&1 &
	peer_result /tmp/peer.hostile $! hostile
	grep '^expect ' /tmp/peer.hostile > "$RDS_SHARED/peer_hostile.expect"
	grep '^flood ' /tmp/peer.hostile >> "$RDS_SHARED/peer_hostile.expect"
	barrier done 900
	echo "# $(date +%T) host 2: peer done"
	"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t active -q 112 -c 16 -z 100,5000 \
		-n 6 -P 7012 > /tmp/peer.active 2>&1 &
	pid=$!
	check "active: peer listening" peer_up /tmp/peer.active
	barrier active.up 300
	# Host 1 keeps its socket (its messages) until the peer is done.
	wait_for 900 grep -q '^result:' /tmp/peer.active
	barrier active.done 900
	peer_result /tmp/peer.active $pid active
else
	barrier done 900
	echo "# $(date +%T) host 1: the peer is done"
	cat "$RDS_SHARED/peer_hostile.expect"
	read -r _ _ want_bad _ want_resets < <(grep '^expect ' "$RDS_SHARED/peer_hostile.expect")
	read -r _ _ acc _ ref < <(grep '^flood ' "$RDS_SHARED/peer_hostile.expect")
	# Read once, now: host 2 goes on to the next section at once, and
	# the module's attempts to it count (its two bad answers).
	bad=$(delta bad_frames)
	resets=$(delta resets)
	echo "# hostile: bad_frames +$bad, resets +$resets, connects +$(delta connects), handshakes accepted +$(( $(ib_handshakes accepted) - hs0 ))"
	check "hostile: bad_frames +$bad = ${want_bad:-?} expected" \
		test "$bad" = "${want_bad:-x}"
	check "hostile: every reset case reset (resets +$resets >= ${want_resets:-?})" \
		test "$resets" -ge "${want_resets:-1000}"
	check "hostile: messages to an unbound port counted (recv_drop_no_sock +$(( $($hostpy counter recv_drop_no_sock) - nosock )))" \
		test $(( $($hostpy counter recv_drop_no_sock) - nosock )) -ge 1
	check "hostile: the flood's accepted requests counted (accepted +$(( $(ib_handshakes accepted) - hs0 )) >= ${acc:-?})" \
		test $(( $(ib_handshakes accepted) - hs0 )) -ge "${acc:-1000}"
	check "hostile: each reset logged as a bad frame from the peer" \
		bash -c "dmesg | tail -n +$((mark + 1)) | grep -q 'bad frame from \(::ffff:\)\?$RDS_PEER'"
	check "hostile: receive pages back to $pages0 (nothing leaked)" \
		wait_for 30 file_is $P/ib_rx_pages "$pages0"
	check "hostile: no RNR, no receive memory failure" \
		test "$(delta rnr)" = 0 -a "$(delta rx_nomem)" = 0
	dmesg | tail -n +$((mark + 1)) | grep 'bad frame\|rds:' | sort | uniq -c | sort -rn | head -30 | sed 's/^/# /'
	snap
	barrier active.up 300
	timeout 900 $hostpy send "$RDS_ADDR" "$RDS_PEER" 112 7012 100,5000 6 \
		active.done > /tmp/host.active 2>&1
	cat /tmp/host.active
	echo "# active: bad_frames +$(delta bad_frames), connects +$(delta connects)"
	check "active: the two bad answers counted (bad_frames +$(delta bad_frames) = 2)" \
		test "$(delta bad_frames)" = 2
	check "active: host 1 connected in the end (connects +$(delta connects) >= 1)" \
		test "$(delta connects)" -ge 1
fi

# --- ackahead ------------------------------------------------------------
# The peer grants 4 credits and withholds the refills, then acknowledges
# a message queued but never sent: a bad frame (the module resets), not a
# delivery (the module freeing it unsent).
[ "$RDS_HOST" = 1 ] && snap
barrier ak.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t ackahead -q 105 -c 4 \
		-z 100,5000 -n 12 -P 7005 > /tmp/peer.ak 2>&1 &
	pid=$!
	check "ackahead: peer connected" peer_up /tmp/peer.ak
	barrier ak.up 180
	wait_for 600 grep -q '^result:' /tmp/peer.ak
	barrier ak.fin 600
	barrier ak.done 600
	peer_result /tmp/peer.ak $pid ackahead
else
	barrier ak.up 180
	rm -f /tmp/host.ak.release
	$hostpy send "$RDS_ADDR" "$RDS_PEER" 105 7005 100,5000 12 /tmp/host.ak.release \
		> /tmp/host.ak 2>&1 &
	spid=$!
	barrier ak.fin 600
	cat /tmp/host.ak
	$hostpy conns
	touch /tmp/host.ak.release
	barrier ak.done 600
	wait $spid
	echo "# ackahead: bad_frames +$(delta bad_frames), resets +$(delta resets), connects +$(delta connects)"
	check "ackahead: the ACK of a message never sent counted (bad_frames +$(delta bad_frames) = 1)" \
		test "$(delta bad_frames)" = 1
	check "ackahead: no RNR on host 1 (rnr +$(delta rnr))" \
		test "$(delta rnr)" = 0
fi
peer_end
