#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh SERIES      (SERIES: 6.1 or 6.12)
#
# Build, once per machine, a debug kernel from Debian's linux-source-SERIES
# package: KASAN (generic, inline), lockdep, kmemleak, UBSAN bounds,
# DEBUG_LIST, DEBUG_OBJECTS, atomic-sleep checks and fault injection, with
# virtio/9p built in and the RDMA stack, rxe, mainline RDS and netem as
# modules.  The tree and its objects stay in build/kdebug-SERIES/ (of the
# main checkout when this is a linked worktree); the
# image goes to /boot/vmlinuz-KVER and the modules to /lib/modules/KVER,
# KVER ending in -rdsdebug (kver.sh never picks it as the default kernel).
# It is rebuilt only when the option list below changes.  Prints KVER.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
series=${1:?usage: debug-kernel.sh 6.1|6.12}
tarball=/usr/src/linux-source-$series.tar.xz
# Once per machine, not per checkout: a linked git worktree (git
# worktree add) uses the main checkout's build/ (a rebuild is 25 minutes).
base=$top
common=$(git -C "$top" rev-parse --path-format=absolute --git-common-dir \
	 2>/dev/null) && [ -d "$(dirname "$common")/build" ] &&
	base=$(dirname "$common")
work=$base/build/kdebug-$series
jobs=${JOBS:-$(nproc)}

[ -f "$tarball" ] || { echo "debug-kernel: $tarball missing (apt-get install linux-source-$series)" >&2; exit 1; }

# The options, one per line: NAME=VALUE (y, m, n or a number/string).
opts() {
	cat <<'EOF'
LOCALVERSION="-rdsdebug"
LOCALVERSION_AUTO=n
MODULES=y
MODULE_UNLOAD=y
MODULE_FORCE_UNLOAD=y
MODULE_SIG=n
DEBUG_INFO_NONE=y
DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=n
DEBUG_INFO_BTF=n
KASAN=y
KASAN_GENERIC=y
KASAN_INLINE=y
KASAN_OUTLINE=n
KASAN_VMALLOC=y
STACKTRACE=y
PROVE_LOCKING=y
DEBUG_LOCKDEP=n
LOCKDEP=y
DEBUG_ATOMIC_SLEEP=y
DEBUG_KMEMLEAK=y
DEBUG_KMEMLEAK_DEFAULT_OFF=n
DEBUG_KMEMLEAK_AUTO_SCAN=n
DEBUG_KMEMLEAK_MEM_POOL_SIZE=65536
UBSAN=y
UBSAN_BOUNDS=y
UBSAN_SHIFT=n
UBSAN_DIV_ZERO=n
UBSAN_BOOL=n
UBSAN_ENUM=n
UBSAN_ALIGNMENT=n
UBSAN_SANITIZE_ALL=y
DEBUG_LIST=y
DEBUG_OBJECTS=y
DEBUG_OBJECTS_TIMERS=y
DEBUG_OBJECTS_WORK=y
DEBUG_OBJECTS_RCU_HEAD=y
DEBUG_OBJECTS_FREE=y
DEBUG_OBJECTS_ENABLE_DEFAULT=1
FAULT_INJECTION=y
FAILSLAB=y
FAIL_PAGE_ALLOC=y
FAULT_INJECTION_DEBUG_FS=y
FAULT_INJECTION_STACKTRACE_FILTER=y
DEBUG_FS=y
DETECT_HUNG_TASK=y
SOFTLOCKUP_DETECTOR=y
KFENCE=n
PCI=y
VIRTIO=y
VIRTIO_PCI=y
VIRTIO_NET=y
VIRTIO_BLK=y
VIRTIO_CONSOLE=y
NET_9P=y
NET_9P_VIRTIO=y
9P_FS=y
9P_FS_POSIX_ACL=y
OVERLAY_FS=y
TMPFS=y
DEVTMPFS=y
BLK_DEV_INITRD=y
RD_GZIP=y
IPV6=y
NET_NS=y
VETH=m
INET=y
NET_UDP_TUNNEL=m
INFINIBAND=m
INFINIBAND_USER_MAD=m
INFINIBAND_USER_ACCESS=m
INFINIBAND_ADDR_TRANS=y
RDMA_RXE=m
RDMA_SIW=m
RDS=m
RDS_RDMA=m
RDS_TCP=m
NET_SCHED=y
NET_SCH_NETEM=m
CRYPTO_CRC32=y
CRYPTO_CRC32C=y
LIBCRC32C=y
CRC32=y
MAGIC_SYSRQ=y
PANIC_ON_OOPS=n
DRM=n
SOUND=n
WLAN=n
CFG80211=n
BT=n
USB_SUPPORT=n
INPUT_JOYSTICK=n
INPUT_TABLET=n
INPUT_TOUCHSCREEN=n
HID=n
NETWORK_FILESYSTEMS=y
NFS_FS=n
EOF
}

