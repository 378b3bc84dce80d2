#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The crash shape of issue 15 on a module just loaded on both hosts, with
# the first two connection requests crossing: the classic load generator
# was started on fresh modules, so each side's first 4 KiB request set up
# the connection while the other side's did too, at full rate from the
# first second.  The other stress tests run on a connection that earlier
# tests left up.  Started as they come, the two sides' first requests
# cross or not depending on timing, so each host arms the test hook
# ib_req_delay_ms (net/ib/est_hook.c): the peer's request waits CROSS_MS
# before it is handled, by which time this host's own request is on the
# wire too.  Host 1 (the lower address) must refuse host 2's request
# "busy" and host 2 must end its own attempt ("lost the connect race",
# its connection's last_reset in /proc/net/rds/connections):
# checked each cycle, so that the shape is made, not hoped for.  The
# check's negative control: FRESH_FIRST=1 (a plan word) has host 1 alone
# connect first, before the load: nothing crosses and the check fails.
# FRESH_CYCLES (a plan word, 6 by default) times: both hosts reload the
# module, then a short verifying rds-stress (-t 4 -d 8 -q 4096 -a 256,
# 212992-byte buffers, both sides sending) starts on both at once.  Each
# cycle must verify every message; the harness fails the test on any
# splat; the counters show how often a completion of a torn-down attempt
# was met (stale_rx) and how many connection attempts and resets each
# cycle took.
. "$(dirname "$0")/lib.sh"

stress=$RDS_BUILD/rds-stress/rds-stress
cycles=${FRESH_CYCLES:-6}
secs=${FRESH_SECS:-5}
cross_ms=${CROSS_MS:-3000}
first=${FRESH_FIRST:-0}
hook=/sys/module/rds/parameters/ib_req_delay_ms
out=/tmp/$RDS_TEST.out
[ -x "$stress" ] || { ksft_fail "rds-stress built" "make rds-stress"; ksft_exit; }
rds_loaded || { ksft_fail "our module is loaded"; ksft_exit; }

# one message to a port host 2 does not bind, the socket kept open until
# the connection is up
first_py='
import socket, sys, time
me, peer, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 0))
s.sendto(b"first", (peer, 4399))
t0 = time.monotonic()
while time.monotonic() - t0 < secs:
    for line in open("/proc/net/rds/connections"):
        f = line.split()
        if len(f) > 4 and f[1].endswith(peer) and f[4] == "up":
            sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
'
stale=0 connects=0 resets=0 crossed=0
for i in $(seq 1 "$cycles"); do
	barrier "unload$i" 120 || { ksft_fail "barrier unload$i"; break; }
	rmmod rds || { ksft_fail "cycle $i: rmmod rds"; break; }
	rds_insmod || { ksft_fail "cycle $i: insmod"; break; }
	[ -w $hook ] || { ksft_fail "cycle $i: $hook (RDS_TEST_HOOKS=1 build)"; break; }
	echo "$cross_ms" > $hook
	busy0=$(ib_handshakes busy)
	if [ "$first" = 1 ]; then
		barrier "first$i" 60 || ksft_fail "barrier first$i"
		[ "$RDS_HOST" = 1 ] && check "cycle $i: host 1 connected first (FRESH_FIRST=1)" \
			python3 -c "$first_py" "$RDS_ADDR" "$RDS_PEER" "$(scaled 60)"
		barrier "firstup$i" 120 || ksft_fail "barrier firstup$i"
	fi
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
	b=$(ib_handshakes busy)
	echo "# cycle $i: connects ${c:-?} resets ${r:-?} stale_rx ${s:-?} refused busy ${b:-?}"
	# host 1 (the lower address) refused host 2's request "busy"; host 2
	# ended its own attempt: its connection's last_reset says so
	if [ "$RDS_HOST" = 1 ]; then
		how="host 2's request refused busy (busy ${busy0:-?} -> ${b:-?})"
		[ "${b:-0}" -gt "${busy0:-0}" ]
	else
		how="host 2's own attempt lost the connect race"
		grep -q "lost the connect race" /proc/net/rds/connections
	fi && x=yes || x=no
	[ $x = yes ] && crossed=$((crossed + 1))
	check "cycle $i: the requests crossed: $how" test $x = yes
	stale=$((stale + ${s:-0})) connects=$((connects + ${c:-0}))
	resets=$((resets + ${r:-0}))
	barrier "ran$i" "$((secs + 240))" || ksft_fail "barrier ran$i"
done
echo "# $cycles fresh starts ($crossed with crossed requests): connects $connects, resets $resets, stale_rx $stale (completions of a torn-down attempt)"
echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters)"
echo "# ib_handshakes: $(cat /sys/module/rds/parameters/ib_handshakes)"
ksft_exit
