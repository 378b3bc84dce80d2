// SPDX-License-Identifier: GPL-2.0
/*
 * The IB receive path: frames taken off the shared receive queue are
 * checked, their credits and ACK applied, and their fragments copied into
 * a message that is handed to the RDS receive path once complete.  The
 * receive buffer goes back on the SRQ right after (srq.c), and the credit
 * it represents is granted back to the peer.
 *
 * A packed frame (frame.h) carries several whole messages: each is
 * checked and delivered in turn.
 *
 * Runs in softirq context, from the device's receive CQ: frames of one
 * queue pair complete in order, one at a time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/sched/clock.h>
#include <net/checksum.h>

#include "../neg.h"
#include "ib.h"
#include "../trace/rds.h"
#include "path.h"

/* The header checksum: the Internet checksum of the 48 bytes with h_csum
 * taken as zero.
 */
__sum16 rds_ib_hdr_csum(const struct rds_header *hdr)
{
	struct rds_header tmp = *hdr;

	tmp.h_csum = 0;
	return csum_fold(csum_partial(&tmp, sizeof(tmp), 0));
}

static void rds_ib_recv_drop_partial(struct rds_ib_conn *ic)
{
	lockdep_assert_held(&ic->i_rx_lock);
	if (ic->i_rx_rm) {
		rds_message_put(ic->i_rx_rm);
		ic->i_rx_rm = NULL;
	}
	ic->i_rx_frag = 0;
}

/* Messages, and their payload bytes, held while an attempt's protocol is
 * a guess, at most: past either the attempt ends (the peer sends them
 * again on the next one).  Our peer's credits bound them well below; the
 * kernel's RDS sends without, messages of up to 1 MiB.
 */
#define RDS_IB_HELD_MAX		4096
#define RDS_IB_HELD_BYTES	(8U << 20)

/* Moves the held messages to list. */
static void rds_ib_recv_held_take(struct rds_ib_conn *ic,
				  struct list_head *list)
{
	lockdep_assert_held(&ic->i_lock);
	list_splice_init(&ic->i_held, list);
	ic->i_held_n = 0;
	ic->i_held_bytes = 0;
}

/* Drops messages taken from i_held: never acknowledged, the peer sends
 * them again on the next attempt.
 */
static void rds_ib_recv_held_drop(struct list_head *list)
{
	struct rds_message *rm, *tmp;

	list_for_each_entry_safe(rm, tmp, list, m_conn_item) {
		list_del_init(&rm->m_conn_item);
		rds_ib_count(RDS_IB_C_RX_HELD_DROPPED);
		rds_message_put(rm);
	}
}

/* A new attempt starts: forget a message half received on the last one,
 * and the messages held for the last one (never acknowledged: the peer
 * sends them again).
 */
void rds_ib_recv_reset(struct rds_ib_conn *ic)
{
	LIST_HEAD(held);

	lockdep_assert_held(&ic->i_cm_mutex);
	spin_lock_bh(&ic->i_rx_lock);
	rds_ib_recv_drop_partial(ic);
	spin_unlock_bh(&ic->i_rx_lock);
	spin_lock_bh(&ic->i_lock);
	rds_ib_recv_held_take(ic, &held);
	ic->i_guess = false;
	ic->i_held_over = false;
	spin_unlock_bh(&ic->i_lock);
	rds_ib_recv_held_drop(&held);
}

/* Why a frame was not taken when it was no fault of the peer's. */
static const char rds_ib_rx_nomem[] = "out of memory";

/* A frame was not taken (why): the connection resets, and the peer
 * resends from its first unacknowledged message.  A bad frame is counted
 * as one; running out of memory only as rx_nomem (already counted).
 */
