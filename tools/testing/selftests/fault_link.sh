#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault matrix: the host running the VMs pulls host 2's cable (QMP
# set_link off) for 5 s under a verifying rds-stress load, then puts it
# back.  Host 2 sees its NIC lose carrier (virtio-net reports the link
# state, rxe0 goes down and active again); host 1 sees nothing, its
# packets just vanish.  Nothing may be lost, duplicated, reordered or
# corrupted, and the load must resume.  See fault_lib.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

fault_init || ksft_exit
link_cut() { host_request link off; }
link_restore() { host_request link on; }
fault_case link 25 5 5 2 link_cut link_restore
ksft_exit
