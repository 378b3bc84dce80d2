# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The fault matrix (tools/testing/vm/faults.tests): a verifying rds-stress
# load between the two hosts with a fault injected in the middle.  Sourced
# by the fault_*.sh tests after lib.sh.
#
# Host 1 runs the passive side, host 2 the active side:
#
#   host 1: rds-stress -r 10.0.0.1 -p 4000
#   host 2: rds-stress -r 10.0.0.2 -s 10.0.0.1 -p 4000 -t 2 -d 4 -T SECS
#           --connect-retries 30
#
# fault_case NAME SECS AT HOLD WHERE INJECT RESTORE: AT seconds after the
# active side started, INJECT runs (on host 2, or on both hosts when WHERE
# is "all"), HOLD seconds later RESTORE; the fault ends when RESTORE has
# returned on host 2.  Then it checks:
#   - both rds-stress exit 0: every message arrived exactly once, in order,
#     intact (rds-stress verifies each one and compares counts at the end);
#   - the summaries agree: requests and acks sent = received, both ways;
#   - traffic resumed: the recovery time is from the end of the fault to
#     the first per-second line of the active side with tx/s > 0 (lines
#     are stamped as they arrive, so the resolution is about a second);
# and prints
#   # fault NAME: sent N, received N, lost 0, dup 0, recovery X.Y s
# (messages, requests and acks, both ways), then how long injecting and
# restoring took, the seconds with tx/s = 0, resets and connects on each
# host and the rxe counters that moved.
# A WARN or any splat fails the test in the harness (panic_on_warn and the
# kernel log check of guest.sh).  Everything is kept in
# $RDS_OUT/$RDS_TEST.d/ (per-second lines stamped with the guest's clock,
# JSON summaries, the kernel log of each case).

FAULT_STRESS=$RDS_BUILD/rds-stress/rds-stress
FAULT_PORT=${FAULT_PORT:-4000}
FAULT_TASKS=${FAULT_TASKS:-2}
FAULT_DEPTH=${FAULT_DEPTH:-4}
FAULT_DIR=$RDS_OUT/$RDS_TEST.d
FAULT_XCHG=$RDS_SHARED/$RDS_TEST.x	# what host 1 hands to host 2
FAULT_KO=/tmp/fault-rds.ko		# the build every fault test reloads
mkdir -p "$FAULT_DIR" "$FAULT_XCHG"

# The restore command of the fault in force, run on exit if the test ends
# (failure, timeout) before it did.
__fault_restore=""
__fault_cleanup() {
	if [ -n "$__fault_restore" ]; then
		echo "# cleanup: $__fault_restore"
		$__fault_restore
		__fault_restore=""
	fi
}
trap __fault_cleanup EXIT
trap '__fault_cleanup; exit 1' TERM INT

# fault_init: our module and rds-stress are there; the module is reloaded
# on both hosts so that each fault test starts with no connection (a test
# that wedged the connection does not fail the next ones).  Returns 1
# (after a failed TAP line) when the test cannot go on.
fault_init() {
	if ! rds_loaded; then
		ksft_fail "rds loaded" "run the load test first"
		return 1
	fi
	if [ ! -x "$FAULT_STRESS" ]; then
		ksft_fail "rds-stress is built" "make -C tools/rds-stress"
		return 1
	fi
	# One build for the whole run: the first fault test keeps a copy of
	# rds.ko (the tree may be rebuilt while the guests run).
	if [ ! -e "$FAULT_KO" ]; then
		cp "$RDS_KO" "$FAULT_KO" || { ksft_fail "copy rds.ko"; return 1; }
	fi
	echo "# rds.ko: sha256 $(sha256sum < "$FAULT_KO" | cut -c1-16) (copied at the first fault test from $RDS_KO)"
	barrier reload 120 || { ksft_fail "barrier reload"; return 1; }
	if ! timeout 60 rmmod rds || ! RDS_KO=$FAULT_KO rds_insmod; then
		ksft_fail "reload rds (fresh connections)"
		return 1
	fi
	barrier reloaded 120 || { ksft_fail "barrier reloaded"; return 1; }
	return 0
}

# Prefix every line with the time it arrived (the guest's clock, s.us).
__fault_stamp() {
	local l
	while IFS= read -r l; do
		printf '%s %s\n' "$EPOCHREALTIME" "$l"
	done
}

# __fault_json FILE: "tx_req rx_req tx_ack rx_ack result" from a summary.
__fault_json() {
	python3 - "$1" <<'PY' 2>/dev/null
import json, sys
try:
    j = json.load(open(sys.argv[1]))
    c = j["counts"]
    print(c["tx_req"], c["rx_req"], c["tx_ack"], c["rx_ack"], j["result"])
except Exception:
    print("- - - - missing")
PY
}

