#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The randomized soak ("make soak", not in make check): one verifying
# rds-stress load between the two hosts for SOAK_SECS (default 600) while
# host 2 injects a random sequence of the fault matrix's faults, one at a
# time: NIC down, link cut (QMP), rxe delete and re-add, netem loss,
# duplication, reordering, corruption; each lasting 3-8 s (netem 8-15 s),
# 10-25 s apart.  The sequence comes from SOAK_SEED (printed; by default
# the time), so a failing run can be replayed.  At the end the usual
# fault_case checks (both rds-stress exit 0: every message once, in order,
# intact; counts agree both ways; traffic resumed; rxe's QP1 alive) and
# the recovery after each fault.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

# make soak writes SOAK_SECS and SOAK_SEED here for the guests.
[ -r "$RDS_BUILD/soak.env" ] && . "$RDS_BUILD/soak.env"
SOAK_SECS=${SOAK_SECS:-600}
SOAK_SEED=${SOAK_SEED:-$(date +%s)}
fault_init || ksft_exit
echo "# soak: ${SOAK_SECS} s, seed $SOAK_SEED (replay: SOAK_SEED=$SOAK_SEED make soak)"
modprobe sch_netem 2>/dev/null

nic_down() { ip link set "$RDS_IFACE" down; }
nic_up() { ip link set "$RDS_IFACE" up; }
link_cut() { host_request link off; }
link_restore() { host_request link on; }
rxe_del() { rdma link delete "$RDS_RXE"; }
rxe_add() {
	rdma link show "$RDS_RXE" > /dev/null 2>&1 ||
		rdma link add "$RDS_RXE" type rxe netdev "$RDS_IFACE"
}
netem_clear() { tc qdisc del dev "$RDS_IFACE" root; }
loss() { tc qdisc add dev "$RDS_IFACE" root netem loss 5%; }
duplicate() { tc qdisc add dev "$RDS_IFACE" root netem duplicate 5%; }
reorder() { tc qdisc add dev "$RDS_IFACE" root netem delay 5ms reorder 25%; }
corrupt() { tc qdisc add dev "$RDS_IFACE" root netem corrupt 2%; }
FAULTS=("nic_down nic_up" "link_cut link_restore" "rxe_del rxe_add"
	"loss netem_clear" "duplicate netem_clear" "reorder netem_clear"
	"corrupt netem_clear")
SOAK_LOG=$FAULT_DIR/soak.faults	# "name end-time" per fault

# The INJECT of the soak's fault_case (called 10 s into the load): faults
# while they can end 30 s before the load does, so that the recovery from
# the last one is measured too.
soak_run() {
	local end=$((SECONDS + SOAK_SECS - 40)) f inj rst hold gap n=0
	RANDOM=$SOAK_SEED
	: > "$SOAK_LOG"
	while :; do
		f=${FAULTS[RANDOM % ${#FAULTS[@]}]}
		inj=${f% *} rst=${f#* }
		if [ "$rst" = netem_clear ]; then
			hold=$((8 + RANDOM % 8))
		else
			hold=$((3 + RANDOM % 6))
		fi
		gap=$((10 + RANDOM % 16))
		[ $((SECONDS + hold)) -le $end ] || break
		n=$((n + 1))
		echo "# soak fault $n: $inj for ${hold} s, then ${gap} s of load"
		__fault_restore=$rst
		$inj || echo "# soak fault $n: $inj failed"
		sleep "$hold"
		$rst || echo "# soak fault $n: $rst failed"
		__fault_restore=soak_end
		if [ "$inj" = rxe_del ]; then
			wait_for 30 bash -c "rdma link show '$RDS_RXE/1' 2>/dev/null | grep -q 'state ACTIVE'"
		fi
		echo "$inj $EPOCHREALTIME" >> "$SOAK_LOG"
		[ $((SECONDS + gap)) -le $end ] || break
		sleep "$gap"
	done
	return 0
}
soak_end() { :; }

FAULT_INJECT_SECS=$SOAK_SECS fault_case soak "$SOAK_SECS" 10 0 2 soak_run soak_end
if [ "$RDS_HOST" = 2 ]; then
	n=0 worst=0 none=0
	while read -r inj t; do
		n=$((n + 1))
		r=$(__fault_recovery "$FAULT_DIR/soak/active.log" "$t")
		echo "# soak fault $n ($inj): traffic again ${r:-never} s after it ended"
		if [ -z "$r" ]; then
			none=$((none + 1))
		elif awk -v a="$r" -v b="$worst" 'BEGIN { exit !(a > b) }'; then
			worst=$r
		fi
	done < "$SOAK_LOG"
	echo "# soak: $n faults, seed $SOAK_SEED, slowest recovery $worst s"
	check "soak: at least 10 faults injected" test "$n" -ge 10
	check "soak: traffic resumed after every fault" test "$none" = 0
fi
ksft_exit
