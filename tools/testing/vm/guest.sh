#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a test guest, started by the initramfs /init after switch_root
# into the host's (read-only) root.  It sets up the network and Soft-RoCE,
# then runs the tests of its plan and reports on the results channel
# (/mnt/out, a 9p export of build/results/<run>/<topo>/hostN), never on the
# console.  The host only believes a run that ends with a "done" line in
# /mnt/out/progress.
#
# Layout of /mnt/out:
#   plan          (written by the host) one test a line: NAME TIMEOUT [FLAGS]
#   progress      boot / start / end / done lines, read live by the host
#   tap           one TAP line per test
#   tests/NAME.log  the test's output
#   dmesg.txt     the kernel log, refreshed after every test
#   ctl/          requests to the host (link cuts, ...): see lib.sh
#
# Each test is framed in the kernel log by "rdstest: begin IDX NAME" and
# "rdstest: end IDX NAME" (written to /dev/kmsg).  The test's part of the
# log (from its begin marker) is checked when it ends; the part between
# two tests, before the first one and after the last one is checked too,
# and a problem there is reported as the test "after-NAME" (or "boot").
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null

param() {
	local kv
	for kv in $(cat /proc/cmdline); do
		case "$kv" in
		"rdstest.$1="*) echo "${kv#*=}"; return ;;
		esac
	done
}

OUT=/mnt/out
TOP=/mnt/top
HOST=$(param host)
NHOSTS=$(param nhosts)
TOPO=$(param topo)
# run-tests --time-scale N: every timeout is N times longer (debug kernels).
export RDS_TIME_SCALE=$(param timescale)
[ -n "$RDS_TIME_SCALE" ] || RDS_TIME_SCALE=1

export RDS_TOP=$TOP RDS_BUILD=$TOP/build
# Modules built for this kernel by tools/testing/build-module.sh, or
# those of run-tests --moddir DIR (a negative control's, relative to TOP).
RDS_MODDIR=$(param moddir)
export RDS_MODDIR=$TOP/${RDS_MODDIR:-build/mod-$(uname -r)}
export RDS_KO=$RDS_MODDIR/rds.ko
export RDS_OUT=$OUT RDS_SHARED=/mnt/shared RDS_CTL=$OUT/ctl
export RDS_HOST=$HOST RDS_NHOSTS=$NHOSTS RDS_TOPO=$TOPO
export RDS_ADDR=10.0.0.$HOST
if [ "$NHOSTS" -ge 2 ]; then
	export RDS_PEER=10.0.0.$((HOST == 1 ? 2 : 1))
fi
export RDS_IFACE=eth0 RDS_RXE=rxe0
mkdir -p "$OUT/tests" "$OUT/ctl"

say() { echo "$*" >> "$OUT/progress"; }
finish() {
	dmesg > "$OUT/dmesg.txt" 2>&1
	sync
	echo o > /proc/sysrq-trigger
	# The power-off is asynchronous (slow on a loaded host): never fall
	# off the end of the script, which panics the guest ("Attempted to
	# kill init") and hides what it was doing.
	while :; do
		sleep 60
	done
}

# A guest power-cycled on request (see run-tests) resumes its plan at the
# test that asked, which runs again with RDS_REBOOTED=1.
resume=0
if [ -s "$OUT/progress" ]; then
	read -r what ridx _ < <(tail -n 1 "$OUT/progress")
	[ "$what" = rebooting ] && resume=$ridx
fi
say "boot $(uname -r) host=$HOST topo=$TOPO"
hostname "rds$HOST"
echo 1 > /proc/sys/kernel/sysrq

# Network and Soft-RoCE.  A failure here is reported as the test "setup".
setup() {
	ip link set lo up &&
	ip addr add "$RDS_ADDR/24" dev "$RDS_IFACE" &&
	ip link set "$RDS_IFACE" up &&
	modprobe rdma_rxe &&
	rdma link add "$RDS_RXE" type rxe netdev "$RDS_IFACE"
}
if ! setup > "$OUT/tests/setup.log" 2>&1; then
	echo "not ok 0 setup # see tests/setup.log" >> "$OUT/tap"
	say "done setup-failed"
	finish
fi

# Taint bits that are not a test failure: O (out-of-tree, 12) and
# E (unsigned module, 13).
TAINT_OK=$(( (1 << 12) | (1 << 13) ))
bad_taint() {
	local t
	read -r t < /proc/sys/kernel/tainted
	echo $(( t & ~TAINT_OK ))
}

# klog_problem: the kernel log's verdict (klog.sh, checked on the host by
# klog-check.sh).
. "$TOP/tools/testing/vm/klog.sh"
kmsg() { echo "rdstest: $*" > /dev/kmsg; }

