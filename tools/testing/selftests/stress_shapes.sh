#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The shapes applications give RDS (issue 16, section 4), each a short
# verified rds-stress run between the two hosts over OUR module (loaded by
# the plan's `load`): host 1 passive, host 2 active.
#   sizes    every boundary, 0 and 1 byte to 1 MiB, cycled per request
#   mix      --size-mix from SHAPES_SEED (default: the time; printed)
#   crash    the shape of the crash of issue 15: -t 4 -d 8 -q 4096 -a 256,
#            SO_SNDBUF/SO_RCVBUF 425984 (read back: the kernel's 851968)
#   classic  the same with the buffers the classic rds-stress got there
#            (212992 asked, 425984 read back)
#   sockets  16 sockets per task on consecutive ports, 8M buffers
#   slow     a slow reader (400 ms of every second unread) behind a 64K
#            receive buffer: ENOBUFS and RDS_CMSG_CONG_UPDATE, nothing lost
# Each asserts exit 0 on both sides (every byte and length verified, every
# request acked), that messages flowed, and that what one side sent the
# other received.  SHAPES_SECS (default 6) is the length of most runs;
# on a slow (debug) kernel the time scale stretches the timeouts and the
# time the last requests of a run may take (--drain-timeout), not the load.
. "$(dirname "$0")/lib.sh"

stress=$RDS_BUILD/rds-stress/rds-stress
log=$RDS_OUT/$RDS_TEST.d
secs=${SHAPES_SECS:-6}
seed=${SHAPES_SEED:-$(date +%s)}
mkdir -p "$log"
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make rds-stress"; ksft_exit; }
rds_loaded || rds_insmod || { ksft_fail "our rds loaded"; ksft_exit; }
barrier loaded 60 || { ksft_fail "barrier loaded"; ksft_exit; }

# jload PREFIX FILE: each number of an rds-stress JSON summary as the
# variable PREFIX_KEY (two processes, not three a number: TCG is slow to
# start them).
jload() {
	local v
	v=$(grep -o '"[a-z_]*": [0-9]*' "$2" 2>/dev/null |
	    sed "s/^\"\([a-z_]*\)\": /$1_\1=/")
	eval "$v"
}

# shape NAME PORT ARGS...: one pair, ARGS on the active side; the common
# checks; this side's numbers in $here_KEY, the peer's in $peer_KEY, the
# output in $out.
shape() {
	local name=$1 port=$2 peerjs
	shift 2
	out=$log/$name.out
	js=$log/$name.json
	[ "$RDS_HOST" = 2 ] &&
		echo "# $name: rds-stress -r $RDS_ADDR -s $RDS_PEER -p $port $*"
	stress_pair "$name" "$port" "$(scaled 240)" "$out" "$js" -- "$@" \
		--drain-timeout "$(scaled 30)"
	grep -E 'rds-stress:|average|seed|slow reader|kernel:' "$out" |
		sed "s/^/#   /"
	grep -E '"counts"|"shapes"|"errors"|"failure"' "$js" 2>/dev/null |
		sed "s/^/#   /"
	unset "${!here_@}" "${!peer_@}"
	jload here "$js"
	check "$name: exits 0 (every byte and length verified)" \
		test "$stress_rc" = 0
	check "$name: messages flowed" \
		test "${here_rx_req:-0}" -gt 0 -a "${here_rx_ack:-0}" -gt 0
	cp "$js" "$RDS_SHARED/$RDS_TEST.$name.json.$RDS_HOST" 2>/dev/null
	barrier "$name-json" 60
	peerjs=$RDS_SHARED/$RDS_TEST.$name.json.$((3 - RDS_HOST))
	jload peer "$peerjs"
	check "$name: requests and acks sent here arrived there" \
		test "${here_tx_req:--1}" = "${peer_rx_req:--2}" -a \
		"${here_tx_ack:--1}" = "${peer_rx_ack:--2}"
	barrier "$name-done" 120
}

shape sizes 6000 -t 2 -d 2 -T "$secs" \
	--sizes 0,1,1023,1024,4047,4048,4096,4097,8191,8192,8193,64K,1M
check "sizes: empty messages arrived" test "${here_rx_zero:-0}" -gt 0
check "sizes: 1 MiB messages arrived" test "${here_rx_max:-0}" = 1048576

[ "$RDS_HOST" = 2 ] && echo "# mix: seed $seed (SHAPES_SEED=$seed replays it)"
shape mix 6010 -t 2 -d 4 -q 256K --size-mix "$seed" -T "$secs"
check "mix: the seed is printed" grep -q '^size mix seed [0-9]' "$out"
check "mix: messages shorter than the header arrived" \
	test "${here_rx_short:-0}" -gt 0

shape crash 6020 -t 4 -d 8 -q 4096 -a 256 --sndbuf 425984 --rcvbuf 425984 \
	-T $((secs + 4)) --show-params
check "crash: SO_SNDBUF/SO_RCVBUF 425984 set (the kernel's 851968)" \
	test "${here_sndbuf_set:-0}" = 851968 -a \
	"${here_rcvbuf_set:-0}" = 851968
[ "$RDS_HOST" = 2 ] && check "crash: --show-params shows them" \
	grep -Eq '^ +rcvbuf +425984 \(kernel: 851968\)' "$out"

# What the classic rds-stress of issue 15 had: it asks SO_SNDBUF/SO_RCVBUF
# of tasks x depth x (req + ack) x 2 = 278528 without FORCE, which
# net.core.wmem_max/rmem_max (212992) cap, and reads back 425984: RDS
# then holds 212992 bytes a socket each way, half what --sndbuf 425984
# gives.
shape classic 6050 -t 4 -d 8 -q 4096 -a 256 --sndbuf 212992 --rcvbuf 212992 \
	-T $((secs + 4))
check "classic: SO_SNDBUF/SO_RCVBUF read back 425984, as the classic tool's" \
	test "${here_sndbuf_set:-0}" = 425984 -a \
	"${here_rcvbuf_set:-0}" = 425984

shape sockets 6030 -t 2 --sockets 16 -d 2 -q 2K --sndbuf 8M --rcvbuf 8M \
	-T "$secs" --show-params
check "sockets: 16 per task" test "${here_sockets:-0}" = 16
check "sockets: SO_SNDBUF/SO_RCVBUF 8M set" \
	test "${here_sndbuf_set:-0}" = 16777216 -a \
	"${here_rcvbuf_set:-0}" = 16777216

shape slow 6040 -t 2 -d 16 -q 8K --rcvbuf 64K --slow-reader 400 \
	-T $((secs + 2))
if [ "$RDS_HOST" = 1 ]; then
	check "slow: the reader paused" test "${here_slow_pauses:-0}" -gt 3
else
	check "slow: the sender met ENOBUFS (receive queue full)" \
		test "${here_enobufs:-0}" -gt 0
	check "slow: RDS_CMSG_CONG_UPDATE arrived" \
		test "${here_cong_updates:-0}" -gt 0
fi

ib_test_end
