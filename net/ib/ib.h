/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The InfiniBand/RoCE transport: per-device resources.
 *
 * Layers (bottom up): device.c (ib_client: which devices RDS uses and
 * their protection domain, completion queue and receive ops), srq.c (the
 * shared receive queue and its buffers), then the connection, work-request
 * and data-path files that build on them.
 */
#ifndef _RDS_IB_H
#define _RDS_IB_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "../rds.h"
#include "credit.h"
#include "frame.h"
#include "hs.h"
#include "sendq.h"
#include "srqsize.h"

struct rds_ib_device;
struct rds_ib_conn;
struct rds_ib_attempt;
struct rds_ib_peer;
struct rds_ib_hdr_page;

/* One receive buffer: a header slot and a page, for one frame. */
struct rds_ib_rx_buf {
	struct ib_cqe		rb_cqe;		/* completion: rb_cqe.done */
	struct page		*rb_page;
	u64			rb_dma;
	void			*rb_hdr;	/* where the header lands */
	u64			rb_hdr_dma;
	struct rds_ib_device	*rb_dev;
	struct rds_ib_conn	*rb_ic;		/* ring mode: its connection */
};

/* How a device receives.  Chosen once per device when it is added:
 * devices with a shared receive queue use rds_ib_srq_ops, others (or all,
 * with ib_no_srq) a ring of buffers per connection, rds_ib_ring_ops.  The
 * connection code calls through this table and never tests which it has;
 * each has its own completion handler.
 */
struct rds_ib_rx_ops {
	const char	*name;
	int		(*setup)(struct rds_ib_device *rdev);
	void		(*teardown)(struct rds_ib_device *rdev);
	/* Before the QP exists: decide the connection's grant (i_grant),
	 * take its buffers and fill the receive side of the QP attributes.
	 */
	int		(*conn_prepare)(struct rds_ib_conn *ic,
					struct ib_qp_init_attr *attr);
	/* The QP exists: post the connection's own receives, if any. */
	int		(*conn_start)(struct rds_ib_conn *ic);
	/* A data frame's receive buffer was taken and reposted (receive
	 * completion, under i_lock): how many buffers to grant back, 1 or
	 * 0 (the SRQ keeps it back while its pool is in debt).
	 */
	u32		(*conn_refill)(struct rds_ib_conn *ic);
	/* The peer gave back n of our grants (credit.h, give-back; receive
	 * completion, under i_lock): release as many buffers to the pool.
	 * NULL: the connection's buffers are its own (ring), nothing to
	 * release, and the peer is never asked for returns.
	 */
	void		(*conn_release)(struct rds_ib_conn *ic, u32 n);
	/* Make every completion of the QP arrive (sends and receives):
	 * after it, no completion of the QP is queued or being handled,
	 * so the QP may be destroyed.
	 */
	void		(*conn_drain)(struct rds_ib_conn *ic);
	/* The QP is gone: give back what conn_prepare took. */
	void		(*conn_stop)(struct rds_ib_conn *ic);
	/* The device goes (every QP is gone): destroy the receive verbs
	 * objects (teardown), then, once rd_recv_cq is freed and no
	 * completion can run, free the receive memory (release).
	 */
	void		(*release)(struct rds_ib_device *rdev);
};

/* The protocol a connection speaks on the wire: ours (between two hosts
 * running this module), or the kernel's own RDS over IB toward a peer
 * that runs it (Documentation/interop.md).  Chosen per attempt before
 * its queue pair exists (rds_ib_ml_attempt_begin()), from the peer's
 * request when it connects, else from what the peer was last time, and
 * corrected by the peer's accept (rds_ib_ml_use()).  The data path calls
 * through it and never tests which it is: the send side (send.c) under
 * i_lock with i_up, so that it always uses the current one.
 */
