// SPDX-License-Identifier: GPL-2.0
/*
 * The IB send path: messages are cut into fragments, one SEND each with
 * its own copy of the header (carrying the current ACK and credit grant),
 * posted through a ring of send slots.  Control frames (ACKs and credit
 * updates) use one extra slot, one at a time.
 *
 * Completions: only every RDS_IB_SIGNAL_EVERY-th data frame, the last
 * frame of a multi-frame message when nothing follows, the last before a
 * stall and control frames are signalled; a signalled
 * completion retires every slot before it (send completions of one queue
 * pair arrive in order).  A send completion only frees the slot: the
 * message itself stays held until the peer's RDS-level ACK, which may
 * arrive before or after the completion.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "ib.h"

#define RDS_IB_SIGNAL_EVERY	16
#define RDS_IB_CTRL_SLOT	RDS_IB_SEND_RING

static void rds_ib_send_done(struct ib_cq *cq, struct ib_wc *wc);

int rds_ib_ring_alloc(struct rds_ib_conn *ic)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	unsigned int i, n = RDS_IB_SEND_RING + 1;

	ic->i_ring = kvcalloc(n, sizeof(*ic->i_ring), GFP_KERNEL);
	ic->i_hdrs = kcalloc(n, sizeof(*ic->i_hdrs), GFP_KERNEL);
	if (!ic->i_ring || !ic->i_hdrs)
		goto err;
	ic->i_hdrs_dma = ib_dma_map_single(dev, ic->i_hdrs,
					   n * sizeof(*ic->i_hdrs),
					   DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, ic->i_hdrs_dma))
		goto err;
	for (i = 0; i < n; i++) {
		struct rds_ib_send_slot *s = &ic->i_ring[i];

		s->s_cqe.done = rds_ib_send_done;
		s->s_ic = ic;
		s->s_wr.wr_cqe = &s->s_cqe;
		s->s_wr.sg_list = s->s_sge;
		s->s_wr.opcode = IB_WR_SEND;
		s->s_sge[0].addr = ic->i_hdrs_dma + i * sizeof(*ic->i_hdrs);
		s->s_sge[0].length = sizeof(*ic->i_hdrs);
		s->s_sge[0].lkey = ic->i_rdev->rd_pd->local_dma_lkey;
		s->s_sge[1].lkey = ic->i_rdev->rd_pd->local_dma_lkey;
	}
	ic->i_head = 0;
	ic->i_tail = 0;
	ic->i_since_signal = 0;
	return 0;
err:
	kfree(ic->i_hdrs);
	kvfree(ic->i_ring);
	ic->i_hdrs = NULL;
	ic->i_ring = NULL;
	return -ENOMEM;
}

/* Release a slot's fragment: unmap it and drop its message reference. */
static void rds_ib_slot_release(struct rds_ib_conn *ic,
				struct rds_ib_send_slot *s)
{
	if (s->s_data_len)
		ib_dma_unmap_page(ic->i_rdev->rd_dev, s->s_data_dma,
				  s->s_data_len, DMA_TO_DEVICE);
	s->s_data_len = 0;
	if (s->s_rm) {
		rds_message_put(s->s_rm);
		s->s_rm = NULL;
	}
}

/* The queue pair is drained: no completion can come any more.  Release
 * every slot still in flight and the partly sent message.
 */
void rds_ib_send_reset(struct rds_ib_conn *ic)
{
	struct rds_message *rm;

	spin_lock_bh(&ic->i_lock);
	if (ic->i_ring) {
		while (ic->i_tail != ic->i_head) {
			rds_ib_slot_release(ic, &ic->i_ring[ic->i_tail %
							   RDS_IB_SEND_RING]);
			ic->i_tail++;
		}
	}
	rm = ic->i_xmit_rm;
	ic->i_xmit_rm = NULL;
	ic->i_xmit_frag = 0;
	ic->i_xmit_stalled = false;
	spin_unlock_bh(&ic->i_lock);
	if (rm)
		rds_message_put(rm);
}

