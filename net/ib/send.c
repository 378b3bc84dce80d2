// SPDX-License-Identifier: GPL-2.0
/*
 * The IB send path: messages are cut into fragments, one SEND each with
 * its own copy of the header (carrying the current ACK and credit grant),
 * posted through a ring of send slots.  Control frames (ACKs and credit
 * updates) use one extra slot, one at a time.
 *
 * Small messages queued back to back share a frame (a packed frame,
 * frame.h): each is held in i_pack while the send queue has more, and the
 * frame is posted when it is full, when the next message does not fit or
 * is not small, or when the queue runs empty (rds_ib_xmit_done()); its
 * messages are copied into one buffer, so that it takes two SGEs (without
 * the buffer they go one frame each, in order).  While
 * an eighth of the peer's grant or more is in use and a message posted is
 * not yet acknowledged, a lone small message waits too, until the peer's
 * ACK (rds_ib_pack_corked()).
 *
 * Completions: only every i_signal_every-th data frame, the last
 * frame of a multi-frame message when nothing follows, the frame after
 * which nothing can go when a packed frame's copy would stay held
 * (rds_ib_slot_post()) and control frames are signalled (a full ring
 * holds several signalled frames); a signalled
 * completion retires every slot before it (send completions of one queue
 * pair arrive in order).  A send completion only frees the slot: the
 * message itself stays held until the peer's RDS-level ACK, which may
 * arrive before or after the completion.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "../fault.h"
#include "../neg.h"
#include "ib.h"
#include "../trace/rds.h"
#include "path.h"

static void rds_ib_send_done(struct ib_cq *cq, struct ib_wc *wc);

/* The send queue of the attempt being set up, from net.rds.ib.max_send_wr
 * and max_unsignaled_wr as they are now (a change applies to the next
 * attempt) and what the device's queue pairs and CQs take (sendq.h).
 * -EINVAL, logged, if even the smallest send queue does not fit the
 * device: the attempt fails before its queue pair or CQ is asked for.
 */
int rds_ib_send_sizes(struct rds_ib_conn *ic,
		      const struct ib_device_attr *attrs)
{
	u32 max_qp_wr = max_t(int, attrs->max_qp_wr, 0);
	u32 max_cqe = max_t(int, attrs->max_cqe, 0);
	u32 max_sge = max_t(int, attrs->max_send_sge, 0);

	lockdep_assert_held(&ic->i_cm_mutex);
	rds_ib_flow_control_check();
	if (!rds_ib_sendq_size(READ_ONCE(rds_ib_max_send_wr), max_qp_wr,
			       max_cqe, max_sge, &ic->i_sq)) {
		pr_warn_ratelimited("%s: too small for a connection's send queue: it needs %u work requests of %u SGEs and a CQ of %u entries, the device takes %u, %u and %u\n",
				    dev_name(&ic->i_rdev->rd_dev->dev),
				    ic->i_sq.qp_wr, RDS_IB_SEND_SGE_MIN,
				    ic->i_sq.cqe, max_qp_wr, max_sge,
				    max_cqe);
		return -EINVAL;
	}
	ic->i_signal_every =
		rds_ib_sendq_signal_every(READ_ONCE(rds_ib_max_unsignaled_wr),
					  ic->i_sq.data);
	return 0;
}

int rds_ib_ring_alloc(struct rds_ib_conn *ic)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	unsigned int i, n = ic->i_sq.data + 1;

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
		s->s_wr.num_sge = 1;
		s->s_sge[0].addr = ic->i_hdrs_dma + i * sizeof(*ic->i_hdrs);
		s->s_sge[0].length = sizeof(*ic->i_hdrs);
		s->s_sge[0].lkey = ic->i_rdev->rd_pd->local_dma_lkey;
	}
	ic->i_head = 0;
	ic->i_tail = 0;
	ic->i_since_signal = 0;
	ic->i_copy_unsig = false;
	ic->i_extra = 0;
	return 0;
err:
	kfree(ic->i_hdrs);
	kvfree(ic->i_ring);
	ic->i_hdrs = NULL;
	ic->i_ring = NULL;
	return -ENOMEM;
}

/* Release what a slot's frame holds: unmap its data (and free it if it
 * is a copy) and drop its message references.
 */
void rds_ib_slot_release(struct rds_ib_conn *ic, struct rds_ib_send_slot *s)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	struct ib_sge *sge = &s->s_sge[1];
	unsigned int i;

	if (s->s_wr.num_sge > 1) {
		if (s->s_copy)
			ib_dma_unmap_single(dev, sge->addr, sge->length,
					    DMA_TO_DEVICE);
		else
			ib_dma_unmap_page(dev, sge->addr, sge->length,
					  DMA_TO_DEVICE);
	}
	if (s->s_copy)
		atomic64_dec(&rds_ib_counters[RDS_IB_C_PACK_COPIES]);
	kfree(s->s_copy);
	s->s_copy = NULL;
	s->s_wr.num_sge = 1;
	for (i = 0; i < s->s_nrm; i++)
		rds_message_put(s->s_rm[i]);
	s->s_nrm = 0;
}