# The part of the log since the last test ended (or since boot) and the
# taint bits set in it: a problem there is the failure of "after-NAME".
last_end=""
last_name=boot
taint_seen=0
check_between() {
	local why
	why=$(klog_problem "$last_end" "$taint_seen" 2>> "$OUT/tests/$last_name.log")
	taint_seen=$(bad_taint)
	[ -n "$why" ] || return 0
	if [ "$last_name" = boot ]; then
		echo "not ok $1 boot # $why (see tests/boot.log)" >> "$OUT/tap"
	else
		echo "not ok $1 after-$last_name # between $last_name and the next test: $why (see tests/$last_name.log)" >> "$OUT/tap"
	fi
}

run_one() {
	local idx=$1 name=$2 tmo=$3 flags=$4 exe rc why="" t0 problem f af
	local envs=() prog=${2%%@*}
	# Flags of the form VAR=VALUE go to the test's environment.
	for f in $flags; do
		[[ $f == [A-Z]*=* ]] && envs+=("$f")
	done
	# NAME@TAG (run-tests names so a test that comes again in a later
	# plan of the same boot): the program NAME, results and log as NAME@TAG.
	if [ -x "$TOP/tools/testing/selftests/$prog.sh" ]; then
		exe=$TOP/tools/testing/selftests/$prog.sh
	elif [ -x "$TOP/tools/testing/vm/negative/$prog.sh" ]; then
		exe=$TOP/tools/testing/vm/negative/$prog.sh
	else
		exe=$TOP/build/selftests/$prog
	fi
	export RDS_TEST=$name
	check_between "$idx"
	t0=$taint_seen
	kmsg "begin $idx $name"
	say "start $idx $name $tmo"
	if [ "$NHOSTS" -ge 2 ]; then
		"$TOP/tools/testing/selftests/barrier" "pre-$idx-$name" \
			$((120 * RDS_TIME_SCALE)) >> "$OUT/tests/$name.log" 2>&1
	fi
	echo "# $name (host $HOST)" >> "$OUT/tests/$name.log"
	if [ ! -x "$exe" ]; then
		echo "# no such test: $exe" >> "$OUT/tests/$name.log"
		rc=127
	elif [[ " $flags " == *" nokill "* ]]; then
		(cd /tmp && env "${envs[@]}" "$exe") \
			>> "$OUT/tests/$name.log" 2>&1 < /dev/null
		rc=$?
	else
		(cd /tmp && env "${envs[@]}" timeout -k 5 "$tmo" "$exe") \
			>> "$OUT/tests/$name.log" 2>&1 < /dev/null
		rc=$?
		[ $rc = 124 ] && why="timed out after ${tmo}s"
	fi
	af=0
	[[ " $flags " == *" allocfail "* ]] && af=1
	problem=$(klog_problem "begin $idx $name" "$t0" "$af" 2>> "$OUT/tests/$name.log")
	if [ -n "$problem" ]; then
		why="${why:+$why, }$problem"
		[ $rc = 4 ] || [ $rc = 0 ] && rc=98
	fi
	taint_seen=$(bad_taint)
	kmsg "end $idx $name"
	last_end="end $idx $name"
	last_name=$name
	cp /tmp/klog.txt "$OUT/dmesg.txt"
	case $rc in
	0) echo "ok $idx $name" >> "$OUT/tap" ;;
	4) echo "ok $idx $name # SKIP" >> "$OUT/tap" ;;
	*)
		echo "not ok $idx $name # exit $rc${why:+, $why}" >> "$OUT/tap"
		[ "$NHOSTS" -ge 2 ] && : > "$RDS_SHARED/abort.$name"
		;;
	esac
	say "end $idx $name $rc"
	if [ "$NHOSTS" -ge 2 ]; then
		"$TOP/tools/testing/selftests/barrier" "post-$idx-$name" \
			$((120 * RDS_TIME_SCALE)) >> "$OUT/tests/$name.log" 2>&1
	fi
}

idx=0
while read -r name tmo flags; do
	case "$name" in ''|'#'*) continue ;; esac
	idx=$((idx + 1))
	[ "$idx" -lt "$resume" ] && continue
	if [ "$idx" = "$resume" ]; then
		export RDS_REBOOTED=1
	else
		unset RDS_REBOOTED
	fi
	run_one "$idx" "$name" "${tmo:-60}" "$flags"
done < "$OUT/plan"

# What the kernel logged after the last test (its end barrier, anything
# asynchronous) fails the run as "after-LAST"; only then is the run done.
check_between "$((idx + 1))"
dmesg > "$OUT/dmesg.txt" 2>&1
say "done"
finish
