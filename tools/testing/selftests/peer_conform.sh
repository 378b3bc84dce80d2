#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Conformance of the module's IB wire protocol against the user-space
# peer (tools/testing/peer/wire_peer, built from net/ib/hs.c, frame.c,
# credit.c), host 1's module against the peer on host 2 (peer_lib.sh):
#  rx       host 1 sends every boundary size (0..1 MiB around 48, 4048,
#           4096 and its multiples): the peer reassembles each byte for
#           byte, in order, and sees every credit rule kept;
#  withhold the peer grants 4 credits and withholds the refills: the
#           module sends exactly 4 data frames, waits (credit_waits), and
#           sends the rest once credits come back;
#  tx       the peer sends the boundary sizes fragmented, packed frames,
#           a burst of 200 small messages, sequence numbers across the
#           64-bit wrap and 4 duplicates flagged RETRANSMITTED, and two
#           packed frames of a 5000- and a 2000-byte message, the second
#           copied out of the receive buffer under an injected refill
#           failure (issue 15, lead 2): host 1
#           receives each once, intact, in order; the duplicates are
#           dropped and counted (recv_drop_old_seq); the burst's ACKs are
#           grouped;
#  retrans  the peer receives 20 messages, acknowledges 8 and drops the
#           connection: the module reconnects to the peer (listening on
#           18634) and resends exactly the other 12, flagged RETRANSMITTED;
#  cong     the peer congests a port of host 1 (small receive buffer, not
#           read): host 1's map arrives with its bit set, then clear once
#           host 1 reads; the peer's map congests one of its ports: host
#           1's non-blocking send to it fails with ENOBUFS, and goes once
#           the peer's next map frees it.
. "$(dirname "$0")/peer_lib.sh"

peer_begin
sz=$PEER_SIZES
nsz=$(echo "$sz" | tr , '\n' | wc -l)

# --- rx --------------------------------------------------------------
[ "$RDS_HOST" = 1 ] && snap
barrier rx.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t rx -q 102 -c 16 -z "$sz" \
		-n $((2 * nsz)) -P 7002 > /tmp/peer.rx 2>&1 &
	pid=$!
	check "rx: peer connected" peer_up /tmp/peer.rx
	barrier rx.up 180
	wait_for 600 grep -q '^result:' /tmp/peer.rx
	barrier rx.fin 600
	barrier rx.done 600
	peer_result /tmp/peer.rx $pid rx
else
	barrier rx.up 180
	rm -f /tmp/host.rx.release
	$hostpy send "$RDS_ADDR" "$RDS_PEER" 102 7002 "$sz" $((2 * nsz)) \
		/tmp/host.rx.release > /tmp/host.rx 2>&1 &
	spid=$!
	barrier rx.fin 600
	cat /tmp/host.rx
	$hostpy conns
	touch /tmp/host.rx.release
	barrier rx.done 600
	wait $spid
	check "rx: host 1 sent $((2 * nsz)) messages (exit $?)" \
		grep -q '^# sent' /tmp/host.rx
	echo "# rx: host 1 tx_frames +$(delta tx_frames), credit_waits +$(delta credit_waits)"
	check "rx: no bad frame, no RNR on host 1" \
		test "$(delta bad_frames)" = 0 -a "$(delta rnr)" = 0
fi

# --- withhold ----------------------------------------------------------
[ "$RDS_HOST" = 1 ] && snap
barrier wh.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t rx -q 103 -c 4 -W -z 100,5000 \
		-n 12 -P 7003 > /tmp/peer.wh 2>&1 &
	pid=$!
	check "withhold: peer connected" peer_up /tmp/peer.wh
	barrier wh.up 180
	wait_for 600 grep -q '^result:' /tmp/peer.wh
	barrier wh.fin 600
	barrier wh.done 600
	peer_result /tmp/peer.wh $pid withhold
else
	barrier wh.up 180
	rm -f /tmp/host.wh.release
	$hostpy send "$RDS_ADDR" "$RDS_PEER" 103 7003 100,5000 12 /tmp/host.wh.release \
		> /tmp/host.wh 2>&1 &
	spid=$!
	barrier wh.fin 600
	cat /tmp/host.wh
	$hostpy conns
	touch /tmp/host.wh.release
	barrier wh.done 600
	wait $spid
	check "withhold: host 1 waited for credits (credit_waits +$(delta credit_waits))" \
		test "$(delta credit_waits)" -gt 0
	check "withhold: no bad frame, no RNR on host 1" \
		test "$(delta bad_frames)" = 0 -a "$(delta rnr)" = 0
fi

