#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control, first half (plan flag allocfail): the kernel log shows
# an allocation-failure report with its stack dump, as warn_alloc prints
# one under fault injection.  With allocfail this is expected: the test
# passes.
kmsg() { echo "$*" > /dev/kmsg; }
kmsg "neg_allocok: page allocation failure: order:0, mode:0x820(GFP_ATOMIC) (negative control)"
kmsg "CPU: 0 UID: 0 PID: $$ Comm: neg_allocok (negative control)"
kmsg "Call Trace:"
echo "ok 1 an allocation-failure report was logged"
exit 0