/* Add len bytes at the start of page to the frame of slot s. */
int rds_ib_slot_add_page(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
			 struct page *page, u32 len)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	struct ib_sge *sge;
	u64 dma;

	if (!len)
		return 0;
	/* a frame has its header and one data SGE (struct rds_ib_send_slot) */
	if (WARN_ON_ONCE(s->s_wr.num_sge >= ARRAY_SIZE(s->s_sge)))
		return -EINVAL;
	sge = &s->s_sge[s->s_wr.num_sge];
	dma = ib_dma_map_page(dev, page, 0, len, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, dma))
		return -ENOMEM;
	sge->addr = dma;
	sge->length = len;
	sge->lkey = ic->i_rdev->rd_pd->local_dma_lkey;
	s->s_wr.num_sge++;
	return 0;
}

/* Add a packed frame's data, copied into buf (len bytes, taken over by
 * the slot: freed with it, or here on an error), to slot s.
 */
static int rds_ib_slot_add_copy(struct rds_ib_conn *ic,
				struct rds_ib_send_slot *s, void *buf, u32 len)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	struct ib_sge *sge;
	u64 dma;

	if (WARN_ON_ONCE(s->s_wr.num_sge >= ARRAY_SIZE(s->s_sge) ||
			 s->s_copy)) {
		kfree(buf);
		return -EINVAL;
	}
	sge = &s->s_sge[s->s_wr.num_sge];
	s->s_copy = buf;
	atomic64_inc(&rds_ib_counters[RDS_IB_C_PACK_COPIES]);
	dma = ib_dma_map_single(dev, buf, len, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, dma))
		return -ENOMEM;
	sge->addr = dma;
	sge->length = len;
	sge->lkey = ic->i_rdev->rd_pd->local_dma_lkey;
	s->s_wr.num_sge++;
	return 0;
}

/* Drop the messages held for a packed frame that will not be sent. */
static void rds_ib_pack_drop(struct rds_ib_conn *ic)
{
	lockdep_assert_held(&ic->i_lock);
	while (ic->i_pack_n)
		rds_message_put(ic->i_pack[--ic->i_pack_n]);
	ic->i_pack_used = 0;
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
							   ic->i_sq.data]);
			ic->i_tail++;
		}
	}
	rm = ic->i_xmit_rm;
	if (rm)
		rds_ib_op_reset(&rm->m_op);
	ic->i_xmit_rm = NULL;
	ic->i_xmit_frag = 0;
	ic->i_xmit_stalled = false;
	rds_ib_pack_drop(ic);
	spin_unlock_bh(&ic->i_lock);
	if (rm)
		rds_message_put(rm);
}

void rds_ib_ring_free(struct rds_ib_conn *ic)
{
	if (!ic->i_ring)
		return;
	ib_dma_unmap_single(ic->i_rdev->rd_dev, ic->i_hdrs_dma,
			    (ic->i_sq.data + 1) * sizeof(*ic->i_hdrs),
			    DMA_TO_DEVICE);
	kfree(ic->i_hdrs);
	kvfree(ic->i_ring);
	ic->i_hdrs = NULL;
	ic->i_ring = NULL;
}

/* Fill in the per-frame fields of the header of slot s: the ACK and the
 * credits it carries, and the checksum.
 */
void rds_ib_hdr_finish(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
		       u8 grant)
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

/* The credits_peak level: credits in use, not those given back (after a
 * give-back a lower estimate: rds_ib_credit_corked()).
 */
static void rds_ib_credits_peak(struct rds_ib_conn *ic)
{
	u64 used = ic->i_credit.used;

	if (used > atomic64_read(&rds_ib_counters[RDS_IB_C_CREDITS_PEAK]))
		atomic64_set(&rds_ib_counters[RDS_IB_C_CREDITS_PEAK], used);
}

void rds_ib_frame_hdr(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
		      const struct rds_message *rm, unsigned int frag,
		      bool more)
{
	ic->i_hdrs[s - ic->i_ring] = rm->m_inc.i_hdr;
}

/* Take a slot and a credit for the next frame.  NULL (and a stall) when
 * there is none: the peer's credits or a send completion will kick the
 * send work.
 */
struct rds_ib_send_slot *rds_ib_slot_take(struct rds_ib_conn *ic, u8 *grant)
{
	lockdep_assert_held(&ic->i_lock);
	if (!rds_ib_sendq_data_room(ic->i_head, ic->i_tail, ic->i_sq.data)) {
		ic->i_xmit_stalled = true;
		return NULL;
	}
	if (!rds_ib_credit_take(&ic->i_credit, grant)) {
		rds_ib_count(RDS_IB_C_CREDIT_WAITS);
		if (trace_rds_ib_credit_stall_enabled()) {
			struct rds_connection *conn = ic->i_conn;
			/* Queued and not yet wholly posted, by sequence
			 * number (read without c_lock: a trace's estimate).
			 */
			u64 queued = data_race(conn->c_next_tx_seq) - 1;
			u32 waiting = 0;

			if (rds_seq_after(queued, ic->i_posted_seq))
				waiting = queued - ic->i_posted_seq;
			trace_rds_ib_credit_stall(conn, ic->i_credit.avail,
						  waiting);
		}
		ic->i_xmit_stalled = true;
		return NULL;
	}
	rds_ib_credits_peak(ic);
	return &ic->i_ring[ic->i_head % ic->i_sq.data];
}

