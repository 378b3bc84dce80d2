#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A request in the kernel's RDS layout frees nothing with its ack_seq
# (Documentation/interop.md, "Acknowledgments in a handshake"): the wire
# peer in mainline mode (wire_peer -t mlforge) on host 2 connects to host
# 1's module (TOS 127) and takes host 1's 12 messages without
# acknowledging them, drops the connection, and requests again with
# ack_seq = the last one's sequence number, as anyone on the fabric could
# for this address.  Host 1 must still hold the 12 once that request is
# accepted, send them again flagged RETRANSMITTED, and free them on the
# peer's ACK frame only.  (The rule before freed all 12 at the request.)
# WIRE_PEER_NEG=1 (a plan variable): every check of the module here
# expects what it must not do: each must then fail (the negative run).
. "$(dirname "$0")/peer_lib.sh"	# neg, hw, held_is

n=12
peer_begin

[ "$RDS_HOST" = 1 ] && snap
barrier fg.snap 600
if [ "$RDS_HOST" = 2 ]; then
	"$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t mlforge -V 3.1 -q 127 \
		-z 100,5000,4096 -n $n -P 7027 > /tmp/peer.mfg 2>&1 &
	pid=$!
	check "forge: peer connected" peer_up /tmp/peer.mfg
	barrier fg.up 180
	peer_result /tmp/peer.mfg $pid forge
	barrier fg.done 600
else
	barrier fg.up 180
	rm -f /tmp/host.mfg.release
	$hostpy send "$RDS_ADDR" "$RDS_PEER" 127 7027 100,5000,4096 $n \
		/tmp/host.mfg.release > /tmp/host.mfg 2>&1 &
	spid=$!
	barrier forged 600
	held=$($hostpy held 127)
	check "forge: the request's ack_seq freed nothing: host 1 holds $held of $n (TOS 127)" \
		test "$held" = $((n + neg))
	$hostpy conns
	barrier checked 600
	barrier acked 600
	check "forge: the peer's ACK frame freed them (nothing held, TOS 127)" \
		wait_for $hw held_is 127 "$neg"
	touch /tmp/host.mfg.release
	barrier fg.done 600
	wait $spid
	cat /tmp/host.mfg
	c=$(delta connects) b=$(delta bad_frames)
	echo "# forge: host 1 connects +$c, resets +$(delta resets), maps +$(delta cong_sent), bad frames +$b"
	check "forge: host 1 accepted two connections (connects +$c)" \
		test "$c" -ge $((2 + 100 * neg))
	check "forge: no bad frame on host 1" test "$b" = "$neg"
fi
peer_end
