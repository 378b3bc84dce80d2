#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Small library for the shell selftests that run inside the test guests.
# Source it; it provides TAP output (kselftest conventions: exit 4 = skip),
# waiting on conditions with a deadline, barriers with the peer host and
# requests to the host that runs the VMs (link cut/restore).

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

__ksft_n=0
__ksft_fail=0
__ksft_skip=0

echo "TAP version 13"

# ksft_ok NAME / ksft_fail NAME [WHY] / ksft_skip NAME [WHY]
ksft_ok() {
	__ksft_n=$((__ksft_n + 1))
	echo "ok $__ksft_n $1"
}

ksft_fail() {
	__ksft_n=$((__ksft_n + 1))
	__ksft_fail=$((__ksft_fail + 1))
	echo "not ok $__ksft_n $1${2:+ # $2}"
}

ksft_skip() {
	__ksft_n=$((__ksft_n + 1))
	__ksft_skip=$((__ksft_skip + 1))
	echo "ok $__ksft_n $1 # SKIP${2:+ $2}"
}

# test_retry WHY: the test is about to try something again.  Each retry
# must have a reason in a comment where it is made; run-tests counts the
# "# RETRY:" lines and lists them in its summary, so no retry is silent.
test_retry() {
	echo "# RETRY: $*"
}

# check NAME CMD...: run CMD, record NAME as passed when it succeeds.
check() {
	local name=$1
	shift
	if "$@"; then
		ksft_ok "$name"
	else
		ksft_fail "$name" "command failed: $*"
	fi
}