/* The frame in slot s is built: finish its header, decide whether it is
 * signalled and post it.  signal: the poster wants it signalled; alone:
 * nothing is queued behind it; last: it ends a message (the protocol may
 * want the peer woken, solicit_last).  -ENOTCONN if the QP refused it.
 */
int rds_ib_slot_post(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
		     u8 grant, bool signal, bool alone, bool fence, bool last)
{
	const struct ib_send_wr *bad;
	bool copies;

	lockdep_assert_held(&ic->i_lock);
	rds_ib_hdr_finish(ic, s, grant);
	s->s_wr.next = NULL;
	/* After an RDMA READ or atomic: not before its data is back. */
	s->s_wr.send_flags = fence ? IB_SEND_FENCE : 0;
	if (last)
		s->s_wr.send_flags |= ic->i_proto->solicit_last;
	/* A copy held by an unsignalled frame is freed by the completion
	 * of a signalled one after it: the frame after which nothing can
	 * go now (nothing queued, or no credit for the next one) is
	 * signalled if a copy would stay.  (A full ring holds signalled
	 * frames, whose completions kick the send work.)
	 */
	copies = !rds_neg_idlecopy() && (ic->i_copy_unsig || s->s_copy);
	if (rds_ib_sendq_signal(ic->i_since_signal, ic->i_signal_every,
				signal, copies, alone || !ic->i_credit.avail)) {
		s->s_wr.send_flags |= IB_SEND_SIGNALED;
		ic->i_since_signal = 0;
		ic->i_copy_unsig = false;
	} else {
		ic->i_since_signal++;
		ic->i_copy_unsig = ic->i_copy_unsig || s->s_copy;
	}
	ic->i_head++;
	rds_ib_count(RDS_IB_C_TX_FRAMES);
	WRITE_ONCE(ic->i_last_active, jiffies);
	/* not idle: no give-back (rds_ib_gb_check()) */
	ic->i_last_tx = jiffies;
	ic->i_gb_due = false;
	if (ib_post_send(ic->i_qp, &s->s_wr, &bad)) {
		/* The slot stays in the ring: the reset releases it. */
		ic->i_up = false;
		return -ENOTCONN;
	}
	return 0;
}

/* rm's last frame is posted: the peer may acknowledge it from now on. */
void rds_ib_posted(struct rds_ib_conn *ic, const struct rds_message *rm)
{
	u64 seq = be64_to_cpu(rm->m_inc.i_hdr.h_sequence);

	lockdep_assert_held(&ic->i_lock);
	if (rds_seq_after(seq, ic->i_posted_seq))
		ic->i_posted_seq = seq;
}

/* The frame data bytes of the messages held, as the peer's receive
 * buffer takes them: recomputed after the first ones went.
 */
static void rds_ib_pack_recount(struct rds_ib_conn *ic)
{
	unsigned int i;

	ic->i_pack_used = 0;
	for (i = 0; i < ic->i_pack_n; i++)
		ic->i_pack_used += rds_ib_pack_cost(i, ic->i_pack[i]->m_len);
}

/* Copy the data of the messages of slot s into buf (size bytes), as a
 * packed frame carries it after its first header (frame.h): the first
 * message's data, then the header and data of each other one.  The inner
 * headers carry neither ACK nor credits; the messages' own headers are
 * not touched.  buf was sized by what i_pack_used counted for them: each
 * piece is checked against what is left of it before it is written, and
 * the whole must fill it (false, and nothing written past its end, when
 * a count of ours is wrong).
 */
static bool rds_ib_pack_copy(struct rds_ib_send_slot *s, u8 *buf, u32 size)
{
	unsigned int i;
	u32 off = 0;

	for (i = 0; i < s->s_nrm; i++) {
		struct rds_message *rm = s->s_rm[i];

		if (i) {
			struct rds_header inner = rm->m_inc.i_hdr;

			if (WARN_ON_ONCE(size - off < sizeof(inner)))
				return false;
			inner.h_ack = 0;
			inner.h_credit = 0;
			inner.h_csum = rds_ib_hdr_csum(&inner);
			memcpy(buf + off, &inner, sizeof(inner));
			off += sizeof(inner);
		}
		if (rm->m_len) {
			if (WARN_ON_ONCE(size - off < rm->m_len))
				return false;
			memcpy_from_page(buf + off, sg_page(&rm->m_sg[0]),
					 rm->m_sg[0].offset, rm->m_len);
			off += rm->m_len;
		}
	}
	return !WARN_ON_ONCE(off != size);
}

