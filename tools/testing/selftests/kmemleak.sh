#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kmemleak over the module (debug kernels, make check-debug): with the
# module loaded, a scan must report no unreferenced object allocated from
# the module's code ("[rds]" in its backtrace); once it is unloaded (the
# plan runs this test again as kmemleak_final), none whose backtrace
# points into where its code was (the range unload.sh saved).  load.sh
# clears what the kernel reported before the module came.  Skips where
# the kernel has no kmemleak.
. "$(dirname "$0")/lib.sh"

km=/sys/kernel/debug/kmemleak
if [ ! -e $km ]; then
	ksft_skip "kmemleak scan" "this kernel has no kmemleak"
	ksft_exit
fi

# Two scans: an object is reported once it was seen unreferenced twice.
echo scan > $km
echo scan > $km
cat $km > /tmp/kmemleak.txt
n=$(grep -c '^unreferenced object' /tmp/kmemleak.txt)
echo "# kmemleak: $n unreferenced objects reported since the load"

# ours FILTER: print the reports (whole) for which FILTER (awk, on each
# backtrace line) is true.
ours() {
	awk -v lo="${2:-0}" -v hi="${3:-0}" '
		function flush() { if (keep) printf "%s", rep; rep = ""; keep = 0 }
		/^unreferenced object/ { flush() }
		{ rep = rep $0 "\n" }
		/\[<[0-9a-f]+>\]/ {
			if ('"$1"') keep = 1
		}
		END { flush() }' /tmp/kmemleak.txt
}
if rds_loaded; then
	ours '/\[rds\]/' > /tmp/kmemleak-ours.txt
else
	read -r lo hi < /tmp/rds-module-range ||
		{ ksft_fail "the module's address range was saved by unload.sh"; ksft_exit; }
	# Addresses as strings of 16 hex digits compare as numbers.
	ours 'match($0, /\[<[0-9a-f]+>\]/) && (a = substr($0, RSTART + 2, RLENGTH - 4)) >= lo && a < hi' \
		"$lo" "$hi" > /tmp/kmemleak-ours.txt
fi
sed 's/^/# /' /tmp/kmemleak-ours.txt | head -60
check "kmemleak: no object of the module leaked ($(rds_loaded && echo loaded || echo after unload))" \
	test ! -s /tmp/kmemleak-ours.txt
ksft_exit
