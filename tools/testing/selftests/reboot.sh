#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The harness can power-cycle a host in the middle of a test (what the
# peer-reboot fault tests build on): host 2 reboots, comes back with its
# network and rxe0 set up again, and the hosts reach each other again.
. "$(dirname "$0")/lib.sh"

reach() { ping -c 1 -W 1 "$RDS_PEER" > /dev/null 2>&1; }
active() { rdma link show "$RDS_RXE/1" 2>/dev/null | grep -q 'state ACTIVE'; }

if [ "$RDS_HOST" = 2 ] && [ -z "${RDS_REBOOTED:-}" ]; then
	cat /proc/sys/kernel/random/boot_id > "$RDS_SHARED/$RDS_TEST.boot_id"
	rds_loaded && : > "$RDS_SHARED/$RDS_TEST.had_rds"
	barrier before 60 || { ksft_fail "barrier before"; ksft_exit; }
	host_reboot
fi
if [ "$RDS_HOST" = 1 ]; then
	barrier before 60 || { ksft_fail "barrier before"; ksft_exit; }
	# The peer goes away...
	check "peer goes down" wait_for 60 bash -c "! ping -c 1 -W 1 $RDS_PEER >/dev/null 2>&1"
else
	check "this boot is a new one" \
		test "$(cat /proc/sys/kernel/random/boot_id)" != "$(cat "$RDS_SHARED/$RDS_TEST.boot_id")"
	check "uptime is short" test "$(cut -d. -f1 /proc/uptime)" -lt 120
	check "rxe0 ACTIVE after the reboot" wait_for 30 active
	# Leave the host as the tests after this one expect it.
	if [ -e "$RDS_SHARED/$RDS_TEST.had_rds" ]; then
		check "rds.ko loads again" rds_insmod
	fi
fi
barrier after 240 || ksft_fail "barrier after"
check "peer answers" wait_for 30 reach
ksft_exit
