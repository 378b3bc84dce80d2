/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the pure-logic files of net/ use, for building them
 * in user space (unit tests).  Nothing else of the kernel is emulated.
 */
#ifndef _RDS_UNIT_KSHIM_H
#define _RDS_UNIT_KSHIM_H

#include <stdbool.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef int32_t s32;

#endif /* _RDS_UNIT_KSHIM_H */