# ksft_exit: print the plan and exit with the kselftest code.
ksft_exit() {
	echo "1..$__ksft_n"
	if [ $__ksft_fail -gt 0 ]; then
		exit $KSFT_FAIL
	elif [ $__ksft_n -gt 0 ] && [ $__ksft_skip -eq $__ksft_n ]; then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

# RDS_TIME_SCALE (run-tests --time-scale N, 1 by default): how many times
# slower than usual the guest's kernel runs (a debug kernel: 15-30).
# scaled N: N seconds on such a kernel.  wait_for and barrier scale their
# timeouts themselves.
scaled() {
	echo $(( $1 * ${RDS_TIME_SCALE:-1} ))
}

# wait_for TIMEOUT_S CMD...: poll CMD every 100 ms until it succeeds (at
# most scaled TIMEOUT_S seconds).  CMD is run anew each time: a condition
# on a value read from a file is a function or file_is, never
# test "$(cat FILE)" (expanded once, before wait_for runs).
wait_for() {
	local tmo deadline
	tmo=$(scaled "$1")
	shift
	deadline=$(( $(date +%s%N) / 1000000 + tmo * 1000 ))
	until "$@"; do
		[ $(( $(date +%s%N) / 1000000 )) -ge $deadline ] && return 1
		sleep 0.1
	done
	return 0
}

# file_is FILE VALUE: FILE holds VALUE (for wait_for).
file_is() {
	[ "$(cat "$1")" = "$2" ]
}

# barrier NAME [TIMEOUT_S]: wait for the other test hosts (at most scaled
# TIMEOUT_S seconds).
barrier() {
	"$RDS_TOP/tools/testing/selftests/barrier" "$RDS_TEST.$1" \
		"$(scaled "${2:-60}")"
}

# test_klog: the kernel log of this test so far, from the marker
# "rdstest: begin IDX NAME" that guest.sh wrote when it started it (the
# whole log outside the harness).
test_klog() {
	dmesg | awk -v re="rdstest: begin [0-9]+ $RDS_TEST\$" '
		$0 ~ re { n = 0 }
		{ line[++n] = $0 }
		END { for (i = 1; i <= n; i++) print line[i] }'
}

# host_request WORDS...: ask the host running the VMs to act, wait for it.
# Requests: "link off" / "link on" (cut / restore this guest's test NIC at
# the QEMU level, like pulling the cable).  Returns 0 when the host did it.
# For "reboot" use host_reboot.
__req_n=0
host_request() {
	local id tmo=30 deadline
	__req_n=$((__req_n + 1))
	id="$RDS_TEST.$$.$__req_n"
	echo "$*" > "$RDS_CTL/.req.$id"
	mv "$RDS_CTL/.req.$id" "$RDS_CTL/req.$id"
	deadline=$(( $(date +%s) + tmo ))
	while [ ! -e "$RDS_CTL/done.$id" ]; do
		[ "$(date +%s)" -ge $deadline ] && {
			echo "host_request '$*': no answer in ${tmo}s" >&2
			return 1
		}
		sleep 0.1
	done
	read -r status < "$RDS_CTL/done.$id"
	[ "$status" = ok ] || { echo "host_request '$*': $status" >&2; return 1; }
}

# host_reboot: ask the host to power-cycle this guest (not host 1 of the
# two-host topology).  Does not return: the guest boots again, sets up its
# network and rxe, and runs the calling test again with RDS_REBOOTED=1.
host_reboot() {
	host_request reboot
	echo "host_reboot: the host did not power-cycle this guest" >&2
	exit 1
}

# tcp_listening PORT: a TCP socket of this host listens on PORT.
tcp_listening() {
	[ -n "$(ss -Hltn "sport = :$1")" ]
}

# tcp_connected PORT: a TCP connection to this host's PORT is established
# (an rds-stress pair on PORT has its control connection).
tcp_connected() {
	[ -n "$(ss -Htn state established "sport = :$1")" ]
}

# stress_passive_up NAME PORT: the passive rds-stress of this host listens
# on its control port PORT (or 30 s passed), then barrier NAME-up.  The
# active side connects once, with no retry: a refused connection is a
# failure, not a race with the passive side's start.
stress_passive_up() {
	wait_for 30 tcp_listening "$2" ||
		echo "# rds-stress: nothing listens on port $2 after 30 s"
	barrier "$1-up" 60
}

# stress_pair NAME PORT TMO OUT JSON [VAR=VAL...] -- ARGS...: one rds-stress
# pair ($stress) between the two hosts, started together (barrier
# NAME-up, once host 1's passive side listens): host 1 passive, host 2
# active with ARGS (VAR=VAL in its environment), each killed after TMO
# seconds, output in OUT, summary in JSON.  Sets stress_rc to this host's
# exit status.
stress_pair() {
	local name=$1 port=$2 tmo=$3 out=$4 js=$5 env=() pid
	shift 5
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	if [ "$RDS_HOST" = 1 ]; then
		timeout -k 10 "$tmo" "$stress" -r "$RDS_ADDR" -p "$port" \
			--json "$js" > "$out" 2>&1 &
		pid=$!
		stress_passive_up "$name" "$port"
		wait $pid
		stress_rc=$?
	else
		barrier "$name-up" 60
		env "${env[@]}" timeout -k 10 "$tmo" "$stress" -r "$RDS_ADDR" \
			-s "$RDS_PEER" -p "$port" \
			--json "$js" "$@" > "$out" 2>&1
		stress_rc=$?
	fi
}

# rds_insmod [PARAMS...]: load our rds.ko for this kernel, after its
# dependencies (insmod does not resolve them: ib_core, rdma_cm).
rds_insmod() {
	local deps
	deps=$(modinfo -F depends "$RDS_KO" | tr , ' ')
	if [ -n "$deps" ]; then
		modprobe -a $deps || return 1
	fi
	insmod "$RDS_KO" "$@"
}

# rds_reload [PARAMS...]: unload our module and load it again with PARAMS.
rds_reload() {
	rmmod rds && rds_insmod "$@"
}

# ib_handshakes KEY: one count of /sys/module/rds/parameters/ib_handshakes
# ("accepted=N not_rds=N version=N ...").
ib_handshakes() {
	tr ' ' '\n' < /sys/module/rds/parameters/ib_handshakes |
		awk -F= -v k="$1" '$1 == k { print $2 }'
}

# ib_counter KEY: one count of /sys/module/rds/parameters/ib_counters
# ("tx_frames=N rx_frames=N credit_waits=N ...").
ib_counter() {
	tr ' ' '\n' < /sys/module/rds/parameters/ib_counters |
		awk -F= -v k="$1" '$1 == k { print $2 }'
}

# ib_counter_above KEY N: the IB counter KEY is above N (for wait_for).
ib_counter_above() {
	[ "$(ib_counter "$1")" -gt "$2" ]
}

# rds_counter NAME: one counter of RDS_INFO_COUNTERS (rds-info -c), core
# (conn_reset, ...) or IB (ib_tx_frames, ...); nothing when absent.
# getsockopt through ctypes: Python's own takes at most 1024 bytes.
rds_counter() {
	python3 -c '
import ctypes, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket(21, socket.SOCK_SEQPACKET, 0)   # AF_RDS
buf = ctypes.create_string_buffer(1 << 16)
n = ctypes.c_uint32(len(buf))
# SOL_RDS, RDS_INFO_COUNTERS
if libc.getsockopt(s.fileno(), 276, 10000, buf, ctypes.byref(n)) < 0:
    sys.exit("RDS_INFO_COUNTERS: " + os.strerror(ctypes.get_errno()))
b = buf.raw[:n.value]
for i in range(0, len(b) - 39, 40):     # struct rds_info_counter
    name, v = struct.unpack_from("=32sQ", b, i)
    if name.rstrip(b"\0").decode() == sys.argv[1]:
        print(v)
' "$1"
}

# rds_counter_above NAME N: the RDS_INFO_COUNTERS counter NAME is above N
# (for wait_for).
rds_counter_above() {
	local v
	v=$(rds_counter "$1")
	[ -n "$v" ] && [ "$v" -gt "$2" ]
}

# rds_loaded: our module is loaded.
rds_loaded() {
	[ -d /sys/module/rds ]
}

# ib_test_end: the common end of the two-host IB tests: on a failure the
# blocked tasks and the kernel log, then the transport's counters, no RNR
# and no bad frame, and the end barrier; exits with the TAP result.
ib_test_end() {
	if [ $__ksft_fail -gt 0 ]; then
		echo w > /proc/sysrq-trigger
		dmesg | tail -60 | sed 's/^/# /'
	fi
	echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
	check "no RNR, no bad frame" \
		test "$(ib_counter rnr)" = 0 -a "$(ib_counter bad_frames)" = 0
	barrier end 240 || ksft_fail "barrier end"
	ksft_exit
}

# mem_settle: print MemFree plus Shmem plus the free pages cached per CPU
# (KiB) once the page cache is dropped and every slab cache shrunk, so
# that two readings compare what the kernel really holds (files the
# harness and tests write to the guest's tmpfs are Shmem: not the
# kernel's).  Pages freed go to per-CPU lists first, which MemFree does
# not count: on 6.1 they stay there until allocations take them (36 MB
# of a 1.1 GB one-host guest after the module's unload, where its receive
# buffers' order-1 pages land; 6.12 drains the lists over time), so
# without them the module's memory looked lost for minutes.
mem_settle() {
	local c pcp
	sync
	echo 3 > /proc/sys/vm/drop_caches
	for c in /sys/kernel/slab/*/shrink; do
		echo 1 > "$c" 2>/dev/null
	done
	pcp=$(awk '$1 == "count:" { n += $2 } END { print n + 0 }' /proc/zoneinfo)
	awk -v pcp="$pcp" -v page="$(getconf PAGESIZE)" '
		/^(MemFree|Shmem):/ { kb += $2 }
		END { print kb + pcp * page / 1024 }' /proc/meminfo
}
