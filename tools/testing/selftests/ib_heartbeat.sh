#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A link that goes silent under an idle connection is noticed by the
# heartbeat (nothing is in flight, so no send would time out): with
# net.rds.ib.heartbeat_ms=500 both hosts declare the connection lost
# within a few seconds of the cut, and after the link returns the next
# message reconnects and arrives.
. "$(dirname "$0")/lib.sh"

hb=/proc/sys/net/rds/ib/heartbeat_ms
[ -w $hb ] || { ksft_fail "$hb exists"; ksft_exit; }
saved=$(cat $hb)
echo 500 > $hb
py=$(cat <<'PY'
import os, socket, subprocess, sys
me, peer, role = sys.argv[1], sys.argv[2], sys.argv[3]
def barrier(name, tmo="120"):
    subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                    os.environ["RDS_TEST"] + "." + name, tmo], check=True)
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4400))
s.settimeout(240)
barrier("bound")
# Host 1 tells its shell part about each arrival with a file; "after" is
# shared with the shell part: the link was cut, the loss detected and the
# link restored.
# The sender keeps its socket until the second message arrived: closing
# it would cancel a message still waiting for the connection.
if role == "recv":
    for i in range(2):
        data, addr = s.recvfrom(100)
        assert data == b"hb %d" % i, data
        print("got", data)
        open("/tmp/hb.got%d" % i, "w").close()
    barrier("got1", "240")
else:
    s.sendto(b"hb 0", (peer, 4400))
    barrier("after")
    s.sendto(b"hb 1", (peer, 4400))
    barrier("got1", "240")
PY
)
timeouts=$(ib_counter hb_timeouts)
rm -f /tmp/hb.got0 /tmp/hb.got1
barrier start 60 || { ksft_fail "barrier start"; ksft_exit; }
if [ "$RDS_HOST" = 1 ]; then
	timeout 280 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" recv > /tmp/hb.out 2>&1 &
	pid=$!
else
	timeout 280 python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" send > /tmp/hb.out 2>&1 &
	pid=$!
fi
if [ "$RDS_HOST" = 1 ]; then
	check "host 1 got the first message" wait_for 120 test -e /tmp/hb.got0
fi
barrier got0 150 || ksft_fail "barrier got0"
if [ "$RDS_HOST" = 2 ]; then
	check "host cuts the link" host_request link off
fi
hb_fired() { test "$(ib_counter hb_timeouts)" -gt "$timeouts"; }
check "the heartbeat declared the connection lost" wait_for 30 hb_fired
barrier detected 60 || ksft_fail "barrier detected"
if [ "$RDS_HOST" = 2 ]; then
	check "host restores the link" host_request link on
fi
barrier after 60 || ksft_fail "barrier after"
wait $pid
rc=$?
cat /tmp/hb.out
check "both messages delivered (one before the cut, one after)" test $rc = 0
dmesg | grep -E 'silent for|connected ::|connection lost' | tail -6 | sed 's/^/# /'
echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
echo "$saved" > $hb
ksft_exit
