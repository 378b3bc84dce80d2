#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load the freshly built rds.ko: it registers PF_RDS and owns its slab cache.
. "$(dirname "$0")/lib.sh"

if [ -d /sys/module/rds ]; then
	ksft_fail "no rds module before ours" "an rds module is already loaded"
	ksft_exit
fi
check "insmod rds.ko (after its dependencies)" rds_insmod
check "module is live" grep -qx live /sys/module/rds/initstate
check "PF_RDS registered" grep -q 'AF_RDS registered' <(dmesg)
# With slub_debug the socket cache is never merged, so it appears by name.
check "socket slab cache exists" test -d /sys/kernel/slab/RDS
ksft_exit
