#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# /proc/net/rds across a link cut (issue 19): host 1 sends a message to
# host 2, then every packet of its NIC is dropped (netem loss 100%) while
# it sends 5 more, until the heartbeat declares the connection lost; the
# link comes back, the connection with it, and the 5 are resent.  Host 1's
# connections line must then show the connection up, the reset's reason
# (last_reset) and the messages put back (retransmitted >= 1), nothing
# queued or unacknowledged once host 2 has all 6; its stats must show
# conn_reset moved; its devices line one connection up.  Host 2 gets each
# of the 6 messages once.
. "$(dirname "$0")/lib.sh"

rds_loaded || { ksft_fail "rds loaded"; ksft_exit; }
C=/proc/net/rds/connections
# field NAME: host 1's line for the peer (TOS 0), column NAME (last_reset:
# the rest of the line).
field() {
	awk -v me="$RDS_ADDR" -v peer="$RDS_PEER" -v f="$1" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == me && $2 == peer && $3 == 0 {
			if (f == "last_reset") {
				s = $(col[f]); for (i = col[f] + 1; i <= NF; i++) s = s " " $i
				print s
			} else print $(col[f])
		}' "$C"
}
pstat() { awk -v n="$1" '$1 == n { print $2 }' /proc/net/rds/stats; }
state_is() { [ "$(field state)" = "$1" ]; }
not_up() { ! state_is up; }
drained() { [ "$(field queued)" = 0 ] && [ "$(field unacked)" = 0 ]; }

py=$(cat <<'PY'
import os, socket, subprocess, sys
me, peer, role = sys.argv[1], sys.argv[2], sys.argv[3]
scale = int(os.environ.get("RDS_TIME_SCALE", "1"))
def wait_file(name):
    subprocess.run(["bash", "-c", "for i in $(seq %d); do [ -e %s ] && exit 0; sleep 0.1; done; exit 1"
                    % (3000 * scale, name)], check=True)
s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
s.bind((me, 4820))
s.settimeout(300 * scale)
subprocess.run([os.environ["RDS_TOP"] + "/tools/testing/selftests/barrier",
                os.environ["RDS_TEST"] + ".bound", str(120 * scale)], check=True)
if role == "send":
    s.sendto(b"before 0", (peer, 4820))
    open("/tmp/procfs_reset.sent0", "w").close()
    wait_file("/tmp/procfs_reset.cut")
    for i in range(1, 6):
        s.sendto(b"during %d" % i, (peer, 4820))
    open("/tmp/procfs_reset.sent", "w").close()
    wait_file("/tmp/procfs_reset.done")
else:
    got = [s.recvfrom(100)[0] for _ in range(6)]
    want = [b"before 0"] + [b"during %d" % i for i in range(1, 6)]
    print("# got", b", ".join(got).decode())
    sys.exit(0 if got == want else 1)
PY
)
if [ "$RDS_HOST" = 1 ]; then
	rm -f /tmp/procfs_reset.*
	timeout "$(scaled 400)" python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" send &
	pid=$!
	check "the first message went out" wait_for 120 test -e /tmp/procfs_reset.sent0
	check "the connection is up in $C" wait_for 60 state_is up
	reset0=$(pstat conn_reset)
	tc qdisc add dev "$RDS_IFACE" root netem loss 100%
	: > /tmp/procfs_reset.cut
	check "5 messages sent during the cut" wait_for 60 test -e /tmp/procfs_reset.sent
	# netem drops host 1's egress only: host 1, with 5 messages at
	# stake, hears nothing more (host 2, idle, asks only every
	# heartbeat_idle_ms) and its heartbeat declares the connection lost
	# after 5 quiet intervals.
	check "the connection is no longer up" wait_for 120 not_up
	tc qdisc del dev "$RDS_IFACE" root
	check "the connection is up again" wait_for 180 state_is up
	barrier got 300 || ksft_fail "barrier got"
	: > /tmp/procfs_reset.done
	wait $pid
	sed 's/^/# /' "$C"
	reason=$(field last_reset)
	check "last_reset names the loss ($reason)" test -n "$reason" -a "$reason" != "-"
	check "retransmitted >= 1 ($(field retransmitted))" test "$(field retransmitted)" -ge 1
	check "nothing queued or unacknowledged" wait_for 30 drained
	check "stats: conn_reset moved ($reset0 -> $(pstat conn_reset))" \
		test "$(pstat conn_reset)" -gt "$reset0"
	check "devices: rxe0 has a connection up" \
		bash -c "awk '\$1 == \"$RDS_RXE\" { print \$12 }' /proc/net/rds/devices | grep -qx '[1-9][0-9]*'"
	rm -f /tmp/procfs_reset.*
else
	timeout "$(scaled 400)" python3 -c "$py" "$RDS_ADDR" "$RDS_PEER" recv
	check "host 2 got the 6 messages once each, in order" test $? = 0
	barrier got 300 || ksft_fail "barrier got"
fi
ksft_exit
