/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RDS wire format: the 48-byte big-endian header that precedes every
 * message, its flags and the protocol limits.  Sizes are asserted so that
 * a layout change cannot go unnoticed.
 */
#ifndef _RDS_WIRE_H
#define _RDS_WIRE_H

/* In user space (tools/testing: the unit tests, the wire peer) kshim.h,
 * included first, provides the types, offsetof and static_assert.
 */
#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#endif

enum {
	RDS_HEADER_EXT_SPACE	= 16,
	RDS_MAX_MSG_SIZE	= 1 << 20,	/* payload, and RDMA bytes */
	RDS_FLAG_PROBE_PORT	= 1,		/* reserved port, never bound */
	RDS_CONG_MAP_BYTES	= 65536 / 8,	/* one bit per port */
};

/* h_flags */
enum {
	RDS_FLAG_CONG_BITMAP	= 0x01,
	RDS_FLAG_ACK_REQUIRED	= 0x02,
	RDS_FLAG_RETRANSMITTED	= 0x04,
	/* Ours: a message that only carries RDMA_SILENT ops (no payload,
	 * no region for the receiver): acknowledged like any message but
	 * never queued to the receiving socket.
	 */
	RDS_FLAG_SILENT		= 0x10,
};

struct rds_header {
	__be64	h_sequence;
	__be64	h_ack;
	__be32	h_len;
	__be16	h_sport;
	__be16	h_dport;
	u8	h_flags;
	u8	h_credit;
	u8	h_padding[4];
	__sum16	h_csum;
	u8	h_exthdr[RDS_HEADER_EXT_SPACE];
};

static_assert(sizeof(struct rds_header) == 48);
static_assert(offsetof(struct rds_header, h_len) == 16);
static_assert(offsetof(struct rds_header, h_flags) == 24);
static_assert(offsetof(struct rds_header, h_csum) == 30);
static_assert(offsetof(struct rds_header, h_exthdr) == 32);

#endif /* _RDS_WIRE_H */
