#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ib_mainline_pair6 the other way round: host 2 runs Debian's rds_rdma and
# host 1 ours (so the kernel's RDS is the active side of rds-stress and
# has the higher address).  A test of its own name: its barriers and
# results are its own.
ML_HOST=2 exec "$(dirname "$0")/ib_mainline_pair6.sh"
