#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A mixed pair talks (issue 18, part 1; Documentation/interop.md): host
# ML_HOST (1 by default; the plan runs it both ways round) loads Debian's
# rds_rdma, the other host our module.
#  1. Ours connects to the kernel's RDS: 5 pings from ours, 5 pongs; ours
#     logs that the peer's accept is the kernel's RDS.
#  2. The kernel's RDS connects to ours (ours reloaded: it reconnects on
#     its own): ours counts its request as "mainline" and accepts it in
#     its protocol; 5 pings from it, 5 pongs.
#  3. rds-stress, every message verified, acks the size of the requests
#     (data both ways): 1 KiB and 64 KiB, 4 tasks x depth 8; then RDMA
#     (READ and WRITE of 64 KiB, every byte checked) and qperf rds_bw
#     and rds_lat from host 1 to host 2.
#  4. The same under a link cut: 8 s into a 30 s run the host running ours
#     pulls its own cable (QMP set_link) for 5 s.  Nothing may be lost,
#     duplicated or reordered (rds-stress exits 0 on both hosts, counts
#     equal), the cut must have stopped the load (a second with no
#     traffic) and the connection must have been re-formed.
#  5. Ours, with ib_idle_secs 2, does not close the idle connection.
#  6. Congestion maps of ours are not held for an ACK the kernel's RDS
#     never sends (a receiver that fills up, then reads).
#  7. Ours counted no request as not_rds (since the reload of step 2);
#     the kernel's RDS never logged our request as another version.
# It replaces ib_mainline_refuse, which asserted the refusal of before.
# No "load" before it in the plan (tools/testing/vm/rds-stress.tests): it
# loads each host's RDS itself and unloads it at the end.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/stress_lib.sh"

. "$(dirname "$0")/mlpair_lib.sh"

. "$(dirname "$0")/qperf_lib.sh"

rm -f "$RDS_SHARED/$RDS_TEST".cong.*

# ping N: N pings (port 0) from this host to the peer, one at a time, up
# to 20 s each; prints the pongs that came back from the peer's port 0.
ping() {
	python3 - "$RDS_ADDR" "$RDS_PEER" "$1" <<'PY'
import select, socket, sys
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], 0))
got = 0
for i in range(int(sys.argv[3])):
    s.sendto(b"", (sys.argv[2], 0))
    if select.select([s], [], [], 20)[0]:
        data, addr = s.recvfrom(64)
        if addr == (sys.argv[2], 0):
            got += 1
print(got)
PY
}

ml_pair_load
barrier loaded 60 || ksft_fail "barrier loaded"

# 1. Ours connects to the kernel's RDS (both freshly loaded: no
# connection yet, and the kernel's RDS connects only when it has
# something to send).
if [ $me = ours ]; then
	n=$(ping 5)
	check "ours -> kernel's RDS: 5 pings, $n pongs" test "$n" = 5
	said() {
		test_klog | grep -q "$RDS_PEER runs the kernel's RDS: protocol 3.1"
	}
	check "our side read the kernel's RDS in its accept (log)" said
fi
barrier ping1 180

# 2. The kernel's RDS connects to ours: ours reloads; the kernel's RDS
# reconnects on its own after a connection loss.
if [ $me = ours ]; then
	check "reload ours (its connections go)" rds_reload
	# A fresh module: its counters start at 0.
	came() {
		[ "$(ib_handshakes mainline)" -gt 0 ] &&
			[ "$(ib_handshakes accepted)" -gt 0 ]
	}
	check "its request counted as mainline and accepted" wait_for 120 came
	echo "# ib_handshakes: $(cat /sys/module/rds/parameters/ib_handshakes)"
	acc_log() {
		test_klog | grep -q "accepted a connection from $RDS_PEER.*(the kernel's RDS protocol 3.1)"
	}
	check "accepted in its protocol (log)" acc_log
	barrier reconnected 180
	barrier ping2 180
else
	barrier reconnected 180
	n=$(ping 5)
	check "kernel's RDS -> ours: 5 pings, $n pongs" test "$n" = 5
	barrier ping2 180
fi

# What may still be in flight when a run stops drains within 30 s, scaled
# (a debug kernel: 4 tasks x 8 requests of 64 KiB each way took 37 s
# round trips on Debian's 6.12 debug build, data moving all along).
drain=$(scaled 30)
# run NAME PORT SECS ARGS...: a verified rds-stress pair (host 1 passive).
run() {
	local name=$1 port=$2 secs=$3
	shift 3
	stress_pair "$name" "$port" "$((secs - 30 + drain))" "$log/$name.out" \
		"$log/$name.json" -- --connect-retries 30 --drain-timeout "$drain" "$@"
	sed 's/^/#   /' "$log/$name.out" | tail -40
	# rxe's retransmission and RNR counters on this host so far: what
	# a slow run spent its time on.
	echo "# rxe after $name: $(rdma statistic show link "$RDS_RXE/1" 2>/dev/null |
		grep -oE '(rcvd_rnr_err|send_rnr_err|retry_exceeded_err|retry_rnr_exceeded_err|completer_retry_err|duplicate_request|out_of_seq_request|rcvd_seq_err) [0-9]+' |
		tr '\n' ' ')"
	check "$name: rds-stress exits 0 (every message verified)" \
		test "$stress_rc" = 0
	# The average line: "tsks tx/s rx/s ... (average)" (tx/s counts
	# sends queued, which go on when nothing arrives).
	avg=$(awk '/\(average\)$/ { print $3 }' "$log/$name.out")
	check "$name: messages came back (average rx/s ${avg:-none})" \
		test "${avg:-0}" -gt 0
	barrier "$name-done" 120
}