void rds_ib_recv_bad(struct rds_ib_conn *ic, const struct rds_header *hdr,
		     const char *why)
{
	bool guess;

	trace_rds_msg_drop(ic->i_conn, hdr, why);
	if (why == rds_ib_rx_nomem) {
		rds_ib_conn_error(ic, why);
		return;
	}
	/* Our request guessed the peer's protocol (ib.h, i_guess): a frame
	 * that breaks the guessed one says the guess was wrong, not that
	 * the peer is at fault.
	 */
	spin_lock_bh(&ic->i_lock);
	guess = ic->i_guess;
	spin_unlock_bh(&ic->i_lock);
	if (guess) {
		pr_info_ratelimited("%pI6c: the peer's first frames came in the other protocol (%s): reconnecting\n",
				    &ic->i_conn->c_faddr, why);
		rds_ib_conn_error(ic, "the peer's first frames came in the other protocol");
		return;
	}
	rds_ib_count(RDS_IB_C_BAD_FRAMES);
	pr_warn_ratelimited("bad frame from %pI6c: %s: resetting the connection\n",
			    &ic->i_conn->c_faddr, why);
	rds_ib_conn_error(ic, why);
}

/* The peer acknowledged everything up to ack.  An ACK that moves on
 * while the send side is stalled sets *kick: messages held corked for a
 * packed frame wait for it (rds_ib_pack_corked()).
 */
static bool rds_ib_recv_ack(struct rds_ib_conn *ic, u64 ack, bool *kick)
{
	struct rds_connection *conn = ic->i_conn;
	bool bad;

	/* Most frames repeat the last ACK: it was checked and applied (and
	 * a value once valid stays valid: sequence numbers only grow).
	 */
	if (ack == READ_ONCE(ic->i_ack_seen))
		return true;
	spin_lock_bh(&ic->i_lock);
	/* An ACK for something never posted (queued ones, and ones the
	 * transport holds for a packed frame or a credit, included: they
	 * would be freed as delivered): a broken or hostile peer.
	 */
	bad = rds_seq_after(ack, ic->i_posted_seq);
	if (!bad && rds_seq_after(ack, ic->i_ack_seen)) {
		WRITE_ONCE(ic->i_ack_seen, ack);
		*kick |= ic->i_xmit_stalled;
	}
	spin_unlock_bh(&ic->i_lock);
	if (bad)
		return false;
	rds_send_drop_acked(conn, ack);
	return true;
}

bool rds_ib_recv_take_ack(struct rds_ib_conn *ic, const struct rds_header *hdr,
			  bool kick)
{
	if (!rds_ib_recv_ack(ic, be64_to_cpu(hdr->h_ack), &kick)) {
		rds_ib_recv_bad(ic, hdr, "ACK of a message never sent");
		return false;
	}
	if (kick)
		queue_work(rds_ib_wq, &ic->i_send_work);
	return true;
}

/* A message is complete: deliver it, then it counts toward the ACK. */
static void rds_ib_recv_deliver_now(struct rds_ib_conn *ic,
				    struct rds_message *rm)
{
	struct rds_connection *conn = ic->i_conn;
	struct rds_header *hdr = &rm->m_inc.i_hdr;
	u64 seq = be64_to_cpu(hdr->h_sequence);
	u32 len = be32_to_cpu(hdr->h_len);
	bool ack_now = hdr->h_flags & RDS_FLAG_ACK_REQUIRED;

	if (hdr->h_flags & RDS_FLAG_CONG_BITMAP) {
		if (len == RDS_CONG_MAP_BYTES) {
			/* pairs with rds_ib_cm_handshake_apply() */
			bool known = smp_load_acquire(&ic->i_hs_applied) ||
				     rds_neg_congearly();

			rds_ib_count(RDS_IB_C_CONG_RECV);
			rds_cong_map_recv(conn->c_fcong, rm,
					  READ_ONCE(ic->i_peer_gen), known);
		} else {
			rds_ib_count(RDS_IB_C_BAD_FRAMES);
			trace_rds_msg_drop(conn, hdr, "bad congestion map");
		}
		rds_message_put(rm);
	} else {
		u64 seen = rm->m_inc.i_rx_lat_trace[RDS_MSG_RX_HDR];

		/* The incoming takes over our reference (rds_ib_inc_free). */
		rds_inc_init(&rm->m_inc, conn, &conn->c_faddr);
		rm->m_inc.i_rx_lat_trace[RDS_MSG_RX_HDR] = seen;
		rds_recv_incoming(conn, &conn->c_faddr, &conn->c_laddr,
				  &rm->m_inc);
		rds_inc_put(&rm->m_inc);
	}

