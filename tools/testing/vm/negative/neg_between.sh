#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control: this test passes, and about 1-2 s after it loaded the
# module the kernel reports a hung task (a worker asleep in D state for 4 s,
# hung_task_timeout_secs 1; no panic): after this test's end or during the
# next one (neg_idle).
echo 1 > /proc/sys/kernel/hung_task_timeout_secs || exit 1
insmod "$RDS_MODDIR/negative/rdstest_neg.ko" block_ms=4000 || exit 1
exit 0