# The summary's counts: "tx_req rx_req tx_ack rx_ack".
counts() {
	python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["counts"]
print(c["tx_req"], c["rx_req"], c["tx_ack"], c["rx_ack"])' "$1" 2>/dev/null
}

run 1k 4000 120 -t 4 -d 8 -q 1K -a 1K -T 8
run 64k 4010 120 -t 4 -d 8 -q 64K -a 64K -T 8

# 3b. RDMA across the pair: requests expose a 64 KiB buffer of 3 iovecs
# (RDS_CMSG_RDMA_MAP; the kernel's RDS refuses RDS_GET_MR over IB), acks
# carry an RDMA READ or WRITE of it, alternating; rds-stress checks every
# RDMA byte.  Each side takes the other's keys as opaque.
run rdma 4030 120 -t 2 -d 4 -q 1K -a 1K -D 64K -I 3 -T 8
rdma_moved() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["rdma"]
print("# rdma: %d ops as responder, %d bytes in, %d bytes out" %
      (r["ops_as_responder"], r["bytes_in"], r["bytes_out"]))
sys.exit(0 if r["bytes_in"] + r["bytes_out"] > 0 else 1)' "$log/rdma.json"
}
check "rdma: RDMA bytes moved on host $RDS_HOST ($me)" rdma_moved

# 3c. qperf across the pair: host 2 serves, host 1 is the client (its
# rds_bw sends toward host 2; the plan runs the test both ways round).
# qperf checks no payload: what it shows is that the pair carries its
# pattern (back-to-back sends until an alarm, ping-pong) to the end.
if [ "$RDS_HOST" = 2 ]; then
	qperf > "$log/qperf.server" 2>&1 &
	qserver=$!
	check "qperf server listens" wait_for 30 qperf_listening
	barrier qperf-up 60
	barrier qperf-done "$(scaled 300)"
	kill "$qserver" 2> /dev/null
	wait "$qserver" 2> /dev/null
else
	barrier qperf-up 60
	check "qperf rds_bw 1K $me -> peer" \
		qperf_run "$QPERF_BW" "$RDS_PEER" -m 1K rds_bw
	check "qperf rds_bw 64K $me -> peer" \
		qperf_run "$QPERF_BW" "$RDS_PEER" -m 64K rds_bw
	check "qperf rds_lat $me <-> peer" \
		qperf_run "$QPERF_LAT" "$RDS_PEER" rds_lat
	barrier qperf-done 60
fi

# 4. A link cut in the middle (ml_pair_cut: the host running ours pulls
# its own cable for 5 s).  The load lasts 30 s, 90 s on a slower kernel
# (a debug one answered a request for the link in about 20 s).
r0=$(ib_counter resets 2>/dev/null)
c0=$(ib_counter connects 2>/dev/null)
secs=30
[ "${RDS_TIME_SCALE:-1}" -gt 1 ] && secs=90
rm -f "$log/cut.out"
if [ $me = ours ]; then
	ml_pair_cut "$log/cut.out" &
	cutter=$!
fi
stress_pair cut 4020 "$((secs + 90 + drain))" "$log/cut.out" "$log/cut.json" \
	-- --connect-retries 30 --drain-timeout "$drain" -t 2 -d 4 -q 1K -a 1K -T "$secs"
rc=$stress_rc
if [ $me = ours ]; then
	check "cut: the link was cut and restored" wait $cutter
fi
sed 's/^/#   /' "$log/cut.out" | tail -45
check "cut: rds-stress exits 0 on host $RDS_HOST (nothing lost, duplicated or reordered)" \
	test "$rc" = 0