# --- tx ------------------------------------------------------------------
burst=200
if [ "$RDS_HOST" = 1 ]; then
	snap
	old=$($hostpy counter recv_drop_old_seq)
	$hostpy recvtx "$RDS_ADDR" 7004 "$sz" $burst > /tmp/host.tx 2>&1 &
	rpid=$!
	wait_for 30 grep -q '^# bound' /tmp/host.tx
	barrier tx.bound 180
	# The peer's second big packed frame comes after these: the next
	# allocation that may fail (the buffer's refill page) fails.
	barrier tx.arm 600
	mark=$(dmesg | wc -l)
	echo 1 > /sys/module/rds/parameters/fault_nth
	barrier tx.armed 60
	barrier tx.done 600
	echo 0 > /sys/module/rds/parameters/fault_nth
	wait $rpid
	rc=$?
	cat /tmp/host.tx
	check "tx: host 1 received every message once, intact, in order (exit $rc)" \
		test $rc = 0
	check "tx: the big packed frame found no refill page: copied (rx_copies +$(delta rx_copies))" \
		test "$(delta rx_copies)" -ge 1
	dmesg | tail -n +"$((mark + 1))" | grep 'fault injected' | sed 's/^/# /'
	dup=$(( $($hostpy counter recv_drop_old_seq) - old ))
	check "tx: the 4 duplicates dropped and counted (recv_drop_old_seq +$dup)" \
		test "$dup" = 4
	acks=$(delta tx_acks)
	echo "# tx: host 1 sent $acks ACK frames, $(delta tx_ctrl) control frames for $((nsz + 9 + burst + 5)) messages"
	check "tx: ACKs grouped on host 1 (tx_acks +$acks < $burst)" \
		test "$acks" -lt $burst
	check "tx: no bad frame, no RNR on host 1" \
		test "$(delta bad_frames)" = 0 -a "$(delta rnr)" = 0
else
	barrier tx.bound 180
	"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t tx -q 104 -c 16 -z "$sz" \
		-n $burst -P 7004 > /tmp/peer.tx 2>&1 &
	peer_result /tmp/peer.tx $! tx
	barrier tx.done 600
fi

# --- retrans -----------------------------------------------------------
[ "$RDS_HOST" = 1 ] && snap
barrier rt.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t retrans -q 106 -c 16 \
		-z 100,5000,300 -n 20 -k 8 -P 7006 > /tmp/peer.rt 2>&1 &
	pid=$!
	check "retrans: peer connected" peer_up /tmp/peer.rt
	barrier rt.up 180
	wait_for 600 grep -q '^result:' /tmp/peer.rt
	barrier rt.fin 600
	barrier rt.done 600
	peer_result /tmp/peer.rt $pid retrans
else
	barrier rt.up 180
	rm -f /tmp/host.rt.release
	$hostpy send "$RDS_ADDR" "$RDS_PEER" 106 7006 100,5000,300 20 /tmp/host.rt.release \
		> /tmp/host.rt 2>&1 &
	spid=$!
	barrier rt.fin 600
	cat /tmp/host.rt
	$hostpy conns
	touch /tmp/host.rt.release
	barrier rt.done 600
	wait $spid
	echo "# retrans: host 1 resets +$(delta resets), connects +$(delta connects)"
	check "retrans: host 1 reconnected (connects +$(delta connects) >= 2)" \
		test "$(delta connects)" -ge 2
	check "retrans: no bad frame, no RNR on host 1" \
		test "$(delta bad_frames)" = 0 -a "$(delta rnr)" = 0
fi
# --- cong ----------------------------------------------------------------
[ "$RDS_HOST" = 1 ] && snap
barrier cg.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t cong -q 111 -c 16 -P 7011 \
		> /tmp/peer.cg 2>&1 &
	peer_result /tmp/peer.cg $! cong
else
	timeout 600 $hostpy cong "$RDS_ADDR" "$RDS_PEER" 111 7011 > /tmp/host.cg 2>&1
	rc=$?
	cat /tmp/host.cg
	check "cong: host 1's port congested and freed, the peer's congested port refused a send, then took it (exit $rc)" \
		test $rc = 0
	check "cong: host 1 sent its map at least twice (cong_sent +$(delta cong_sent))" \
		test "$(delta cong_sent)" -ge 2
	check "cong: host 1 took the peer's two maps (cong_recv +$(delta cong_recv))" \
		test "$(delta cong_recv)" -ge 2
	check "cong: no bad frame, no RNR on host 1" \
		test "$(delta bad_frames)" = 0 -a "$(delta rnr)" = 0
fi
peer_end
