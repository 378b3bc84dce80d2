#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# neg-controls.sh [--kver K] [--cheap | --debug | --all] [--only KIND,...]
#                 [--time-scale N]
#
# Negative controls for the suite's oracles (issue 16, section 3): for
# each KIND, a module broken on purpose (net/neg.h; built by
# "NEG=KIND build-module.sh" in build/mod-neg-KIND-KVER/, never the
# shipped module) is loaded by the guests of a short plan
# (run-tests --moddir), and the run must fail AND the failure must name
# the oracle that caught it:
#
#   cheap (make check, the default kernel):
#     lost      a message dropped after it was acknowledged  -> stress_4k:
#               "not ok ... every message verified" (rds-stress's verifier)
#     dup       a message queued twice to its socket          -> the same
#     pageleak  a page leaked per message received            -> unload:
#               "not ok ... pages returned"
#     stalerx   a QP destroyed with receive completions of it still in
#               the shared CQ (issue 15, lead 3, as before its fix) ->
#               ib_rx_stale (two hosts): the CQ's handler reads the freed
#               QP: "Oops: general protection fault" (slub_debug's poison)
#               or, on a debug kernel, "BUG: KASAN: "
#     downwork  a connection freed with its i_down_work still pending
#               (issue 15, lead 5, as before its fix) -> ib_unload_race
#               (two hosts): the work's timer fires in freed memory: the
#               same oops, or "ODEBUG: free active" on a debug kernel
#   extra (only with --only; a test's own control, not an oracle's):
#     hbnow     the heartbeat declares a connection lost on its silence
#               alone -> ib_hb_change (two hosts): "not ok ... no
#               heartbeat loss"
#     hbidle    the heartbeat asks idle connections at heartbeat_ms too ->
#               ib_heartbeat (two hosts): "not ok ... nothing at stake:
#               no request"
#     hbtick    the heartbeat work runs every heartbeat_ms on every
#               connection up -> ib_heartbeat (two hosts): "not ok ...
#               the heartbeat work ran at most twice"
#     nohold    messages that come while our request's protocol is a
#               guess delivered at once -> ib_ml_upgrade (two hosts):
#               "not ok ... each of the 20 once"
#     halfopen  the attempt timeout ends our own requests only ->
#               ib_halfopen (two hosts): "not ok ... the half-open
#               attempt ended within"
#     idlecopy  the frame after which nothing can go is not signalled
#               for the packed frames' copies before it -> ib_pack (two
#               hosts): "not ok ... no packed frame's copy held once
#               idle"
#     congkeep  a peer's new generation keeps what we knew of its
#               congestion -> ib_cong_restart (two hosts): "not ok ...
#               takes a send within"
#     congearly a map that came before our request's handshake is
#               cleared by it (the tag before the fix) -> ib_cong_v6early
#               (two hosts): "not ok ... meets ENOBUFS"
#   debug (a -rdsdebug kernel of debug-kernel.sh; SKIP without one):
#     kasan     a use-after-free at load       -> "BUG: KASAN: "
#     kmemleak  an object leaked at load       -> kmemleak:
#               "not ok ... kmemleak: no object of the module leaked"
#     lockdep   a lock-order inversion at load -> "possible circular
#               locking dependency"
#
# --cheap (default): lost, dup, pageleak, stalerx, downwork on --kver
# (default kver.sh).
# --debug: kasan, kmemleak, lockdep on the newest /boot/vmlinuz-*-rdsdebug
# (--kver picks another one), time scale 12 unless --time-scale.
# --all: both.  One TAP line per control, then "N passed, N failed,
# N skipped"; the runs are under build/results/neg-controls-<time>/KIND.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
T=tools/testing

kver='' set=cheap only='' scale=''
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=$2; shift ;;
	--cheap) set=cheap ;;
	--debug) set=debug ;;
	--all) set=all ;;
	--only) only=$2; shift ;;
	--time-scale) scale=$2; shift ;;
	*) echo "neg-controls: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

