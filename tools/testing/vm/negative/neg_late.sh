#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control: this test passes, the kernel WARNs when the guest powers
# off, after its last result (panic_on_warn: the guest panics then).
insmod "$RDS_MODDIR/negative/rdstest_neg.ko" poweroff_warn=1 || exit 1
exit 0
