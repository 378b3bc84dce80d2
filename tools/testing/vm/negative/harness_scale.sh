#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Control of run-tests --time-scale N: the guest has RDS_TIME_SCALE=N and
# lib.sh's scaled multiplies by it.
. "$RDS_TOP/tools/testing/selftests/lib.sh"
echo "# RDS_TIME_SCALE=$RDS_TIME_SCALE, scaled 10 = $(scaled 10)"
echo "# plan line: $(grep "^$RDS_TEST " "$RDS_OUT/plan")"
check "scaled 10 is 10 x RDS_TIME_SCALE" test "$(scaled 10)" = $((10 * RDS_TIME_SCALE))
ksft_exit
