#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rds-stress -D (RDMA) over the kernel's own RDS: requests expose a buffer
# (RDS_CMSG_RDMA_MAP), acks carry an RDMA READ or WRITE of it
# (RDS_CMSG_RDMA_ARGS), and every RDMA byte is checked; the test hooks
# rdma-read / rdma-write corrupt one byte of an RDMA source and the peer
# must catch it.  Over rds_tcp, and with RDS_GET_MR (which mainline IB
# refuses), the tool must say the kernel lacks RDMA.  Host 1 is passive.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/stress_lib.sh"
check "modprobe rds_rdma rds_tcp (mainline)" \
	bash -c "modprobe rds_rdma && modprobe rds_tcp"
barrier loaded 60 || ksft_fail "barrier loaded"

# __run NAME PORT ENV... -- ARGS...: one rds-stress pair; sets rc and out.
__run() {
	local name=$1 port=$2
	shift 2
	out=$log/$name.out
	stress_pair "$name" "$port" 120 "$out" "$log/$name.json" "$@"
	rc=$stress_rc
	sed 's/^/#   /' "$out"
	grep -E '"rdma"|"errors"|"failure"' "$log/$name.json" 2>/dev/null |
		sed 's/^/#   /'
}

# pair NAME PORT WANT_RC PASSIVE_PATTERN ACTIVE_PATTERN [ENV=VAL] -- ARGS...
# A case meant to pass runs once more (port + 1) if either side saw an
# RDMA op end DROPPED: mainline drops the ops of messages in flight when
# its connection resets, which happens under load on this emulated
# machine (shared/seeds' lesson, and the point of issue 7); what is under
# test here is the tool's checking.
pair() {
	local name=$1 port=$2 want=$3 ppat=$4 apat=$5 rc out pat drop
	shift 5
	pat=$ppat
	[ "$RDS_HOST" = 2 ] && pat=$apat
	__run "$name" "$port" "$@"
	if [ "$want" = 0 ]; then
		drop=$RDS_SHARED/$RDS_TEST.$name.dropped
		grep -q '(DROPPED)' "$out" && : > "$drop.$RDS_HOST"
		barrier "$name-judged" 120
		if [ -e "$drop.1" ] || [ -e "$drop.2" ]; then
			echo "# $name: mainline dropped an RDMA op (its connection reset): once more"
			__run "$name-again" $((port + 1)) "$@"
		fi
	fi
	check "$name: exits $want" test "$rc" = "$want"
	[ -n "$pat" ] && check "$name: says '$pat'" grep -q -- "$pat" "$out"
	barrier "$name-done" 120
}

pair rdma-alt 4000 0 '(average)' '(average)' -- -t 2 -d 4 -D 64K -I 3 -T 8
pair rdma-write-once 4010 0 '(average)' '(average)' -- \
	-t 1 -d 4 -D 16K -M 2 --rdma-use-once 1 -T 5
pair rdma-read 4020 0 '(average)' '(average)' -- \
	-t 1 -d 4 -D 16K -M 1 -T 5
pair corrupt-rdma-write 4030 1 'RDMA WRITE of REQ seq .*written data wrong' \
	'the peer failed: .*RDMA WRITE' RDS_STRESS_CORRUPT=rdma-write -- \
	-t 1 -d 4 -D 16K -T 8
pair corrupt-rdma-read 4040 1 'RDMA READ for REQ seq .*data read wrong' \
	'the peer failed: .*RDMA READ' RDS_STRESS_CORRUPT=rdma-read -- \
	-t 1 -d 4 -D 16K -T 8
pair rdma-over-tcp 4050 1 'lacks RDMA support' 'lacks RDMA support' -- \
	-t 1 -d 1 -D 16K -T 3 --transport tcp

# Without RDS_RDMA_FENCE mainline may notify a READ as done (SUCCESS)
# before its data is in (it notifies when the peer acks the message that
# followed the READ); rds-stress then reports the unread bytes.  Only
# reported here, not asserted.
nofence() {
	local rc
	if [ "$RDS_HOST" = 1 ]; then
		timeout 90 "$stress" -r "$RDS_ADDR" -p 4060 \
			> "$log/nofence.out" 2>&1 &
		local pid=$!
		barrier nofence-up 60
		wait $pid
		rc=$?
	else
		barrier nofence-up 60
		timeout 90 "$stress" -r "$RDS_ADDR" -s "$RDS_PEER" -p 4060 \
			--connect-retries 30 -t 1 -d 4 -D 16K -M 1 \
			--rdma-use-fence 0 -T 5 > "$log/nofence.out" 2>&1
		rc=$?
	fi
	echo "# READs without fence (not asserted): exit $rc"
	grep -E 'rds-stress:|average' "$log/nofence.out" | sed 's/^/#   /'
	barrier nofence-done 120
}
nofence

barrier unload 60
unload
check "mainline rds unloaded" wait_for 10 test ! -d /sys/module/rds
ksft_exit
