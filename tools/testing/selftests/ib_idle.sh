#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An idle connection is closed after ib_idle_secs without traffic, and the
# next message reconnects: both hosts set ib_idle_secs=3, host 2 sends one
# message, the connection goes away within seconds, host 2 sends another
# and host 1 receives both.
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
py=$(cat <<'PY'
import os, socket, subprocess, sys
me, peer, role = sys.argv[1], sys.argv[2], sys.argv[3]
def barrier(name):
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    os.environ["RDS_TEST"] + "." + name, "90"], check=True)
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4300))
s.settimeout(90)
barrier("bound")
if role == "recv":
    for i in range(2):
        data, addr = s.recvfrom(100)
        assert data == b"idle %d" % i, data
        print("got", data)
        barrier("got%d" % i)
else:
    s.sendto(b"idle 0", (peer, 4300))
    barrier("got0")
    # The connection closes after 3 s without traffic.
    subprocess.run(["bash", "-c", ". %s/tools/testing/selftests/lib.sh >/dev/null; "
                    "wait_for 60 bash -c \"dmesg | tail -n +%s | grep -q 'idle for 3 s: disconnecting\\|connection lost: disconnected'\""
                    % (os.environ["RDS_TOP"], os.environ["MARK"])], check=True)
    print("connection closed while idle")
    s.sendto(b"idle 1", (peer, 4300))
    barrier("got1")
PY
)
saved=$(cat $P/ib_idle_secs)
echo 3 > $P/ib_idle_secs
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
connects=$(ib_counter connects)
MARK=$(( $(dmesg | wc -l) + 1 ))
export MARK
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 received a message before and one after the idle close" \
		timeout 200 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" recv
else
	check "host 2 saw the idle close and sent again" \
		timeout 200 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" send
	# The first message may use a connection an earlier test made; the
	# second one needs a new connection, made by host 2 (the sender).
	check "a new connection formed for the second message" \
		test "$(ib_counter connects)" -gt "$connects"
fi
dmesg | grep -E 'idle for|connected ::|connection lost' | tail -6 | sed 's/^/# /'
echo "$saved" > $P/ib_idle_secs
barrier end 120 || ksft_fail "barrier end"
ksft_exit
