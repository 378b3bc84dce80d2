#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel-tools.sh OUTDIR
#
# Extract from Debian's linux-source package the few files of the kernel
# tree that the tests use as they are: the kselftest harness headers and
# checkpatch.pl.  Nothing is copied into the repository.
set -eu
out=$1
# linux-source-6.1 (deps.sh installs it) whenever it is there: the debug
# kernel of make check-debug brings linux-source-6.12, whose harness and
# checkpatch must not change what make check runs.
src=/usr/src/linux-source-6.1.tar.xz
[ -e "$src" ] ||
	src=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
[ -n "$src" ] || { echo "kernel-tools: no linux-source package" >&2; exit 1; }
stamp="$out/.from-$(basename "$src")"
[ -e "$stamp" ] && exit 0
rm -rf "$out"
mkdir -p "$out"
tar -xJf "$src" -C "$out" --strip-components=1 --wildcards \
	'*/tools/testing/selftests/kselftest.h' \
	'*/tools/testing/selftests/kselftest_harness.h' \
	'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
	'*/scripts/const_structs.checkpatch'
: > "$stamp"
