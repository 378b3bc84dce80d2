/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types the pure-logic files of net/ use, for building them
 * in user space (unit tests).  Nothing else of the kernel is emulated.
 */
#ifndef _RDS_UNIT_KSHIM_H
#define _RDS_UNIT_KSHIM_H

#include <assert.h>
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>	/* __be16, __be32, __be64 */

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef int32_t s32;

#define __packed __attribute__((packed))
#define BIT_ULL(n)	(1ULL << (n))
#define U8_MAX		((u8)~0U)

#define cpu_to_be16(x)	((__be16)htobe16(x))
#define cpu_to_be32(x)	((__be32)htobe32(x))
#define cpu_to_be64(x)	((__be64)htobe64(x))
#define be16_to_cpu(x)	be16toh((uint16_t)(x))
#define be32_to_cpu(x)	be32toh((uint32_t)(x))
#define be64_to_cpu(x)	be64toh((uint64_t)(x))

#endif /* _RDS_UNIT_KSHIM_H */