/* Post the oldest messages held in i_pack as one frame: all of them,
 * copied into one buffer if more than one; or, if that buffer cannot be
 * had now, the oldest one alone (its data mapped where it is).  alone:
 * nothing is queued behind the messages held.  -EAGAIN: no credit or
 * slot now, they stay held.
 */
static int rds_ib_pack_post_one(struct rds_ib_conn *ic, bool alone)
{
	unsigned int i, n = ic->i_pack_n;
	struct rds_ib_send_slot *s;
	struct rds_header *hdr;
	struct rds_message *last;
	u32 used = ic->i_pack_used;
	void *copy = NULL;
	u8 grant;
	int ret;

	lockdep_assert_held(&ic->i_lock);
	s = ic->i_proto->slot_take(ic, &grant);
	if (!s)
		return -EAGAIN;
	if (n > 1) {
		copy = rds_fault() ? NULL :
		       kmalloc(used, GFP_NOWAIT | __GFP_NOWARN);
		if (!copy) {
			rds_ib_count(RDS_IB_C_PACK_NOMEM);
			n = 1;
		}
	}
	hdr = &ic->i_hdrs[s - ic->i_ring];
	*hdr = ic->i_pack[0]->m_inc.i_hdr;
	if (n > 1)
		hdr->h_flags |= RDS_IB_FLAG_PACK;
	/* The slot owns the references of the messages it sends from here
	 * on, so that a mapping failure below releases them with it.
	 */
	for (i = 0; i < n; i++)
		s->s_rm[s->s_nrm++] = ic->i_pack[i];
	last = ic->i_pack[n - 1];	/* held in order: the highest number */
	alone = alone && n == ic->i_pack_n;	/* none held behind it */
	ic->i_pack_n -= n;
	memmove(ic->i_pack, ic->i_pack + n, ic->i_pack_n * sizeof(*ic->i_pack));
	rds_ib_pack_recount(ic);
	if (copy) {
		/* (a count of ours wrong: the frame is not sent) */
		if (!rds_ib_pack_copy(s, copy, used)) {
			kfree(copy);
			goto unmap;
		}
		if (rds_ib_slot_add_copy(ic, s, copy, used))
			goto unmap;
	} else if (last->m_len &&
		   rds_ib_slot_add_page(ic, s, sg_page(&last->m_sg[0]),
					last->m_len)) {
		goto unmap;
	}
	ret = rds_ib_slot_post(ic, s, grant, false, alone, false, true);
	if (!ret)
		rds_ib_posted(ic, last);	/* the slot holds a reference */
	return ret;

unmap:
	/* No mapping: the connection resets and the messages go again. */
	rds_ib_slot_release(ic, s);
	ic->i_up = false;
	return -ENOTCONN;
}

/* Post every message held in i_pack, in order: as one packed frame if
 * the copy can be had, else one frame each.  alone: nothing is queued
 * behind them.  -EAGAIN: no credit or slot now, the ones not posted stay
 * held.
 */
static int rds_ib_pack_post(struct rds_ib_conn *ic, bool alone)
{
	int ret;

	lockdep_assert_held(&ic->i_lock);
	while (ic->i_pack_n) {
		ret = rds_ib_pack_post_one(ic, alone);
		if (ret)
			return ret;
	}
	return 0;
}

/* Can rm share a packed frame?  Only whole one-fragment data messages. */
static bool rds_ib_packable(struct rds_ib_conn *ic, struct rds_message *rm)
{
	return ic->i_pack_max > 1 &&
	       rm->m_len <= RDS_IB_FRAG - RDS_IB_HDR_LEN &&
	       !(rm->m_inc.i_hdr.h_flags & RDS_FLAG_CONG_BITMAP) &&
	       rm->m_op.o_kind == RDS_OPK_NONE && list_empty(&rm->m_regs);
}

/* Whether small messages wait to be packed even with nothing queued
 * behind them: while an eighth of the peer's grant or more is in use
 * (sent and not yet granted back: credits given back do not count; after
 * a give-back a lower estimate, so a message may go alone where an exact
 * count would hold it: rds_ib_credit_corked()) and messages posted are
 * not yet acknowledged.
 * They could not reach the peer before those frames anyway, and a frame
 * that kicks the send work, which posts what is held, is certain: the
 * peer's ACK of the messages posted (delayed by a tick at most;
 * rds_ib_recv_ack()).  Its credits are not certain: a peer may keep
 * refills back (ours does while its receive pool is in debt), and the
 * credits used then come back only as it earns them back.
 */
static bool rds_ib_pack_corked(struct rds_ib_conn *ic)
{
	lockdep_assert_held(&ic->i_lock);
	return rds_ib_credit_corked(&ic->i_credit, ic->i_peer_grant) &&
	       rds_seq_after(ic->i_posted_seq, ic->i_ack_seen);
}

/* Hold rm for a packed frame, posting the frame when it is full, or when
 * nothing else is queued and the connection is not corked.  0: rm is
 * taken (posted, or held until more messages or credits come); -EAGAIN:
 * the frame before it could not go, nor can rm.
 */