struct rds_ib_proto {
	const char	*name;
	/* A data slot for the next frame and the credit it needs, and the
	 * credits the frame grants; NULL (i_xmit_stalled set) if none now.
	 */
	struct rds_ib_send_slot *(*slot_take)(struct rds_ib_conn *ic,
					      u8 *grant);
	/* Write the header of fragment frag of rm into slot s; more: the
	 * send queue holds more messages after rm.
	 */
	void		(*frame_hdr)(struct rds_ib_conn *ic,
				     struct rds_ib_send_slot *s,
				     const struct rds_message *rm,
				     unsigned int frag, bool more);
	/* a receive completion of the connection's queue pair (softirq) */
	void		(*recv_frame)(struct rds_ib_conn *ic,
				      struct rds_ib_rx_buf *buf,
				      struct ib_wc *wc);
	u8		ctrl_flags;	/* h_flags of an ACK-only frame */
	/* send_flags of a message's last frame and of an ACK-only frame:
	 * IB_SEND_SOLICITED where the peer's receive CQ wakes only for
	 * solicited completions (the kernel's RDS)
	 */
	int		solicit_last;
	/* RNR retries we ask of the peer's queue pair (rdma_cm hands each
	 * side's QP the count the other side's REQ or REP carries)
	 */
	u8		rnr_retry;
	bool		heartbeat;	/* the peer answers our heartbeat */
	/* close the connection after ib_idle_secs without traffic (the
	 * kernel's RDS reconnects at once after any loss: no point)
	 */
	bool		idle_close;
	/* send our congestion map at every connect, even when empty (the
	 * kernel's RDS keeps the last one it got across a reconnect)
	 */
	bool		map_every_connect;
	/* the peer acknowledges no map: one is done once posted
	 * (rds_send_map_posted())
	 */
	bool		maps_unacked;
};

/* Toward a peer of ours: credits prevent RNR, keep one visible. */
#define RDS_IB_RNR_RETRY	2

extern const struct rds_ib_proto rds_ib_proto_ours;
extern const struct rds_ib_proto rds_ib_proto_ml;

struct rds_ib_device {
	struct list_head	rd_item;	/* rds_ib_devices, RCU + mutex */
	refcount_t		rd_refcount;
	struct ib_device	*rd_dev;
	struct ib_pd		*rd_pd;
	struct ib_cq		*rd_recv_cq;	/* shared by every QP's receives */
	const struct rds_ib_rx_ops *rd_rx_ops;

	/* Shared receive queue (rds_ib_srq_ops), created for rd_rx_max
	 * buffers (slots of rd_rx_bufs, each with a header slot in
	 * rd_hdr_pages), of which rd_rx_min are posted at setup; it grows
	 * and shrinks between the two (srqsize.h, rds_ib_srq_resize_work()).
	 * rd_rx_used: the slots whose buffer has a page, set only by setup
	 * and the resize work (one at a time), cleared by receive
	 * completions that retire a buffer and by the work when a new
	 * buffer cannot be posted (clear_bit_unlock() once the slot is no
	 * longer touched, test_and_set_bit_lock() before it is).
	 */
	struct ib_srq		*rd_srq;
	struct rds_ib_hdr_page	*rd_hdr_pages;
	unsigned int		rd_hdr_npages;	/* allocated and mapped */
	struct rds_ib_rx_buf	*rd_rx_bufs;
	unsigned long		*rd_rx_used;
	unsigned int		rd_rx_min;
	unsigned int		rd_rx_max;
	unsigned int		rd_frag_size;	/* bytes a receive buffer takes */
	atomic_t		rd_rx_posted;	/* buffers on the SRQ */
	atomic_t		rd_rx_live;	/* buffers with a page */
	/* posted buffers to free, not repost, at their next completion:
	 * taken out of the pool by a shrink, not yet freed
	 */
	atomic_t		rd_rx_retire;
	/* buffers retired (freed by a completion) since setup: the resize
	 * work compares it with rd_rx_retired_seen, its reading of the
	 * last tick
	 */
	atomic_t		rd_rx_retired;
	unsigned int		rd_rx_retired_seen;
	/* of rd_rx_retire, the ones no frame freed for
	 * RDS_IB_SRQ_STRAND_TICKS ticks (srqsize.h): memory held that the
	 * pool does not want.  Written by the resize work only (WRITE_ONCE:
	 * /proc reads it), never above rd_rx_retire when written; retiring
	 * buffers freed since may leave it above, so readers take the
	 * smaller of the two (rds_ib_srq_stranded()).
	 */
	unsigned int		rd_rx_stranded;
	/* buffers in the pool: live ones not retiring.  Written by setup
	 * and the resize work, read by the work and by the release's check
	 * once the work is cancelled: never alongside a writer (/proc shows
	 * rd_rx_live and rd_rx_retire, not this).
	 */
	unsigned int		rd_rx_pool;
	struct rds_ib_srq_sizing rd_rx_sizing;	/* the resize work's */
	/* 1: a busy connection found no buffer free since the resize work
	 * last looked (set by receive completions, cleared by the work)
	 */
	atomic_t		rd_rx_starved;
	/* runs: once a tick while the pool is in debt or above rd_rx_min */
	struct delayed_work	rd_rx_resize;
	bool			rd_rx_dying;	/* SRQ going away: no reposts */
	/* A QP of its own on rd_recv_cq, never connected: a flushed
	 * receive of it marks the point in the shared CQ after which no
	 * completion of a drained QP can be (rds_ib_srq_conn_drain()).
	 */
	struct ib_qp		*rd_drain_qp;
	struct mutex		rd_drain_mutex;	/* one marker at a time */
	/* receive buffers not promised to any connection (credits plus
	 * the control reserve of each connection come out of it)
	 */
	atomic_t		rd_rx_free;

