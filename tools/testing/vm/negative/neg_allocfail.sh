#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control, second half (plan flag allocfail): the same report,
# then a WARNING right after it.  allocfail excuses only the stack dump of
# an allocation failure: this test must fail on its kernel log.
kmsg() { echo "$*" > /dev/kmsg; }
kmsg "neg_allocfail: vmalloc error: size 4096, vm_struct allocation failed (negative control)"
kmsg "Call Trace:"
kmsg "WARNING: CPU: 0 PID: $$ at neg_allocfail (negative control)"
echo "ok 1 a warning was logged after an allocation-failure report"
exit 0
