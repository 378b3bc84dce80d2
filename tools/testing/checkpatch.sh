#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl (from Debian's linux-source package) over
# the module's sources.  Any error, warning or check fails.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tools=$top/build/kernel-tools
"$top/tools/testing/kernel-tools.sh" "$tools" || exit 1
cd "$top" || exit 1
files=$(ls net/*.[ch] net/*/*.[ch] include/uapi/linux/*.h \
	tools/testing/vm/negative/*.c 2>/dev/null)
# --no-tree: out of tree.  --strict: the checks networking code gets.
out=$(perl "$tools/scripts/checkpatch.pl" --no-tree --terse --strict \
	--no-summary --show-types --ignore FILE_PATH_CHANGES \
	-f $files 2>&1)
echo "$out"
echo "checkpatch: $(echo $files | wc -w) files"
! echo "$out" | grep -Eq ': (ERROR|WARNING|CHECK):'
