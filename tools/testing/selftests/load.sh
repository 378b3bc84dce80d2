#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load the freshly built rds.ko: it registers PF_RDS and owns its slab cache.
. "$(dirname "$0")/lib.sh"

if [ -d /sys/module/rds ]; then
	ksft_fail "no rds module before ours" "an rds module is already loaded"
	ksft_exit
fi
# The baseline of unload.sh's page check: free memory with the modules
# ours depends on loaded (they stay after its unload) but not ours, the
# caches dropped and shrunk (mem_settle, lib.sh).
deps=$(modinfo -F depends "$RDS_KO" | tr , ' ')
[ -z "$deps" ] || modprobe -a $deps
mem_settle > /tmp/rds-memfree-before-load
# kmemleak (debug kernels): what the kernel reported so far is not ours.
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	echo clear > /sys/kernel/debug/kmemleak
fi
echo "# MemFree+Shmem before the load: $(cat /tmp/rds-memfree-before-load) KiB"
check "insmod rds.ko (after its dependencies)" rds_insmod
check "module is live" grep -qx live /sys/module/rds/initstate
check "PF_RDS registered" grep -q 'AF_RDS registered' <(dmesg)
# With slub_debug the socket cache is never merged, so it appears by name.
check "socket slab cache exists" test -d /sys/kernel/slab/RDS
ksft_exit
