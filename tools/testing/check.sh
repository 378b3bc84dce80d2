#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh: everything "make check" runs, as one TAP stream ending with
# "N passed, N failed, N skipped".
#
#   1. dependencies (apt-get, only what is missing)
#   2. user-space unit tests (ASan/UBSan), one result per test program,
#      on one core beside the builds of 3-4
#   3. the module built against every installed kernel series, no warnings
#   4. sparse (C=2), no report; checkpatch, no report; dkms.conf and the
#      modprobe configuration agree with the module (version-check.sh);
#      the manuals render and name what the code has (doc-check.sh)
#   5. the VM selftests: the one-host suite of every series (two side by
#      side); one two-host boot per series: on the default series the
#      two-host suite whole, the wire peer's tests (conformance, hostile
#      input, a 30 s fuzz run), rds-stress -D (RDMA) over ours,
#      rds-stress over the kernel's own RDS with the mixed pairs and the
#      short fault form; on the others the two-host suite without its
#      default-series tests and the mixed pairs
#   6. negative controls (two side by side): the harness must fail a
#      failing test, a guest that
#      WARNs, a guest that hangs, a splat after a test ended, a crash and
#      a WARN after the last result, and the main job without IB, and name
#      the test each time; and count a skip inside a test as a skip, with
#      its reason; and the oracles' negative controls (neg-controls.sh
#      --cheap): a lost, a duplicated message, leaked pages
#
# Options: --kver K       the series whose VMs run the negative controls
#          --vm-kvers "A B" the series to run the VM selftests on
#                        (default: every installed series)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

kver=
vm_kvers=
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=$2; shift ;;
	--vm-kvers) vm_kvers=$2; shift ;;
	*) echo "check.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

n=0 pass=0 fail=0 skip=0 retries=0
skips=()
# Runs in the background (unit tests, VM runs side by side) end with this
# script, also when it is stopped (a CI timeout).
# (run-tests stops its guests on SIGTERM.)
trap 'for j in $(jobs -p); do pkill -TERM -P "$j"; kill "$j"; done 2> /dev/null' EXIT
trap 'exit 143' TERM INT
t_start=$(date +%s)
logs=$top/build/check
rm -rf "$logs"
mkdir -p "$logs"

result() {	# result ok|fail|skip NAME [LOG | WHY (skip)]
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); echo "ok $n $2" ;;
	skip)
		skip=$((skip + 1))
		echo "ok $n $2 # SKIP ${3:-}"
		skips+=("$2: ${3:-no reason given}")
		;;
	*)
		fail=$((fail + 1))
		echo "not ok $n $2"
		if [ -n "${3:-}" ] && [ -e "$3" ]; then
			tail -n 40 "$3" | sed 's/^/#   /'
			echo "#   full log: $3"
		fi
		;;
	esac
}

step() {	# step NAME CMD...: run CMD, its output to a log
	local name=$1 log t0
	shift
	log=$logs/$(echo "$name" | tr ' /' '__').log
	t0=$(date +%s)
	if "$@" > "$log" 2>&1; then
		result ok "$name ($(( $(date +%s) - t0 )) s)"
	else
		result fail "$name" "$log"
	fi
}

finish() {
	local s
	for s in "${skips[@]}"; do
		echo "# skipped: $s"
	done
	# Every retry a test made (run-tests lists each as "# retried: ...").
	echo "# retries: $retries"
	echo "# total time $(( $(date +%s) - t_start )) s"
	echo "1..$n"
	echo "$pass passed, $fail failed, $skip skipped"
	[ $fail -eq 0 ]
	exit
}

echo "TAP version 13"

# 1. Dependencies: without them nothing else can run.
step "dependencies installed" tools/testing/deps.sh
[ $fail -eq 0 ] || finish

[ -n "$kver" ] || kver=$(tools/testing/kver.sh)
[ -n "$vm_kvers" ] || vm_kvers=$(tools/testing/kver.sh --all)
echo "# kernels: $(echo $vm_kvers), default $kver"

