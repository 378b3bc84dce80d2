#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The HCA goes away under a live connection and comes back: host 2 sends
# numbered messages to host 1, deletes its rxe device in the middle,
# keeps sending while there is no device (the messages wait on the
# connection's queue), and adds the device back.  Host 1 must receive
# every message exactly once, in order, intact; host 2 must see the
# connection torn down and formed again, with no hang and no leak.
. "$(dirname "$0")/lib.sh"

rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
N1=${RDS_DEVLOSS_BEFORE:-50}	# sent with the device present
N2=${RDS_DEVLOSS_DURING:-50}	# sent while it is gone
py=$(cat <<'PY'
import hashlib, os, socket, subprocess, sys
me, peer, role, n1, n2 = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
def barrier(name):
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    os.environ["RDS_TEST"] + "." + name, "120"], check=True)
def payload(i):
    body = hashlib.sha256(b"devloss %d" % i).digest() * (1 + i % 30)
    return b"%08d" % i + body
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
# Room for everything unacknowledged while the device is gone.
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
s.bind((me, 4100))
barrier("bound")
if role == "recv":
    s.settimeout(120)
    for i in range(n1 + n2):
        data, addr = s.recvfrom(1 << 20)
        got = int(data[:8])
        if data != payload(got) or got != i:
            print("message %d: got #%d (%d bytes, %s)" % (i, got, len(data),
                  "intact" if data == payload(got) else "corrupt"))
            sys.exit(1)
    print("received %d messages in order, intact" % (n1 + n2))
    s.settimeout(3)
    try:
        data, addr = s.recvfrom(1 << 20)
        print("unexpected extra message #%d" % int(data[:8]))
        sys.exit(1)
    except socket.timeout:
        pass
else:
    for i in range(n1):
        s.sendto(payload(i), (peer, 4100))
    print("sent %d with the device present" % n1)
    sys.stdout.flush()
    subprocess.run(["rdma", "link", "delete", os.environ["RDS_RXE"]], check=True)
    for i in range(n1, n1 + n2):
        s.sendto(payload(i), (peer, 4100))
    print("queued %d with the device gone" % n2)
    sys.stdout.flush()
    subprocess.run(["rdma", "link", "add", os.environ["RDS_RXE"], "type", "rxe",
                    "netdev", os.environ["RDS_IFACE"]], check=True)
    print("device added back")
barrier("done")
PY
)
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
resets=$(ib_counter resets)
connects=$(ib_counter connects)
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 received every message once, in order, intact" \
		timeout 300 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" recv "$N1" "$N2"
else
	check "host 2 sent across the device loss" \
		timeout 300 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" send "$N1" "$N2"
	active() { rdma link show "$RDS_RXE/1" 2>/dev/null | grep -q 'state ACTIVE'; }
	check "$RDS_RXE active again" wait_for 30 active
	check "the connection was torn down" \
		bash -c "dmesg | grep -q 'connection lost: device removal'"
	check "and formed again" test "$(ib_counter connects)" -gt "$connects"
fi
if [ $__ksft_fail -gt 0 ]; then
	echo w > /proc/sysrq-trigger
	dmesg | tail -60 | sed 's/^/# /'
fi
echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
echo "# resets: $resets -> $(ib_counter resets)"
check "no RNR, no bad frame" \
	test "$(ib_counter rnr)" = 0 -a "$(ib_counter bad_frames)" = 0
barrier end 120 || ksft_fail "barrier end"
ksft_exit
