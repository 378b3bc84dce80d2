#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-module.sh KVER [MAKE ARGS...]
#
# Build rds.ko and the harness's negative-control module against kernel
# KVER in build/mod-KVER/ (the tree's sources are mirrored there with their
# timestamps, so rebuilds are incremental).  The VM guests load the modules
# from there, so several kernel series can be built and tested side by side.
# Exits non-zero on a build error, on any compiler warning and on any
# "warning:" or "error:" line of sparse (C=1, C=2).
#
# The module is the test build: RDS_TEST_HOOKS=1 keeps the test-only
# switches (fault_nth, loop_hold_acks) that a production "make" leaves
# out.  NEG=KIND builds the negative control KIND (net/neg.h) in
# build/mod-neg-KIND-KVER/ instead (tools/testing/neg-controls.sh).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$1
shift
kdir=/lib/modules/$kver/build
neg=${NEG:-}
case "$neg" in
"") out=$top/build/mod-$kver ;;
kasan|kmemleak|lockdep|lost|dup|pageleak|stalerx|downwork|hbnow|hbidle|hbtick|nohold|\
halfopen|idlecopy|congkeep|congearly)
	out=$top/build/mod-neg-$neg-$kver
	set -- RDS_NEG="$neg" "$@" ;;
*) echo "build-module: NEG=$neg: no such negative control" >&2; exit 1 ;;
esac
[ "${BUILD_CLEAN:-0}" = 1 ] && rm -rf "$out"
[ -d "$kdir" ] || { echo "build-module: no headers for $kver ($kdir)" >&2; exit 1; }

mkdir -p "$out/negative"
rsync_like() {
	# cp -p keeps mtimes; make then rebuilds only what changed.
	local from=$1 to=$2
	mkdir -p "$to"
	(cd "$from" && find . -type f \( -name '*.c' -o -name '*.h' \)) |
	while read -r f; do
		if ! cmp -s "$from/$f" "$to/$f"; then
			mkdir -p "$to/$(dirname "$f")"
			cp -p "$from/$f" "$to/$f"
		fi
	done
	# Sources removed from the tree disappear from the mirror too.
	(cd "$to" && find . -type f \( -name '*.c' -o -name '*.h' \)) |
	while read -r f; do
		[ -e "$from/$f" ] || rm -f "$to/$f"
	done
}
rsync_like "$top/net" "$out/net"
rsync_like "$top/include" "$out/include"
cmp -s "$top/Kbuild" "$out/Kbuild" || cp -p "$top/Kbuild" "$out/Kbuild"
rsync_like "$top/tools/testing/vm/negative" "$out/negative"
cmp -s "$top/tools/testing/vm/negative/Kbuild" "$out/negative/Kbuild" ||
	cp -p "$top/tools/testing/vm/negative/Kbuild" "$out/negative/Kbuild"

log=$out/build.log
: > "$log"
status=0
# Every core (BUILD_JOBS to choose): a negative control's build is on
# the critical path of make check, nothing beside it.
make -j"${BUILD_JOBS:-$(nproc)}" -C "$kdir" M="$out" W=1 RDS_TEST_HOOKS=1 "$@" \
	modules >> "$log" 2>&1 || status=$?
if [ $status = 0 ]; then
	make -C "$kdir" M="$out/negative" modules >> "$log" 2>&1 || status=$?
fi
# sparse (C=1/C=2) reports errors as "error:" lines and make still exits 0.
if [ $status != 0 ] || grep -Eq 'warning:|error:' "$log"; then
	if grep -Eq 'warning:|error:' "$log"; then
		grep -E 'warning:|error:' "$log" | head -40 >&2
	else
		tail -n 20 "$log" >&2
	fi
	[ $status != 0 ] ||
		echo "build-module: warnings or errors building against $kver" >&2
	exit 1
fi
echo "build-module: $out/rds.ko ($kver${neg:+, negative control $neg})"
