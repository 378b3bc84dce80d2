// SPDX-License-Identifier: GPL-2.0
/*
 * abi_test: the table for the system's <linux/rds.h> (linux-libc-dev),
 * the reference our header must match.
 */
#include <linux/sockios.h>	/* SIOCPROTOPRIVATE: not included by rds.h */
#include <linux/rds.h>

#define ABI_TABLE	abi_sys_table
#define ABI_COUNT	abi_sys_count
#include "abi_table.h"
