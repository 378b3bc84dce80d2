#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: host 2 (the active side) takes its NIC down for 5 s under
# a verifying rds-stress load and brings it up again; rxe0 follows the
# netdev (port down, then active).  Nothing may be lost, duplicated,
# reordered or corrupted, and the load must resume.  See fault_lib.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

fault_init || ksft_exit
nic_down() { ip link set "$RDS_IFACE" down; }
nic_up() { ip link set "$RDS_IFACE" up; }
fault_case nic 25 5 5 2 nic_down nic_up
ksft_exit
