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
param() {
	cat "/sys/module/rds/parameters/$1" 2>/dev/null
}
# Every socket is closed: what the module still holds goes with its
# connections at rmmod; the receive pages of the devices are the only
# pages it may hold now.
echo "# before rmmod: messages_live=$(param messages_live)" \
	"ib_rx_pages=$(param ib_rx_pages)"
check "no memory region in use" \
	bash -c "! grep -q 'mr_in_use=[1-9]' /sys/module/rds/parameters/ib_counters"
# Where the module's code is, for kmemleak_final: start and end as 16
# hex digits.
read -r _ size _ _ _ addr _ < <(grep '^rds ' /proc/modules)
printf '%016x %016x\n' "$addr" $((addr + size)) > /tmp/rds-module-range
# A /proc/net/rds file held open across the unload: rmmod does not wait
# for it, and a read after it fails (EIO) instead of running gone code.
exec 3< /proc/net/rds/connections
check "rmmod rds" rmmod rds
check "/proc/net/rds gone" test ! -e /proc/net/rds
check "a /proc/net/rds file held open across rmmod reads nothing" \
	bash -c '! cat <&3'
exec 3<&-
check "module gone" wait_for 10 test ! -d /sys/module/rds
check "socket slab cache destroyed" test ! -d /sys/kernel/slab/RDS
check "no leftover objects reported" \
	bash -c '! dmesg | grep -Eq "still has objects|Objects remaining"'
reload() { rds_insmod && rmmod rds; }
check "reload and unload again" reload
# Every page the module took is back: free memory (mem_settle, lib.sh)
# within 1% of the total of what it was before the load (rxe's device,
# created after the load, stays; it takes far less).
mem_back() {
	local before total now
	before=$(cat /tmp/rds-memfree-before-load 2>/dev/null) || return 1
	total=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
	now=$(mem_settle)
	echo "# free (MemFree+Shmem+per-CPU lists): $before KiB before the load, $now KiB after the unload" \
		"(MemTotal $total KiB, $(( (before - now) * 10000 / total )) in 10000)"
	[ $(( (before - now) * 100 )) -le "$total" ]
}
if [ ! -r /tmp/rds-memfree-before-load ]; then
	# The guest rebooted after load.sh (the reboot test power-cycles
	# host 2): the baseline went with its tmpfs.
	ksft_skip "pages returned: free memory back within 1% of MemTotal" \
		"no baseline: this guest rebooted after the load"
	ksft_exit
fi
# Free here counts the pages cached on per-CPU lists (mem_settle): 6.1
# keeps freed pages there until allocations take them, and the check
# failed there before they were counted.
check "pages returned: free memory back within 1% of MemTotal" mem_back
ksft_exit
