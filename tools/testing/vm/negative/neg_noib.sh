#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control: the main job (stress_job) when our module cannot take
# the test address over IB (no rxe device under it): it must fail, not run
# over another RDS.
. "$RDS_TOP/tools/testing/selftests/lib.sh" > /dev/null
rds_insmod || exit 1
rdma link delete "$RDS_RXE" || exit 1
exec "$RDS_TOP/tools/testing/selftests/stress_job.sh"