cheap="lost dup pageleak stalerx downwork"
debug="kasan kmemleak lockdep"
extra="hbnow hbidle hbtick nohold halfopen idlecopy congkeep congearly"
case $set in
cheap) kinds=$cheap ;;
debug) kinds=$debug ;;
all) kinds="$cheap $debug" ;;
esac
if [ -n "$only" ]; then
	kinds=$(for k in ${only//,/ }; do
		case " $cheap $debug $extra " in
		*" $k "*) echo "$k" ;;
		*) echo "neg-controls: no control $k" >&2; exit 2 ;;
		esac
	done) || exit 2
fi

res=$top/build/results/neg-controls-$(date +%Y%m%d-%H%M%S)
mkdir -p "$res"
# Short plans: the load, and what the oracle needs.
# 15 s of load: lost and dup strike every 100th message, pageleak leaks
# a page a message (about 9000 of each in 15 s, against the unload
# check's 1% of MemTotal, about 2400 pages).
printf '%s\n' "load 60" "rxe 60" "stress_4k 600 STRESS_4K_SECS=15" "unload 120" \
	> "$res/cheap.tests"
printf '%s\n' "load 60" "kmemleak 600" "unload 120" > "$res/debug.tests"
# stalerx, downwork: the test that holds the defect's window open.
printf '%s\n' "load 60" "rxe 60" "ib_rx_stale 600" "unload 120" \
	> "$res/stalerx.tests"
printf '%s\n' "load 60" "rxe 60" "ib_unload_race 600" "unload 120" \
	> "$res/downwork.tests"
printf '%s\n' "load 60" "rxe 60" "ib_hb_change 180" "unload 120" \
	> "$res/hbnow.tests"
printf '%s\n' "load 60" "rxe 60" "ib_heartbeat 360" "unload 120" \
	> "$res/hbidle.tests"
printf '%s\n' "load 60" "rxe 60" "ib_heartbeat 360" "unload 120" \
	> "$res/hbtick.tests"
printf '%s\n' "rxe 60" "ib_ml_upgrade 600" > "$res/nohold.tests"
printf '%s\n' "load 60" "rxe 60" "ib_halfopen 300" "unload 60" \
	> "$res/halfopen.tests"
printf '%s\n' "load 60" "rxe 60" "ib_pack 600" "unload 60" \
	> "$res/idlecopy.tests"
printf '%s\n' "load 60" "rxe 60" "ib_cong_restart 300" "unload 60" \
	> "$res/congkeep.tests"
printf '%s\n' "load 60" "rxe 60" "ib_cong_v6early 300" "unload 60" \
	> "$res/congearly.tests"

n=0 pass=0 fail=0 skip=0
result() {	# result ok|fail|skip NAME [WHY]
	n=$((n + 1))
	case $1 in
	ok) pass=$((pass + 1)); echo "ok $n $2" ;;
	skip) skip=$((skip + 1)); echo "ok $n $2 # SKIP $3" ;;
	*) fail=$((fail + 1)); echo "not ok $n $2${3:+ # $3}" ;;
	esac
}

# The debug kernel: the newest -rdsdebug image, or --kver's.
debug_kver() {
	local k
	if [ -n "$kver" ]; then
		case $kver in *-rdsdebug) echo "$kver"; return 0 ;; esac
		return 1
	fi
	k=$(ls -t /boot/vmlinuz-*-rdsdebug 2>/dev/null | head -n 1)
	[ -n "$k" ] || return 1
	echo "${k#/boot/vmlinuz-}"
}
# (Before the default kernel is picked: --all's debug controls take the
# newest debug kernel, not the default one.)
dkver=$(debug_kver) || dkver=
[ -n "$kver" ] || case $set in debug) ;; *) kver=$($T/kver.sh) || exit 1 ;; esac

