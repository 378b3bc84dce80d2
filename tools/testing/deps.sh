#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, with apt-get, everything the build, the VM harness and the tests
# need on a Debian 12 machine.  Idempotent: when everything is present it
# does nothing (and with --quiet prints nothing).
set -eu

PKGS=(
	build-essential make gcc sparse python3 xz-utils cpio kmod iproute2
	iputils-ping perl
	qemu-system-x86 busybox-static
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	linux-source-6.1
	rdma-core ibverbs-utils rdmacm-utils perftest qperf
	libibverbs-dev librdmacm-dev
	groff-base man-db
)

quiet=0
[ "${1:-}" = "--quiet" ] && quiet=1

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	[ $quiet = 1 ] || echo "deps: everything is installed"
	exit 0
fi

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to run apt-get (missing: ${missing[*]})" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${PKGS[@]}"