static int rds_ib_pack_add(struct rds_ib_conn *ic, struct rds_message *rm,
			   bool more_queued)
{
	int ret;

	lockdep_assert_held(&ic->i_lock);
	if (ic->i_pack_n &&
	    !rds_ib_pack_fits(ic->i_pack_used, ic->i_pack_n, rm->m_len,
			      ic->i_pack_room, ic->i_pack_max)) {
		ret = rds_ib_pack_post(ic, false);	/* rm behind */
		if (ret)
			return ret;
	}
	rds_message_get(rm);
	ic->i_pack_used += rds_ib_pack_cost(ic->i_pack_n, rm->m_len);
	ic->i_pack[ic->i_pack_n++] = rm;
	if (rds_ib_pack_fits(ic->i_pack_used, ic->i_pack_n, 0, ic->i_pack_room,
			     ic->i_pack_max)) {
		if (more_queued)
			return 0;
		if (rds_ib_pack_corked(ic)) {
			ic->i_xmit_stalled = true;	/* credits kick us */
			return 0;
		}
	}
	ret = rds_ib_pack_post(ic, !more_queued);
	return ret == -EAGAIN ? 0 : ret;
}

/* ---- RDMA and atomic ops ------------------------------------------------ */

static void rds_ib_op_done(struct ib_cq *cq, struct ib_wc *wc);

/* Does the first frame after op wait for it (IB_SEND_FENCE)?  After a
 * READ or an atomic always: the message must not be delivered, nor its
 * ACK freed, before the op's data is back.
 */
bool rds_ib_op_fences(const struct rds_rdma_op *op)
{
	return op->o_kind == RDS_OPK_READ || op->o_kind == RDS_OPK_ATOMIC ||
	       (op->o_kind != RDS_OPK_NONE && op->o_fence);
}

static enum dma_data_direction rds_ib_op_dir(const struct rds_rdma_op *op)
{
	return op->o_kind == RDS_OPK_WRITE ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
}

static void rds_ib_op_unmap(struct rds_rdma_op *op)
{
	unsigned int i;

	if (!op->o_ib_dev)
		return;
	for (i = 0; i < op->o_nsg; i++)
		ib_dma_unmap_page(op->o_ib_dev, sg_dma_address(&op->o_sg[i]),
				  op->o_sg[i].length, rds_ib_op_dir(op));
	op->o_ib_dev = NULL;
}

/* The queue pair is drained: nothing of op is in flight any more.  An op
 * not (completely) posted gives its mapping back; if none of it was
 * posted it can be posted whole on the next attempt.
 */
void rds_ib_op_reset(struct rds_rdma_op *op)
{
	if (op->o_kind == RDS_OPK_NONE || op->o_ib_posted == op->o_ib_nwr)
		return;
	rds_ib_op_unmap(op);
	if (!op->o_ib_posted)
		op->o_ib_nwr = 0;
}

static int rds_ib_op_map(struct rds_ib_conn *ic, struct rds_rdma_op *op)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	unsigned int i;

	for (i = 0; i < op->o_nsg; i++) {
		struct scatterlist *sg = &op->o_sg[i];
		u64 dma = ib_dma_map_page(dev, sg_page(sg), sg->offset,
					  sg->length, rds_ib_op_dir(op));

		if (ib_dma_mapping_error(dev, dma)) {
			while (i--)
				ib_dma_unmap_page(dev, sg_dma_address(&op->o_sg[i]),
						  op->o_sg[i].length,
						  rds_ib_op_dir(op));
			return -ENOMEM;
		}
		sg_dma_address(sg) = dma;
	}
	op->o_ib_dev = dev;
	return 0;
}

/* SGEs per work request of op on ic: RDS_IB_SEND_SGE at most (the size
 * of rds_ib_op_post()'s array; sendq.c never asks for more).
 */
static unsigned int rds_ib_op_sges(struct rds_ib_conn *ic,
				   const struct rds_rdma_op *op)
{
	unsigned int n = ic->i_sq.sge;

	if (WARN_ON_ONCE(n > RDS_IB_SEND_SGE))
		n = RDS_IB_SEND_SGE;
	if (op->o_kind == RDS_OPK_READ)
		n = min_t(unsigned int, n, ic->i_rdev->rd_dev->attrs.max_sge_rd);
	return max_t(unsigned int, n, 1);
}

/* Post the work requests of rm's op not posted yet, as far as the send
 * queue has room.  0 when all are posted; -EAGAIN (stalled: completions
 * kick the send work) when room ran out.
 */
