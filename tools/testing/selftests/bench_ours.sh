#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark qperf over our module: see bench_qperf.sh.
RDS_BENCH_RDS=ours exec "$(dirname "$0")/bench_qperf.sh"
