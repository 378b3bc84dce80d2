#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Conformance of the module's side of the kernel's RDS protocol
# (Documentation/interop.md) against the user-space peer in mainline mode
# (wire_peer -t ml*, tools/testing/peer/mlpeer.c), which speaks it as
# rds_rdma does; host 1's module against the peer on host 2 (peer_lib.sh):
#  rx       the peer requests 3.1: the module's accept is the kernel's
#           layout (3.1, addresses, credit 0, ack_seq 0), its congestion
#           map comes at once (8192 bytes in two fragments, sequence 0,
#           flags exactly CONG_BITMAP); host 1 sends every boundary size:
#           byte for byte, in 4 KiB fragments, checksummed, no flag or
#           credit of ours, ACK_REQUIRED on the last one and at least every
#           8th; the peer's ACK-only frames leave nothing held on host 1;
#  tx       the peer requests 4.1 and sends the boundary sizes, a message
#           flagged ACK_REQUIRED (the module's ACK-only frame comes), 100
#           by rds_rdma's ACK rule; then 6 whose ACK it loses with the
#           connection, and, connected again in 3.1, sends them again
#           flagged RETRANSMITTED: host 1 receives each message once,
#           intact, in order (recv_drop_old_seq +6); one map of the module
#           per connection, none resent;
#  accept   the module connects to the peer (host 1 sends 12): its request
#           is the kernel's layout (3.1, credit 0, ack_seq 0), the peer
#           accepts in 3.1 and sends its map at once, takes the 12 without
#           acknowledging, acknowledges 5 and drops the connection; the
#           module connects again (ack_seq 0), the peer accepts in 4.1:
#           exactly the other 7 come again, flagged RETRANSMITTED and
#           ACK_REQUIRED; one map per connection, the first not again;
#  cong     maps both ways (peer_host.py cong): host 1's congested port in
#           its map, then free; the peer's map (never acknowledged)
#           congests its port: host 1's send gets ENOBUFS, then goes;
#  hostile  bad input on fresh connections, a witness connection answering
#           pings throughout: wrong checksum, fragments of 4097 and 8192
#           bytes, a SEND past the module's receive buffer, flags of ours
#           (control, heartbeat, packed) are counted (bad_frames) and
#           reset the connection; a map of 4096 bytes is counted and
#           ignored; nothing leaks (receive pages back).
# ML6=1 (peer_mlconform6): the same over IPv6 (fd00::H/64 on the test
# link, TOS 131..134), the kernel's IPv6 layout (56 bytes of private data,
# port 16385), hostile left out (the data path is the family's same); and
# host 1 takes the peer for the kernel's RDS: rx, tx: its requests counted
# `mainline` and `accepted` (ib_handshakes), logged accepted in the
# kernel's protocol 3.1 or 4.1; accept: the module's first request (its own
# handshake) refused by the peer with the int 1 as rds_rdma refuses it,
# logged, the next one the kernel's own request (the peer checks its
# layout), logged "runs the kernel's RDS: protocol 3.1" then 4.1.
# ML6LL=1 as well (peer_mlconform6ll): the same between the hosts'
# link-local addresses (each its netdev's own, the scope id that of
# RDS_IFACE on both sides: the module's sockets bind and send with it, the
# peer's rdma_cm resolves with it; TOS 141..144).
# WIRE_PEER_NEG=1 (a plan variable): every check of the module here
# expects what it must not do: each must then fail (the negative run).
. "$(dirname "$0")/peer_lib.sh"	# neg, hw, held_is

# The addresses and each section's TOS: IPv4, or IPv6 (ML6=1).
ml6=${ML6:-0}
a=$RDS_ADDR
pa=$RDS_PEER
q_rx=121
if [ "$ml6" = 1 ]; then
	. "$(dirname "$0")/ipv6_lib.sh"	# gid_listed
	a=fd00::$RDS_HOST
	pa=fd00::$((3 - RDS_HOST))
	q_rx=131
	if [ "${ML6LL:-0}" = 1 ]; then
		# each host's own link-local address, told to the other
		# through the shared directory
		check "$RDS_IFACE has a link-local address" wait_for 30 ll_ready
		a=$(ll_addr)
		check "rxe lists $a as a GID" wait_for 30 gid_listed "$a"
		echo "$a" > "$RDS_SHARED/$RDS_TEST.ll.$RDS_HOST"
		barrier ll 120 || { ksft_fail "barrier ll"; ksft_exit; }
		pa=$(cat "$RDS_SHARED/$RDS_TEST.ll.$((3 - RDS_HOST))")
		echo "# link-local: $a -> $pa (scope $RDS_IFACE)"
		from_ll=$pa
		a=$a%$RDS_IFACE
		pa=$pa%$RDS_IFACE
		q_rx=141
	else
		peer_exit() {
			ip -6 addr del "$a/64" dev "$RDS_IFACE" 2>/dev/null
		}
		check "$a on $RDS_IFACE" \
			ip -6 addr replace "$a/64" dev "$RDS_IFACE" nodad
		check "rxe lists $a as a GID" wait_for 30 gid_listed "$a"
	fi
