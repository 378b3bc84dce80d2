#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-debug.sh [--series 6.12|6.1] [--plan all|quick|rdma|faults|TOPO:FILE]
#                [--scale N] [--no-neg]
#
# The VM suites on a debug kernel (tools/testing/debug-kernel.sh: KASAN,
# lockdep, kmemleak, UBSAN, DEBUG_LIST/OBJECTS, fault injection), built
# once per machine.  Every plan runs with the harness's time scale (the
# debug kernel is 15-30 times slower under TCG: timeouts, not loads,
# stretch), and kmemleak is read with the module loaded and after its
# unload.  Any KASAN/UBSAN/lockdep/DEBUG_OBJECTS/"Bad page" line fails
# the test it came in (run-tests' kernel log check).  Ends with
# "N passed, N failed, N skipped" over every plan.  Plans: all (every
# suite), quick (the crash shape and kmemleak), rdma (the RDMA tests of
# the two-host suite), faults (allocation failures injected under load:
# fault_alloc, the last plan of "all"), or one plan file with its topology
# (two:FILE or one:FILE).
# --no-neg leaves out the oracles' negative controls (a verdict on one
# change, not on the oracles).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
series=6.12 plan=all scale=${RDS_DEBUG_SCALE:-12} neg=1
while [ $# -gt 0 ]; do
	case "$1" in
	--series) series=$2; shift ;;
	--plan) plan=$2; shift ;;
	--scale) scale=$2; shift ;;
	--no-neg) neg=0 ;;
	*) echo "check-debug: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

t0=$(date +%s)
kver=$(tools/testing/debug-kernel.sh "$series") || exit 1
echo "# debug kernel $kver, time scale $scale"
tools/testing/build-module.sh "$kver" || exit 1
make -s -C tools/rds-stress || exit 1
make -s -C tools/testing/selftests || exit 1
make -s -C tools/testing/peer || exit 1

res=$top/build/results/debug-$series-$(date +%Y%m%d-%H%M%S)
mkdir -p "$res"
quick=$res/quick.tests
printf '%s\n' "load 60" "rxe 60" "ib_smoke 200" "stress_4k 600" \
	"kmemleak 600" "unload 120" "kmemleak_final 600" > "$quick"
rdma=$res/rdma.tests
printf '%s\n' "load 60" "rxe 60" "ib_rdma_fault_test 600" "ib_rdma_test 900" \
	"ib_rdma_file_test 300" "kmemleak 600" "unload 120" \
	"kmemleak_final 600" > "$rdma"
faults=$res/faults.tests
printf '%s\n' "load 60" "rxe 60" "fault_alloc 900 allocfail" "kmemleak 600" \
	"unload 120" "kmemleak_final 600" > "$faults"
sel=tools/testing/selftests
vm=tools/testing/vm
case "$plan" in
quick) plans=("two:$quick") ;;
rdma) plans=("two:$rdma") ;;
faults) plans=("two:$faults") ;;
one:*|two:*)
	[ -s "${plan#*:}" ] || { echo "check-debug: no plan ${plan#*:}" >&2; exit 2; }
	plans=("$plan") ;;
all) plans=("one:$sel/one-host.tests" "two:$sel/two-host.tests"
	    "two:$vm/wire-peer.tests" "two:$vm/rdma-stress.tests"
	    "two:$vm/rds-stress.tests" "two:$quick" "two:$faults") ;;
*) echo "check-debug: --plan all, quick, rdma, faults or TOPO:FILE" >&2; exit 2 ;;
esac

pass=0 fail=0 skip=0 i=0
# tally LOG: add LOG's last "N passed, N failed, N skipped" to the counts.
tally() {
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	[ -n "$line" ] || return 1
	read -r p_ _ f_ _ s_ _ <<< "${line//,/}"
	pass=$((pass + p_)) fail=$((fail + f_)) skip=$((skip + ${s_:-0}))
}
for p in "${plans[@]}"; do
	topo=${p%%:*} file=${p#*:}
	i=$((i + 1))
	# The module's kmemleak checks go at the end of every plan that
	# loads it (before and after the unload).
	if grep -q '^unload ' "$file" && ! grep -q '^kmemleak ' "$file"; then
		sed 's/^unload \(.*\)/kmemleak 600\nunload \1\nkmemleak_final 600/' \
			"$file" > "$res/plan$i.tests"
	else
		cp "$file" "$res/plan$i.tests"
	fi
	echo "# plan $i: $file ($topo)"
	tools/testing/vm/run-tests --no-build --kver "$kver" --topology "$topo" \
		--time-scale "$scale" --mem 1536 --plan "$res/plan$i.tests" \
		--results "$res/run$i" 2>&1 | tee "$res/run$i.log" |
		grep -E '^(not ok|ok|#   )' | sed "s/^/[plan $i] /"
	if ! tally "$res/run$i.log"; then
		echo "not ok plan $i: the harness printed no result line"
		fail=$((fail + 1))
	fi
done
# The negative controls of the debug oracles: a use-after-free, a leaked
# object, a lock-order inversion; each must fail on its oracle.
if [ "$neg" = 1 ]; then
	tools/testing/neg-controls.sh --debug --kver "$kver" --time-scale "$scale" \
		> "$res/neg-controls.log" 2>&1
	grep -E '^(not )?ok ' "$res/neg-controls.log" | sed 's/^/[neg] /'
	if ! tally "$res/neg-controls.log"; then
		echo "not ok negative controls: no result line ($res/neg-controls.log)"
		fail=$((fail + 1))
	fi
fi
echo "# results in $res, $(( $(date +%s) - t0 )) s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
