#!/bin/bash
# Print the newest kernel version that has both /boot/vmlinuz-VER and
# /lib/modules/VER/build (headers).  --all prints every such version.
# The debug kernels of debug-kernel.sh (VER ending in -rdsdebug) are never
# listed: only `make check-debug` boots them (a whole suite under KASAN
# takes hours under TCG).
set -u
vers=()
for img in /boot/vmlinuz-*; do
	[ -e "$img" ] || continue
	v=${img#/boot/vmlinuz-}
	case $v in *-rdsdebug) continue ;; esac
	[ -d "/lib/modules/$v/build" ] && vers+=("$v")
done
if [ ${#vers[@]} = 0 ]; then
	echo "no kernel with both an image (/boot/vmlinuz-VER) and headers" \
		"(/lib/modules/VER/build) installed: install the headers" \
		"(Debian: apt-get install linux-headers-$(uname -r)), or name" \
		"a kernel with KVER= or a build tree with KDIR=" >&2
	exit 1
fi
sorted=$(printf '%s\n' "${vers[@]}" | sort -V)
if [ "${1:-}" = "--all" ]; then
	echo "$sorted"
else
	echo "$sorted" | tail -n 1
fi