# 6.1 offers no stack-trace filter for fault injection on x86_64 ("depends
# on !X86_64", lifted in 6.2): the allocation-failure test (fault_alloc)
# skips there.
series_opts() {
	if [ "$series" = 6.1 ]; then
		opts | grep -v '^FAULT_INJECTION_STACKTRACE_FILTER='
	else
		opts
	fi
}

stamp=$(series_opts | sha256sum | cut -c1-16)
if [ -f "$work/kver" ] && [ "$(cat "$work/stamp" 2>/dev/null)" = "$stamp" ] &&
   [ -e "/boot/vmlinuz-$(cat "$work/kver")" ] &&
   [ -d "/lib/modules/$(cat "$work/kver")/kernel" ]; then
	cat "$work/kver"
	exit 0
fi

mkdir -p "$work"
src=$work/src
if [ ! -f "$src/Makefile" ]; then
	echo "debug-kernel: unpacking $tarball" >&2
	rm -rf "$src" "$work/unpack"
	mkdir -p "$work/unpack"
	tar -C "$work/unpack" -xf "$tarball"
	mv "$work/unpack"/linux-source-* "$src"
	rmdir "$work/unpack"
fi

cd "$src"
log=$work/build.log
: > "$log"
echo "debug-kernel: configuring $series (log: $log)" >&2
make defconfig >> "$log" 2>&1
make kvm_guest.config >> "$log" 2>&1
args=()
while IFS= read -r line; do
	name=${line%%=*}
	val=${line#*=}
	case "$val" in
	y) args+=(--enable "$name") ;;
	m) args+=(--module "$name") ;;
	n) args+=(--disable "$name") ;;
	\"*) args+=(--set-str "$name" "${val//\"/}") ;;
	*) args+=(--set-val "$name" "$val") ;;
	esac
done < <(series_opts)
scripts/config "${args[@]}"
make olddefconfig >> "$log" 2>&1
# Re-apply once: olddefconfig may have needed a dependency set first.
scripts/config "${args[@]}"
make olddefconfig >> "$log" 2>&1

# Every option must have taken (a missing dependency would silently drop it).
bad=0
while IFS= read -r line; do
	name=${line%%=*}
	val=${line#*=}
	case "$val" in
	n) grep -q "^CONFIG_$name=" .config && { echo "debug-kernel: CONFIG_$name still set" >&2; bad=1; } ;;
	*) grep -qx "CONFIG_$name=$val" .config ||
		{ echo "debug-kernel: CONFIG_$name=$val did not take: $(grep "CONFIG_${name}[= ]" .config)" >&2; bad=1; } ;;
	esac
done < <(series_opts | grep -vE '^(LOCALVERSION|DEBUG_INFO_DWARF|KASAN_OUTLINE|LIBCRC32C|CRC32|CRYPTO_CRC32|NET_UDP_TUNNEL|DEBUG_LOCKDEP|UBSAN_ALIGNMENT|UBSAN_SHIFT|UBSAN_DIV_ZERO|UBSAN_BOOL|UBSAN_ENUM|PANIC_ON_OOPS|UBSAN_SANITIZE_ALL)=')
[ $bad = 0 ] || exit 1

echo "debug-kernel: building $series with $jobs jobs" >&2
start=$(date +%s)
make -j"$jobs" bzImage modules >> "$log" 2>&1 ||
	{ tail -30 "$log" >&2; exit 1; }
kver=$(make -s kernelrelease)
make INSTALL_MOD_STRIP=1 modules_install >> "$log" 2>&1
cp arch/x86/boot/bzImage "/boot/vmlinuz-$kver"
# The module build uses this tree as its headers.
ln -sfn "$src" "/lib/modules/$kver/build"
echo "$kver" > "$work/kver"
echo "$stamp" > "$work/stamp"
echo "debug-kernel: $kver built in $(( $(date +%s) - start )) s" >&2
echo "$kver"