	/* memory regions (mr.c): places taken in the pool (given back
	 * under rds_ib_mr_lock), waiters for one, and under rds_ib_mr_lock
	 * the live ones, the registrations in progress and whether the
	 * device is being removed (no region may be added any more)
	 */
	atomic_t		rd_mr_used;
	wait_queue_head_t	rd_mr_wait;
	struct list_head	rd_mrs;
	unsigned int		rd_mr_regs;
	bool			rd_mr_dying;

	/* passive attempts in flight (accept.c): accepted, not up yet,
	 * each holding a place here and a reference of the device
	 */
	atomic_t		rd_accepting;

	struct rcu_head		rd_rcu;
};

extern const struct rds_ib_rx_ops rds_ib_srq_ops;
extern const struct rds_ib_rx_ops rds_ib_ring_ops;
extern unsigned int rds_ib_srq_size;
extern unsigned int rds_ib_srq_max;

/* Frames on the wire (frame.h): every SEND is one 48-byte RDS header
 * followed by one fragment (at most RDS_IB_FRAG bytes) of a message, by
 * nothing (a control frame: an ACK and credits), or by several whole
 * small messages (a packed frame).
 */
#define RDS_IB_FRAG		PAGE_SIZE
/* The data part of a receive buffer: 8 KiB (an order-1 page), told to the
 * peer in the handshake (frag_shift).  Messages are fragmented at
 * RDS_IB_FRAG whatever the peer's buffers hold; a packed frame fills up to
 * the peer's buffer: 7 messages of 1 KiB where a 4 KiB one takes 3.
 */
#define RDS_IB_RX_SHIFT		13
#define RDS_IB_RX_BYTES		((u32)BIT(RDS_IB_RX_SHIFT))
#define RDS_IB_RX_ORDER		get_order(RDS_IB_RX_BYTES)
/* Credits a connection grants its peer at most: ib_credits and
 * net.rds.ib.max_recv_wr are bounded by it.
 */
#define RDS_IB_CREDITS_MAX	128
/* RDMA READs and atomics a queue pair has in flight at most, each way */
#define RDS_IB_RD_ATOM		16

/* One send slot: the header of one frame and the work request for it.
 * s_sge[0] is the frame's header in i_hdrs; s_sge[1], if there, its data
 * mapped for this frame: a page of the message, or s_copy (a packed
 * frame: its messages copied into one buffer of ours).
 */
struct rds_ib_send_slot {
	struct ib_cqe		s_cqe;		/* s_cqe.done: send completion */
	struct rds_ib_conn	*s_ic;
	struct ib_send_wr	s_wr;		/* s_wr.num_sge: sges in use */
	struct ib_sge		s_sge[RDS_IB_SEND_SGE_MIN];
	void			*s_copy;	/* s_sge[1] maps it: kfree */
	struct rds_message	*s_rm[RDS_IB_PACK_MAX];	/* references */
	u8			s_nrm;		/* 0: a control frame */
};

/* Counters of the IB transport, listed by the ib_counters parameter and,
 * after the core's, by RDS_INFO_COUNTERS (trans.c names them there).
 */
