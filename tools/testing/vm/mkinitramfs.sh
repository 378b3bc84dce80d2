#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh KVER OUT
#
# Build the tiny initramfs the test guests boot: busybox-static, the modules
# that reach the host's root over virtio-9p (with their dependencies, in load
# order, decompressed so busybox insmod can load them) and our /init.
set -eu

kver=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work"/{bin,dev,proc,sys,newroot,modules}
cp /bin/busybox "$work/bin/busybox"
ln -s busybox "$work/bin/sh"

: > "$work/modules/order"
for m in virtio_pci virtio_net 9pnet_virtio 9p; do
	modprobe -S "$kver" --show-depends "$m" | while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		name=$(basename "$path")
		name=${name%.xz}
		name=${name%.zst}
		grep -qx "$name" "$work/modules/order" && continue
		case "$path" in
		*.xz) xz -dc "$path" > "$work/modules/$name" ;;
		*.zst) zstd -qdc "$path" > "$work/modules/$name" ;;
		*) cp "$path" "$work/modules/$name" ;;
		esac
		echo "$name" >> "$work/modules/order"
	done
done

cp "$here/init" "$work/init"
chmod +x "$work/init"

# A file of this run's own, renamed over OUT: two runs that build OUT at
# once (two suites started side by side) each rename a whole image, where
# one shared temporary name interleaved their output and the guests of
# both died booting (their /init faulted).
(cd "$work" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out.$$.tmp"
mv "$out.$$.tmp" "$out"
