#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Negative control: a test that fails.
echo "not ok 1 deliberate failure (negative control)"
exit 1