enum {
	RDS_IB_C_TX_FRAMES,
	RDS_IB_C_RX_FRAMES,
	RDS_IB_C_TX_CTRL,
	RDS_IB_C_TX_ACKS,
	RDS_IB_C_CREDIT_WAITS,
	RDS_IB_C_CREDITS_PEAK,
	RDS_IB_C_RNR,
	RDS_IB_C_BAD_FRAMES,
	RDS_IB_C_RESETS,
	RDS_IB_C_CONNECTS,
	RDS_IB_C_RX_NOMEM,
	RDS_IB_C_STALE_RX,
	RDS_IB_C_CONG_SENT,
	RDS_IB_C_CONG_RECV,
	RDS_IB_C_HB_SENT,
	RDS_IB_C_HB_TIMEOUTS,
	RDS_IB_C_MR_REGS,
	RDS_IB_C_MR_FREES,
	RDS_IB_C_MR_IN_USE,
	RDS_IB_C_MR_WAITS,
	RDS_IB_C_MR_EXHAUSTED,
	RDS_IB_C_RDMA_OPS,
	RDS_IB_C_RDMA_BYTES,
	RDS_IB_C_RDMA_ERRORS,
	RDS_IB_C_ATOMICS,
	RDS_IB_C_RX_DRAINS,		/* shared CQ markers of torn down QPs */
	RDS_IB_C_LAST_WQE_LATE,		/* Last WQE Reached not seen in time */
	RDS_IB_C_RX_COPIES,		/* no page to refill: data copied */
	RDS_IB_C_GRANTS_SHORT,		/* SRQ grant below ib_credits */
	RDS_IB_C_GRANTS_SHRUNK,		/* refills kept back: pool in debt */
	RDS_IB_C_GRANTS_EARNED,		/* credits earned back out of debt */
	RDS_IB_C_CONNECT_WAITS,		/* attempts queued at the gate */
	RDS_IB_C_RX_HELD,		/* messages held: protocol a guess */
	RDS_IB_C_RX_HELD_DROPPED,	/* held ones dropped at the end */
	RDS_IB_C_ACCEPT_TIMEOUTS,	/* accepted, never completed: ended */
	RDS_IB_C_PACK_NOMEM,		/* no copy for a packed frame: sent apart */
	RDS_IB_C_CREDIT_RETURNS,	/* give-back frames sent */
	RDS_IB_C_CREDITS_RETURNED,	/* credits they gave back */
	RDS_IB_C_CREDITS_RELEASED,	/* SRQ buffers released on returns */
	RDS_IB_C_PACK_COPIES,		/* packed frames' copies held now */
	RDS_IB_C_SRQ_GROWN,		/* buffers added to SRQ pools */
	RDS_IB_C_SRQ_SHRUNK,		/* buffers taken out to retire */
	RDS_IB_C_SRQ_RETIRED,		/* retired buffers freed */
	RDS_IB_C_SRQ_GROW_FAIL,		/* no page for a buffer to add */
	RDS_IB_C_SRQ_STRANDED,		/* retiring buffers found stranded */
	RDS_IB_C_HB_RUNS,		/* runs of the heartbeat work */
	RDS_IB_C_MAX,
};

extern atomic64_t rds_ib_counters[RDS_IB_C_MAX];

static inline void rds_ib_count(unsigned int c)
{
	atomic64_inc(&rds_ib_counters[c]);
}

/* A queue pair as RDS_INFO_IB_CONNECTIONS shows it (info.c). */
struct rds_ib_qp_info {
	union ib_gid		q_sgid;		/* of the rdma_cm id, once up */
	union ib_gid		q_dgid;
	u8			q_sl;		/* of its path record, once up */
	bool			q_srq;		/* receives from the device's SRQ */
	u32			q_send_wr;	/* as the QP was created */
	u32			q_send_sge;
	/* its own receive queue as created, or with an SRQ (no receive
	 * queue of its own) the SRQ buffers it took
	 */
	u32			q_recv_wr;
};

/* The IB state of one RDS connection, for the connection's lifetime;
 * queue pairs come and go under it (one "attempt" at a time).
 */
struct rds_ib_conn {
	struct rds_connection	*i_conn;

