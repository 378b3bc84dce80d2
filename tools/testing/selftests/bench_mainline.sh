#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark qperf over the kernel's own RDS (rds_rdma): see bench_qperf.sh.
RDS_BENCH_RDS=mainline exec "$(dirname "$0")/bench_qperf.sh"