void rds_ib_ring_free(struct rds_ib_conn *ic)
{
	if (!ic->i_ring)
		return;
	ib_dma_unmap_single(ic->i_rdev->rd_dev, ic->i_hdrs_dma,
			    (RDS_IB_SEND_RING + 1) * sizeof(*ic->i_hdrs),
			    DMA_TO_DEVICE);
	kfree(ic->i_hdrs);
	kvfree(ic->i_ring);
	ic->i_hdrs = NULL;
	ic->i_ring = NULL;
}

/* Fill in the per-frame fields of the header of slot s: the ACK and the
 * credits it carries, and the checksum.
 */
static void rds_ib_hdr_finish(struct rds_ib_conn *ic,
			      struct rds_ib_send_slot *s, u8 grant)
{
	unsigned int i = s - ic->i_ring;
	struct rds_header *hdr = &ic->i_hdrs[i];
	u64 ack = READ_ONCE(ic->i_rx_delivered);

	lockdep_assert_held(&ic->i_lock);
	hdr->h_ack = cpu_to_be64(ack);
	hdr->h_credit = grant;
	hdr->h_csum = rds_ib_hdr_csum(hdr);
	ib_dma_sync_single_for_device(ic->i_rdev->rd_dev, s->s_sge[0].addr,
				      sizeof(*hdr), DMA_TO_DEVICE);
	/* The ACK rides on this frame. */
	if (ack != ic->i_ack_sent)
		rds_ib_count(RDS_IB_C_TX_ACKS);
	ic->i_ack_sent = ack;
	ic->i_ack_owed = false;
	ic->i_rx_unacked = 0;
	ic->i_rx_unacked_bytes = 0;
}

static void rds_ib_credits_peak(struct rds_ib_conn *ic)
{
	u64 used = ic->i_peer_grant - ic->i_credit.avail;

	if (used > atomic64_read(&rds_ib_counters[RDS_IB_C_CREDITS_PEAK]))
		atomic64_set(&rds_ib_counters[RDS_IB_C_CREDITS_PEAK], used);
}

/* Post as many fragments of rm as credits and slots allow, from
 * i_xmit_frag on.  0 when the whole message is posted.
 */
static int rds_ib_post_frags(struct rds_ib_conn *ic, struct rds_message *rm,
			     bool more_queued)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	unsigned int nfrags = max_t(unsigned int, 1,
				    DIV_ROUND_UP(rm->m_len, RDS_IB_FRAG));
	struct ib_send_wr *first = NULL, *last = NULL;
	const struct ib_send_wr *bad;
	int ret = 0;
	u8 grant;

	lockdep_assert_held(&ic->i_lock);
	while (ic->i_xmit_frag < nfrags) {
		unsigned int f = ic->i_xmit_frag;
		struct rds_ib_send_slot *s;
		u32 len;

		if (ic->i_head - ic->i_tail >= RDS_IB_SEND_RING) {
			ret = -EAGAIN;
			break;
		}
		if (!rds_ib_credit_take(&ic->i_credit, &grant)) {
			rds_ib_count(RDS_IB_C_CREDIT_WAITS);
			ret = -EAGAIN;
			break;
		}
		rds_ib_credits_peak(ic);
		s = &ic->i_ring[ic->i_head % RDS_IB_SEND_RING];
		len = min_t(u32, rm->m_len - f * RDS_IB_FRAG, RDS_IB_FRAG);
		if (len) {
			s->s_data_dma = ib_dma_map_page(dev,
							sg_page(&rm->m_sg[f]),
							0, len, DMA_TO_DEVICE);
			if (ib_dma_mapping_error(dev, s->s_data_dma)) {
				ret = -ENOMEM;
				break;
			}
			s->s_sge[1].addr = s->s_data_dma;
			s->s_sge[1].length = len;
		}
		s->s_data_len = len;
		s->s_wr.num_sge = len ? 2 : 1;
		rds_message_get(rm);
		s->s_rm = rm;
		ic->i_hdrs[s - ic->i_ring] = rm->m_inc.i_hdr;
		rds_ib_hdr_finish(ic, s, grant);

		s->s_wr.next = NULL;
		s->s_wr.send_flags = 0;
		/* Every 16th frame; and the end of a multi-frame message
		 * when nothing follows, so that its pages are not held by
		 * the ring while the connection is idle (single frames wait
		 * for the next signalled one: at most 15 pages).
		 */
		if (++ic->i_since_signal >= RDS_IB_SIGNAL_EVERY ||
		    (f + 1 == nfrags && nfrags > 1 && !more_queued)) {
			s->s_wr.send_flags = IB_SEND_SIGNALED;
			ic->i_since_signal = 0;
		}
		if (last)
			last->next = &s->s_wr;
		else
			first = &s->s_wr;
		last = &s->s_wr;
		ic->i_head++;
		ic->i_xmit_frag++;
		rds_ib_count(RDS_IB_C_TX_FRAMES);
		WRITE_ONCE(ic->i_last_active, jiffies);
	}

	if (first) {
		/* Stopping early: make sure a completion will free slots. */
		if (ret && !(last->send_flags & IB_SEND_SIGNALED)) {
			last->send_flags = IB_SEND_SIGNALED;
			ic->i_since_signal = 0;
		}
		if (ib_post_send(ic->i_qp, first, &bad)) {
			/* Slots stay in the ring: the reset releases them. */
			ic->i_up = false;
			return -ENOTCONN;
		}
	}
	if (ret == -EAGAIN)
		ic->i_xmit_stalled = true;
	return ret;
}

