#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Both hosts connect to each other at the same moment: each reloads the
# module (so no connection exists), and after a barrier both send at once.
# Exactly one connection must form on each host, both messages arrive,
# and a request that lost the race is refused "busy" rather than making a
# second connection.  Three rounds.
. "$(dirname "$0")/lib.sh"

py=$(cat <<'PY'
import os, socket, struct, subprocess, sys
me, peer, rnd = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4200))
s.settimeout(120)
subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                os.environ["RDS_TEST"] + ".go" + rnd, "60"], check=True)
s.sendto(b"hello from %s round %s" % (me.encode(), rnd.encode()), (peer, 4200))
data, addr = s.recvfrom(100)
assert data == b"hello from %s round %s" % (peer.encode(), rnd.encode()), data
# RDS_INFO_CONNECTIONS (SOL_RDS 276, 10001): packed struct
# rds_info_connection { u64 next_tx, next_rx; __be32 laddr, faddr;
# u8 transport[16], flags, tos; }
raw = s.getsockopt(276, 10001, 1024)
each = 8 + 8 + 4 + 4 + 16 + 1 + 1
conns = [raw[i:i + each] for i in range(0, len(raw) - each + 1, each)]
mine = [c for c in conns if socket.inet_ntoa(c[16:20]) == me and
        socket.inet_ntoa(c[20:24]) == peer]
print("connections %s -> %s: %d" % (me, peer, len(mine)))
# Keep the socket until both messages arrived: closing it would cancel
# ours if it still waited for the connection.
subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                os.environ["RDS_TEST"] + ".rx" + rnd, "120"], check=True)
sys.exit(0 if len(mine) == 1 else 1)
PY
)
for rnd in 1 2 3; do
	barrier "reload$rnd" 120 || { ksft_fail "barrier reload$rnd"; break; }
	rmmod rds && rds_insmod || { ksft_fail "round $rnd: reload"; break; }
	barrier "loaded$rnd" 120 || { ksft_fail "barrier loaded$rnd"; break; }
	check "round $rnd: both messages crossed, one connection" \
		timeout 150 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" "$rnd"
	echo "# round $rnd: ib_handshakes: $(cat /sys/module/rds/parameters/ib_handshakes)"
	echo "# round $rnd: ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
	check "round $rnd: no bad frame" test "$(ib_counter bad_frames)" = 0
	barrier "done$rnd" 150 || ksft_fail "barrier done$rnd"
done
ksft_exit