	/* Queued to its socket or dropped for good: acknowledge it.  A
	 * duplicate the receive path dropped must not move the ACK back.
	 */
	if (rds_seq_after(seq, READ_ONCE(ic->i_rx_delivered)))
		WRITE_ONCE(ic->i_rx_delivered, seq);
	spin_lock_bh(&ic->i_lock);
	ic->i_rx_unacked++;
	ic->i_rx_unacked_bytes += len;
	if (ic->i_rx_unacked >= READ_ONCE(rds_sysctl_max_unacked_packets) ||
	    ic->i_rx_unacked_bytes >= READ_ONCE(rds_sysctl_max_unacked_bytes))
		ack_now = true;
	if (ack_now)
		ic->i_ack_owed = true;
	spin_unlock_bh(&ic->i_lock);

	if (ack_now)
		rds_ib_send_ctrl(ic);
	else if (!timer_pending(&ic->i_ack_timer))
		/* Anything sent before it fires carries the ACK. */
		mod_timer(&ic->i_ack_timer, jiffies + 1);
}

/* rm is complete: to its socket, or to i_held while the attempt's
 * protocol is a guess (ib.h).  False if it was dropped (too much held):
 * the attempt ends, and the caller delivers nothing more of the frame.
 */
bool rds_ib_recv_deliver(struct rds_ib_conn *ic, struct rds_message *rm)
{
	bool held, over, first = false;

	spin_lock_bh(&ic->i_lock);
	held = ic->i_guess;
	if (held && !ic->i_held_over &&
	    (ic->i_held_n >= RDS_IB_HELD_MAX ||
	     ic->i_held_bytes + rm->m_len > RDS_IB_HELD_BYTES)) {
		ic->i_held_over = true;
		first = true;
	}
	over = held && ic->i_held_over;
	if (held && !over) {
		list_add_tail(&rm->m_conn_item, &ic->i_held);
		ic->i_held_n++;
		ic->i_held_bytes += rm->m_len;
		rds_ib_count(RDS_IB_C_RX_HELD);
	}
	spin_unlock_bh(&ic->i_lock);
	if (!held) {
		rds_ib_recv_deliver_now(ic, rm);
		return true;
	}
	if (!over)
		return true;
	rds_ib_count(RDS_IB_C_RX_HELD_DROPPED);
	rds_message_put(rm);
	if (first)
		rds_ib_conn_error(ic, "too much received before the accept");
	return false;
}

/* The attempt is up (rds_ib_attempt_up()): its protocol was right.  The
 * messages held are delivered in order, before any that comes after:
 * those join the list until it is found empty.  After an overflow the
 * attempt is ending: what is held is dropped, and i_guess stays set so
 * that nothing after it is delivered.
 */
void rds_ib_recv_unhold(struct rds_ib_conn *ic)
{
	struct rds_message *rm, *tmp;
	LIST_HEAD(held);
	bool over;

	lockdep_assert_held(&ic->i_cm_mutex);
	for (;;) {
		spin_lock_bh(&ic->i_lock);
		rds_ib_recv_held_take(ic, &held);
		over = ic->i_held_over;
		if (list_empty(&held) && !over)
			ic->i_guess = false;
		spin_unlock_bh(&ic->i_lock);
		if (over) {
			rds_ib_recv_held_drop(&held);
			return;
		}
		if (list_empty(&held))
			return;
		/* as from the receive completion handler */
		local_bh_disable();
		list_for_each_entry_safe(rm, tmp, &held, m_conn_item) {
			list_del_init(&rm->m_conn_item);
			rds_ib_recv_deliver_now(ic, rm);
		}
		local_bh_enable();
	}
}

/* A message keeps its data in the receive buffer's page (8 KiB) only if
 * it has an eighth of it or more; a smaller one is copied into a page of
 * its own, as a fragmented message is: a small message left unread on a
 * socket then holds one page, not the buffer's two.
 */
#define RDS_IB_RX_KEEP_MIN	(RDS_IB_RX_BYTES / 8)

/* Copy the payload of rm (rds_message_alloc(): m_len bytes in pages)
 * from data.  A packed message may be longer than a page: it is bounded
 * by the frame (a receive buffer, RDS_IB_RX_BYTES), not by a fragment.
 */