/* Transmit rm (called by rds_send_xmit(), one thread at a time).  A
 * message is posted whole before the next one starts, even across
 * -EAGAIN and even if it was cancelled meanwhile: the peer must never see
 * a message's fragments interleaved with another's.
 */
int rds_ib_xmit(struct rds_connection *conn, struct rds_message *rm)
{
	struct rds_ib_conn *ic = conn->c_transport_data;
	bool more = !list_empty_careful(&conn->c_send_queue);
	struct rds_message *done = NULL;
	bool lost = false;
	int ret;

	spin_lock_bh(&ic->i_lock);
	if (!ic->i_up) {
		ret = -ENOTCONN;
		goto out;
	}
	ic->i_xmit_stalled = false;
	if (ic->i_xmit_rm && ic->i_xmit_rm != rm) {
		ret = rds_ib_post_frags(ic, ic->i_xmit_rm, true);
		if (ret)
			goto out;
		done = ic->i_xmit_rm;
		ic->i_xmit_rm = NULL;
	}
	if (!ic->i_xmit_rm) {
		rds_message_get(rm);
		ic->i_xmit_rm = rm;
		ic->i_xmit_frag = 0;
		if (rm->m_inc.i_hdr.h_flags & RDS_FLAG_CONG_BITMAP)
			rds_ib_count(RDS_IB_C_CONG_SENT);
	}
	ret = rds_ib_post_frags(ic, rm, more);
	if (!ret) {
		ic->i_xmit_rm = NULL;
		rds_message_put(rm);	/* the i_xmit_rm reference */
	}
	lost = ret == -ENOTCONN;
out:
	spin_unlock_bh(&ic->i_lock);
	if (done)
		rds_message_put(done);
	if (lost)
		rds_ib_conn_error(ic, "post send failed");
	return ret;
}

/* Send a control frame (ACK and/or credit grant) if one is due and none
 * is in flight.  Any context.
 */
