#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer that moves from the kernel's RDS to ours (a rolling upgrade) and
# the first frames of the first connection after it (Documentation/
# interop.md, "A peer that changes side").  Host 1 runs Debian's
# rds_rdma, host 2 ours: host 2 sends one message, so it knows host 1 as
# the kernel's RDS.  Host 1 then unloads it and loads ours.  Host 2's
# next request guesses the kernel's protocol, and its ESTABLISHED event
# is handled 4 s late (ib_est_delay_ms, a test hook); host 1 is up as
# soon as it accepted and sends 20 messages of 6000 bytes (fragments,
# never packed) in that time, so that they reach host 2 while the
# attempt's protocol is still a guess.  The accept then shows the guess
# wrong, the attempt ends, the next one speaks ours and host 1 sends
# again what host 2 had not acknowledged.  Host 2 must receive each of
# the 20 exactly once, in order, byte for byte: before the hold (ib.h,
# i_guess) the messages taken during the guess were delivered, and then
# again.  The scenario must have happened: host 2 logs that the peer's
# first frames came in the other protocol.
# No "load" before it in the plan: it loads each host's RDS itself.
. "$(dirname "$0")/lib.sh"

P1=4600 P2=4601 N=20 LEN=6000
S=$RDS_SHARED/$RDS_TEST
rm -f "$S".*

unload() {
	if [ "$RDS_HOST" = 1 ]; then
		modprobe -r rds_rdma rds_tcp rds 2>/dev/null
		modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	fi
	rmmod rds 2>/dev/null
}
trap unload EXIT

# one_msg ROLE FLAG: host 2 (send) sends one message to host 1 (recv).
one_msg() {
	python3 - "$RDS_ADDR" "$RDS_PEER" "$1" "$S.$2" "$P1" <<'PY'
import os, socket, sys, time
me, peer, role, flag, port = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, port if role == "recv" else 0))
s.settimeout(90)
if role == "recv":
    open(flag + ".bound", "w").close()
    data, addr = s.recvfrom(100)
    assert data == b"one", data
    open(flag, "w").close()
    sys.exit(0)
end = time.time() + 90
while not os.path.exists(flag + ".bound") and time.time() < end:
    time.sleep(0.05)
s.sendto(b"one", (peer, port))
while not os.path.exists(flag) and time.time() < end:
    time.sleep(0.1)
sys.exit(0 if os.path.exists(flag) else 1)
PY
}

if [ "$RDS_HOST" = 1 ]; then
	check "modprobe rds_rdma (the kernel's RDS)" modprobe rds_rdma
else
	check "insmod rds.ko (ours)" rds_insmod
fi
barrier loaded 60 || { ksft_fail "barrier loaded"; ksft_exit; }

# 1. Host 2 learns host 1 as the kernel's RDS.
if [ "$RDS_HOST" = 1 ]; then
	check "a message from ours to the kernel's RDS" one_msg recv first
else
	check "a message to the kernel's RDS" one_msg send first
	check "host 1 was read as the kernel's RDS (log)" \
		wait_for 10 eval 'test_klog | grep -q "runs the kernel.s RDS"'
fi
barrier first 120 || ksft_fail "barrier first"

# 2. Host 1 moves to ours.
if [ "$RDS_HOST" = 1 ]; then
	modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	modprobe -r rds_rdma rds_tcp rds 2>/dev/null
	check "the kernel's RDS unloaded" test ! -d /sys/module/rds
	check "insmod rds.ko (ours, on host 1)" rds_insmod
fi
barrier swapped 120 || ksft_fail "barrier swapped"

# 3. Host 2's next request, its ESTABLISHED 4 s late; host 1 sends the
# 20 as soon as it is up.
if [ "$RDS_HOST" = 1 ]; then
	python3 - "$RDS_ADDR" "$RDS_PEER" "$P1" "$P2" "$N" "$LEN" "$S" <<'PY' &
