#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The first messages over the IB transport: host 2 sends three messages to
# host 1 and host 1 answers each; both check what arrived.  A quick check
# that connections form and data flows both ways, before the long tests.
. "$(dirname "$0")/lib.sh"

rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
py=$(cat <<'PY'
import os, socket, subprocess, sys
me, peer, role = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4000))
s.settimeout(60 * int(os.environ.get("RDS_TIME_SCALE", "1")))
print("transport", s.getsockopt(276, 8))
sys.stdout.flush()
# Both sockets bound before the first message.
subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                os.environ["RDS_TEST"] + ".bound",
                str(60 * int(os.environ.get("RDS_TIME_SCALE", "1")))],
               check=True)
if role == "send":
    for i in range(3):
        s.sendto(b"ping %d" % i, (peer, 4000))
        data, addr = s.recvfrom(100)
        assert data == b"pong %d" % i, data
        print("got", data, addr)
else:
    for i in range(3):
        data, addr = s.recvfrom(100)
        assert data == b"ping %d" % i, data
        print("got", data, addr)
        s.sendto(b"pong %d" % i, addr)
PY
)
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 received 3 pings and answered" \
		timeout "$(scaled 90)" python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" echo
else
	check "host 2 sent 3 pings and got 3 answers" \
		timeout "$(scaled 90)" python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" send
fi
barrier done 120
if [ $__ksft_fail -gt 0 ]; then
	# What is stuck, for the log.
	echo w > /proc/sysrq-trigger
	cat /sys/module/rds/parameters/ib_handshakes
	dmesg | tail -80 | sed 's/^/# /'
fi
echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
check "one connection came up" test "$(ib_counter connects)" -ge 1
check "no RNR, no bad frame" \
	test "$(ib_counter rnr)" = 0 -a "$(ib_counter bad_frames)" = 0
ksft_exit
