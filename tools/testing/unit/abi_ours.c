// SPDX-License-Identifier: GPL-2.0
/*
 * abi_test: the table for our own include/uapi/linux/rds.h.  Nothing is
 * included before it, so this also checks that the header stands alone.
 */
#include "../../../include/uapi/linux/rds.h"

#define ABI_TABLE	abi_ours_table
#define ABI_COUNT	abi_ours_count
#include "abi_table.h"