fi
q_tx=$((q_rx + 1))
q_ac=$((q_rx + 2))
q_cg=$((q_rx + 3))
# What host 1 logs of the peer (IPv6): from it, or in the negative run
# from an address nobody has.
from6=${from_ll:-$pa}
[ "$neg" = 1 ] && from6=fd00::dead

# ml6_accepted SECTION VERSION...: host 1 counted the peer's requests since
# snap as the kernel's RDS and accepted them, and logged each VERSION.
ml6_accepted() {
	local name=$1 v
	shift
	check "$name: host 1 took the peer's IPv6 requests for the kernel's RDS (ib_handshakes mainline +$(hs_delta mainline), accepted +$(hs_delta accepted), want $# each)" \
		test "$(hs_delta mainline)" -ge $(($# + 100 * neg)) -a \
		"$(hs_delta accepted)" -ge $#
	for v in "$@"; do
		check "$name: host 1 logged: accepted a connection from $from6 (the kernel's RDS protocol $v)" \
			klog_since "accepted a connection from $from6 (the kernel's RDS protocol $v)"
	done
}

peer_begin
sz=$PEER_SIZES
nsz=$(echo "$sz" | tr , '\n' | wc -l)

# --- rx ----------------------------------------------------------------
[ "$RDS_HOST" = 1 ] && snap
barrier rx.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$a" -d "$pa" -t mlrx -V 3.1 -q $q_rx -z "$sz" \
		-n $((2 * nsz)) -P 7021 > /tmp/peer.mrx 2>&1 &
	pid=$!
	check "rx: peer connected" peer_up /tmp/peer.mrx
	barrier rx.up 180
	wait_for 600 grep -q '^result:' /tmp/peer.mrx
	barrier rx.fin 600
	barrier rx.done 600
	peer_result /tmp/peer.mrx $pid rx
else
	barrier rx.up 180
	rm -f /tmp/host.mrx.release
	$hostpy send "$a" "$pa" $q_rx 7021 "$sz" $((2 * nsz)) \
		/tmp/host.mrx.release > /tmp/host.mrx 2>&1 &
	spid=$!
	barrier rx.fin 600
	cat /tmp/host.mrx
	check "rx: the peer's ACKs left nothing held on host 1 (TOS $q_rx)" \
		wait_for $hw held_is $q_rx "$neg"
	$hostpy conns
	touch /tmp/host.mrx.release
	barrier rx.done 600
	wait $spid
	check "rx: host 1 sent $((2 * nsz)) messages (exit $?)" \
		grep -q '^# sent' /tmp/host.mrx
	check "rx: host 1 sent its map (cong_sent +$(delta cong_sent) >= 1)" \
		test "$(delta cong_sent)" -ge $((1 + 100 * neg))
	check "rx: no bad frame on host 1" test "$(delta bad_frames)" = "$neg"
	[ "$ml6" = 1 ] && ml6_accepted rx 3.1
fi

# --- tx ------------------------------------------------------------------
burst=100
again=6
if [ "$RDS_HOST" = 1 ]; then
	snap
	old=$($hostpy counter recv_drop_old_seq)
	$hostpy recvml "$a" 7022 "$sz" $burst $again > /tmp/host.mtx 2>&1 &
	rpid=$!
	wait_for 30 grep -q '^# bound' /tmp/host.mtx
	barrier tx.bound 180
	barrier tx.done 900
	wait $rpid
	rc=$?
	cat /tmp/host.mtx
	check "tx: host 1 received every message once, intact, in order (exit $rc)" \
		test $rc = "$neg"
	dup=$(( $($hostpy counter recv_drop_old_seq) - old ))
	check "tx: the $again sent again dropped and counted (recv_drop_old_seq +$dup)" \
		test "$dup" = $((again + neg))
	echo "# tx: host 1 sent $(delta tx_acks) ACK frames, $(delta tx_ctrl) control frames; maps +$(delta cong_sent)"
	check "tx: no bad frame on host 1" test "$(delta bad_frames)" = "$neg"
	[ "$ml6" = 1 ] && ml6_accepted tx 4.1 3.1
else
	barrier tx.bound 180
	"$peer" -s "$a" -d "$pa" -t mltx -V 4.1 -q $q_tx -z "$sz" \
		-n $burst -k $again -P 7022 > /tmp/peer.mtx 2>&1 &
	peer_result /tmp/peer.mtx $! tx
	barrier tx.done 900
fi

# --- accept --------------------------------------------------------------
[ "$RDS_HOST" = 1 ] && snap
barrier ac.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$a" -d "$pa" -t mlaccept -q $q_ac \
		-z 100,5000,4096 -n 12 -k 5 -P 7023 > /tmp/peer.mac 2>&1 &
	pid=$!
	check "accept: peer listening" peer_up /tmp/peer.mac
	barrier ac.up 180
	wait_for 600 grep -q '^result:' /tmp/peer.mac
	grep '^attempts ' /tmp/peer.mac > "$RDS_SHARED/peer_mlaccept.attempts"
	barrier ac.fin 600
	barrier ac.done 600
	peer_result /tmp/peer.mac $pid accept
else
	barrier ac.up 180
	rm -f /tmp/host.mac.release
	$hostpy send "$a" "$pa" $q_ac 7023 100,5000,4096 12 \
		/tmp/host.mac.release > /tmp/host.mac 2>&1 &
	spid=$!
	barrier ac.fin 600
	cat /tmp/host.mac
	check "accept: everything acknowledged in the end (nothing held, TOS $q_ac)" \
		wait_for $hw held_is $q_ac "$neg"
	# An attempt of ours that guessed our own protocol may take the
	# peer's map before its accept: a bad frame, the attempt ended (the
	# peer counts the attempts it accepted).
	read -r _ a1 a2 < "$RDS_SHARED/peer_mlaccept.attempts"
	extra=$(( ${a1:-1} - 1 + ${a2:-1} - 1 ))
	$hostpy conns
	touch /tmp/host.mac.release
	barrier ac.done 600
	wait $spid
	echo "# accept: host 1 connects +$(delta connects), resets +$(delta resets), maps +$(delta cong_sent)"
	check "accept: host 1 connected twice at least (connects +$(delta connects))" \
		test "$(delta connects)" -ge $((2 + 100 * neg))
	check "accept: no bad frame on host 1 but one per attempt ended by the peer's map (bad_frames +$(delta bad_frames) <= $extra)" \
		test "$(delta bad_frames)" -le $((extra - neg))
	if [ "$ml6" = 1 ]; then
		# its first request (its own handshake) refused by the peer
		# as rds_rdma refuses it (the peer counts them: exactly one)
		for l in "$from6 refused our connection as the kernel's RDS does: the next attempt speaks its protocol" \
			 "$from6 runs the kernel's RDS: protocol 3.1" \
			 "$from6 runs the kernel's RDS: protocol 4.1"; do
			check "accept: host 1 logged: $l" klog_since "$l"
		done
	fi
fi

# --- cong ----------------------------------------------------------------
[ "$RDS_HOST" = 1 ] && snap
barrier cg.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$a" -d "$pa" -t mlcong -V 3.1 -q $q_cg -P 7024 \
		> /tmp/peer.mcg 2>&1 &
	peer_result /tmp/peer.mcg $! cong
else
	timeout 600 $hostpy cong "$a" "$pa" $q_cg 7024 > /tmp/host.mcg 2>&1
	rc=$?
	cat /tmp/host.mcg
	check "cong: host 1's port congested and freed, the peer's map refused a send (ENOBUFS), then took it (exit $rc)" \
		test $rc = "$neg"
	check "cong: host 1 took the peer's two maps (cong_recv +$(delta cong_recv))" \
		test "$(delta cong_recv)" = $((2 + neg))
	check "cong: host 1 sent its map at connect and at each change (cong_sent +$(delta cong_sent) >= 3)" \
		test "$(delta cong_sent)" -ge $((3 + 100 * neg))
	check "cong: no bad frame on host 1" test "$(delta bad_frames)" = "$neg"
fi

# --- hostile (IPv4 only) ---------------------------------------------------
[ "$ml6" = 1 ] && peer_end
if [ "$RDS_HOST" = 1 ]; then
	snap
	pages0=$(cat $P/ib_rx_pages)
	mark=$(dmesg | wc -l)
fi
barrier mh.snap 600
if [ "$RDS_HOST" = 2 ]; then
	timeout 900 "$peer" -s "$a" -d "$pa" -t mlhostile -V 3.1 \
		-q 125 -w 126 -P 7025 > /tmp/peer.mh 2>&1 &
	peer_result /tmp/peer.mh $! hostile
	grep '^expect ' /tmp/peer.mh > "$RDS_SHARED/peer_mlhostile.expect"
	barrier mh.done 900
else
	barrier mh.done 900
	cat "$RDS_SHARED/peer_mlhostile.expect"
	read -r _ _ want_bad _ want_resets < "$RDS_SHARED/peer_mlhostile.expect"
	bad=$(delta bad_frames)
	resets=$(delta resets)
	echo "# hostile: bad_frames +$bad, resets +$resets, connects +$(delta connects)"
	check "hostile: bad_frames +$bad = ${want_bad:-?} expected" \
		test "$bad" = "${want_bad:-x}"
	check "hostile: every reset case reset (resets +$resets >= ${want_resets:-?})" \
		test "$resets" -ge $((${want_resets:-1000} + 1000 * neg))
	from=$RDS_PEER
	[ "$neg" = 1 ] && from=192.0.2.1
	check "hostile: each logged as a bad frame from the peer" \
		bash -c "dmesg | tail -n +$((mark + 1)) | grep -q 'bad frame from \(::ffff:\)\?$from'"
	check "hostile: receive pages back to $pages0 (nothing leaked)" \
		wait_for 30 file_is $P/ib_rx_pages "$((pages0 + neg))"
	dmesg | tail -n +$((mark + 1)) | grep 'bad frame\|rds:' | sort | uniq -c | sort -rn | head -20 | sed 's/^/# /'
fi
peer_end
