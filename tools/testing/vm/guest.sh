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

export RDS_TOP=$TOP RDS_BUILD=$TOP/build
# Modules built for this kernel by tools/testing/build-module.sh.
export RDS_MODDIR=$TOP/build/mod-$(uname -r)
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
	sleep 10
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
	t=$(cat /proc/sys/kernel/tainted)
	echo $(( t & ~TAINT_OK ))
}

# Patterns in the kernel log that fail the test that produced them even
# when they do not panic the guest (SLUB debug reports, for instance).
LOG_BAD='BUG[: ]|Oops|general protection|Call Trace|WARNING:|Objects remaining|still has objects|list_add corruption|list_del corruption|Poison overwritten|Redzone'

run_one() {
	local idx=$1 name=$2 tmo=$3 flags=$4 exe rc why="" lines_before t
	if [ -x "$TOP/tools/testing/selftests/$name.sh" ]; then
		exe=$TOP/tools/testing/selftests/$name.sh
	elif [ -x "$TOP/tools/testing/vm/negative/$name.sh" ]; then
		exe=$TOP/tools/testing/vm/negative/$name.sh
	else
		exe=$TOP/build/selftests/$name
	fi
	export RDS_TEST=$name
	lines_before=$(dmesg | wc -l)
	say "start $idx $name $tmo"
	if [ "$NHOSTS" -ge 2 ]; then
		"$TOP/tools/testing/selftests/barrier" "pre-$idx-$name" 120 \
			>> "$OUT/tests/$name.log" 2>&1
	fi
	echo "# $name (host $HOST)" >> "$OUT/tests/$name.log"
	if [ ! -x "$exe" ]; then
		echo "# no such test: $exe" >> "$OUT/tests/$name.log"
		rc=127
	elif [[ " $flags " == *" nokill "* ]]; then
		(cd /tmp && "$exe") >> "$OUT/tests/$name.log" 2>&1 < /dev/null
		rc=$?
	else
		(cd /tmp && timeout -k 5 "$tmo" "$exe") \
			>> "$OUT/tests/$name.log" 2>&1 < /dev/null
		rc=$?
		[ $rc = 124 ] && why="timed out after ${tmo}s"
	fi
	t=$(bad_taint)
	if [ "$t" != 0 ]; then
		why="${why:+$why, }kernel tainted ($t)"
		rc=99
	fi
	if dmesg | tail -n +"$((lines_before + 1))" | grep -Eq "$LOG_BAD"; then
		why="${why:+$why, }kernel log reports a problem"
		[ $rc = 4 ] || [ $rc = 0 ] && rc=98
	fi
	dmesg > "$OUT/dmesg.txt" 2>&1
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
		"$TOP/tools/testing/selftests/barrier" "post-$idx-$name" 120 \
			>> "$OUT/tests/$name.log" 2>&1
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

say "done"
finish
