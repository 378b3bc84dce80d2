#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control: the output of a kselftest_harness test with one of its
# two tests skipped, exit 0: one subtest skip, counted and listed with its
# reason; and one retry (lib.sh's test_retry line), counted and listed.
echo "TAP version 13"
echo "1..2"
echo "# Starting 2 tests from 1 test cases."
echo "#  RUN           global.runs ..."
echo "#            OK  global.runs"
echo "ok 1 global.runs"
echo "# RETRY: connection refused (negative control)"
echo "#  RUN           global.skips ..."
echo "#      SKIP      no such device (negative control)"
echo "#            OK  global.skips"
echo "ok 2 global.skips # SKIP no such device (negative control)"
echo "# PASSED: 2 / 2 tests passed."
exit 0
