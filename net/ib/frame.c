// SPDX-License-Identifier: GPL-2.0
/*
 * The layout of packed frames: see frame.h.  Pure code: no locks, no
 * allocation, no verbs.
 */
#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#include "../wire.h"
#include "frame.h"

static_assert(sizeof(struct rds_header) == RDS_IB_HDR_LEN);
static_assert(offsetof(struct rds_header, h_ack) == RDS_IB_HDR_ACK);
static_assert(offsetof(struct rds_header, h_len) == RDS_IB_HDR_LENGTH);
static_assert(offsetof(struct rds_header, h_flags) == RDS_IB_HDR_FLAGS);
static_assert(offsetof(struct rds_header, h_credit) == RDS_IB_HDR_CREDIT);
static_assert(!((RDS_IB_FLAG_CTRL | RDS_IB_FLAG_HB | RDS_IB_FLAG_PACK |
		  RDS_IB_FLAG_RETURN) &
		(RDS_FLAG_CONG_BITMAP | RDS_FLAG_ACK_REQUIRED |
		 RDS_FLAG_RETRANSMITTED | RDS_FLAG_SILENT)));
#else
#include <string.h>
#include "frame.h"
#define RDS_FLAG_CONG_BITMAP	0x01
#endif

/* Flags no message of a packed frame may carry: it is never a control
 * frame or a congestion map, and only the first header says "packed".
 */
#define RDS_IB_PACK_FIRST_BAD	(RDS_IB_FLAG_CTRL | RDS_IB_FLAG_HB | \
				 RDS_FLAG_CONG_BITMAP)
#define RDS_IB_PACK_INNER_BAD	(RDS_IB_PACK_FIRST_BAD | RDS_IB_FLAG_PACK)

static const char *const rds_ib_frame_errs[RDS_IB_FRAME_E_MAX] = {
	[RDS_IB_FRAME_OK]	= "ok",
	[RDS_IB_FRAME_E_EMPTY]	= "packed frame with one message",
	[RDS_IB_FRAME_E_SHORT]	= "packed header cut short",
	[RDS_IB_FRAME_E_LEN]	= "packed message past the frame",
	[RDS_IB_FRAME_E_FLAGS]	= "packed message flags",
	[RDS_IB_FRAME_E_FIELDS]	= "packed header with ACK or credits",
};

const char *rds_ib_frame_err_name(enum rds_ib_frame_err err)
{
	if ((unsigned int)err >= RDS_IB_FRAME_E_MAX)
		return "unknown";
	return rds_ib_frame_errs[err];
}

bool rds_ib_pack_fits(u32 used, unsigned int n, u32 len, u32 frag,
		      unsigned int max)
{
	u32 room;

	if (n >= max || used > frag)
		return false;
	room = frag - used;
	/* rds_ib_pack_cost(n, len) <= room, without the sum wrapping */
	if (len > room)
		return false;
	return !n || room - len >= RDS_IB_HDR_LEN;
}

enum rds_ib_frame_err rds_ib_pack_first(u32 first_len, u8 flags,
					u32 data_len)
{
	if (flags & RDS_IB_PACK_FIRST_BAD)
		return RDS_IB_FRAME_E_FLAGS;
	if (first_len > data_len)
		return RDS_IB_FRAME_E_LEN;
	if (first_len == data_len)
		return RDS_IB_FRAME_E_EMPTY;
	return RDS_IB_FRAME_OK;
}

enum rds_ib_frame_err rds_ib_pack_next(const u8 *data, u32 data_len,
				       u32 *off, u32 *hdr_off, u32 *len)
{
	const u8 *h;
	__be64 ack;
	__be32 blen;
	u32 room;

	if (*off > data_len || data_len - *off < RDS_IB_HDR_LEN)
		return RDS_IB_FRAME_E_SHORT;
	h = data + *off;
	if (h[RDS_IB_HDR_FLAGS] & RDS_IB_PACK_INNER_BAD)
		return RDS_IB_FRAME_E_FLAGS;
	memcpy(&ack, h + RDS_IB_HDR_ACK, sizeof(ack));
	if (ack || h[RDS_IB_HDR_CREDIT])
		return RDS_IB_FRAME_E_FIELDS;
	memcpy(&blen, h + RDS_IB_HDR_LENGTH, sizeof(blen));
	room = data_len - *off - RDS_IB_HDR_LEN;
	if (be32_to_cpu(blen) > room)
		return RDS_IB_FRAME_E_LEN;
	*len = be32_to_cpu(blen);
	*hdr_off = *off;
	*off += RDS_IB_HDR_LEN + *len;
	return RDS_IB_FRAME_OK;
}
