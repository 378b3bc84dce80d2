#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packed frames certain, and their fallback (issue 17): both hosts reload
# the module with ib_credits=4, so that a sender has an eighth of its
# grant in flight after one frame and holds small messages back to pack
# them (send.c, rds_ib_pack_corked()).  Then:
#   sizes     ib_sizes_test (every size, both ways, each message checked
#             byte for byte and in order) with those credits;
#   packed    rds-stress of 100-byte requests and replies (-t 2 -d 16,
#             verified) for PACK_SECS: every message verified, and fewer
#             data frames than messages went out (tx_frames, which counts
#             no control frame, against send_queued of
#             /proc/net/rds/stats, which must be there): packing happened;
#             and once the traffic stopped no packed frame's copy is held
#             (pack_copies, a level, back to 0 within 10 s: the frame
#             after which nothing could go was signalled, send.c; the
#             negative module idlecopy, the rule before, must fail it);
#   nomem     the same while fault_nth=1 is written every 20 ms on both
#             hosts: the next rds_fault() call fails, and on this path
#             (messages of 100 bytes: no receive page is refilled) that
#             is the copy of a packed frame: pack_nomem grows, the
#             messages go one frame each, every one verified, none lost
#             or reordered (rds-stress and ib_sizes_test would see it);
#             no copy held once it stopped;
# (and no copy held after ib_sizes_test either); no reset and no bad frame meanwhile.  Then the module is reloaded as
# usual.
. "$(dirname "$0")/lib.sh"

P=/sys/module/rds/parameters
stress=$RDS_BUILD/rds-stress/rds-stress
secs=${PACK_SECS:-20}
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make rds-stress"; ksft_exit; }
barrier start 120 || { ksft_fail "barrier start"; ksft_exit; }
check "reload with ib_credits=4" rds_reload ib_credits=4
check "ib_credits is 4" test "$(cat $P/ib_credits)" = 4
barrier loaded 120 || ksft_fail "barrier loaded"

resets0=$(ib_counter resets) bad0=$(ib_counter bad_frames)

RDS_TEST=$RDS_TEST.ib_sizes_test timeout 590 \
	"$RDS_BUILD/selftests/ib_sizes_test" > /tmp/pack.sizes 2>&1
rc=$?
grep -E '^# (sent|host|ib_counters)|^not ok' /tmp/pack.sizes
check "ib_sizes_test with ib_credits=4" test $rc = 0
barrier sized 600 || ksft_fail "barrier sized"

# copies_idle PHASE: no packed frame's copy held once the traffic stopped
# (the frames' completions come within milliseconds).  A counter that is
# not there fails it.
no_copies() {
	[ "$(ib_counter pack_copies)" = 0 ]
}
copies_idle() {
	check "$1: no packed frame's copy held once idle (pack_copies back to 0)" \
		wait_for 10 no_copies
	echo "# $1: pack_copies $(ib_counter pack_copies)"
}
copies_idle sizes

# stress NAME PORT: 100-byte requests and replies, verified; sets
# stress_rc; the messages of both directions this host counted in $msgs.
run_stress() {
	local out=/tmp/$RDS_TEST.$1.out js=$RDS_OUT/$RDS_TEST.$1.json
	stress_pair "pack-$1" "$2" "$(scaled $((secs + 240)))" "$out" "$js" -- \
		-t 2 -d 16 -q 100 -a 100 -T "$secs" \
		--drain-timeout "$(scaled 60)"
	sed 's/^/# /' "$out" | tail -n 8
}

frames0=$(ib_counter tx_frames)
sent0=$(awk '$1 == "send_queued" { print $2 }' /proc/net/rds/stats 2>/dev/null)
run_stress packed 4400
check "rds-stress, packing certain: exits 0, every message verified" \
	test "$stress_rc" = 0
frames=$(( $(ib_counter tx_frames) - frames0 ))
sent1=$(awk '$1 == "send_queued" { print $2 }' /proc/net/rds/stats 2>/dev/null)
echo "# data frames sent $frames, messages queued $(( ${sent1:-0} - ${sent0:-0} ))"
check "send_queued of /proc/net/rds/stats read before and after" \
	test -n "$sent0" -a -n "$sent1"
check "fewer data frames than messages (packed)" \
	test -n "$sent0" -a -n "$sent1" -a "$frames" -lt $(( ${sent1:-0} - ${sent0:-0} ))
copies_idle packed
barrier packed 300 || ksft_fail "barrier packed"

nomem0=$(ib_counter pack_nomem)
( while :; do echo 1 > $P/fault_nth; sleep 0.02; done ) &
inject=$!
run_stress nomem 4410
kill "$inject" 2>/dev/null
wait "$inject" 2>/dev/null
echo 0 > $P/fault_nth
nomem=$(( $(ib_counter pack_nomem) - nomem0 ))
echo "# pack_nomem +$nomem; $(dmesg | grep -c 'fault injected') faults injected in all"
check "rds-stress, copies failing: exits 0, every message verified" \
	test "$stress_rc" = 0
check "packed frames without their copy went apart (pack_nomem +$nomem)" \
	test "$nomem" -gt 0
copies_idle nomem
barrier nomem 300 || ksft_fail "barrier nomem"

resets=$(( $(ib_counter resets) - resets0 )) bad=$(( $(ib_counter bad_frames) - bad0 ))
check "no connection reset, no bad frame (resets +$resets, bad_frames +$bad)" \
	test "$resets" = 0 -a "$bad" = 0
echo "# ib_counters: $(cat $P/ib_counters)"
barrier tested 120 || ksft_fail "barrier tested"
check "reload as usual" rds_reload
barrier end 120 || ksft_fail "barrier end"
ksft_exit