# Where the oracle must have spoken: an ERE over the files of a run.
oracle() {	# oracle KIND -> "FILES-GLOB<TAB>ERE"
	case $1 in
	lost|dup) printf '%s\t%s\n' 'tests/stress_4k.log' \
		'^not ok .*every message verified' ;;
	pageleak) printf '%s\t%s\n' 'tests/unload.log' '^not ok .*pages returned' ;;
	kasan) printf '%s\t%s\n' '*' 'BUG: KASAN: ' ;;
	stalerx|downwork) printf '%s\t%s\n' '*' \
		'BUG: KASAN: |ODEBUG: free active|Oops: general protection fault' ;;
	kmemleak) printf '%s\t%s\n' 'tests/kmemleak.log' \
		'^not ok .*kmemleak: no object of the module leaked' ;;
	lockdep) printf '%s\t%s\n' '*' 'possible circular locking dependency' ;;
	hbnow) printf '%s\t%s\n' 'tests/ib_hb_change.log' \
		'^not ok .*no heartbeat loss' ;;
	hbidle) printf '%s\t%s\n' 'tests/ib_heartbeat.log' \
		'^not ok .*nothing at stake: no request' ;;
	hbtick) printf '%s\t%s\n' 'tests/ib_heartbeat.log' \
		'^not ok .*the heartbeat work ran at most twice' ;;
	nohold) printf '%s\t%s\n' 'tests/ib_ml_upgrade.log' \
		'^not ok .*once, in order' ;;
	halfopen) printf '%s\t%s\n' 'tests/ib_halfopen.log' \
		'^not ok .*the half-open attempt ended within' ;;
	idlecopy) printf '%s\t%s\n' 'tests/ib_pack.log' \
		"^not ok .*no packed frame's copy held once idle" ;;
	congkeep) printf '%s\t%s\n' 'tests/ib_cong_restart.log' \
		'^not ok .*takes a send within' ;;
	congearly) printf '%s\t%s\n' 'tests/ib_cong_v6early.log' \
		'^not ok .*meets ENOBUFS' ;;
	esac
}

make -s -C tools/rds-stress && make -s -C $T/selftests && make -s -C $T/peer ||
	{ echo "neg-controls: building the tools failed" >&2; exit 1; }

for kind in $kinds; do
	k=$kver plan=$res/cheap.tests topo=two ts=${scale:-1} mem=1024
	case " $debug " in
	*" $kind "*)
		if [ -z "$dkver" ] || [ ! -e "/boot/vmlinuz-$dkver" ]; then
			result skip "negative control $kind" \
				"no debug kernel (tools/testing/debug-kernel.sh 6.12 builds it)"
			continue
		fi
		# KASAN's shadow and quarantine: the memory check-debug gives.
		k=$dkver plan=$res/debug.tests topo=one ts=${scale:-12} mem=1536
		;;
	esac
	case $kind in
	stalerx|downwork|hbnow|hbidle|hbtick|nohold|halfopen|idlecopy|congkeep|congearly)
		plan=$res/$kind.tests topo=two ;;
	esac
	out=$res/$kind
	mkdir -p "$out"
	if ! NEG=$kind $T/build-module.sh "$k" > "$out/build.log" 2>&1; then
		result fail "negative control $kind" "the build failed: $out/build.log"
		continue
	fi
	$T/vm/run-tests --kver "$k" --no-build --topology "$topo" --plan "$plan" \
		--time-scale "$ts" --mem "$mem" --moddir "build/mod-neg-$kind-$k" \
		--results "$out/run" > "$out/run.log" 2>&1
	rc=$?
	IFS=$'\t' read -r files ere < <(oracle "$kind")
	hit=$(cd "$out/run" 2>/dev/null &&
	      grep -rhE -m 1 "$ere" --include="${files##*/}" . 2>/dev/null | head -n 1)
	if [ "$rc" = 0 ]; then
		result fail "negative control $kind" "the run passed ($out/run.log)"
	elif [ -z "$hit" ]; then
		result fail "negative control $kind" \
			"the run failed (exit $rc) but not on its oracle /$ere/ ($out/run.log)"
	else
		result ok "negative control $kind: $(echo "$hit" | cut -c1-200)"
	fi
	grep -E '^(not ok|ok) |passed, ' "$out/run.log" | sed 's/^/#   /' | head -n 20
done
echo "$pass passed, $fail failed, $skip skipped"
echo "# results: $res"
[ "$fail" = 0 ]