# 2. Unit tests, run on one core while the module builds of 3-4 take the
# other (their results follow the builds').
if step "unit tests build" make -C tools/testing/unit all; then :; fi
units=()
for t in build/unit/*_test; do
	[ -x "$t" ] && units+=("$t")
done
(
	for t in "${units[@]}"; do
		t0=$(date +%s)
		"$t" > "$logs/unit_$(basename "$t").log" 2>&1
		echo "$? $(( $(date +%s) - t0 ))" > "$logs/unit_$(basename "$t").rc"
	done
) &
units_pid=$!

# 3-4. Builds, sparse, checkpatch.
for k in $(tools/testing/kver.sh --all); do
	step "build against $k (W=1, no warnings)" \
		env BUILD_CLEAN=1 tools/testing/build-module.sh "$k"
done
step "sparse C=2 against $kver (no reports)" \
	env BUILD_CLEAN=1 tools/testing/build-module.sh "$kver" C=2
step "checkpatch (no reports)" tools/testing/checkpatch.sh
step "packaging: dkms.conf and rds-ib.conf agree with net/main.c" \
	tools/testing/version-check.sh
step "manuals: render without warnings, name every parameter, sysctl, counter, option" \
	tools/testing/doc-check.sh
wait $units_pid
for t in "${units[@]}"; do
	rc=missing secs=
	read -r rc secs < "$logs/unit_$(basename "$t").rc"
	if [ "$rc" = 0 ]; then
		result ok "unit/$(basename "$t") ($secs s)"
	else
		result fail "unit/$(basename "$t") (exit $rc)" \
			"$logs/unit_$(basename "$t").log"
	fi
done
step "selftests build" make -C tools/testing/selftests
step "test peer build (librdmacm)" make -C tools/testing/peer
step "rds-stress build and host checks (UDP shim)" make -C tools/rds-stress check
step "kernel-log verdict on fixtures (lockdep of the kernel's rds_rdma, markers, allocfail)" \
	tools/testing/vm/klog-check.sh

# 5. VM selftests, renumbered into this stream (see the top).
# plan_tests FLAG FILE...: how many tests the plans list (run-tests'
# reading: one a line, "#" starts a comment), leaving out those that carry
# FLAG (none if FLAG is empty).
plan_tests() {
	local drop=$1
	shift
	sed 's/#.*//' "$@" | awk -v f="$drop" '
		NF { for (i = 3; i <= NF; i++) if ($i == f) next; n++ }
		END { print n + 0 }'
}

vm_base() {	# vm_base LABEL: the path (without suffix) of LABEL's files
	echo "$logs/vm-$(echo "$1" | tr ' /' '__')"
}

# vm_run LABEL RUN-TESTS-ARGS...: one harness run, its console to LABEL's
# .log, its exit status to .rc, its counts to .json, its files to .results
# (a directory of its own: two runs started in the same second would share
# run-tests' default one).
vm_run() {
	local base
	base=$(vm_base "$1")
	shift
	rm -rf "$base.json" "$base.rc" "$base.results"
	tools/testing/vm/run-tests --no-build --summary "$base.json" \
		--results "$base.results" "$@" > "$base.log" 2>&1
	echo $? > "$base.rc"
}

