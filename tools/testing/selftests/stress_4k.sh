#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The load shape that crashed the module (issue 15), held for a while:
# 4 tasks x 8 requests in flight, requests of exactly 4096 bytes (one
# whole receive fragment, kept in the receive buffer's page), replies of
# 256 bytes (packed, copied), the socket buffers the classic rds-stress
# ends up with (212992 asked, 425984 read back), every byte verified, over
# our module's IB transport.  STRESS_4K_SECS (build/stress-4k.env; "make
# stress-4k" writes it, 600 by default) is the length, 45 s without it; a
# plan's STRESS_4K_SECS=N word wins over both.
# The plan's unload test then checks that every page came back.
. "$(dirname "$0")/lib.sh"

stress=$RDS_BUILD/rds-stress/rds-stress
if [ -z "${STRESS_4K_SECS:-}" ]; then
	STRESS_4K_SECS=45
	[ -r "$RDS_BUILD/stress-4k.env" ] && . "$RDS_BUILD/stress-4k.env"
fi
secs=$STRESS_4K_SECS
out=/tmp/$RDS_TEST.out
js=$RDS_OUT/$RDS_TEST.json
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make rds-stress"; ksft_exit; }
rds_loaded || { ksft_fail "our module is loaded"; ksft_exit; }
barrier loaded 60 || { ksft_fail "barrier loaded"; ksft_exit; }

# The counters since the module's load include the tests before this one.
resets0=$(ib_counter resets) bad0=$(ib_counter bad_frames)
echo "# rds-stress -t 4 -d 8 -q 4096 -a 256, buffers 212992, -T $secs, verified"
stress_pair s4k 4300 "$(scaled $((secs + 240)))" "$out" "$js" -- \
	-t 4 -d 8 -q 4096 -a 256 --sndbuf 212992 --rcvbuf 212992 \
	-T "$secs" --drain-timeout "$(scaled 60)"
sed 's/^/# /' "$out" | tail -n 25
check "rds-stress ($([ "$RDS_HOST" = 1 ] && echo passive || echo active)) exits 0, every message verified" \
	test "$stress_rc" = 0
check "requests flowed" grep -q '(average)' "$out"
barrier ran "$((secs + 300))" || ksft_fail "barrier ran"
echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
resets=$(($(ib_counter resets) - resets0)) bad=$(($(ib_counter bad_frames) - bad0))
check "no connection reset, no bad frame during the load (resets +$resets, bad_frames +$bad)" \
	test "$resets" = 0 -a "$bad" = 0
ksft_exit
