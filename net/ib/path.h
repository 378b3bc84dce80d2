/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the data paths of the two protocols of a connection (ours: send.c,
 * recv.c; the kernel's RDS: mlpath.c) share: the send slots and the
 * receive steps that do not depend on the protocol.
 */
#ifndef _RDS_IB_PATH_H
#define _RDS_IB_PATH_H

#include "ib.h"

/* The control frames' slot: the one after the data slots. */
#define RDS_IB_CTRL_SLOT(ic)	((ic)->i_sq.data)

/* send.c.  Under ic->i_lock, with ic->i_up. */
/* Ours: a data slot and a credit (rds_ib_proto.slot_take). */
struct rds_ib_send_slot *rds_ib_slot_take(struct rds_ib_conn *ic, u8 *grant);
/* Ours: a fragment's header is its message's (rds_ib_proto.frame_hdr). */
void rds_ib_frame_hdr(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
		      const struct rds_message *rm, unsigned int frag,
		      bool more);
void rds_ib_slot_release(struct rds_ib_conn *ic, struct rds_ib_send_slot *s);
/* Add len bytes at the start of page to the frame of slot s. */
int rds_ib_slot_add_page(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
			 struct page *page, u32 len);
/* Finish the header of slot s: its ACK, grant and checksum. */
void rds_ib_hdr_finish(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
		       u8 grant);
/* Finish and post the frame of data slot s; -ENOTCONN if refused. */
int rds_ib_slot_post(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
		     u8 grant, bool signal, bool alone, bool fence, bool last);
/* rm's last frame is posted: the peer may acknowledge it from now on. */
void rds_ib_posted(struct rds_ib_conn *ic, const struct rds_message *rm);
/* Whether the first frame after rm's op waits for it (IB_SEND_FENCE). */
bool rds_ib_op_fences(const struct rds_rdma_op *op);
/* Post what is left of rm's RDMA or atomic op: 0, -EAGAIN, -ENOTCONN. */
int rds_ib_op_post(struct rds_ib_conn *ic, struct rds_message *rm);

/* recv.c.  Softirq context, one frame of a queue pair at a time. */
/* Count the frame, drop a completion of an attempt gone, refuse one
 * shorter than a header, read the header: false if not to be taken.
 */
bool rds_ib_recv_head(struct rds_ib_conn *ic, struct rds_ib_rx_buf *buf,
		      struct ib_wc *wc, struct rds_header *hdr, u32 *data_len,
		      u64 *seen);
/* A frame was not taken (why): count it, trace it (hdr, or NULL for a
 * frame too short to have one) and reset the connection.
 */
void rds_ib_recv_bad(struct rds_ib_conn *ic, const struct rds_header *hdr,
		     const char *why);
/* Apply the ACK of hdr and kick the send work if it (or kick) may
 * unblock it; false (the connection resets) if it acknowledges what was
 * never posted.
 */
bool rds_ib_recv_take_ack(struct rds_ib_conn *ic, const struct rds_header *hdr,
			  bool kick);
/* A complete message: deliver it, and owe (or send) its ACK. */
bool rds_ib_recv_deliver(struct rds_ib_conn *ic, struct rds_message *rm);
/* Reassemble one fragment (ic->i_rx_lock held): a complete message or
 * NULL; *why on a protocol error.
 */
struct rds_message *rds_ib_recv_frag(struct rds_ib_conn *ic,
				     const struct rds_header *hdr,
				     struct rds_ib_rx_buf *buf, u32 data_len,
				     u64 seen, bool in_window,
				     const char **why);

#endif /* _RDS_IB_PATH_H */
