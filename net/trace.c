// SPDX-License-Identifier: GPL-2.0
/*
 * The module's tracepoints (net/trace/rds.h) are defined here, once.
 */
#define CREATE_TRACE_POINTS
#include "trace/rds.h"
