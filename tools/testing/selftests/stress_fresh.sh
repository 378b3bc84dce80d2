#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The crash shape of issue 15 on a module just loaded on both hosts: the
# classic load generator was started on fresh modules, so both sides sent
# their first 4 KiB requests at the same moment and each side's first
# message set up the connection: two attempts cross, one loses the race
# and is torn down while the peer's frames may already sit in the shared
# receive CQ, with the load at full rate from the first second.  The other
# stress tests run on a connection that earlier tests left up, which is
# why they never made this shape.  FRESH_CYCLES (a plan word, 6 by
# default) times: both hosts reload the module, then a short verifying
# rds-stress (-t 4 -d 8 -q 4096 -a 256, 212992-byte buffers, both sides
# sending) starts on both at once.  Each cycle must verify every message;
# the harness fails the test on any splat; the counters show how often a
# completion of a torn-down attempt was met (stale_rx) and how many
# connection attempts and resets each cycle took.
. "$(dirname "$0")/lib.sh"

stress=$RDS_BUILD/rds-stress/rds-stress
cycles=${FRESH_CYCLES:-6}
secs=${FRESH_SECS:-5}
out=/tmp/$RDS_TEST.out
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make rds-stress"; ksft_exit; }
rds_loaded || { ksft_fail "our module is loaded"; ksft_exit; }

stale=0 connects=0 resets=0
for i in $(seq 1 "$cycles"); do
	barrier "unload$i" 120 || { ksft_fail "barrier unload$i"; break; }
	rmmod rds || { ksft_fail "cycle $i: rmmod rds"; break; }
	rds_insmod || { ksft_fail "cycle $i: insmod"; break; }
	js=$RDS_OUT/$RDS_TEST.$i.json
	stress_pair "fresh$i" $((4400 + i)) "$(scaled $((secs + 180)))" \
		"$out.$i" "$js" -- \
		-t 4 -d 8 -q 4096 -a 256 --sndbuf 212992 --rcvbuf 212992 \
		-T "$secs" --drain-timeout "$(scaled 60)"
	check "cycle $i: rds-stress exits 0, every message verified" \
		test "$stress_rc" = 0
	[ "$stress_rc" = 0 ] || sed 's/^/# /' "$out.$i" | tail -n 15
	grep -q '(average)' "$out.$i" ||
		ksft_fail "cycle $i: requests flowed"
	# The counters start at 0 with each load.
	c=$(ib_counter connects) r=$(ib_counter resets) s=$(ib_counter stale_rx)
	echo "# cycle $i: connects ${c:-?} resets ${r:-?} stale_rx ${s:-?}"
	stale=$((stale + ${s:-0})) connects=$((connects + ${c:-0}))
	resets=$((resets + ${r:-0}))
	barrier "ran$i" "$((secs + 240))" || ksft_fail "barrier ran$i"
done
echo "# $cycles fresh starts: connects $connects, resets $resets, stale_rx $stale (completions of a torn-down attempt)"
echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
echo "# ib_handshakes: $(cat /sys/module/rds/parameters/ib_handshakes)"
ksft_exit