import os, socket, sys, time
me, peer, p1, p2, n, ln, flag = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
r = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
r.bind((me, p1))
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 0))
open(flag + ".h1bound", "w").close()
def up():
    with open("/proc/net/rds/connections") as f:
        lines = f.read().split("\n")
    col = lines[0].split()
    for l in lines[1:]:
        v = l.split()
        if len(v) == len(col) and v[0] == me and v[1] == peer and v[2] == "0":
            return v[col.index("state")] == "up"
    return False
end = time.time() + 90
while not up() and time.time() < end:
    time.sleep(0.02)
t0 = time.time()
for i in range(n):
    s.sendto(bytes([i] + [(i * 7 + k) & 0xff for k in range(1, ln)]), (peer, p2))
print("# host 1: up, %d sent in %.2f s" % (n, time.time() - t0), flush=True)
r.settimeout(90)
data, addr = r.recvfrom(100)
print("# host 1: host 2's message: %r" % data, flush=True)
# keep the sender open until host 2 has all (a close cancels the queue)
end = time.time() + 120
while not os.path.exists(flag + ".h2done") and time.time() < end:
    time.sleep(0.1)
PY
	pid=$!
	wait_for 30 test -e "$S.h1bound" || ksft_fail "host 1's sockets bound"
	barrier h1ready 60 || ksft_fail "barrier h1ready"
	check "host 1 got host 2's message and stayed until host 2 had the 20" wait $pid
else
	if [ ! -w /sys/module/rds/parameters/ib_est_delay_ms ]; then
		barrier h1ready 60
		ksft_skip "a peer that changes side" "module built without RDS_TEST_HOOKS"
		ksft_exit
	fi
	held0=$(ib_counter rx_held_dropped)
	bad0=$(ib_counter bad_frames)
	check "ESTABLISHED handled 4 s late (ib_est_delay_ms)" \
		eval 'echo 4000 > /sys/module/rds/parameters/ib_est_delay_ms'
	barrier h1ready 60 || ksft_fail "barrier h1ready"
	python3 - "$RDS_ADDR" "$RDS_PEER" "$P1" "$P2" "$N" "$LEN" > /tmp/$RDS_TEST.out <<'PY'
import select, socket, sys, time
me, peer, p1, p2, n, ln = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
r = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
r.bind((me, p2))
r.setblocking(False)
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 0))
s.sendto(b"two", (peer, p1))	# the request that guesses
got = []
end = time.time() + 90
quiet = None
while time.time() < end and (quiet is None or time.time() < quiet):
    select.select([r], [], [], 0.5)
    try:
        data = r.recv(65536)
    except BlockingIOError:
        continue
    i = data[0] if data else -1
    want = bytes([i] + [(i * 7 + k) & 0xff for k in range(1, ln)]) if 0 <= i < n else None
    got.append((i, data == want))
    if len(got) >= n:
        quiet = time.time() + 5	# anything delivered twice comes by then
print(" ".join("%d%s" % (i, "" if ok else "!") for i, ok in got))
PY
	touch "$S.h2done"
	got=$(cat /tmp/$RDS_TEST.out)
	echo "# host 2 received: $got"
	want=$(seq 0 $((N - 1)) | tr '\n' ' ' | sed 's/ $//')
	check "each of the $N once, in order, byte for byte" test "$got" = "$want"
	check "the attempt's protocol was guessed wrong after frames came (log)" \
		eval 'test_klog | grep -q "first frames came in the other protocol"'
	# Data messages, not only control frames, came during the guess
	# (else the scenario proved nothing): held, then dropped at the
	# wrong guess's end.
	held=$(ib_counter rx_held_dropped)
	check "messages came during the guess and were dropped with it (rx_held_dropped $held0 -> $held)" \
		test "$((held - held0))" -ge 1
	bad=$(ib_counter bad_frames)
	check "no bad frame counted (a wrong guess is not the peer's fault: $bad0 -> $bad)" \
		test "$bad" = "$bad0"
	test_klog | grep -E "first frames|bad frame|connected .* -> " | tail -5 | sed 's/^/# /'
fi
barrier done 120 || ksft_fail "barrier done"
unload
check "rds unloaded" wait_for 10 test ! -d /sys/module/rds
ksft_exit