# vm_report LABEL "PLAN FILES" [FLAG]: the run's console (but its result
# lines), then its results renumbered into this stream; FLAG: the run left
# out the plans' tests that carry it (--drop-flag).
vm_report() {
	local label=$1 plans=$2 drop=${3:-} base summary res line rc want got
	local fails_before=$fail
	base=$(vm_base "$label")
	summary=$base.json
	grep -Ev '^(ok |not ok |[0-9]+ passed, |1\.\.|# skipped: |# retried: |# [0-9]+ retries)' "$base.log"
	rc=$(cat "$base.rc" 2>/dev/null || echo missing)
	# Results are taken from the harness's own report, not from the
	# console stream: a missing summary is a failure.
	if [ ! -s "$summary" ]; then
		result fail "$label: the harness produced no summary (exit $rc)" \
			"$base.log"
		return
	fi
	res=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"])' "$summary")
	retries=$((retries + $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("retries", 0))' "$summary")))
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*)
			line=$(echo "$line" | cut -d' ' -f3-)
			result skip "$label: ${line%% # SKIP*}" \
				"$(echo "${line#* # SKIP}" | sed 's/^ *//')"
			;;
		"ok "*) result ok "$label: $(echo "$line" | cut -d' ' -f3-)" ;;
		"not ok "*) result fail "$label: $(echo "$line" | cut -d' ' -f4-)" ;;
		"#"*) echo "$line" ;;
		esac
	done < "$res/report.tap"
	# Every test of the plans has its result: a plan renamed, emptied or
	# cut short fails here, not in silence.
	want=$(plan_tests "$drop" $plans)
	got=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["planned"], s["reported"])' "$summary")
	if [ "$got" != "$want $want" ]; then
		result fail "$label: planned and reported '$got', the plans ($plans) have $want tests${drop:+ without $drop}"
	fi
	if [ "$rc" != 0 ] && [ $fail = "$fails_before" ]; then
		result fail "$label: run-tests exited $rc"
	fi
}

st=tools/testing/selftests
# The one-host suites of every series, two at a time: a one-host guest
# takes one host CPU (its two vCPUs share one thread: thread=single TCG
# before QEMU 8.1, see run-tests), so two fill a two-core machine.  With
# KVM or a newer QEMU a guest runs a thread per vCPU: then one at a time.
# (The two-host guests take one core each: those runs go one by one.)
lanes=1
[ "$(tools/testing/vm/run-tests --no-build --kver "$kver" --host-threads \
     2> /dev/null)" = 1 ] && lanes=2
echo "# one-host runs side by side: $lanes"
pids=()
for k in $vm_kvers; do
	if [ ${#pids[@]} -ge "$lanes" ]; then
		wait "${pids[0]}"
		pids=("${pids[@]:1}")
	fi
	vm_run "vm $k one-host" --kver "$k" --topology one &
	pids+=($!)
done
wait
for k in $vm_kvers; do
	vm_report "vm $k one-host" "$st/one-host.tests"
done
# The two-host runs, one boot per series (booting two guests and setting
# up rxe costs about a minute each time): on the default series the
# two-host suite whole, then the wire peer's tests (they speak to our
# module from user space over librdmacm: our protocol code, the same on
# every series; make wire-peer KVER=... runs them on another), rds-stress
# -D (RDMA) over ours, rds-stress over the kernel's own RDS with the mixed
# pairs, and the short fault form last (each list leaves no RDS module
# loaded behind it).  On the other series the two-host suite without its
# tests flagged default-series (protocol logic, the main job and the
# harness, the same on every series: see two-host.tests), and the mixed
# pairs (the kernel's RDS differs by series).  Without the default series
# among them, the first runs the default one's lists.
full=$kver
case " $(echo $vm_kvers) " in
*" $kver "*) ;;
*) full=$(echo $vm_kvers | cut -d' ' -f1) ;;
esac
vm=tools/testing/vm
for k in $vm_kvers; do
	if [ "$k" = "$full" ]; then
		plans="$st/two-host.tests $vm/wire-peer.tests $vm/rdma-stress.tests"
		plans="$plans $vm/rds-stress.tests $vm/faults-short.tests"
		drop=
	else
		plans="$st/two-host.tests $vm/mainline-pair.tests"
		drop=default-series
	fi
	args=()
	for p in $plans; do
		args+=(--plan "$p")
	done
	vm_run "vm $k two-host" --kver "$k" --topology two \
		${drop:+--drop-flag $drop} "${args[@]}"
	vm_report "vm $k two-host" "$plans" $drop