int rds_ib_op_post(struct rds_ib_conn *ic, struct rds_message *rm)
{
	struct rds_rdma_op *op = &rm->m_op;
	unsigned int per;

	lockdep_assert_held(&ic->i_lock);
	if (op->o_kind == RDS_OPK_NONE)
		return 0;
	if (!op->o_ib_nwr) {
		if (rds_ib_op_map(ic, op)) {
			ic->i_up = false;
			return -ENOTCONN;
		}
		per = rds_ib_op_sges(ic, op);
		op->o_ib_nwr = op->o_kind == RDS_OPK_ATOMIC ? 1 :
			       rds_ib_sendq_op_wrs(op->o_nsg, per);
		op->o_ib_posted = 0;
		op->o_ib_done = 0;
		op->o_ib_off = 0;
		op->o_cqe.done = rds_ib_op_done;
	}
	per = rds_ib_op_sges(ic, op);
	while (op->o_ib_posted < op->o_ib_nwr) {
		struct ib_sge sge[RDS_IB_SEND_SGE];
		struct ib_atomic_wr awr = { };
		struct ib_rdma_wr rwr = { };
		const struct ib_send_wr *bad;
		struct ib_send_wr *wr;
		unsigned int first = op->o_ib_posted * per, i, n;
		u32 bytes = 0;

		if (!rds_ib_sendq_extra_room(ic->i_extra, 1,
					     ic->i_sq.extra)) {
			ic->i_xmit_stalled = true;
			return -EAGAIN;
		}
		n = min_t(unsigned int, per, op->o_nsg - first);
		if (WARN_ON_ONCE(n > ARRAY_SIZE(sge))) {
			ic->i_up = false;
			return -ENOTCONN;
		}
		for (i = 0; i < n; i++) {
			struct scatterlist *sg = &op->o_sg[first + i];

			sge[i].addr = sg_dma_address(sg);
			sge[i].length = sg->length;
			sge[i].lkey = ic->i_rdev->rd_pd->local_dma_lkey;
			bytes += sg->length;
		}
		if (op->o_kind == RDS_OPK_ATOMIC) {
			awr.remote_addr = op->o_raddr;
			awr.rkey = op->o_rkey;
			awr.compare_add = op->o_compare;
			awr.swap = op->o_swap;
			awr.compare_add_mask = op->o_cmask;
			awr.swap_mask = op->o_smask;
			wr = &awr.wr;
			wr->opcode = op->o_aop;
		} else {
			rwr.remote_addr = op->o_raddr + op->o_ib_off;
			rwr.rkey = op->o_rkey;
			wr = &rwr.wr;
			wr->opcode = op->o_kind == RDS_OPK_WRITE ?
				     IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
		}
		wr->wr_cqe = &op->o_cqe;
		wr->sg_list = sge;
		wr->num_sge = n;
		wr->send_flags = IB_SEND_SIGNALED;
		if (ib_post_send(ic->i_qp, wr, &bad)) {
			ic->i_up = false;
			return -ENOTCONN;
		}
		/* Posted at least once: never again (rds_send_requeue). */
		WRITE_ONCE(op->o_state, RDS_OP_POSTED);
		op->o_ib_conn = ic;
		op->o_ib_posted++;
		op->o_ib_off += bytes;
		ic->i_extra++;
		rds_message_get(rm);	/* the WR's reference */
		/* Counted once, with its last work request: the call that
		 * posts it may come after others that posted a part (rounds)
		 * and before others that find nothing left to post (the
		 * message's first frame had no slot or credit).
		 */
		if (op->o_ib_posted == op->o_ib_nwr) {
			rds_ib_count(op->o_kind == RDS_OPK_ATOMIC ?
				     RDS_IB_C_ATOMICS : RDS_IB_C_RDMA_OPS);
			atomic64_add(op->o_bytes,
				     &rds_ib_counters[RDS_IB_C_RDMA_BYTES]);
		}
	}
	return 0;
}

/* Runs in softirq context from the connection's send CQ: a work request
 * beyond the ring (RDMA, atomic, REG_MR, LOCAL_INV) completed.
 */
void rds_ib_extra_done(struct rds_ib_conn *ic, struct ib_wc *wc)
{
	bool kick;

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR) {
		pr_warn_ratelimited("RDMA to %pI6c failed: %s\n",
				    &ic->i_conn->c_faddr,
				    ib_wc_status_msg(wc->status));
		rds_ib_conn_error(ic, "RDMA work request failed");
	} else if (wc->status == IB_WC_WR_FLUSH_ERR && READ_ONCE(ic->i_up)) {
		rds_ib_conn_error_after(ic, "queue pair failed",
					RDS_IB_QP_FAIL_GRACE);
	}
	spin_lock_bh(&ic->i_lock);
	ic->i_extra--;
	kick = ic->i_xmit_stalled;
	spin_unlock_bh(&ic->i_lock);
	if (kick)
		queue_work(rds_ib_wq, &ic->i_send_work);
}

