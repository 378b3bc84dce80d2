#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A test that passes (it follows a negative control).
sleep 5
exit 0
