#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A ping from port 0 is not answered (issue 15, lead 9): its pong would go
# to port 0, a ping in turn, and two hosts would answer each other for
# ever.  The user-space wire peer (wire_peer -t ping0) connects over rxe0
# from this host's own address to the module, sends a ping from port 0
# and one from port 40000: only the second is answered, and the first is
# counted as dropped (recv_drop_no_sock).
. "$(dirname "$0")/lib.sh"

peer=$RDS_BUILD/peer/wire_peer
hostpy="python3 $RDS_TOP/tools/testing/selftests/peer_host.py"
rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
[ -x "$peer" ] || { ksft_fail "wire_peer built" "make -C tools/testing/peer"; ksft_exit; }

# counters: "recv_drop_no_sock recv_ping" now
counters() { $hostpy counter recv_drop_no_sock recv_ping | tr '\n' ' '; }
read -r nosock0 pings0 <<< "$(counters)"
echo "# $(date +%T) before: recv_drop_no_sock $nosock0 recv_ping $pings0"
timeout 120 "$peer" -s "$RDS_ADDR" -d "$RDS_ADDR" -t ping0 -q 115 \
	> /tmp/peer.ping0 2>&1
rc=$?
sed 's/^/#   /' /tmp/peer.ping0
echo "# $(date +%T) wire_peer done (rc $rc)"
check "wire_peer -t ping0 passed (rc $rc)" test "$rc" = 0
read -r nosock pings <<< "$(counters)"
echo "# $(date +%T) after: recv_drop_no_sock $nosock recv_ping $pings"
check "the ping from port 0 counted as dropped (recv_drop_no_sock +$((nosock - nosock0)))" \
	test $((nosock - nosock0)) -ge 1
check "only the other ping answered (recv_ping +$((pings - pings0)))" \
	test $((pings - pings0)) = 1
ksft_exit
