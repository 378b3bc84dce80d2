#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: tc netem on eth0 of both hosts (each direction) under a
# verifying rds-stress load, one run per impairment, each 8 s then
# removed: loss 5%, duplicate 5%, reorder (delay 5ms reorder 25%),
# corrupt 2%.  RoCE's RC transport has to repair all of it (PSN checks,
# ICRC, retransmission); RDS must deliver everything exactly once, in
# order, intact.  Skipped when the guest has no tc or no sch_netem.
# See fault_lib.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

fault_init || ksft_exit

# Both hosts must agree that netem works before either injects.
netem_works() {
	command -v tc > /dev/null || { echo "no tc in the guest"; return 1; }
	modprobe sch_netem 2>/dev/null || {
		echo "modprobe sch_netem failed"
		return 1
	}
	tc qdisc add dev "$RDS_IFACE" root netem delay 0ms 2>&1 || {
		echo "tc qdisc add ... netem refused"
		return 1
	}
	tc qdisc del dev "$RDS_IFACE" root
}
why=$(netem_works)
echo "${why:-ok}" > "$FAULT_XCHG/netem.$RDS_HOST"
barrier netem-probe 60 || { ksft_fail "barrier netem-probe"; ksft_exit; }
for h in 1 2; do
	r=$(cat "$FAULT_XCHG/netem.$h")
	if [ "$r" != ok ]; then
		ksft_skip "netem" "host $h: $r"
		ksft_exit
	fi
done

netem_clear() { tc qdisc del dev "$RDS_IFACE" root; }
loss() { tc qdisc add dev "$RDS_IFACE" root netem loss 5%; }
duplicate() { tc qdisc add dev "$RDS_IFACE" root netem duplicate 5%; }
reorder() { tc qdisc add dev "$RDS_IFACE" root netem delay 5ms reorder 25%; }
corrupt() { tc qdisc add dev "$RDS_IFACE" root netem corrupt 2%; }
# FAULT_NETEM_CASES: which impairments (make check's short form: loss).
for imp in ${FAULT_NETEM_CASES:-loss duplicate reorder corrupt}; do
	fault_case "netem-$imp" 30 4 8 all "$imp" netem_clear
done
ksft_exit
