#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Diagnostic (not in any plan of the suite): settled free memory and the
# biggest slab caches, into this test's log.
. "$(dirname "$0")/lib.sh"
echo "# memsnap settled $(mem_settle) KiB"
grep -E '^(MemFree|Slab|SUnreclaim|VmallocUsed|Percpu|KernelStack|PageTables|Shmem|AnonPages|Buffers|Cached):' /proc/meminfo | sed 's/^/# /'
awk 'NR > 2 { printf "# slab %s %d\n", $1, $3 * $4 / 1024 }' /proc/slabinfo | sort -k4 -n -r | head -15
ip -4 addr show dev "$RDS_IFACE" 2>/dev/null | grep -c inet | sed 's/^/# inet addrs /'
ksft_ok "memory snapshot"
ksft_exit