void rds_ib_send_ctrl(struct rds_ib_conn *ic)
{
	struct rds_ib_send_slot *s;
	const struct ib_send_wr *bad;
	struct rds_header *hdr;
	bool want_ack, lost = false;
	u8 grant;

	spin_lock_bh(&ic->i_lock);
	if (!ic->i_up || ic->i_credit.ctrl_busy)
		goto out;
	want_ack = ic->i_ack_owed &&
		   READ_ONCE(ic->i_rx_delivered) != ic->i_ack_sent;
	if (!want_ack && !ic->i_hb_ask && !ic->i_hb_answer &&
	    !rds_ib_credit_want_update(&ic->i_credit,
				       max_t(u32, 1, ic->i_grant / 4)))
		goto out;

	rds_ib_credit_take_ctrl(&ic->i_credit, &grant);
	s = &ic->i_ring[RDS_IB_CTRL_SLOT];
	hdr = &ic->i_hdrs[RDS_IB_CTRL_SLOT];
	memset(hdr, 0, sizeof(*hdr));
	hdr->h_flags = RDS_IB_FLAG_CTRL;
	if (ic->i_hb_ask) {
		hdr->h_flags |= RDS_IB_FLAG_HB;
		rds_ib_count(RDS_IB_C_HB_SENT);
	}
	ic->i_hb_ask = false;
	ic->i_hb_answer = false;
	rds_ib_hdr_finish(ic, s, grant);
	s->s_wr.next = NULL;
	s->s_wr.num_sge = 1;
	s->s_wr.send_flags = IB_SEND_SIGNALED;
	rds_ib_count(RDS_IB_C_TX_CTRL);
	if (ib_post_send(ic->i_qp, &s->s_wr, &bad)) {
		ic->i_up = false;
		lost = true;
	}
out:
	spin_unlock_bh(&ic->i_lock);
	if (lost)
		rds_ib_conn_error(ic, "post send failed");
}

/* Runs in softirq context from the connection's send CQ. */
static void rds_ib_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_send_slot *slot =
		container_of(wc->wr_cqe, struct rds_ib_send_slot, s_cqe);
	struct rds_ib_conn *ic = slot->s_ic;
	bool kick = false;

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR) {
		if (wc->status == IB_WC_RNR_RETRY_EXC_ERR)
			rds_ib_count(RDS_IB_C_RNR);
		pr_warn_ratelimited("send to %pI6c failed: %s\n",
				    &ic->i_conn->c_faddr,
				    ib_wc_status_msg(wc->status));
		rds_ib_conn_error(ic, "send error");
	} else if (wc->status == IB_WC_WR_FLUSH_ERR && READ_ONCE(ic->i_up)) {
		/* The QP went to the error state on its own (the device
		 * failed a transmit): flushes while we are up mean the
		 * connection is gone.  After teardown began they are ours.
		 */
		pr_warn_ratelimited("send to %pI6c flushed: the queue pair failed\n",
				    &ic->i_conn->c_faddr);
		rds_ib_conn_error(ic, "queue pair failed");
	}

	spin_lock_bh(&ic->i_lock);
	if (slot == &ic->i_ring[RDS_IB_CTRL_SLOT]) {
		rds_ib_credit_ctrl_done(&ic->i_credit);
	} else {
		/* Retire every slot up to and including this one. */
		while (ic->i_tail != ic->i_head) {
			struct rds_ib_send_slot *s =
				&ic->i_ring[ic->i_tail % RDS_IB_SEND_RING];

			rds_ib_slot_release(ic, s);
			ic->i_tail++;
			if (s == slot)
				break;
		}
		kick = ic->i_xmit_stalled;
	}
	spin_unlock_bh(&ic->i_lock);

	if (kick)
		queue_work(rds_ib_wq, &ic->i_send_work);
	if (wc->status == IB_WC_SUCCESS)
		rds_ib_send_ctrl(ic);
}

/* Runs when credits or send slots were freed while a sender waited. */
void rds_ib_send_work(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(work, struct rds_ib_conn,
					      i_send_work);

	rds_send_xmit(ic->i_conn);
}

/* Runs when the delayed ACK is due: nothing went out that carried it. */
void rds_ib_ack_timer(struct timer_list *t)
{
	struct rds_ib_conn *ic = from_timer(ic, t, i_ack_timer);

	spin_lock_bh(&ic->i_lock);
	if (READ_ONCE(ic->i_rx_delivered) != ic->i_ack_sent)
		ic->i_ack_owed = true;
	spin_unlock_bh(&ic->i_lock);
	rds_ib_send_ctrl(ic);
}
