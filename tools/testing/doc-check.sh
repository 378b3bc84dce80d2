#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# doc-check.sh: the manuals render without a warning and name what the
# code has.  Run by check.sh (make check) after the module builds.
#
#   1. Documentation/man/rds-ib.7 and tools/rds-stress/rds-stress.1 render
#      with "mandoc -T lint" or, without mandoc, "groff -man -ww -z"
#      (whichever is installed: this script installs nothing); any
#      warning fails.
#   2. rds-ib.7 names every module parameter (modinfo -p of each
#      build/mod-KVER/rds.ko of the installed series, and every
#      module_param* of net/: the test build's test-only ones included),
#      every sysctl of net/ (net.rds.NAME or net.rds.ib.NAME, from the
#      path its file registers), every RDS_INFO_COUNTERS name (the core's
#      of net/stats.c, the IB transport's of net/ib/trans.c, ib_hs_* of
#      net/ib/cm.c); rds-stress.1 names every long option of
#      tools/rds-stress/options.c.
#
# Each missing name is printed; the exit status is 1 if anything is
# missing or a page warns.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
man7=Documentation/man/rds-ib.7
man1=tools/rds-stress/rds-stress.1
bad=0

fail() {
	echo "doc-check: $*" >&2
	bad=1
}

# 1. Rendering.
render() {	# render PAGE: the renderer's warnings, if any
	if command -v mandoc > /dev/null; then
		mandoc -T lint -W warning "$1" 2>&1
	else
		groff -man -ww -z "$1" 2>&1
	fi
}
if ! command -v mandoc > /dev/null && ! command -v groff > /dev/null; then
	fail "neither mandoc nor groff is installed: the manuals cannot be checked"
fi
for page in "$man7" "$man1"; do
	[ -s "$page" ] || { fail "$page is missing"; continue; }
	out=$(render "$page")
	if [ -n "$out" ]; then
		fail "$page: the renderer warns:"
		echo "$out" | sed 's/^/    /' >&2
	else
		echo "doc-check: $page renders without a warning"
	fi
done

# The text of a page with roff's escapes of "-" and its font changes
# undone, so that names can be searched for as they are printed.
plain() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em/-/g' "$1"
}

# named PAGE WHAT NAME...: each NAME must stand in PAGE as a whole name
# (not followed or preceded by a letter, digit, "_" or "-").
named() {
	local page=$1 what=$2 text n missing=0 total=0
	shift 2
	text=$(plain "$page")
	for n in "$@"; do
		total=$((total + 1))
		if ! grep -qE "(^|[^A-Za-z0-9_-])$n([^A-Za-z0-9_-]|\$)" <<< "$text"; then
			fail "$page does not name the $what ${n//\\/}"
			missing=$((missing + 1))
		fi
	done
	echo "doc-check: $what: $((total - missing)) of $total named in $page"
	[ "$total" -gt 0 ] || fail "no $what found in the sources: the parser is broken"
}

# strings FILE ARRAY: the quoted strings of ARRAY's initializer, one a
# line; with "[IDX] = ", as "IDX name".
strings() {
	awk -v a="$2" '
		$0 ~ "[ *]" a "\\[[^]]*\\] = \\{" { on = 1; next }
		on && /^};/ { exit }
		on && match($0, /"[^"]*"/) {
			s = substr($0, RSTART + 1, RLENGTH - 2)
			if (match($0, /^\t*\[[A-Z0-9_]+\]/)) {
				i = $0; sub(/^\t*\[/, "", i); sub(/\].*/, "", i)
				print i, s
			} else
				print s
		}' "$1"
}

# 2a. Module parameters.
params=$(grep -rhoE 'module_param(_named|_cb)?\([a-z0-9_]+' net/ |
	 sed 's/.*(//')
kos=0
for k in $(tools/testing/kver.sh --all 2> /dev/null); do
	ko=build/mod-$k/rds.ko
	[ -e "$ko" ] || continue
	kos=$((kos + 1))
	params+=$'\n'$(modinfo -p "$ko" | sed 's/:.*//')
done
[ "$kos" -gt 0 ] ||
	echo "doc-check: no build/mod-KVER/rds.ko: parameters from the sources only"
# shellcheck disable=SC2046
named "$man7" "module parameter" $(echo "$params" | sort -u)

# 2b. Sysctls: each file's procnames under the path it registers.
sysctls=()
for f in $(grep -rl '\.procname' net/); do
	path=$(sed -n 's/.*register_net_sysctl[^"]*"\([^"]*\)".*/\1/p' "$f" |
	       sort -u)
	if [ "$(echo "$path" | grep -c .)" != 1 ]; then
		fail "$f: its sysctls' path is not one register_net_sysctl() string"
		continue
	fi
	for p in $(sed -n 's/.*\.procname[^"]*"\([^"]*\)".*/\1/p' "$f"); do
		sysctls+=("${path//\//\\.}\\.$p")
	done
done
named "$man7" "sysctl" "${sysctls[@]}"

# 2c. RDS_INFO_COUNTERS: the core's, ib_KEY (or the name it is given
# instead, and then its key too: the ib_counters parameter shows keys),
# ib_hs_KEY.
counters=$(strings net/stats.c rds_stat_names)
renamed=$(strings net/ib/trans.c rds_ib_counter_names)
while read -r idx key; do
	name=$(awk -v i="$idx" '$1 == i { print $2 }' <<< "$renamed")
	if [ -n "$name" ]; then
		counters+=$'\n'"$name"$'\n'"$key"
	else
		counters+=$'\n'"ib_$key"
	fi
done < <(strings net/ib/trans.c rds_ib_counter_keys)
while read -r _ key; do
	counters+=$'\n'"ib_hs_$key"
done < <(strings net/ib/cm.c rds_ib_hs_keys)
# and those appended one by one (ib_rx_pages)
counters+=$'\n'$(grep -rhoE 'rds_stats_info_one\([a-z]+, "[a-z0-9_]+"' net/ |
		  sed 's/.*"\(.*\)"/\1/')
# shellcheck disable=SC2046
named "$man7" "counter" $(echo "$counters" | sort -u)

# 2c'. The tracepoints (net/trace/rds.h), in the manual and in
# Documentation/tracepoints.md.
events=$(sed -n 's/^TRACE_EVENT(\([a-z0-9_]*\),.*/\1/p' net/trace/rds.h)
[ -n "$events" ] || { echo "doc-check: no TRACE_EVENT in net/trace/rds.h"; bad=1; }
# shellcheck disable=SC2086
named "$man7" "tracepoint" $events
# shellcheck disable=SC2086
named Documentation/tracepoints.md "tracepoint" $events

# 2d. rds-stress's long options.
opts=$(awk '/^static const struct option longopts\[\] = \{/ { on = 1; next }
	    on && /^};/ { exit }
	    on && match($0, /\{ "[a-z0-9-]+"/) {
		print "--" substr($0, RSTART + 3, RLENGTH - 4) }' \
	   tools/rds-stress/options.c)
# shellcheck disable=SC2086
named "$man1" "rds-stress option" $opts

if [ $bad = 0 ]; then
	echo "doc-check: ok"
fi
exit $bad