	/* protects the attempts: i_cur, i_dead_ids, i_active, i_dying,
	 * i_rdev, i_send_cq, i_ring, i_hdrs, i_reserved, i_grant, i_peer_*
	 * and changes of i_qp; taken by cm handlers and works (sleeps)
	 */
	struct mutex		i_cm_mutex;
	struct list_head	i_dead_ids;	/* all attempts (ids); reaped when dead */
	bool			i_active;	/* we sent the REQ */
	bool			i_dying;	/* conn_free: no more works */
	struct rds_ib_device	*i_rdev;	/* reference while a QP exists;
						 * stays while i_up (read under
						 * i_lock by /proc)
						 */
	struct ib_qp		*i_qp;
	struct rdma_cm_id	*i_qp_id;	/* i_qp's, set before it; it
						 * outlives i_qp (reaped later)
						 */
	struct ib_cq		*i_send_cq;
	struct rds_ib_send_slot	*i_ring;	/* i_sq.data + 1 slots */
	/* the send queue (i_sq.data: data slots of i_ring) and how many
	 * data frames may go unsignalled in a row, fixed while i_ring
	 * exists (set before it is allocated)
	 */
	struct rds_ib_sendq_sizes i_sq;
	u32			i_signal_every;
	struct rds_header	*i_hdrs;	/* one per slot, DMA mapped */
	u64			i_hdrs_dma;
	struct rds_ib_attempt	*i_cur;		/* current attempt, or NULL */
	struct ib_qp		*i_err_qp;	/* the data path failed on it */
	/* why the data path of the current attempt failed (its first
	 * error, a string that lives as long as the module): the reason
	 * i_down_work gives the end in rds_conn_state.  Set (cmpxchg from
	 * NULL) before the work is queued, cleared by the attempt's end.
	 */
	const char		*i_down_why;
	u32			i_peer_gen;	/* the peer's generation, 0: none
						 * (WRITE_ONCE: /proc reads it)
						 */
	/* the current attempt's handshake was applied: i_peer_gen is its
	 * peer's (set by rds_ib_cm_handshake_apply() with release, cleared
	 * at the attempt's setup; read with acquire by a congestion map's
	 * receipt, which may come first over IPv6)
	 */
	bool			i_hs_applied;
	/* the peer runs the kernel's RDS (i_cm_mutex): over IPv4 it ran it
	 * at its last connection, and the next attempt we make starts in its
	 * protocol; over IPv6 the next request we send is that RDS's own
	 * (mlhs.h, rds_ib_ml6_remember())
	 */
	bool			i_peer_ml;
	/* over IPv6, the refusals with the int 1 of the kernel's request
	 * in a row: reset by an attempt coming up or another answer to our
	 * request, not by its request (rds_ib_ml6_remember(); i_cm_mutex)
	 */
	u8			i_ml6_raced;
	/* the minor of the peer's last handshake of ours, capped at ours
	 * (RDS_IB_HS_PEER_UNKNOWN: none yet; 0: the kernel's RDS, or an old
	 * build): our request carries flags toward an unknown peer and
	 * minor 2 and later (hs.h) (i_cm_mutex)
	 */
	u8			i_peer_minor;
	/* what our current (or last) request was: an enum rds_ib_req_kind
	 * (mlhs.h; i_cm_mutex)
	 */
	u8			i_req;
	bool			i_port_was_down; /* seen down since last up */
	unsigned long		i_port_up_at;	/* jiffies it was seen up again */
	unsigned int		i_backoff_ms;	/* next reconnect delay */
	/* the connect gate (gate.c), under its lock: a slot is held for
	 * the active attempt; queued for one
	 */
	bool			i_gate_held;
	struct list_head	i_gate_item;
	/* the entry of the peer address (peer.c), for the connection's
	 * lifetime; whether the connection holds a place in its count
	 * (i_cm_mutex)
	 */
	struct rds_ib_peer	*i_peer;
	bool			i_peer_held;

	/* protects the data path state below (taken in softirq) */
	spinlock_t		i_lock;
	bool			i_up;		/* frames may be posted */
	/* the attempt's protocol: written while !i_up (i_cm_mutex held) */
	const struct rds_ib_proto *i_proto;
	u32			i_rx_frames;	/* frames of the attempt's QP
						 * taken so far
						 */
	/* written under i_cm_mutex and i_lock while !i_up (the QP's
	 * setup, its coming up), read under i_lock while i_up
	 */
	struct rds_ib_qp_info	i_qp_info;
	struct rds_ib_credit	i_credit;
	u32			i_head;		/* next slot to use */
	u32			i_tail;		/* oldest slot not completed */
	u32			i_since_signal;
	bool			i_copy_unsig;	/* a data frame posted since
						 * the last signalled one holds
						 * a packed frame's copy
						 */
	u32			i_extra;	/* extra WRs in flight (sendq.h) */
	bool			i_xmit_stalled;	/* xmit waits for credits/slots */
	bool			i_ack_owed;	/* send an ACK when possible */
	bool			i_hb_ask;	/* send a heartbeat request */
	bool			i_hb_answer;	/* answer the peer's heartbeat */
	u64			i_ack_sent;	/* last ACK value sent */
	u64			i_posted_seq;	/* highest sequence number whose
						 * last frame was posted, on any
						 * attempt: the peer can
						 * acknowledge nothing beyond
						 */
	struct rds_message	*i_xmit_rm;	/* partly sent message */
	unsigned int		i_xmit_frag;	/* its next fragment */
	u8			i_xmit_flags;	/* h_flags its frames add (the
						 * kernel's RDS: ACK_REQUIRED)
						 */
	/* small messages held back to share one packed frame (references) */
	struct rds_message	*i_pack[RDS_IB_PACK_MAX];
	unsigned int		i_pack_n;
	u32			i_pack_used;	/* frame data bytes they take */
	unsigned int		i_pack_max;	/* 1: the peer takes no packs */
	u32			i_pack_room;	/* data bytes of the peer's
						 * receive buffers
						 */
	u32			i_rx_unacked;	/* delivered, not yet acked */
	u64			i_rx_unacked_bytes;
	u32			i_grant;	/* credits we grant per attempt */
	/* give-back (credit.h), for the attempt: our handshake asked the
	 * peer for returns (we take them), the peer's asked us (we may
	 * send them), both set before the attempt is up; the connection is
	 * idle and a return is to be sent (rds_ib_send_ctrl()); when our
	 * last data frame was posted (jiffies)
	 */
	bool			i_gb_asked;
	bool			i_gb_peer_asked;
	bool			i_gb_due;
	unsigned long		i_last_tx;
	u32			i_peer_grant;	/* credits the peer granted us */
	u64			i_hs_ack;	/* the ACK our handshake carried */
	u32			i_reserved;	/* buffers taken from rd_rx_free */
	/* ring mode: the connection's own receive buffers */
	struct ib_cq		*i_recv_cq;
	struct rds_ib_rx_buf	*i_rx_bufs;
	unsigned int		i_rx_nr;
	void			*i_rx_hdrs;
	u64			i_rx_hdrs_dma;