static void rds_ib_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_rdma_op *op = container_of(wc->wr_cqe, struct rds_rdma_op,
					      o_cqe);
	struct rds_message *rm = container_of(op, struct rds_message, m_op);
	struct rds_ib_conn *ic = op->o_ib_conn;

	/* The op's own failure is recorded (and counted), its first one; a
	 * lost connection (flush, retries exhausted) is not: its message is
	 * dropped, DROPPED.
	 */
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR &&
	    wc->status != IB_WC_RETRY_EXC_ERR &&
	    wc->status != IB_WC_RNR_RETRY_EXC_ERR &&
	    !READ_ONCE(op->o_status)) {
		rds_ib_count(RDS_IB_C_RDMA_ERRORS);
		WRITE_ONCE(op->o_status,
			   wc->status == IB_WC_REM_ACCESS_ERR ||
			   wc->status == IB_WC_REM_INV_REQ_ERR ||
			   wc->status == IB_WC_REM_OP_ERR ?
			   RDS_RDMA_REMOTE_ERROR : RDS_RDMA_OTHER_ERROR);
	}
	spin_lock_bh(&ic->i_lock);
	if (++op->o_ib_done == op->o_ib_nwr) {
		rds_ib_op_unmap(op);
		if (wc->status == IB_WC_SUCCESS)
			WRITE_ONCE(op->o_state, RDS_OP_DONE);
		/* the bytes a READ brought in, once all of them are here */
		if (wc->status == IB_WC_SUCCESS && !READ_ONCE(op->o_status) &&
		    op->o_kind == RDS_OPK_READ)
			rds_stats_add(s_recv_rdma_bytes, op->o_bytes);
	}
	spin_unlock_bh(&ic->i_lock);
	rds_ib_extra_done(ic, wc);
	rds_message_put(rm);	/* the WR's reference */
}

/* Post as many fragments of rm as credits and slots allow, from
 * i_xmit_frag on.  0 when the whole message is posted.
 */
static int rds_ib_post_frags(struct rds_ib_conn *ic, struct rds_message *rm,
			     bool more_queued)
{
	unsigned int nfrags = max_t(unsigned int, 1,
				    DIV_ROUND_UP(rm->m_len, RDS_IB_FRAG));
	struct rds_ib_send_slot *s;
	int ret;
	u8 grant;

	lockdep_assert_held(&ic->i_lock);
	if (!ic->i_xmit_frag) {
		/* Regions it names, then its op, go before its first frame. */
		ret = rds_ib_mr_post_regs(ic, rm);
		if (!ret)
			ret = rds_ib_op_post(ic, rm);
		if (ret)
			return ret;
	}
	while (ic->i_xmit_frag < nfrags) {
		unsigned int f = ic->i_xmit_frag;
		u32 len = min_t(u32, rm->m_len - f * RDS_IB_FRAG, RDS_IB_FRAG);
		bool last = f + 1 == nfrags;

		s = ic->i_proto->slot_take(ic, &grant);
		if (!s)
			return -EAGAIN;
		rds_message_get(rm);
		s->s_rm[s->s_nrm++] = rm;
		/* An empty message (an RDMA op's, a ping's) has no page: its
		 * m_sg has no entry to read.
		 */
		if (len && rds_ib_slot_add_page(ic, s, sg_page(&rm->m_sg[f]),
						len)) {
			rds_ib_slot_release(ic, s);
			ic->i_up = false;
			return -ENOTCONN;
		}
		ic->i_proto->frame_hdr(ic, s, rm, f, more_queued);
		ic->i_xmit_frag++;
		/* Signal the end of a multi-frame message when nothing
		 * follows, so that its pages are not held by the ring while
		 * the connection is idle (single frames wait for the next
		 * signalled one: at most 15 frames, holding no copy).
		 */
		ret = rds_ib_slot_post(ic, s, grant,
				       last && nfrags > 1 && !more_queued,
				       last && !more_queued,
				       !f && rds_ib_op_fences(&rm->m_op), last);
		if (ret)
			return ret;
		if (last)
			rds_ib_posted(ic, rm);
	}
	return 0;
}

/* rm, whose last frame is posted, is a map that the peer will not
 * acknowledge (rds_send_map_posted()).
 */
static bool rds_ib_map_unacked(struct rds_ib_conn *ic,
			       const struct rds_message *rm)
{
	lockdep_assert_held(&ic->i_lock);
	return ic->i_proto->maps_unacked &&
	       (rm->m_inc.i_hdr.h_flags & RDS_FLAG_CONG_BITMAP);
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
	bool was_up, lost, done_map = false, rm_map = false;
	int ret;

	spin_lock_bh(&ic->i_lock);
	was_up = ic->i_up;
	if (!was_up) {
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
		done_map = rds_ib_map_unacked(ic, done);
	}
	if (!ic->i_xmit_rm) {
		if (rds_ib_packable(ic, rm)) {
			ret = rds_ib_pack_add(ic, rm, more);
			goto out;
		}
		/* A message of its own: what is held goes first. */
		ret = rds_ib_pack_post(ic, false);
		if (ret)
			goto out;
		rds_message_get(rm);
		ic->i_xmit_rm = rm;
		ic->i_xmit_frag = 0;
		if (rm->m_inc.i_hdr.h_flags & RDS_FLAG_CONG_BITMAP)
			rds_ib_count(RDS_IB_C_CONG_SENT);
	}
	ret = rds_ib_post_frags(ic, rm, more);
	if (!ret) {
		ic->i_xmit_rm = NULL;
		rm_map = rds_ib_map_unacked(ic, rm);
		rds_message_put(rm);	/* the i_xmit_rm reference */
	}
out:
	/* -ENOTCONN from a post: the queue pair refused it. */
	lost = ret == -ENOTCONN && was_up;
	spin_unlock_bh(&ic->i_lock);
	/* c_lock is not taken under i_lock (net/rds.h); the caller holds
	 * rm, and done is held until the put below.
	 */
	if (rm_map)
		rds_send_map_posted(conn, rm);
	if (done) {
		if (done_map)
			rds_send_map_posted(conn, done);
		rds_message_put(done);
	}
	if (lost)
		rds_ib_conn_error(ic, "post send failed");
	return ret;
}

