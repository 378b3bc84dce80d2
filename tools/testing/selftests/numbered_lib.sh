# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Many flows of numbered messages at once (numbered.py), for the tests
# that fault or restart a host between sends.  Sourced after lib.sh.
# NUM_FLOWS flows, flow F to port NUM_PORT + F on the receiving host.

NUM_FLOWS=${NUM_FLOWS:-4}
NUM_PORT=${NUM_PORT:-4100}

__num_run() {
	timeout 300 python3 "$RDS_TOP/tools/testing/selftests/numbered.py" \
		"$RDS_ADDR" "$RDS_PEER" "$@"
}

# num_start TAG ARGS...: numbered.py ARGS for every flow, in the
# background; output in /tmp/num.TAG.F, process ids in /tmp/num.TAG.pids.
num_start() {
	local tag=$1 f
	shift
	: > "/tmp/num.$tag.pids"
	for ((f = 0; f < NUM_FLOWS; f++)); do
		PORT=$((NUM_PORT + f)) __num_run "$@" > "/tmp/num.$tag.$f" 2>&1 &
		echo $! >> "/tmp/num.$tag.pids"
	done
}

# num_all TAG REGEX: every flow of TAG printed a line matching REGEX.
num_all() {
	local f
	for ((f = 0; f < NUM_FLOWS; f++)); do
		grep -q "$2" "/tmp/num.$1.$f" || return 1
	done
}

# num_wait TAG: wait for every flow of TAG; print what they said; 0 if
# all exited 0.
num_wait() {
	local p rc=0 f
	while read -r p; do
		wait "$p" || rc=1
	done < "/tmp/num.$1.pids"
	for ((f = 0; f < NUM_FLOWS; f++)); do
		grep -v '^# bound' "/tmp/num.$1.$f"
	done
	return $rc
}

# num_first TAG: the earliest uptime at which a flow of TAG read its first
# message.
num_first() {
	cat "/tmp/num.$1".[0-9]* |
		awk '/^# first message at uptime/ { if (m == "" || $6 < m) m = $6 }
		     END { print m }'
}

# num_recovery TAG T0: seconds from uptime T0 to num_first TAG.
num_recovery() {
	awk -v a="$(num_first "$1")" -v b="$2" 'BEGIN { printf "%.1f", a - b }'
}

# nic_up_now: bring the test NIC up; t_up is the uptime right before (the
# held messages flooding in right after can delay a later reading by a
# second on one emulated vCPU).
nic_up_now() {
	t_up=$(cut -d' ' -f1 /proc/uptime)
	ip link set "$RDS_IFACE" up
}