	bool			i_rx_stopped;	/* error: take no more frames */
	/* SRQ: the QP's Last WQE Reached event (no receive of it follows) */
	struct completion	i_last_wqe;

	/* protects the reassembly state (receive completions, teardown) */
	spinlock_t		i_rx_lock;
	struct rds_message	*i_rx_rm;	/* message being reassembled */
	unsigned int		i_rx_frag;	/* fragments received of it */
	u64			i_rx_delivered;	/* ACK value: last delivered seq */
	/* Under i_lock.  i_guess: the attempt is our request, not up yet,
	 * and its protocol a guess until the peer's accept is read: the
	 * messages that come meanwhile wait on i_held (m_conn_item, in
	 * order), neither delivered nor acknowledged, so that a wrong
	 * guess delivers nothing the peer sends again on the next attempt
	 * (rds_ib_recv_unhold() when it is up, dropped at its end).
	 * i_held_over: past RDS_IB_HELD_MAX or RDS_IB_HELD_BYTES, everything
	 * held and everything that comes is dropped until the attempt's end
	 * (nothing after a dropped message may be delivered).
	 */
	bool			i_guess;
	bool			i_held_over;
	unsigned int		i_held_n;
	size_t			i_held_bytes;
	struct list_head	i_held;
	u64			i_ack_seen;	/* the highest ACK the peer
						 * sent (frames, handshake),
						 * written under i_lock
						 */

	struct timer_list	i_ack_timer;	/* runs: delayed ACK is due */
	struct work_struct	i_send_work;	/* runs: credits/slots freed */
	struct delayed_work	i_connect_work;	/* runs: (re)connect is due */
	struct delayed_work	i_down_work;	/* runs: the attempt failed;
						 * again while its port is
						 * down (rds_ib_port_ready)
						 */
	struct work_struct	i_reap_work;	/* runs: ids were abandoned */
	struct delayed_work	i_idle_work;	/* runs: ib_idle_secs after the
						 * last frame, while up
						 */
	unsigned long		i_last_active;	/* jiffies of the last data frame */
	unsigned long		i_last_rx;	/* jiffies of the last frame in */
	/* under i_cm_mutex (rds_ib_hb_work()): the first heartbeat request
	 * of the current silence was decided at i_hb_asked_at
	 */
	bool			i_hb_asking;
	unsigned long		i_hb_asked_at;
	/* protects the arming of i_hb_work (rds_ib_hb_arm(),
	 * rds_ib_hb_sooner()) and the two below; taken last (under c_lock
	 * on the send path, under i_lock on the receive path).
	 * i_hb_poke: something came due sooner while the work was not
	 * armed (queued, running, or the connection not up): it runs again
	 * at once when it is armed next; i_hb_off: the connection goes
	 * (rds_ib_conn_stop()), the work is never armed again.
	 */
	spinlock_t		i_hb_lock;
	bool			i_hb_poke;
	bool			i_hb_off;
	struct delayed_work	i_timeout_work;	/* runs: an attempt is due to
						 * be up
						 */
	struct delayed_work	i_hb_work;	/* runs: while up, when something
						 * of the heartbeat's or of
						 * give-back's can be due
						 * (rds_ib_hb_next())
						 */
};

/* Nothing waits to go: no partly sent message, no small ones held for a
 * packed frame, no xmit stalled for credits or slots.  Give-back is for
 * such a connection only (rds_ib_gb_check(), rds_ib_send_ctrl()).
 */
static inline bool rds_ib_tx_idle(struct rds_ib_conn *ic)
{
	lockdep_assert_held(&ic->i_lock);
	return !ic->i_xmit_stalled && !ic->i_xmit_rm && !ic->i_pack_n;
}

