#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RDMA against the user-space peer (wire_peer -t rdma on host 2, with host
# 2's module unloaded; peer_lib.sh), host 1's side an AF_RDS application
# (build/selftests/peer_rdma_host), TOS 113, ports 7013 (host 1) and 7014
# (the peer), a witness connection on TOS 114 that must answer a ping
# after every case:
#  ours     the peer's WRITE and READ on a region host 1 registered with
#           RDS_GET_MR (6000 bytes at offset 1000 of three pages of guard
#           bytes): the region holds the peer's pattern, no guard byte
#           moved; WRITEs straddling its end and its start, just past its
#           end, with two keys never issued and (after RDS_FREE_MR) with
#           its freed key each complete with a remote access error at the
#           peer, which connects again each time (the module's queue pair
#           failed too: it resets and accepts); nothing changed;
#  theirs   host 1's WRITE and READ (RDS_RDMA_NOTIFY_ME) on the peer's
#           region (ibv_reg_mr_iova, iova 0): SUCCESS, the READ's bytes
#           right; the WRITE's data is at the peer when its message, which
#           carries RDS_EXTHDR_RDMA with the peer's key, arrives; a WRITE
#           on the key of a region the peer freed ends REMOTE_ERROR, the
#           module connects to the peer again and a plain message after it
#           arrives (the failed op's message does not).
# Host 1 checks its counters: a reset and a connect per failed op, one
# region registered and freed (mr_in_use back), 3 ops of 12100 bytes,
# rdma_errors +1 (its failed WRITE; the peer's failed ops are not its
# own), no RNR, no bad frame.  Its WRITE's status must not come while the
# peer holds its ACK of the message.
. "$(dirname "$0")/peer_lib.sh"

if [ "$RDS_HOST" = 1 ]; then
	snap
	mr0=$(ib_counter mr_in_use)
	err0=$(ib_counter rdma_errors)
	ops0=$(ib_counter rdma_ops)
	bytes0=$(ib_counter rdma_bytes)
	regs0=$(ib_counter mr_regs)
	frees0=$(ib_counter mr_frees)
fi
peer_begin
if [ "$RDS_HOST" = 2 ]; then
	timeout 900 "$peer" -s "$RDS_ADDR" -d "$RDS_PEER" -t rdma -q 113 -w 114 \
		-c 16 -P 7013 > /tmp/peer.rdma 2>&1 &
	peer_result /tmp/peer.rdma $! rdma
else
	timeout 900 "$RDS_BUILD/selftests/peer_rdma_host" > /tmp/host.rdma 2>&1
	rc=$?
	sed 's/^/  /' /tmp/host.rdma
	check "rdma: host 1's checks passed (exit $rc)" \
		bash -c "[ $rc = 0 ] && grep -q '^result: pass' /tmp/host.rdma"
	$hostpy conns
	echo "# rdma: mr_regs +$(( $(ib_counter mr_regs) - regs0 )), rdma_ops +$(( $(ib_counter rdma_ops) - ops0 )), rdma_errors +$(( $(ib_counter rdma_errors) - err0 )), resets +$(delta resets), connects +$(delta connects), bad_frames +$(delta bad_frames)"
	check "rdma: mr_in_use back to $mr0 (the region freed)" \
		wait_for 30 bash -c "[ \"\$(tr ' ' '\n' < $P/ib_counters | awk -F= '\$1 == \"mr_in_use\" { print \$2 }')\" = $mr0 ]"
	check "rdma: host 1 posted its 3 ops, 12100 bytes (rdma_ops +$(( $(ib_counter rdma_ops) - ops0 )), rdma_bytes +$(( $(ib_counter rdma_bytes) - bytes0 )))" \
		test $(( $(ib_counter rdma_ops) - ops0 )) = 3 -a $(( $(ib_counter rdma_bytes) - bytes0 )) = 12100
	check "rdma: one region registered and freed (mr_regs +$(( $(ib_counter mr_regs) - regs0 )), mr_frees +$(( $(ib_counter mr_frees) - frees0 )))" \
		test $(( $(ib_counter mr_regs) - regs0 )) = 1 -a $(( $(ib_counter mr_frees) - frees0 )) = 1
	check "rdma: one failed op of host 1 (rdma_errors +$(( $(ib_counter rdma_errors) - err0 )) = 1)" \
		test $(( $(ib_counter rdma_errors) - err0 )) = 1
	check "rdma: host 1's connection re-formed after each failure (connects +$(delta connects) >= 7)" \
		test "$(delta connects)" -ge 7
	check "rdma: no bad frame, no RNR on host 1" \
		test "$(delta bad_frames)" = 0 -a "$(delta rnr)" = 0
fi
peer_end