static void rds_ib_recv_copy(struct rds_message *rm, const u8 *data)
{
	unsigned int i;

	for (i = 0; i < rm->m_nents; i++) {
		struct scatterlist *sg = &rm->m_sg[i];
		void *dst = kmap_local_page(sg_page(sg));

		memcpy(dst + sg->offset, data, sg->length);
		kunmap_local(dst);
		data += sg->length;
	}
}

/* A whole message (one frame) of len bytes at off in the frame's data:
 * on page, taken from the receive buffer, it keeps the data where it
 * landed (a page reference per message) if it is large enough; else, or
 * without a page (none could be had to refill the buffer), the data is
 * copied out of data.  seen: when the frame's completion was first looked
 * at (RDS_MSG_RX_HDR).  NULL: *why.
 */
static struct rds_message *rds_ib_recv_whole(const struct rds_header *hdr,
					     struct page *page, const u8 *data,
					     u32 off, u32 len, u64 seen,
					     const char **why)
{
	struct rds_message *rm = NULL;

	if (page && len >= RDS_IB_RX_KEEP_MIN) {
		get_page(page);
		rm = rds_message_alloc_page(page, off, len, GFP_ATOMIC);
		if (!rm)
			put_page(page);
	} else {
		rm = rds_message_alloc(len, GFP_ATOMIC);
		if (rm)
			rds_ib_recv_copy(rm, data + off);
	}
	if (!rm) {
		/* Lost for now: the reset makes the peer resend it. */
		rds_ib_count(RDS_IB_C_RX_NOMEM);
		*why = rds_ib_rx_nomem;
		return NULL;
	}
	rm->m_inc.i_hdr = *hdr;
	rm->m_inc.i_rx_lat_trace[RDS_MSG_RX_HDR] = seen;
	return rm;
}

/* The first header of a message: its sequence number must fall in the
 * receive window (seq.h) around the next one expected.
 */
static bool rds_ib_recv_seq_ok(struct rds_ib_conn *ic,
			       const struct rds_header *hdr)
{
	return rds_seq_rx_in_window(READ_ONCE(ic->i_conn->c_next_rx_seq),
				    be64_to_cpu(hdr->h_sequence));
}

/* Take one data fragment.  Returns a complete message (the caller
 * delivers it) or NULL; sets *why on a protocol error.  The first
 * fragment's sequence number is the caller's to judge (in_window).
 */
struct rds_message *rds_ib_recv_frag(struct rds_ib_conn *ic,
				     const struct rds_header *hdr,
				     struct rds_ib_rx_buf *buf, u32 data_len,
				     u64 seen, bool in_window,
				     const char **why)
{
	struct rds_message *rm;
	u32 len = be32_to_cpu(hdr->h_len);
	u32 off, want;

	lockdep_assert_held(&ic->i_rx_lock);
	rm = ic->i_rx_rm;
	if (!rm && !in_window) {
		*why = "sequence number out of window";
		return NULL;
	}
	if (!rm && len <= RDS_IB_FRAG) {
		/* A message of one frame: keep its data where it landed. */
		struct page *page;

		if (data_len != len) {
			*why = "fragment length";
			return NULL;
		}
		page = len >= RDS_IB_RX_KEEP_MIN ?
		       rds_ib_rx_buf_take_page(buf) : NULL;
		rm = rds_ib_recv_whole(hdr, page, page_address(page ?: buf->rb_page),
				       0, len, seen, why);
		if (page)
			put_page(page);
		return rm;
	}
	if (!rm) {
		if (len > RDS_MAX_MSG_SIZE) {
			*why = "message too long";
			return NULL;
		}
		rm = rds_message_alloc(len, GFP_ATOMIC);
		if (!rm) {
			/* Lost for now: the reset makes the peer resend it. */
			rds_ib_count(RDS_IB_C_RX_NOMEM);
			*why = rds_ib_rx_nomem;
			return NULL;
		}
		rm->m_inc.i_hdr = *hdr;
		/* its first fragment: the header is seen now */
		rm->m_inc.i_rx_lat_trace[RDS_MSG_RX_HDR] = seen;
		ic->i_rx_rm = rm;
		ic->i_rx_frag = 0;
	} else if (rm->m_inc.i_hdr.h_sequence != hdr->h_sequence ||
		   rm->m_inc.i_hdr.h_len != hdr->h_len) {
		*why = "fragment of another message";
		return NULL;
	}

	off = ic->i_rx_frag * RDS_IB_FRAG;
	want = min_t(u32, len - off, RDS_IB_FRAG);
	if (data_len != want) {
		*why = "fragment length";
		return NULL;
	}
	if (want) {
		struct scatterlist *sg = &rm->m_sg[ic->i_rx_frag];
		void *dst = kmap_local_page(sg_page(sg));

		memcpy(dst, page_address(buf->rb_page), want);
		kunmap_local(dst);
	}
	ic->i_rx_frag++;
	if (off + want < len)
		return NULL;
	ic->i_rx_rm = NULL;
	ic->i_rx_frag = 0;
	return rm;
}