extern struct workqueue_struct *rds_ib_wq;
extern struct rds_transport rds_ib_transport;
extern unsigned int rds_ib_credits;
extern unsigned int rds_ib_idle_secs;
extern unsigned int rds_ib_heartbeat_ms;
extern unsigned int rds_ib_heartbeat_idle_ms;
extern unsigned int rds_ib_credit_return_ms;
extern unsigned int rds_ib_max_send_wr;
extern unsigned int rds_ib_max_unsignaled_wr;
void rds_ib_flow_control_check(void);

/* mr.c */
extern unsigned int rds_ib_mr_max;
int rds_ib_mr_register(struct rds_sock *rs, struct rds_mr *rmr, bool nonblock,
		       long *timeo);
void rds_ib_mr_invalidate(struct rds_mr *rmr);
void rds_ib_mr_free(struct rds_mr *rmr);
void rds_ib_mr_used(struct rds_mr *rmr, struct rds_connection *conn);
void rds_ib_mr_flush_dev(struct rds_ib_device *rdev);
int rds_ib_mr_post_regs(struct rds_ib_conn *ic, struct rds_message *rm);
void rds_ib_mr_prepost(struct rds_mr *rmr, struct rds_connection *conn);
int rds_ib_atomic_check(struct rds_sock *rs, enum ib_wr_opcode op);

/* device.c */
struct rds_ib_device *rds_ib_device_get(struct ib_device *dev);
void rds_ib_device_put(struct rds_ib_device *rdev);
unsigned int rds_ib_device_count(void);
typedef void (*rds_ib_device_visit_t)(struct rds_ib_device *rdev, void *arg);
void rds_ib_device_for_each(rds_ib_device_visit_t visit, void *arg);
int rds_ib_device_init(void);
void rds_ib_device_exit(void);

/* addr.c */
#define RDS_IB_PORT		18634	/* IPv4 connections */
#define RDS_IB_PORT6		16385	/* IPv6 connections */
struct rds_ib_device *rds_ib_device_of_addr(const struct in6_addr *addr,
					    u32 scope_id);
void rds_ib_sockaddr(const struct in6_addr *addr, u32 scope_id, __be16 port,
		     struct sockaddr_storage *ss);
bool rds_ib_addr_of(const struct sockaddr *sa, struct in6_addr *addr);
int rds_ib_addr_req_scope(struct rdma_cm_id *id, const struct in6_addr *laddr,
			  const struct in6_addr *faddr, u32 *scope_id);
struct rdma_cm_id *rds_ib_addr_listen(bool v6, rdma_cm_event_handler handler,
				      int backlog);

/* peer.c */
extern unsigned int rds_ib_peer_conn_max;
int rds_ib_peer_get(struct rds_ib_conn *ic, gfp_t gfp);
void rds_ib_peer_put(struct rds_ib_conn *ic);
bool rds_ib_peer_take(struct rds_ib_conn *ic, bool bounded);
void rds_ib_peer_leave(struct rds_ib_conn *ic);
unsigned int rds_ib_peer_conns(const struct rds_ib_conn *ic);
bool rds_ib_peer_room(const struct in6_addr *addr, u32 scope,
		      unsigned int *conns);
void rds_ib_peer_init(void);
void rds_ib_peer_exit(void);

/* accept.c */
extern unsigned int rds_ib_accept_max;
bool rds_ib_accept_room(struct rds_ib_device *rdev, unsigned int *in_flight);
bool rds_ib_accept_take(struct rds_ib_device *rdev, unsigned int *in_flight);
void rds_ib_accept_give(struct rds_ib_device *rdev);
void rds_ib_accept_refused(struct rdma_cm_id *cm_id, u8 tos,
			   struct rds_ib_device *rdev, unsigned int in_flight);

/* trans.c */
int rds_ib_counts_show(char *buf, const char *const *keys,
		       atomic64_t *vals, int n);
unsigned int rds_ib_counts_info(struct rds_info_buf *out, const char *prefix,
				const char *const *keys,
				const char *const *names, atomic64_t *vals,
				unsigned int n);

/* proc.c */
void rds_ib_conn_proc(struct rds_connection *conn, struct rds_conn_proc *p);
void rds_ib_devices_proc(struct seq_file *m, struct net *net);

/* info.c */
void rds_ib_info_init(void);
void rds_ib_info_exit(void);
int rds_ib_init(void);
void rds_ib_exit(void);

