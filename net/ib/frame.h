/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frames of an IB/RoCE connection: what one SEND carries.  Pure code,
 * no locks or allocation: compiled into the module and into the
 * user-space unit test tools/testing/unit/frame_test (and the test peer),
 * so the ends cannot drift.
 *
 * Every SEND starts with a 48-byte RDS header (net/wire.h), which lands in
 * the receive buffer's header slot; what follows lands in its page:
 *
 *  - a data frame: one fragment (at most the fragment size) of the
 *    message the header describes;
 *  - a control frame (RDS_IB_FLAG_CTRL): nothing; the header carries only
 *    an ACK (h_ack) and credits (h_credit), and with RDS_IB_FLAG_HB asks
 *    the peer to answer (heartbeat); with RDS_IB_FLAG_RETURN (protocol
 *    minor 2, only to a peer whose handshake asked for it) it gives back
 *    h_sport (big-endian) of the credits the peer granted (credit.h);
 *  - a packed frame (RDS_IB_FLAG_PACK, protocol minor 1 and later): the
 *    whole data of the message the header describes, then more whole
 *    messages, each a header followed by its data, back to back:
 *
 *	[hdr 1 | header slot] [data 1][hdr 2][data 2] ... [hdr n][data n]
 *
 *    The first header carries the frame's ACK and credits, as any data
 *    frame does.  The inner headers carry neither (both 0) and none of
 *    the CTRL, HB, PACK or CONG_BITMAP flags; each has its own checksum
 *    and sequence number.  A packed frame takes one credit.  A receiver
 *    takes packed frames whatever minor was negotiated; a sender packs
 *    only when the peer offered minor 1 or later.
 */
#ifndef _RDS_IB_FRAME_H
#define _RDS_IB_FRAME_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kshim.h"
#endif

#define RDS_IB_HDR_LEN		48	/* sizeof(struct rds_header) */

/* h_flags bits of the IB transport (RDS_FLAG_* use the low three) */
#define RDS_IB_FLAG_CTRL	0x80	/* a control frame */
#define RDS_IB_FLAG_HB		0x40	/* control frame: answer me */
#define RDS_IB_FLAG_PACK	0x20	/* data frame: whole messages follow */
#define RDS_IB_FLAG_RETURN	0x08	/* control frame: credits given back */

/* Most messages a sender puts in one packed frame (copied into one
 * buffer: the frame takes two SGEs whatever their number): 7 of 1 KiB
 * fill a receive buffer of 8 KiB.
 */
#define RDS_IB_PACK_MAX		8

/* Where the fields a packed frame's walker reads sit in a header. */
#define RDS_IB_HDR_ACK		8	/* __be64 h_ack */
#define RDS_IB_HDR_LENGTH	16	/* __be32 h_len */
#define RDS_IB_HDR_FLAGS	24	/* u8 h_flags */
#define RDS_IB_HDR_CREDIT	25	/* u8 h_credit */

/* What is wrong with a packed frame. */
enum rds_ib_frame_err {
	RDS_IB_FRAME_OK = 0,
	RDS_IB_FRAME_E_EMPTY,	/* flagged packed, but only one message */
	RDS_IB_FRAME_E_SHORT,	/* a header cut by the end of the frame */
	RDS_IB_FRAME_E_LEN,	/* a message's data runs past the frame */
	RDS_IB_FRAME_E_FLAGS,	/* a flag a packed message may not carry */
	RDS_IB_FRAME_E_FIELDS,	/* an inner header carries ACK or credits */
	RDS_IB_FRAME_E_MAX,
};

const char *rds_ib_frame_err_name(enum rds_ib_frame_err err);

/* Sender: may a message of len bytes join a frame that holds n messages
 * taking used bytes of its data (the first message's data, then header
 * and data of each other one), given frag bytes of room and at most max
 * messages?  n == 0: a new frame, whose header goes in the header slot.
 */
bool rds_ib_pack_fits(u32 used, unsigned int n, u32 len, u32 frag,
		      unsigned int max);

/* The data bytes a message of len bytes adds to a frame holding n. */
static inline u32 rds_ib_pack_cost(unsigned int n, u32 len)
{
	return n ? RDS_IB_HDR_LEN + len : len;
}

/* Receiver: the first message of a packed frame, whose header (flags)
 * came in the header slot, takes first_len of the frame's data_len bytes.
 */
enum rds_ib_frame_err rds_ib_pack_first(u32 first_len, u8 flags,
					u32 data_len);

/* Receiver: the inner message at *off of the data_len bytes of a packed
 * frame's data.  On RDS_IB_FRAME_OK its header starts at *hdr_off, its
 * data (*len bytes) right after, and *off moves past it: the frame ends
 * when *off reaches data_len.  The checksum is the caller's to verify.
 */
enum rds_ib_frame_err rds_ib_pack_next(const u8 *data, u32 data_len,
				       u32 *off, u32 *hdr_off, u32 *len);

#endif /* _RDS_IB_FRAME_H */