/* A packed frame (frame.h): deliver each of its messages in order.
 * NULL, or what is wrong with it (the messages before stay delivered).
 */
static const char *rds_ib_recv_pack(struct rds_ib_conn *ic,
				    const struct rds_header *hdr,
				    struct rds_ib_rx_buf *buf, u32 data_len,
				    u64 seen)
{
	u32 len = be32_to_cpu(hdr->h_len), off, hoff;
	enum rds_ib_frame_err err;
	struct rds_header inner;
	struct rds_message *rm;
	const char *why = NULL;
	struct page *page;
	const u8 *data;
	bool busy;

	err = rds_ib_pack_first(len, hdr->h_flags, data_len);
	if (err)
		return rds_ib_frame_err_name(err);
	spin_lock_bh(&ic->i_rx_lock);
	busy = ic->i_rx_rm;
	spin_unlock_bh(&ic->i_rx_lock);
	if (busy)
		return "packed frame inside a message";
	if (!rds_ib_recv_seq_ok(ic, hdr))
		return "sequence number out of window";
	page = data_len >= RDS_IB_RX_KEEP_MIN ?
	       rds_ib_rx_buf_take_page(buf) : NULL;
	data = page_address(page ?: buf->rb_page);
	rm = rds_ib_recv_whole(hdr, page, data, 0, len, seen, &why);
	if (!rm)
		goto out;
	if (!rds_ib_recv_deliver(ic, rm))
		goto out;

	for (off = len; off < data_len; ) {
		err = rds_ib_pack_next(data, data_len, &off, &hoff, &len);
		if (err) {
			why = rds_ib_frame_err_name(err);
			break;
		}
		memcpy(&inner, data + hoff, sizeof(inner));
		if (inner.h_csum != rds_ib_hdr_csum(&inner)) {
			rds_stats_inc(s_recv_drop_bad_checksum);
			why = "packed header checksum";
			break;
		}
		if (!rds_ib_recv_seq_ok(ic, &inner)) {
			why = "sequence number out of window";
			break;
		}
		rm = rds_ib_recv_whole(&inner, page, data,
				       hoff + sizeof(inner), len, seen, &why);
		if (!rm || !rds_ib_recv_deliver(ic, rm))
			break;
	}
out:
	if (page)
		put_page(page);
	return why;
}

bool rds_ib_recv_head(struct rds_ib_conn *ic, struct rds_ib_rx_buf *buf,
		      struct ib_wc *wc, struct rds_header *hdr, u32 *data_len,
		      u64 *seen)
{
	rds_ib_count(RDS_IB_C_RX_FRAMES);
	/* A completion of an attempt already torn down or failed. */
	if (wc->qp != READ_ONCE(ic->i_qp) || READ_ONCE(ic->i_rx_stopped)) {
		rds_ib_count(RDS_IB_C_STALE_RX);
		return false;
	}
	if (wc->byte_len < sizeof(*hdr)) {
		rds_ib_recv_bad(ic, NULL, "short frame");
		return false;
	}
	WRITE_ONCE(ic->i_last_rx, jiffies);
	/* SO_RDS_MSG_RXPATH_LATENCY: the header is first looked at now */
	*seen = local_clock();
	memcpy(hdr, buf->rb_hdr, sizeof(*hdr));
	*data_len = wc->byte_len - sizeof(*hdr);
	return true;
}