/* cm.c */
extern u32 rds_ib_gen;
unsigned int rds_ib_hs_stats_info(struct rds_info_buf *out);
int rds_ib_cm_init(void);
void rds_ib_cm_exit(void);
int rds_ib_conn_connect(struct rds_connection *conn);
int rds_ib_conn_alloc(struct rds_connection *conn, gfp_t gfp);
void rds_ib_conn_stop(struct rds_connection *conn);
bool rds_ib_gate_enter(struct rds_ib_conn *ic);
void rds_ib_gate_leave(struct rds_ib_conn *ic);
void rds_ib_conn_free(struct rds_connection *conn);
void rds_ib_conn_error(struct rds_ib_conn *ic, const char *why);
/* The heartbeat (heartbeat.c). */
void rds_ib_conn_stake(struct rds_connection *conn);
void rds_ib_hb_credits(struct rds_ib_conn *ic);
void rds_ib_hb_rearm_all(void);
void rds_ib_hb_start(struct rds_ib_conn *ic);
void rds_ib_hb_work(struct work_struct *work);
void rds_ib_qp_event(struct ib_event *event, void *context);

/* Test hooks of the shared receive CQ (rx_hook.c). */
#ifdef RDS_TEST_HOOKS
enum ib_poll_context rds_ib_test_rx_poll_ctx(void);
void rds_ib_test_rx_hook(struct ib_wc *wc);
#else
/* A production build (no RDS_TEST_HOOKS, see Kbuild): no hook. */
static inline enum ib_poll_context rds_ib_test_rx_poll_ctx(void)
{
	return IB_POLL_SOFTIRQ;
}

static inline void rds_ib_test_rx_hook(struct ib_wc *wc)
{
}
#endif
/* Test hooks of our requests' ESTABLISHED event and of a peer's request
 * (est_hook.c).
 */
#ifdef RDS_TEST_HOOKS
void rds_ib_test_est_delay(void);
void rds_ib_test_req_delay(void);
#else
static inline void rds_ib_test_est_delay(void)
{
}

static inline void rds_ib_test_req_delay(void)
{
}
#endif
void rds_ib_conn_error_after(struct rds_ib_conn *ic, const char *why,
			     unsigned long delay);
/* A queue pair that failed on its own while up may have refused a
 * peer's request (a bad key): the peer's HCA learns that from our NAK,
 * and must before our disconnect reaches it, or its op ends flushed
 * (DROPPED) instead of REMOTE_ERROR.
 */
#define RDS_IB_QP_FAIL_GRACE	(HZ / 2)

/* proto.c: the receive entry, through ic->i_proto */
void rds_ib_recv_frame(struct rds_ib_conn *ic, struct rds_ib_rx_buf *buf,
		       struct ib_wc *wc);

/* send.c */
int rds_ib_xmit(struct rds_connection *conn, struct rds_message *rm);
void rds_ib_xmit_done(struct rds_connection *conn);
void rds_ib_send_ctrl(struct rds_ib_conn *ic);
void rds_ib_send_work(struct work_struct *work);
void rds_ib_ack_timer(struct timer_list *t);
int rds_ib_send_sizes(struct rds_ib_conn *ic,
		      const struct ib_device_attr *attrs);
int rds_ib_ring_alloc(struct rds_ib_conn *ic);
void rds_ib_ring_free(struct rds_ib_conn *ic);
void rds_ib_send_reset(struct rds_ib_conn *ic);
void rds_ib_extra_done(struct rds_ib_conn *ic, struct ib_wc *wc);
void rds_ib_op_reset(struct rds_rdma_op *op);

/* recv.c */
void rds_ib_ours_recv_frame(struct rds_ib_conn *ic, struct rds_ib_rx_buf *buf,
			    struct ib_wc *wc);
void rds_ib_recv_reset(struct rds_ib_conn *ic);
void rds_ib_recv_unhold(struct rds_ib_conn *ic);
__sum16 rds_ib_hdr_csum(const struct rds_header *hdr);
int rds_ib_inc_copy_to_user(struct rds_incoming *inc, struct iov_iter *to);
void rds_ib_inc_free(struct rds_incoming *inc);

/* srq.c */
extern atomic_t rds_ib_rx_pages;
void rds_ib_srq_sizes(const struct ib_device *dev, unsigned int *min,
		      unsigned int *max);
int rds_ib_srq_post(struct rds_ib_device *rdev, struct rds_ib_rx_buf *buf);
unsigned int rds_ib_srq_stranded(struct rds_ib_device *rdev);
void rds_ib_rx_buf_wr(struct rds_ib_rx_buf *buf, struct ib_recv_wr *wr,
		      struct ib_sge *sge);
int rds_ib_rx_buf_alloc(struct rds_ib_rx_buf *buf, bool may_fail);
void rds_ib_rx_buf_free(struct rds_ib_rx_buf *buf);
struct page *rds_ib_rx_buf_take_page(struct rds_ib_rx_buf *buf);
void rds_ib_rx_buf_sync(struct rds_ib_rx_buf *buf, bool to_cpu);

#endif /* _RDS_IB_H */
