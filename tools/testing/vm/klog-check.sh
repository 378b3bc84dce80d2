#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel log's verdict (klog.sh, what guest.sh runs after each test)
# on fixtures, on the host: what must fail a test fails, what must not
# does not.  TAP; make check runs it.
#   klog-fixtures/rds_rdma-lockdep.txt: a test's part of a debug guest's
#   log (Debian 6.12, the mixed-pair test) with the lockdep report of the
#   kernel's own rds_rdma, and a WARNING before the test's marker.
set -u
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
FX=$TOP/tools/testing/vm/klog-fixtures
KLOG=
dmesg() { cat "$KLOG"; }
bad_taint() { echo 0; }
. "$TOP/tools/testing/vm/klog.sh"

n=0 fail=0
# expect NAME WANT-WHY-ERE FILE MARKER [ALLOCFAIL]
expect() {
	local name=$1 want=$2 why
	KLOG=$3
	why=$(klog_problem "$4" 0 "${5:-0}" 2> /tmp/klog-check.$$)
	n=$((n + 1))
	if [[ $why =~ $want ]]; then
		echo "ok $n $name"
	else
		fail=$((fail + 1))
		echo "not ok $n $name # verdict '$why'"
		sed 's/^/# /' /tmp/klog-check.$$
	fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" /tmp/klog-check.$$' EXIT
m="begin 7 ib_mainline_pair"
lockdep=$FX/rds_rdma-lockdep.txt

echo "TAP version 13"
expect "the kernel's rds_rdma lockdep report is not counted" '^$' \
	"$lockdep" "$m"
expect "the kernel's rds_rdma circular-locking report is not counted" '^$' \
	"$FX/rds_rdma-circular.txt" "begin 2 ib_ml_upgrade"
sed 's/rds_ib_laddr_check/rds_ib_other_fn/g' "$FX/rds_rdma-circular.txt" > "$tmp/other2"
expect "the same circular report without it fails" \
	'^kernel log reports a problem$' "$tmp/other2" "begin 2 ib_ml_upgrade"
sed 's/rds_ib_laddr_check/rds_ib_other_fn/g' "$lockdep" > "$tmp/other"
expect "the same report from another function fails" \
	'^kernel log reports a problem$' "$tmp/other" "$m"
expect "a WARNING before the marker does not count" '^$' "$lockdep" "$m"
expect "read from boot (no marker), the WARNING fails" \
	'^kernel log reports a problem$' "$lockdep" ""
expect "a marker that is gone fails" 'marker .* lost' "$lockdep" \
	"begin 8 not_there"
{ cat "$lockdep"
  echo '[ 1400.000000] rds: page allocation failure: order:1, mode:0x820(GFP_ATOMIC), nodemask=(null)'
  echo '[ 1400.000001] CPU: 0 UID: 0 PID: 1 Comm: x'
  echo '[ 1400.000002] Call Trace:'
} > "$tmp/alloc"
expect "an allocation-failure dump fails a test" \
	'^kernel log reports a problem$' "$tmp/alloc" "$m"
expect "an allocation-failure dump passes under allocfail" '^$' \
	"$tmp/alloc" "$m" 1
echo '[ 1400.000003] WARNING: CPU: 0 PID: 1 at net/x.c:1 f+0x1/0x2 [rds]' \
	>> "$tmp/alloc"
expect "a WARNING still fails under allocfail" \
	'^kernel log reports a problem$' "$tmp/alloc" "$m" 1
{ cat "$lockdep"
  echo '[ 1400.000004] virtio_net virtio1 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 5732 ms'
} > "$tmp/txq"
expect "a stopped transmit queue fails a test" \
	'^kernel log reports a problem$' "$tmp/txq" "$m"
echo "1..$n"
echo "# $((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