read -r txq rxq txa rxa <<< "$(counts "$log/cut.json")"
echo "# cut: tx_req $txq rx_req $rxq tx_ack $txa rx_ack $rxa"
if [ "$RDS_HOST" = 2 ]; then
	check "cut: every request acked (tx_req $txq = rx_ack $rxa)" \
		test -n "$txq" -a "$txq" = "$rxa"
	# The active side's per-second lines ("tsks tx/s rx/s ..."): the
	# cut must have stopped the load for a second at least.
	stalled=$(awk 'NF >= 9 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ &&
		       $4 ~ /\./ && $2 == 0 { n++ } END { print n + 0 }' \
		  "$log/cut.out")
	check "cut: the load stood still ($stalled s at tx/s 0)" \
		test "$stalled" -ge 1
fi
if [ $me = ours ]; then
	echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
	check "cut: the connection was re-formed (connects $c0 -> $(ib_counter connects))" \
		test "$(ib_counter connects)" -gt "$c0"
	echo "# resets $r0 -> $(ib_counter resets)"
fi
barrier cut-done 120

# 5. No idle close toward the kernel's RDS (it would reconnect at once):
# with ib_idle_secs 2, 15 s of silence (the idle check runs every 10 s at
# most) leave the connection as it was.
if [ $me = ours ]; then
	c1=$(ib_counter connects)
	echo 2 > /sys/module/rds/parameters/ib_idle_secs
	sleep 15
	echo 300 > /sys/module/rds/parameters/ib_idle_secs
	idle_kept() {
		[ "$(ib_counter connects)" = "$c1" ] &&
			! test_klog | grep -q "idle for .*disconnecting"
	}
	check "idle: not closed (connects $c1 -> $(ib_counter connects), no idle line)" \
		idle_kept
fi
barrier idle-done 60

# 6. Congestion maps toward the kernel's RDS: it acknowledges none (a
# map goes with sequence 0), so ours must not keep them for an ACK.  A
# socket of ours that does not read takes the kernel's messages until
# its receive buffer is full (a map: congested), then reads them all
# (a map: free).  Ours sends nothing else: before the fix both maps
# stayed on the retransmit list ("unacked" 2), and every reconnect sent
# them again beside a new one.
cong_port=4555
if [ $me = ours ]; then
	q0=$(awk '$1 == "cong_update_queued" { print $2 }' /proc/net/rds/stats)
	python3 - "$RDS_ADDR" "$cong_port" "$RDS_SHARED/$RDS_TEST.cong" <<'PY' &
import os, select, socket, sys, time
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
s.bind((sys.argv[1], int(sys.argv[2])))
open(sys.argv[3] + ".bound", "w").close()
end = time.time() + 120
while not os.path.exists(sys.argv[3] + ".sent") and time.time() < end:
    time.sleep(0.1)
# Not blocking: a congestion map that came in reads as POLLIN too (as
# in the kernel's RDS), with no message to receive.
s.setblocking(False)
n = 0
quiet = time.time() + 2
while time.time() < quiet:
    select.select([s], [], [], 0.5)
    try:
        s.recv(65536)
    except BlockingIOError:
        continue
    n += 1
    quiet = time.time() + 2
print("# read %d messages" % n, flush=True)
open(sys.argv[3] + ".read", "w").close()
# bound until the check is done
end = time.time() + 60
while not os.path.exists(sys.argv[3] + ".checked") and time.time() < end:
    time.sleep(0.1)
PY
	reader=$!
	wait_for 30 test -e "$RDS_SHARED/$RDS_TEST.cong.bound" ||
		ksft_fail "cong: the reader bound its socket"
	barrier cong-bound 60
	wait_for 120 test -e "$RDS_SHARED/$RDS_TEST.cong.read"
	qd=$(( $(awk '$1 == "cong_update_queued" { print $2 }' /proc/net/rds/stats) - q0 ))
	unacked() {
		awk -v me="$RDS_ADDR" -v peer="$RDS_PEER" '
			NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			$1 == me && $2 == peer && $3 == 0 { print $(col["unacked"]) }' \
			/proc/net/rds/connections
	}
	check "cong: maps went both ways (cong_update_queued +$qd)" test "$qd" -ge 2
	check "cong: none held for an ACK (unacked $(unacked))" \
		wait_for 10 test "$(unacked)" = 0
	touch "$RDS_SHARED/$RDS_TEST.cong.checked"
	wait $reader
else
	barrier cong-bound 60
	python3 - "$RDS_ADDR" "$RDS_PEER" "$cong_port" <<'PY'
import errno, socket, sys, time
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((sys.argv[1], 0))
s.setblocking(False)	# a blocking send waits for the port to free
sent = 0
end = time.time() + 30
# until its map says the port is congested (ENOBUFS), 200 at most
while sent < 200 and time.time() < end:
    try:
        s.sendto(b"c" * 4096, (sys.argv[2], int(sys.argv[3])))
        sent += 1
    except BlockingIOError:
        time.sleep(0.05)	# its send buffer is full: acks come
    except OSError as e:
        if e.errno != errno.ENOBUFS:
            raise
        break
print("# sent %d messages of 4096 bytes before ENOBUFS" % sent)
PY
	touch "$RDS_SHARED/$RDS_TEST.cong.sent"
fi
barrier cong-done 120

# 7. Over the whole test: nothing was taken for something else.
if [ $me = ours ]; then
	check "no request counted as not_rds" \
		test "$(ib_handshakes not_rds)" = 0
else
	no_incompat() {
		! test_klog | grep -q "using incompatible protocol version"
	}
	check "the kernel's RDS never read our request as another version" \
		no_incompat
fi

barrier unload 60 || ksft_fail "barrier unload"
unload
check "rds unloaded" wait_for 10 test ! -d /sys/module/rds
ksft_exit