/* The send queue ran empty (rds_send_xmit(), one thread at a time): post
 * the messages held for a packed frame, unless corked.
 */
void rds_ib_xmit_done(struct rds_connection *conn)
{
	struct rds_ib_conn *ic = conn->c_transport_data;
	bool lost = false;

	spin_lock_bh(&ic->i_lock);
	if (ic->i_up && ic->i_pack_n) {
		if (rds_ib_pack_corked(ic))
			ic->i_xmit_stalled = true;	/* credits kick us */
		else
			lost = rds_ib_pack_post(ic, true) == -ENOTCONN;
	}
	/* Nothing of the core waits, and nothing is held here: a stall
	 * left from before (a frame corked, then posted from here) is
	 * over.  Left set, the connection would never be idle for
	 * give-back (rds_ib_tx_idle()) and every send completion would
	 * kick the send work for nothing.
	 */
	if (!ic->i_pack_n && !ic->i_xmit_rm)
		ic->i_xmit_stalled = false;
	spin_unlock_bh(&ic->i_lock);
	if (lost)
		rds_ib_conn_error(ic, "post send failed");
}

/* Send a control frame (ACK and/or credit grant, or a give-back) if one
 * is due and none is in flight.  Any context.  Toward the kernel's RDS an
 * ACK only (no credits are refilled, no heartbeat is asked or answered,
 * no give-back), in its form.
 */
void rds_ib_send_ctrl(struct rds_ib_conn *ic)
{
	struct rds_ib_send_slot *s;
	const struct ib_send_wr *bad;
	struct rds_header *hdr;
	bool want_ack, lost = false;
	u32 back = 0;
	u8 grant;

	spin_lock_bh(&ic->i_lock);
	if (!ic->i_up || ic->i_credit.ctrl_busy)
		goto out;
	/* Our credits drop now; the frame below carries the count.  Due
	 * while a control frame was in flight, it may be stale: only an
	 * idle connection gives back (rds_ib_gb_check()).
	 */
	if (ic->i_gb_due && rds_ib_tx_idle(ic))
		back = rds_ib_credit_give_back(&ic->i_credit,
					       RDS_IB_CREDIT_KEEP, U16_MAX);
	ic->i_gb_due = false;
	want_ack = ic->i_ack_owed &&
		   READ_ONCE(ic->i_rx_delivered) != ic->i_ack_sent;
	if (!back && !want_ack && !ic->i_hb_ask && !ic->i_hb_answer &&
	    !rds_ib_credit_want_update(&ic->i_credit,
				       max_t(u32, 1, ic->i_grant / 4)))
		goto out;

	rds_ib_credit_take_ctrl(&ic->i_credit, &grant);
	s = &ic->i_ring[RDS_IB_CTRL_SLOT(ic)];
	hdr = &ic->i_hdrs[RDS_IB_CTRL_SLOT(ic)];
	memset(hdr, 0, sizeof(*hdr));
	hdr->h_flags = ic->i_proto->ctrl_flags;
	if (ic->i_hb_ask) {
		hdr->h_flags |= RDS_IB_FLAG_HB;
		rds_ib_count(RDS_IB_C_HB_SENT);
	}
	ic->i_hb_ask = false;
	ic->i_hb_answer = false;
	if (back) {
		hdr->h_flags |= RDS_IB_FLAG_RETURN;
		hdr->h_sport = cpu_to_be16(back);
		rds_ib_count(RDS_IB_C_CREDIT_RETURNS);
		atomic64_add(back, &rds_ib_counters[RDS_IB_C_CREDITS_RETURNED]);
	}
	rds_ib_hdr_finish(ic, s, grant);
	s->s_wr.next = NULL;
	s->s_wr.num_sge = 1;
	s->s_wr.send_flags = IB_SEND_SIGNALED | ic->i_proto->solicit_last;
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
		rds_ib_conn_error_after(ic, "queue pair failed",
					RDS_IB_QP_FAIL_GRACE);
	}

	spin_lock_bh(&ic->i_lock);
	if (slot == &ic->i_ring[RDS_IB_CTRL_SLOT(ic)]) {
		rds_ib_credit_ctrl_done(&ic->i_credit);
	} else {
		/* Retire every slot up to and including this one. */
		while (ic->i_tail != ic->i_head) {
			struct rds_ib_send_slot *s =
				&ic->i_ring[ic->i_tail % ic->i_sq.data];

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
