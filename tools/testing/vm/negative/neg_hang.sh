#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control: the guest stops responding while this test runs.
insmod "$RDS_MODDIR/negative/rdstest_neg.ko" hang=1
echo "not ok 1 the guest did not hang"
exit 0