# __fault_recovery LOG T_END: seconds from T_END to the first per-second
# line stamped after it with tx/s > 0 (one decimal), or nothing.
__fault_recovery() {
	awk -v t="$2" 'NF == 10 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ &&
		$1 + 0 > t + 0 && $3 > 0 { printf "%.1f\n", $1 - t; exit }' "$1"
}

# __fault_stalled LOG T_START: per-second lines with tx/s = 0 after
# T_START, before traffic came back (how long the load stood still).
__fault_stalled() {
	awk -v t="$2" 'NF == 10 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ &&
		$1 + 0 > t + 0 { if ($3 == 0) { n++; seen = 1 }
				 else if (seen) exit }
		END { print n + 0 }' "$1"
}

# __fault_rxe_delta BEFORE AFTER: the rxe counters that moved
# ("name +N ...") between two "rdma statistic show link" outputs.
__fault_rxe_delta() {
	awk 'FNR == 1 { f++ }
	     { for (i = 3; i < NF; i += 2) v[f, $i] = $(i + 1); if (f == 2) for (i = 3; i < NF; i += 2) k[$i] = 1 }
	     END { for (n in k) if (v[2, n] != v[1, n]) printf "%s +%d ", n, v[2, n] - v[1, n]; print "" }' "$1" "$2" 2>/dev/null
}

# __fault_disrupted NAME STALLED RESETS PASSIVE_COUNTERS RXE_DELTAS: a
# case whose fault did not disturb the load proves nothing, so it fails
# unless the load stood still for a second or more, a connection reset on
# either host, or RoCE repaired the link itself (rxe's retransmission and
# sequence counters on either host moved: netem's loss, duplicates).
__fault_disrupted() {
	local name=$1 stalled=$2 resets=$3 p_resets repair
	p_resets=$(sed -n 's/^resets +\([0-9]*\),.*/\1/p' "$4" 2>/dev/null)
	repair=$(echo "$5" | grep -oE '(rcvd_seq_err|duplicate_request|out_of_seq_request|retry_exceeded_err|retry_rnr_exceeded_err|completer_retry_err|rcvd_rnr_err|send_rnr_err|link_downed|send_err) \+[0-9]+' |
		 tr '\n' ' ')
	if [ "${stalled:-0}" -gt 0 ] || [ "${resets:-0}" -gt 0 ] ||
	   [ "${p_resets:-0}" -gt 0 ] || [ -n "$repair" ]; then
		ksft_ok "fault $name: the fault disrupted the load (tx/s 0 for ${stalled:-0} s, resets +${resets:-0} and +${p_resets:-0}, rxe repair: ${repair:-none})"
	else
		ksft_fail "fault $name: the fault disrupted the load" \
			"no stall, no reset, no rxe repair counter moved"
	fi
}

# __fault_evidence: what the kernel and the module say (after a failure).
__fault_evidence() {
	local from=$1
	echo "# ib_counters: $(cat /sys/module/rds/parameters/ib_counters 2>/dev/null)"
	echo "# ib_handshakes: $(cat /sys/module/rds/parameters/ib_handshakes 2>/dev/null)"
	echo "# rdma link: $(rdma link show 2>&1 | tr '\n' ' ')"
	echo "# queue pairs (rdma res show qp):"
	rdma res show qp 2>&1 | sed 's/^/#   /'
	echo "# rxe counters (non-zero):"
	rdma statistic show link "$RDS_RXE/1" 2>&1 | tr ' ' '\n' |
		paste - - | awk '$2 != 0' | tr '\n' ' ' | sed 's/^/#   /'
	echo
	echo "# kernel log since the case started:"
	dmesg | tail -n +"$((from + 1))" | tail -60 | sed 's/^/#   /'
}

# __fault_gsi NAME: rxe moves the GSI queue pair (QP1, which carries every
# connection manager MAD) to the error state for good when it is asked to
# send a packet it has no route for, and ib_core never recovers it: every
# connection attempt through the device then times out.  A real HCA does
# not do this, and our module avoids the known trigger (it sends no DREQ or
# REJ while the port is down), so a dead QP1 after a case fails the case
# with this diagnosis; the device is then re-created so that the next case
# starts on a working one.
__fault_gsi() {
	local name=$1
	if rdma res show qp 2>/dev/null | grep 'type GSI' | grep -q 'state ERR'; then
		ksft_fail "fault $name: $RDS_RXE's GSI queue pair alive (host $RDS_HOST)" \
			"in the error state (rxe): re-creating $RDS_RXE"
		rdma link delete "$RDS_RXE"
		rdma link add "$RDS_RXE" type rxe netdev "$RDS_IFACE"
		wait_for 30 bash -c "rdma link show '$RDS_RXE/1' 2>/dev/null | grep -q 'state ACTIVE'"
	else
		ksft_ok "fault $name: $RDS_RXE's GSI queue pair alive (host $RDS_HOST)"
	fi
}

