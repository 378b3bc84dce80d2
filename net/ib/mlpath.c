// SPDX-License-Identifier: GPL-2.0
/*
 * The data path toward a peer that runs the kernel's RDS over IB
 * (Documentation/interop.md, "The data path toward a mainline peer"): the
 * parts of rds_ib_proto_ml (proto.c) that differ from ours.
 *
 * Send (send.c does the rest, never packing: i_pack_max stays 1):
 * - Every message goes as 4 KiB fragments, one SEND each with its own
 *   copy of the header (the peer's receive buffers hold 48 + 4096 bytes).
 *   Its last fragment, and an ACK-only frame, are solicited: the peer's
 *   receive CQ wakes it for solicited completions only.
 * - No credits: we grant it none in the handshake, so its flow control
 *   stays off, and it grants us none.  The send ring alone bounds what is
 *   in flight; a SEND that finds no receive posted is retried by the HCA
 *   (RNR retries for ever, asked in the handshake).
 * - It answers only a message flagged ACK_REQUIRED (or ACKs on its own
 *   data): on top of the core's rule (every 8 messages, 16 MiB, half a
 *   send buffer), a retransmission and the last message before the send
 *   queue runs empty ask for one, so that nothing we sent waits for an
 *   ACK that no rule would bring.
 * - Our congestion map is not a message to it: sequence 0, ports 0 and
 *   flags exactly CONG_BITMAP (with any other flag it would deliver the
 *   map to port 0).  It stays on our retransmit list (the core queued
 *   it) until a later message is acknowledged.
 * - An ACK-only frame: a header with ports 0, no data, flags 0, sequence
 *   0 (send.c, ctrl_flags 0).  Our ACKs count what we took on this
 *   connection only, as its own do (mlcm.c).
 *
 * Receive: its frames are a header and at most 4 KiB of one message: no
 * control, heartbeat or packed frames (a frame with one of those flags is
 * not its, and resets the connection), no credits (h_credit is ignored).
 * Every frame carries its ACK.  A frame with ports 0 and no data is an
 * ACK only.  A message flagged exactly CONG_BITMAP is its congestion map:
 * sequence 0, outside the sequence rule, not acknowledged, applied if it
 * has the map's size.  Other messages follow the core's sequence rule
 * (recv.c: one below the next expected is dropped only if flagged
 * RETRANSMITTED; anything else is delivered and moves the window, as
 * after the peer restarted at 1) and count toward our ACK, sent at once
 * when asked (ACK_REQUIRED).  Softirq context, one frame at a time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "ib.h"
#include "ml.h"
#include "path.h"

/* A data slot for the next frame; no credit.  NULL (and a stall) when
 * the ring is full: a send completion kicks the send work.
 */
struct rds_ib_send_slot *rds_ib_ml_slot_take(struct rds_ib_conn *ic,
					     u8 *grant)
{
	lockdep_assert_held(&ic->i_lock);
	*grant = 0;
	if (!rds_ib_sendq_data_room(ic->i_head, ic->i_tail, ic->i_sq.data)) {
		ic->i_xmit_stalled = true;
		return NULL;
	}
	return &ic->i_ring[ic->i_head % ic->i_sq.data];
}

void rds_ib_ml_frame_hdr(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
			 const struct rds_message *rm, unsigned int frag,
			 bool more)
{
	struct rds_header *hdr = &ic->i_hdrs[s - ic->i_ring];

	lockdep_assert_held(&ic->i_lock);
	*hdr = rm->m_inc.i_hdr;
	if (hdr->h_flags & RDS_FLAG_CONG_BITMAP) {
		hdr->h_flags = RDS_FLAG_CONG_BITMAP;
		hdr->h_sequence = 0;
		hdr->h_sport = 0;
		hdr->h_dport = 0;
		return;
	}
	/* It reads the flags of a message's first fragment only. */
	if (!frag)
		ic->i_xmit_flags = !more ||
				   (hdr->h_flags & RDS_FLAG_RETRANSMITTED) ?
				   RDS_FLAG_ACK_REQUIRED : 0;
	hdr->h_flags |= ic->i_xmit_flags;
}

/* Flags of ours that the kernel's RDS never sets. */
#define RDS_IB_ML_NOT_ITS	(RDS_IB_FLAG_CTRL | RDS_IB_FLAG_HB | \
				 RDS_IB_FLAG_PACK)

/* A whole message arrived: its congestion map, or a message. */
static void rds_ib_ml_recv_msg(struct rds_ib_conn *ic, struct rds_message *rm)
{
	struct rds_header *hdr = &rm->m_inc.i_hdr;

	if (hdr->h_flags != RDS_FLAG_CONG_BITMAP) {
		/* the bit is ours (RDMA_SILENT ops only); it may mean
		 * something else to another RDS: such a message is queued
		 */
		hdr->h_flags &= ~RDS_FLAG_SILENT;
		rds_ib_recv_deliver(ic, rm);
		return;
	}
	if (be32_to_cpu(hdr->h_len) == RDS_CONG_MAP_BYTES) {
		rds_ib_count(RDS_IB_C_CONG_RECV);
		/* no generation: the kernel's RDS */
		rds_cong_map_recv(ic->i_conn->c_fcong, rm, 0, true);
	} else {
		/* it ignores such a map too */
		rds_ib_count(RDS_IB_C_BAD_FRAMES);
	}
	rds_message_put(rm);
}

void rds_ib_ml_recv_frame(struct rds_ib_conn *ic, struct rds_ib_rx_buf *buf,
			  struct ib_wc *wc)
{
	struct rds_message *done = NULL;
	const char *why = NULL;
	struct rds_header hdr;
	u32 data_len;
	u64 seen;

	if (!rds_ib_recv_head(ic, buf, wc, &hdr, &data_len, &seen))
		return;
	/* It checks a non-zero checksum only. */
	if (hdr.h_csum && hdr.h_csum != rds_ib_hdr_csum(&hdr)) {
		rds_stats_inc(s_recv_drop_bad_checksum);
		rds_ib_recv_bad(ic, &hdr, "header checksum");
		return;
	}
	if (hdr.h_flags & RDS_IB_ML_NOT_ITS) {
		rds_ib_recv_bad(ic, &hdr, "a flag the kernel's RDS never sends");
		return;
	}
	if (data_len > RDS_IB_FRAG) {
		rds_ib_recv_bad(ic, &hdr, "fragment longer than 4 KiB");
		return;
	}
	if (!rds_ib_recv_take_ack(ic, &hdr, false))
		return;
	if (!hdr.h_sport && !hdr.h_dport && !data_len)
		return;		/* an ACK only */

	WRITE_ONCE(ic->i_last_active, jiffies);
	spin_lock_bh(&ic->i_rx_lock);
	done = rds_ib_recv_frag(ic, &hdr, buf, data_len, seen, true, &why);
	spin_unlock_bh(&ic->i_rx_lock);
	if (why) {
		rds_ib_recv_bad(ic, &hdr, why);
		return;
	}
	if (done)
		rds_ib_ml_recv_msg(ic, done);
	rds_ib_send_ctrl(ic);
}
