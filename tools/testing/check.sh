#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh: everything "make check" runs, as one TAP stream ending with
# "N passed, N failed, N skipped".
#
#   1. dependencies (apt-get, only what is missing)
#   2. user-space unit tests (ASan/UBSan), one result per test program
#   3. the module built against every installed kernel series, no warnings
#   4. sparse (C=2), no report; checkpatch, no report
#   5. the VM selftests (one-host and two-host topologies) and the wire
#      peer's tests (conformance, hostile input, a 30 s fuzz run) on every
#      series, rds-stress over the kernel's own RDS, and rds-stress -D
#      (RDMA) over ours
#   6. negative controls: the harness must fail a failing test, a guest that
#      WARNs and a guest that hangs, and name the test each time
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

n=0 pass=0 fail=0 skip=0
t_start=$(date +%s)
logs=$top/build/check
rm -rf "$logs"
mkdir -p "$logs"

result() {	# result ok|fail|skip NAME [LOG]
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); echo "ok $n $2" ;;
	skip) skip=$((skip + 1)); echo "ok $n $2 # SKIP" ;;
	*)
		fail=$((fail + 1))
		echo "not ok $n $2"
		if [ -n "${3:-}" ] && [ -e "$3" ]; then
			tail -n 25 "$3" | sed 's/^/#   /'
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

# 2. Unit tests.
if step "unit tests build" make -C tools/testing/unit all; then :; fi
for t in build/unit/*_test; do
	[ -x "$t" ] || continue
	step "unit/$(basename "$t")" "$t"
done

# 3-4. Builds, sparse, checkpatch.
for k in $(tools/testing/kver.sh --all); do
	step "build against $k (W=1, no warnings)" \
		env BUILD_CLEAN=1 tools/testing/build-module.sh "$k"
done
step "sparse C=2 against $kver (no reports)" \
	env BUILD_CLEAN=1 tools/testing/build-module.sh "$kver" C=2
step "checkpatch (no reports)" tools/testing/checkpatch.sh
step "selftests build" make -C tools/testing/selftests
step "test peer build (librdmacm)" make -C tools/testing/peer
step "rds-stress build and host checks (UDP shim)" make -C tools/rds-stress check

# 5. VM selftests, renumbered into this stream: both topologies on every
# kernel series, rds-stress over the kernel's own RDS and rds-stress -D
# (RDMA, the MR pool seed scenario, a link cut) over ours on the default.
vm_suite() {	# vm_suite LABEL RUN-TESTS-ARGS...
	local label=$1 summary res line
	shift
	summary=$logs/vm-$(echo "$label" | tr ' /' '__').json
	rm -f "$summary"
	tools/testing/vm/run-tests --no-build --summary "$summary" "$@" \
		2>&1 | while IFS= read -r line; do
		case "$line" in
		"ok "*|"not ok "*|[0-9]*" passed, "*|"1.."*) ;;
		*) echo "$line" ;;
		esac
	done
	# Results are taken from the harness's own report, not from the
	# console stream: a missing summary is a failure.
	if [ ! -s "$summary" ]; then
		result fail "$label: the harness produced no summary"
		return
	fi
	res=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"])' "$summary")
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*) result skip "$label: $(echo "$line" | cut -d' ' -f3-)" ;;
		"ok "*) result ok "$label: $(echo "$line" | cut -d' ' -f3-)" ;;
		"not ok "*) result fail "$label: $(echo "$line" | cut -d' ' -f4-)" ;;
		"#"*) echo "$line" ;;
		esac
	done < "$res/report.tap"
}

for k in $vm_kvers; do
	vm_suite "vm $k" --kver "$k"
	vm_suite "vm $k wire-peer" --kver "$k" --topology two \
		--plan tools/testing/vm/wire-peer.tests
done
vm_suite "vm $kver rds-stress/mainline" --kver "$kver" --topology two \
	--plan tools/testing/vm/rds-stress.tests
vm_suite "vm $kver rds-stress/rdma-ours" --kver "$kver" --topology two \
	--plan tools/testing/vm/rdma-stress.tests

# 6. Negative controls.
for neg in fail warn hang; do
	log=$logs/negative-$neg.log
	tools/testing/vm/run-tests --kver "$kver" --no-build --negative "$neg" \
		> "$log" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q "^not ok .*neg_$neg" "$log" &&
	   grep -q '^0 passed, 1 failed' "$log"; then
		result ok "negative control: harness fails and names neg_$neg"
	else
		result fail "negative control: harness fails and names neg_$neg (exit $rc)" "$log"
	fi
done

finish