done

# 6. Negative controls: each run must end as its line says (exit status,
# the final counts, a line of its report).  They are one-host runs: two
# lanes of them run side by side (one core each), then each is judged.
neg_run() {	# neg_run NAME...: the runs, one after another
	local name
	for name in "$@"; do
		tools/testing/vm/run-tests --kver "$kver" --no-build \
			--results "$logs/negative.results" --negative "$name" \
			> "$logs/negative-$name.log" 2>&1
		echo $? > "$logs/negative-$name.rc"
	done
}
if [ "$lanes" = 2 ]; then
	neg_run fail hang crash skip allocfail &
	neg_lane=$!
	neg_run warn late between noib
	wait $neg_lane
else
	neg_run fail hang crash skip allocfail warn late between noib
fi
negative() {	# negative NAME RC COUNTS REPORT-ERE WHAT
	local log=$logs/negative-$1.log rc
	rc=$(cat "$logs/negative-$1.rc" 2>/dev/null)
	if [ "$rc" = "$2" ] && grep -q "^$3\$" "$log" && grep -Eq "$4" "$log"; then
		result ok "negative control: $5"
	else
		result fail "negative control: $5 (exit $rc)" "$log"
	fi
}
negative fail 1 "0 passed, 1 failed, 0 skipped" '^not ok .*neg_fail' \
	"harness fails and names neg_fail"
negative warn 1 "0 passed, 1 failed, 0 skipped" '^not ok .*neg_warn' \
	"harness fails and names neg_warn"
negative hang 1 "0 passed, 1 failed, 0 skipped" '^not ok .*neg_hang' \
	"harness fails and names neg_hang"
negative late 1 "1 passed, 1 failed, 0 skipped" \
	'^not ok .*/after-neg_late$' \
	"a WARN after the last result fails the run as after-neg_late"
negative crash 1 "1 passed, 1 failed, 0 skipped" \
	'^not ok .*/after-neg_crash$' \
	"a guest that crashes after the last result fails the run as after-neg_crash"
negative between 1 "[0-2] passed, [12] failed, 0 skipped" \
	'^not ok .*/((after-)?neg_between|neg_idle)$' \
	"a hung-task report (no panic) after neg_between's end fails the run"
negative skip 0 "1 passed, 0 failed, 1 skipped" \
	'^# skipped: one/neg_skip: global.skips: no such device' \
	"a skip inside a test is counted and listed with its reason"
negative skip 0 "1 passed, 0 failed, 1 skipped" \
	'^# retried: one/neg_skip: connection refused \(negative control\)' \
	"a retry inside a test is counted and listed with its reason"
negative noib 1 "0 passed, 1 failed, 0 skipped" \
	'not ok .*our module takes 10.0.0.1 over IB' \
	"the main job fails when our module does not take the address"
negative allocfail 1 "1 passed, 1 failed, 0 skipped" '^not ok .*neg_allocfail' \
	"under the plan flag allocfail an allocation-failure dump passes and a WARNING still fails"

# The oracles' cheap negative controls (neg-controls.sh): a module that
# loses a message, one that duplicates one, one that leaks pages, one
# that destroys a QP before its receive completions were handled, one
# that frees a connection with work pending; each run must fail on its
# oracle (the verifier, the unload page check, the guest's oops in
# ib_rx_stale, in ib_unload_race).
log=$logs/neg-controls.log
tools/testing/neg-controls.sh --kver "$kver" --cheap > "$log" 2>&1
grep -Eq '^(not )?ok ' "$log" || result fail "negative controls of the oracles" "$log"
while read -r line; do
	case $line in
	"ok "*) result ok "${line#ok * }" ;;
	*) result fail "${line#not ok * }" "$log" ;;
	esac
done < <(grep -E '^(not )?ok ' "$log")

finish