# fault_case NAME SECS AT HOLD WHERE INJECT RESTORE (see the top).
fault_case() {
	local name=$1 secs=$2 at=$3 hold=$4 where=$5 inject=$6 restore=$7
	local d=$FAULT_DIR/$name x=$FAULT_XCHG/$name pid rc prc
	local t_start t_inj t_rst t_end rec stalled klog inj=0 bar_tmo
	local r0 c0 r1 c1 sent recv lost dup pair s g
	local a_txq a_rxq a_txa a_rxa a_res p_txq p_rxq p_txa p_rxa p_res
	mkdir -p "$d" "$x"
	# FAULT_INJECT_SECS: how long INJECT itself may take (the soak).
	bar_tmo=$((at + hold + 90 + ${FAULT_INJECT_SECS:-0}))
	klog=$(dmesg | wc -l)
	r0=$(ib_counter resets)
	c0=$(ib_counter connects)
	rdma statistic show link "$RDS_RXE/1" > "$d/rxe-stats.before" 2>&1

	if [ "$RDS_HOST" = 1 ]; then
		( timeout -k 5 $((secs + 150)) "$FAULT_STRESS" -r "$RDS_ADDR" \
			-p "$FAULT_PORT" --json "$x/passive.json" 2>&1
		  echo $? > "$d/rc" ) | __fault_stamp > "$d/passive.log" &
		pid=$!
		barrier "$name.up" 60 || ksft_fail "fault $name: barrier up"
	else
		barrier "$name.up" 60 || ksft_fail "fault $name: barrier up"
		echo "# fault $name: rds-stress -r $RDS_ADDR -s $RDS_PEER -p $FAULT_PORT -t $FAULT_TASKS -d $FAULT_DEPTH -T $secs; $inject at ${at}s, $restore ${hold}s later${where:+ (on ${where/all/both hosts})}"
		( timeout -k 5 $((secs + 150)) "$FAULT_STRESS" -r "$RDS_ADDR" \
			-s "$RDS_PEER" -p "$FAULT_PORT" -t "$FAULT_TASKS" \
			-d "$FAULT_DEPTH" -T "$secs" --connect-retries 30 \
			--json "$d/active.json" 2>&1
		  echo $? > "$d/rc" ) | __fault_stamp > "$d/active.log" &
		pid=$!
	fi
	barrier "$name.go" 60 || ksft_fail "fault $name: barrier go"

	if [ "$RDS_HOST" = 2 ] || [ "$where" = all ]; then
		sleep "$at"
		t_start=$EPOCHREALTIME
		__fault_restore=$restore
		if $inject; then
			inj=1
		else
			ksft_fail "fault $name: inject ($inject)"
		fi
		t_inj=$EPOCHREALTIME
		sleep "$hold"
		t_rst=$EPOCHREALTIME
		if $restore; then
			__fault_restore=""
		else
			ksft_fail "fault $name: restore ($restore)"
		fi
		# The end of the fault as this host saw it: not after the
		# barrier below, which can take a second or two on TCG.
		t_end=$EPOCHREALTIME
		echo "inject $t_start $t_inj restore $t_rst $t_end" > "$d/times"
		[ $inj = 1 ] && [ -z "$__fault_restore" ] &&
			ksft_ok "fault $name: injected and restored (host $RDS_HOST)"
	fi
	barrier "$name.restored" "$bar_tmo" ||
		ksft_fail "fault $name: barrier restored"
	t_end=${t_end:-$EPOCHREALTIME}

	wait "$pid"
	rc=$(cat "$d/rc" 2>/dev/null || echo none)
	r1=$(ib_counter resets)
	c1=$(ib_counter connects)
	dmesg | tail -n +"$((klog + 1))" > "$d/dmesg.txt"
	rdma statistic show link "$RDS_RXE/1" > "$d/rxe-stats.after" 2>&1
	rdma res show qp > "$d/qp.after" 2>&1
	cat /sys/module/rds/parameters/ib_counters > "$d/ib_counters.after"

	if [ "$RDS_HOST" = 1 ]; then
		echo "$rc" > "$x/passive.rc"
		echo "resets +$((r1 - r0)), connects +$((c1 - c0))" > "$x/passive.counters"
		__fault_rxe_delta "$d/rxe-stats.before" "$d/rxe-stats.after" > "$x/passive.rxe"
		if [ "$rc" = 0 ]; then
			ksft_ok "fault $name: passive rds-stress exits 0"
		else
			ksft_fail "fault $name: passive rds-stress exits 0" "exit $rc"
			grep -v '^[0-9.]\+ \+[0-9]\+ \+[0-9]\+ \+[0-9]\+ ' "$d/passive.log" |
				sed 's/^/# passive: /'
			__fault_evidence "$klog"
		fi
		barrier "$name.end" 120 || ksft_fail "fault $name: barrier end"
		__fault_gsi "$name"
		return
	fi

	barrier "$name.end" 120 || ksft_fail "fault $name: barrier end"
	prc=$(cat "$x/passive.rc" 2>/dev/null || echo none)
	read -r a_txq a_rxq a_txa a_rxa a_res < <(__fault_json "$d/active.json")
	read -r p_txq p_rxq p_txa p_rxa p_res < <(__fault_json "$x/passive.json")
	cp "$x/passive.json" "$d/" 2>/dev/null
	if [ "$a_res" = missing ] || [ "$p_res" = missing ]; then
		sent=- recv=- lost=- dup=-
	else
		# Every message both ways: requests and the acks answering them.
		sent=$((a_txq + a_txa + p_txq + p_txa))
		recv=$((a_rxq + a_rxa + p_rxq + p_rxa))
		lost=0 dup=0
		for pair in "$a_txq $p_rxq" "$a_txa $p_rxa" "$p_txq $a_rxq" \
			    "$p_txa $a_rxa"; do
			read -r s g <<< "$pair"
			[ "$s" -gt "$g" ] && lost=$((lost + s - g))
			[ "$g" -gt "$s" ] && dup=$((dup + g - s))
		done
	fi
	rec=$(__fault_recovery "$d/active.log" "$t_end")
	stalled=$(__fault_stalled "$d/active.log" "$t_start")
	echo "# fault $name: sent $sent, received $recv, lost $lost, dup $dup, recovery ${rec:-none} s"
	echo "# fault $name: active $a_res (exit $rc): requests sent $a_txq, received $a_rxq, acks sent $a_txa, received $a_rxa; passive $p_res (exit $prc): requests sent $p_txq, received $p_rxq, acks sent $p_txa, received $p_rxa"
	echo "# fault $name: injecting took $(awk '{ printf "%.1f", $3 - $2 }' "$d/times") s, restoring $(awk '{ printf "%.1f", $6 - $5 }' "$d/times") s (host 2)"
	echo "# fault $name: tx/s 0 for $stalled one-second lines; host 2: resets +$((r1 - r0)), connects +$((c1 - c0)); host 1: $(cat "$x/passive.counters" 2>/dev/null)"
	echo "# fault $name: rxe counters that moved on host 2: $(__fault_rxe_delta "$d/rxe-stats.before" "$d/rxe-stats.after")"
	echo "# fault $name: rxe counters that moved on host 1: $(cat "$x/passive.rxe" 2>/dev/null)"
	grep -E 'rds: |rdma_rxe|rxe0' "$d/dmesg.txt" | head -20 | sed 's/^/# host 2 kernel: /'

	if [ "$rc" = 0 ]; then
		ksft_ok "fault $name: active rds-stress exits 0 (verified)"
	else
		ksft_fail "fault $name: active rds-stress exits 0 (verified)" "exit $rc"
		grep -v '^[0-9.]\+ \+[0-9]\+ \+[0-9]\+ \+[0-9]\+ ' "$d/active.log" |
			sed 's/^/# active: /'
		[ "$rc" = 124 ] && echo w > /proc/sysrq-trigger
		__fault_evidence "$klog"
	fi
	check "fault $name: passive side exits 0 (host 1)" test "$prc" = 0
	check "fault $name: counts agree (sent = received, both ways)" \
		test "$lost" = 0 -a "$dup" = 0
	__fault_disrupted "$name" "$stalled" $((r1 - r0)) "$x/passive.counters" \
		"$(__fault_rxe_delta "$d/rxe-stats.before" "$d/rxe-stats.after") $(cat "$x/passive.rxe" 2>/dev/null)"
	if [ -n "$rec" ]; then
		ksft_ok "fault $name: traffic resumed after the fault (${rec} s)"
	else
		ksft_fail "fault $name: traffic resumed after the fault" \
			"no per-second line with tx/s > 0 after the fault ended"
		sed 's/^/# active: /' "$d/active.log" | tail -40
		__fault_evidence "$klog"
	fi
	__fault_gsi "$name"
	# shellcheck disable=SC2034 # read by the tests (fault_linklong)
	FAULT_RESETS=$((r1 - r0))
}
