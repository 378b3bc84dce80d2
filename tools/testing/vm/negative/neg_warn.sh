#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control: the kernel WARNs while this test runs.
insmod "$RDS_MODDIR/negative/rdstest_neg.ko" warn=1
# Only reached if the warning did not end the guest.
echo "not ok 1 the guest survived a WARN"
exit 0