void rds_ib_ours_recv_frame(struct rds_ib_conn *ic, struct rds_ib_rx_buf *buf,
			    struct ib_wc *wc)
{
	const struct rds_ib_rx_ops *ops;
	struct rds_header hdr;
	struct rds_message *done = NULL;
	const char *why = NULL;
	bool ctrl, ok, kick, back;
	u32 data_len, n;
	u64 seen;

	if (!rds_ib_recv_head(ic, buf, wc, &hdr, &data_len, &seen))
		return;
	/* the attempt's: its device stays until its receives are drained */
	ops = ic->i_rdev->rd_rx_ops;
	if (hdr.h_csum != rds_ib_hdr_csum(&hdr)) {
		rds_stats_inc(s_recv_drop_bad_checksum);
		rds_ib_recv_bad(ic, &hdr, "header checksum");
		return;
	}
	ctrl = hdr.h_flags & RDS_IB_FLAG_CTRL;
	if (ctrl && (data_len || hdr.h_len)) {
		rds_ib_recv_bad(ic, &hdr, "control frame with data");
		return;
	}
	if (!ctrl)
		WRITE_ONCE(ic->i_last_active, jiffies);

	spin_lock_bh(&ic->i_lock);
	if (ctrl && (hdr.h_flags & RDS_IB_FLAG_HB))
		ic->i_hb_answer = true;
	ok = rds_ib_credit_recv(&ic->i_credit, !ctrl, hdr.h_credit,
				ic->i_peer_grant);
	kick = ok && hdr.h_credit && ic->i_xmit_stalled;
	if (ok && hdr.h_credit)
		rds_ib_hb_credits(ic);
	/* A give-back (credit.h): asked for, on a control frame, within
	 * our grants; its buffers go back to the pool.
	 */
	back = hdr.h_flags & RDS_IB_FLAG_RETURN;
	n = be16_to_cpu(hdr.h_sport);
	if (ok && back) {
		back = rds_ib_credit_returned(&ic->i_credit,
					      ic->i_gb_asked && ops->conn_release,
					      !ctrl, n, RDS_IB_CREDIT_KEEP);
		if (back)
			ops->conn_release(ic, n);
		else
			why = "bad credit return";
	}
	if (ok && !why && !ctrl)
		rds_ib_credit_refilled(&ic->i_credit, ops->conn_refill(ic));
	spin_unlock_bh(&ic->i_lock);
	if (!ok) {
		rds_ib_recv_bad(ic, &hdr, "credits exceeded");
		return;
	}
	if (why) {
		rds_ib_recv_bad(ic, &hdr, why);
		return;
	}
	if (!rds_ib_recv_take_ack(ic, &hdr, kick))
		return;

	if (!ctrl && (hdr.h_flags & RDS_IB_FLAG_PACK)) {
		why = rds_ib_recv_pack(ic, &hdr, buf, data_len, seen);
		if (why) {
			rds_ib_recv_bad(ic, &hdr, why);
			return;
		}
	} else if (!ctrl) {
		spin_lock_bh(&ic->i_rx_lock);
		done = rds_ib_recv_frag(ic, &hdr, buf, data_len, seen,
					rds_ib_recv_seq_ok(ic, &hdr), &why);
		spin_unlock_bh(&ic->i_rx_lock);
		if (why) {
			rds_ib_recv_bad(ic, &hdr, why);
			return;
		}
		if (done)
			rds_ib_recv_deliver(ic, done);
	}
	/* Grant the refilled buffers back if the peer needs them. */
	rds_ib_send_ctrl(ic);
}

int rds_ib_inc_copy_to_user(struct rds_incoming *inc, struct iov_iter *to)
{
	struct rds_message *rm = container_of(inc, struct rds_message, m_inc);

	return rds_message_copy_to_user(rm, to);
}

void rds_ib_inc_free(struct rds_incoming *inc)
{
	struct rds_message *rm = container_of(inc, struct rds_message, m_inc);

	rds_message_put(rm);
}
