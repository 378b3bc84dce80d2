/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Extension headers: the 16 bytes at the end of every RDS header
 * (h_exthdr) hold a chain of (type byte, body) records; type 0 ends the
 * chain, a type with no known body length ends it too.  Pure code, no
 * locks or allocation: compiled into the module and into the user-space
 * unit test tools/testing/unit/exthdr_test.
 *
 * Bodies are big-endian:
 *   RDS_EXTHDR_RDMA       rkey (4): the message carries an op on that key
 *                         of the receiver's; a USE_ONCE region is freed
 *   RDS_EXTHDR_RDMA_DEST  rkey (4), offset (4): a region of the sender's,
 *                         handed to the receiving application as an
 *                         RDS_CMSG_RDMA_DEST cookie
 */
#ifndef _RDS_EXTHDR_H
#define _RDS_EXTHDR_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kshim.h"
#endif

#define RDS_EXTHDR_SPACE	16

enum {
	RDS_EXTHDR_NONE		= 0,
	RDS_EXTHDR_VERSION	= 1,
	RDS_EXTHDR_RDMA		= 2,
	RDS_EXTHDR_RDMA_DEST	= 3,
	RDS_EXTHDR_NPATHS	= 5,
	RDS_EXTHDR_GEN_NUM	= 6,
};

/* Body length of a record type, 0 for a type we do not know. */
unsigned int rds_exthdr_body_len(u8 type);

/* Append a record of type with n 32-bit values (its body) at *off of ext.
 * False (ext unchanged) if it does not fit with the terminating 0.
 */
bool rds_exthdr_add(u8 *ext, unsigned int *off, u8 type, const u32 *vals,
		    unsigned int n);

/* The first record of type in ext: its body as 32-bit values (at most n).
 * False if the chain has none before it ends.
 */
bool rds_exthdr_find(const u8 *ext, u8 type, u32 *vals, unsigned int n);

#endif /* _RDS_EXTHDR_H */
