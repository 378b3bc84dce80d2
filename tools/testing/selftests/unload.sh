#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unload the module after the other tests: no socket, no object may be left.
# kmem_cache_destroy() WARNs (and panic_on_warn ends the guest) when a cache
# still holds objects; the checks below catch the quieter leftovers.
. "$(dirname "$0")/lib.sh"

if ! rds_loaded; then
	ksft_fail "module loaded" "rds is not loaded"
	ksft_exit
fi
check "rmmod rds" rmmod rds
check "module gone" wait_for 10 test ! -d /sys/module/rds
check "socket slab cache destroyed" test ! -d /sys/kernel/slab/RDS
check "no leftover objects reported" \
	bash -c '! dmesg | grep -Eq "still has objects|Objects remaining"'
reload() { rds_insmod && rmmod rds; }
check "reload and unload again" reload
ksft_exit
