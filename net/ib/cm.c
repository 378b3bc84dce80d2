// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cm: bringing the queue pair of an RDS connection up and down.
 *
 * Every RDS connection over IB (struct rds_ib_conn) has at most one
 * current "attempt": an rdma_cm id with, once the route is known, a send
 * CQ, a send ring and an RC queue pair on the device's shared receive
 * queue.  An attempt is made actively (the first send to a peer, or a
 * reconnect while messages wait) or passively (the listener accepts the
 * peer's request).  Each side's handshake (hs.c) carries its generation,
 * what it delivered and the credits it grants.
 *
 * Both sides connecting at once: a request that arrives while our own
 * active attempt is in progress is refused as "busy" if our address is
 * the lower one (our attempt wins: the peer accepts it), and otherwise
 * our attempt is abandoned and the request accepted.  A request while a
 * connection is up means the peer lost it: ours is ended, theirs taken.
 *
 * An attempt not up ib_attempt_timeout_ms after it started ends, ours
 * or the peer's (limit.h).  A request that would give one peer address
 * more than ib_peer_conn_max connections with us is refused (peer.c), and
 * so is one that would give a device more than ib_accept_max accepted
 * attempts not up yet (accept.c).
 *
 * When an attempt ends (disconnect, error, device removal, peer restart),
 * its queue pair is drained and destroyed at once; its rdma_cm id is
 * destroyed later by the reap work, never from an rdma_cm handler (which
 * could wait on itself).  Unacknowledged messages go back on the send
 * queue and are retransmitted by the next attempt, made with exponential
 * backoff and jitter while messages wait.
 *
 * Handlers run in process context (rdma_cm's work queues) under the
 * connection's i_cm_mutex.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <rdma/ib_cm.h>

#include "../fault.h"
#include "../neg.h"
#include "ib.h"
#include "../trace/rds.h"
#include "ml.h"
#include "limit.h"

#define RDS_IB_BACKLOG		128
#define RDS_IB_RESOLVE_MS	2000

/* One rdma_cm id of a connection, current or abandoned. */
struct rds_ib_attempt {
	struct list_head	a_item;		/* i_attempts, i_cm_mutex */
	struct rds_ib_conn	*a_ic;
	struct rdma_cm_id	*a_id;
	bool			a_dead;		/* ended: the reap work destroys */
	unsigned long		a_started;	/* jiffies */
	/* a passive attempt not up yet: the device whose count holds its
	 * place, with a reference (accept.c); i_cm_mutex
	 */
	struct rds_ib_device	*a_acc;
};

/* An attempt that is not up after this long ends: ours is retried
 * (rdma_cm's own request retries can take a minute), and one we accepted
 * gives back what it holds when the peer never completes it (the IB CM
 * would resend our reply for a minute or more).  Our peers end their own
 * request at the same age, and ours starts before our accept of it: an
 * accepted attempt that ends here was given up by the peer already.
 */
/* The attempt timeout (limit.h): ib_attempt_timeout_ms, within 1 s and
 * 10 minutes; read each time an attempt starts or is checked.  15 s by
 * default; the tests of a slow (debug) kernel scale it with the rest of
 * their clock.
 */
static unsigned int rds_ib_attempt_timeout_ms = 15000;
module_param_named(ib_attempt_timeout_ms, rds_ib_attempt_timeout_ms, uint,
		   0644);
MODULE_PARM_DESC(ib_attempt_timeout_ms,
		 "End a connection attempt not up after this many ms, ours or an accepted one (1000 to 600000; default 15000)");

static unsigned long rds_ib_attempt_timeout(void)
{
	return msecs_to_jiffies(clamp_t(unsigned int,
					READ_ONCE(rds_ib_attempt_timeout_ms),
					1000, 600000));
}

/* the listeners: IPv4 (RDS_IB_PORT), IPv6 (RDS_IB_PORT6, or NULL) */
static struct rdma_cm_id *rds_ib_listen_id, *rds_ib_listen6_id;
u32 rds_ib_gen;

unsigned int rds_ib_idle_secs = 300;
module_param_named(ib_idle_secs, rds_ib_idle_secs, uint, 0644);
MODULE_PARM_DESC(ib_idle_secs,
		 "Disconnect a peer after this many seconds without traffic (0: never; default 300)");

unsigned int rds_ib_credits = 64;
module_param_named(ib_credits, rds_ib_credits, uint, 0444);
MODULE_PARM_DESC(ib_credits,
		 "Receive buffers granted to each peer (default 64; fewer when the SRQ is short)");

/* Handshake outcomes: [0] accepted, [reason] refused for that reason. */
static atomic64_t rds_ib_hs_count[RDS_IB_HS_R_MAX];

/* Keys of the ib_handshakes listing: one word each, unlike the log names. */
static const char *const rds_ib_hs_keys[RDS_IB_HS_R_MAX] = {
	[RDS_IB_HS_OK]		= "accepted",
	[RDS_IB_HS_R_SHORT]	= "short",
	[RDS_IB_HS_R_MAGIC]	= "not_rds",
	[RDS_IB_HS_R_VERSION]	= "version",
	[RDS_IB_HS_R_FLAGS]	= "flags",
	[RDS_IB_HS_R_GEN]	= "gen0",
	[RDS_IB_HS_R_FRAG]	= "frag",
	[RDS_IB_HS_R_CREDITS]	= "credits",
	[RDS_IB_HS_R_TOS]	= "tos",
	[RDS_IB_HS_R_BUSY]	= "busy",
	[RDS_IB_HS_R_MAINLINE]	= "mainline",
	[RDS_IB_HS_R_PEER_LIMIT] = "peer_limit",
	[RDS_IB_HS_R_ACCEPT_LIMIT] = "accept_limit",
};

static int rds_ib_hs_stats_get(char *buf, const struct kernel_param *kp)
{
	return rds_ib_counts_show(buf, rds_ib_hs_keys, rds_ib_hs_count,
				  RDS_IB_HS_R_MAX);
}

static const struct kernel_param_ops rds_ib_hs_stats_ops = {
	.get	= rds_ib_hs_stats_get,
};
module_param_cb(ib_handshakes, &rds_ib_hs_stats_ops, NULL, 0444);
MODULE_PARM_DESC(ib_handshakes, "Connection requests accepted and refused, by reason (read only)");

/* The same in RDS_INFO_COUNTERS: ib_hs_accepted, then the refusals as
 * ib_hs_REASON.
 */
unsigned int rds_ib_hs_stats_info(struct rds_info_buf *out)
{
	return rds_ib_counts_info(out, "ib_hs_", rds_ib_hs_keys, NULL,
				  rds_ib_hs_count, RDS_IB_HS_R_MAX);
}

/* The flags we would ask for (hs.h): give-back when it is on and our
 * receive buffers come out of the device's pool.
 */
static u16 rds_ib_cm_flags_wanted(struct rds_ib_conn *ic)
{
	lockdep_assert_held(&ic->i_cm_mutex);
	if (!READ_ONCE(rds_ib_credit_return_ms) ||
	    !ic->i_rdev->rd_rx_ops->conn_release)
		return 0;
	return RDS_IB_HS_F_GIVEBACK;
}

/* Our handshake, with flags (the attempt's queue pair exists). */
static void rds_ib_cm_handshake_fill(struct rds_ib_conn *ic,
				     struct rds_ib_hs *hs, u8 tos, u16 flags)
{
	struct rds_connection *conn = ic->i_conn;
	struct rds_message *rm;
	u64 first;

	memset(hs, 0, sizeof(*hs));
	hs->major = RDS_IB_HS_MAJOR;
	hs->minor = RDS_IB_HS_MINOR;
	hs->flags = flags;
	hs->frag_shift = RDS_IB_RX_SHIFT;
	hs->credits = ic->i_grant;
	hs->tos = tos;
	hs->v6 = !ipv6_addr_v4mapped(&conn->c_faddr);	/* hs.h: the mark */
	hs->hello.gen = rds_ib_gen;
	hs->hello.peer_gen = ic->i_peer_gen;
	ic->i_hs_ack = READ_ONCE(ic->i_rx_delivered);
	hs->hello.rx_next = ic->i_hs_ack + 1;

	spin_lock_bh(&conn->c_lock);
	rm = list_first_entry_or_null(&conn->c_retrans, struct rds_message,
				      m_conn_item);
	if (!rm)
		rm = list_first_entry_or_null(&conn->c_send_queue,
					      struct rds_message, m_conn_item);
	first = rm ? be64_to_cpu(rm->m_inc.i_hdr.h_sequence) :
		     conn->c_next_tx_seq;
	spin_unlock_bh(&conn->c_lock);
	hs->hello.tx_first = first;
	/* Nothing below first is held any more: delivered, or cancelled
	 * or dropped with its op before it was posted.  A peer that starts
	 * afresh at first acknowledges first - 1 at once: not a lie, and
	 * it frees nothing (rds_ib_recv_ack()).
	 */
	spin_lock_bh(&ic->i_lock);
	if (rds_seq_after(first - 1, ic->i_posted_seq))
		ic->i_posted_seq = first - 1;
	/* asked for returns: the peer may send them from now on */
	ic->i_gb_asked = flags & RDS_IB_HS_F_GIVEBACK;
	spin_unlock_bh(&ic->i_lock);
}

/* Take in the peer's handshake: its generation (and with it what we know
 * of its congestion), what it delivered of ours and what it grants.
 * False if it acknowledges what we never sent.
 */
static bool rds_ib_cm_handshake_apply(struct rds_ib_conn *ic,
				      const struct rds_ib_hs *hs)
{
	struct rds_connection *conn = ic->i_conn;

	lockdep_assert_held(&ic->i_cm_mutex);
	spin_lock_bh(&conn->c_lock);
	if (hs->hello.gen != ic->i_peer_gen) {
		/* A new peer (first contact or restarted): it starts afresh
		 * at the oldest message it still holds for us.
		 */
		WRITE_ONCE(conn->c_next_rx_seq, hs->hello.tx_first);
		WRITE_ONCE(ic->i_rx_delivered, hs->hello.tx_first - 1);
	}
	spin_unlock_bh(&conn->c_lock);
	if (ic->i_peer_gen && hs->hello.gen != ic->i_peer_gen)
		pr_info("%pI6c restarted (generation %08x, was %08x)\n",
			&conn->c_faddr, hs->hello.gen, ic->i_peer_gen);
	WRITE_ONCE(ic->i_peer_gen, hs->hello.gen);
	/* A map that comes after this is of i_peer_gen: the receive side
	 * that sees the flag sees the generation (rds_ib_recv_deliver_now()).
	 */
	smp_store_release(&ic->i_hs_applied, true);
	ic->i_peer_minor = rds_ib_hs_peer_minor(hs->minor);
	/* Frames may have arrived (and granted) before this: add to them. */
	spin_lock_bh(&ic->i_lock);
	ic->i_peer_grant = hs->credits;
	ic->i_credit.avail += hs->credits;
	ic->i_gb_peer_asked = hs->flags & RDS_IB_HS_F_GIVEBACK;
	/* Minor 1 and later take packed frames, as large as their receive
	 * buffers (the decoder took frag_shift within 12..16).
	 */
	ic->i_pack_max = 1;
	if (min_t(u8, hs->minor, RDS_IB_HS_MINOR) >= 1)
		ic->i_pack_max = RDS_IB_PACK_MAX;
	ic->i_pack_room = 1U << hs->frag_shift;
	spin_unlock_bh(&ic->i_lock);

	/* Its rx_next speaks of us only if it knows this generation of us. */
	if (!rds_ib_hs_ack_apply(ic, RDS_IB_PD_OURS,
				 hs->hello.peer_gen == rds_ib_gen,
				 hs->hello.rx_next - 1))
		return false;
	/* Its ports congested here are those of the generation it had. */
	if (!rds_neg_congkeep())
		rds_cong_map_peer_gen(conn->c_fcong, hs->hello.gen);
	return true;
}

/* Asynchronous events of a queue pair.  Any context, hard interrupts
 * included (hardware providers): no lock is taken here.  A failed queue
 * pair stops the receive side at once and hands the rest to i_down_work
 * (rds_ib_conn_error() takes i_lock, a BH lock).
 */
void rds_ib_qp_event(struct ib_event *event, void *context)
{
	struct rds_ib_conn *ic = context;
	struct ib_qp *qp = event->element.qp;

	if (qp != smp_load_acquire(&ic->i_qp))	/* then i_qp_id */
		return;
	switch (event->event) {
	case IB_EVENT_QP_LAST_WQE_REACHED:
		complete(&ic->i_last_wqe);
		break;
	case IB_EVENT_COMM_EST:
		/* A frame of the peer came before its RTU (lost, or late):
		 * the peer is up, tell the CM so that it stops waiting for
		 * the RTU and our side comes up too (rxe raises no such
		 * event; hardware devices do).  The id outlives the QP.
		 */
		rdma_notify(READ_ONCE(ic->i_qp_id), IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		pr_warn_ratelimited("%pI6c: queue pair error: %s\n",
				    &ic->i_conn->c_faddr,
				    ib_event_msg(event->event));
		WRITE_ONCE(ic->i_rx_stopped, true);
		cmpxchg(&ic->i_down_why, NULL, ib_event_msg(event->event));
		WRITE_ONCE(ic->i_err_qp, qp);
		mod_delayed_work(rds_ib_wq, &ic->i_down_work, 0);
		break;
	default:
		break;
	}
}

/* Queue pair and friends of the current attempt.  May fail at each
 * allocation (fault injection walks them).
 */
static noinline int rds_ib_attempt_setup(struct rds_ib_conn *ic,
					 struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = { };
	struct rds_ib_device *rdev;
	bool prepared = false;
	int ret;

	lockdep_assert_held(&ic->i_cm_mutex);
	rdev = rds_ib_device_get(id->device);
	if (!rdev)
		return -ENODEV;
	ic->i_rdev = rdev;
	ret = rds_ib_send_sizes(ic, &rdev->rd_dev->attrs);
	if (ret)
		goto err_put;

	ret = rdev->rd_rx_ops->conn_prepare(ic, &attr);
	if (ret)
		goto err_put;
	prepared = true;
	/* Frames can arrive before our ESTABLISHED event: the receive side
	 * of the credits is known now, the peer's grant comes with its
	 * handshake (added to what it granted meanwhile).
	 */
	spin_lock_bh(&ic->i_lock);
	rds_ib_credit_init(&ic->i_credit, 0, ic->i_grant);
	WRITE_ONCE(ic->i_hs_applied, false);
	ic->i_gb_asked = false;
	ic->i_gb_peer_asked = false;
	ic->i_gb_due = false;
	ic->i_last_tx = jiffies;
	ic->i_peer_grant = RDS_IB_HS_MAX_CREDITS;
	ic->i_pack_max = 1;	/* until the peer's handshake says */
	ic->i_pack_room = RDS_IB_FRAG;
	spin_unlock_bh(&ic->i_lock);
	WRITE_ONCE(ic->i_rx_stopped, false);

	ic->i_send_cq = rds_fault() ? ERR_PTR(-ENOMEM) :
			ib_alloc_cq_any(rdev->rd_dev, ic,
					ic->i_sq.cqe,
					IB_POLL_SOFTIRQ);
	if (IS_ERR(ic->i_send_cq)) {
		ret = PTR_ERR(ic->i_send_cq);
		ic->i_send_cq = NULL;
		goto err;
	}
	ret = rds_fault() ? -ENOMEM : rds_ib_ring_alloc(ic);
	if (ret)
		goto err;

	reinit_completion(&ic->i_last_wqe);
	attr.qp_context = ic;
	attr.event_handler = rds_ib_qp_event;
	attr.send_cq = ic->i_send_cq;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = ic->i_sq.qp_wr;
	attr.cap.max_send_sge = ic->i_sq.sge;
	ret = rds_fault() ? -ENOMEM : rdma_create_qp(id, rdev->rd_pd, &attr);
	if (ret)
		goto err;
	WRITE_ONCE(ic->i_qp_id, id);
	smp_store_release(&ic->i_qp, id->qp);	/* after i_qp_id */
	ret = rdev->rd_rx_ops->conn_start(ic);
	if (ret) {
		WRITE_ONCE(ic->i_qp, NULL);
		rdma_destroy_qp(id);
		goto err;
	}
	/* The provider wrote what it gave the QP (at least what was asked)
	 * back into attr.cap.
	 */
	spin_lock_bh(&ic->i_lock);
	ic->i_qp_info.q_srq = !!attr.srq;
	ic->i_qp_info.q_send_wr = attr.cap.max_send_wr;
	ic->i_qp_info.q_send_sge = attr.cap.max_send_sge;
	ic->i_qp_info.q_recv_wr = attr.srq ? ic->i_reserved :
					     attr.cap.max_recv_wr;
	spin_unlock_bh(&ic->i_lock);
	return 0;
err:
	rds_ib_ring_free(ic);
	if (ic->i_send_cq)
		ib_free_cq(ic->i_send_cq);
	ic->i_send_cq = NULL;
	if (prepared)
		rdev->rd_rx_ops->conn_stop(ic);
err_put:
	ic->i_rdev = NULL;
	rds_ib_device_put(rdev);
	return ret;
}

/* a's place among its device's passive attempts in flight, if it holds
 * one, goes back (a is up, or ends).
 */
static void rds_ib_accept_leave(struct rds_ib_conn *ic,
				struct rds_ib_attempt *a)
{
	lockdep_assert_held(&ic->i_cm_mutex);
	if (!a->a_acc)
		return;
	rds_ib_accept_give(a->a_acc);
	a->a_acc = NULL;
}

/* End the current attempt (why: for rds_conn_state): stop the data path,
 * drain and destroy the queue pair, release the device, hand the id to
 * the reap work and put the unacknowledged messages back for the next
 * attempt.
 */
static void rds_ib_attempt_end(struct rds_ib_conn *ic, struct rds_ib_attempt *a,
			       const char *why)
{
	struct rds_connection *conn = ic->i_conn;
	struct rdma_cm_id *id = a->a_id;

	lockdep_assert_held(&ic->i_cm_mutex);
	spin_lock_bh(&ic->i_lock);
	ic->i_up = false;
	spin_unlock_bh(&ic->i_lock);
	WRITE_ONCE(ic->i_rx_stopped, true);

	if (ic->i_qp) {
		rdma_disconnect(id);
		ic->i_rdev->rd_rx_ops->conn_drain(ic);
		WRITE_ONCE(ic->i_qp, NULL);
		rds_ib_send_reset(ic);
		rdma_destroy_qp(id);
	}
	del_timer_sync(&ic->i_ack_timer);
	if (ic->i_send_cq) {
		ib_free_cq(ic->i_send_cq);
		ic->i_send_cq = NULL;
	}
	if (ic->i_rdev) {
		rds_ib_ring_free(ic);
		ic->i_rdev->rd_rx_ops->conn_stop(ic);
		rds_ib_device_put(ic->i_rdev);
		ic->i_rdev = NULL;
	}
	rds_ib_recv_reset(ic);

	rds_ib_accept_leave(ic, a);
	a->a_dead = true;
	if (ic->i_cur == a) {
		ic->i_cur = NULL;
		rds_ib_gate_leave(ic);
		rds_ib_peer_leave(ic);
	}
	queue_work(rds_ib_wq, &ic->i_reap_work);

	/* A connection that was up is reset (not an attempt that failed). */
	if (atomic_read(&conn->c_state) == RDS_CONN_UP)
		rds_stats_inc(s_conn_reset);
	rds_send_requeue(conn);
	rds_conn_set_reset_reason(conn, why);
	rds_conn_set_state(conn, RDS_CONN_DOWN, why);
	/* The queue pair is gone: no error of it comes any more, and the
	 * next attempt's may be allocated at its address: a down work still
	 * pending for this one must not take it for the failed one.
	 */
	WRITE_ONCE(ic->i_down_why, NULL);
	WRITE_ONCE(ic->i_err_qp, NULL);
}

/* After an attempt ended: try again later if messages wait. */
static void rds_ib_reconnect_maybe(struct rds_ib_conn *ic)
{
	struct rds_connection *conn = ic->i_conn;
	unsigned int ms, min_ms, max_ms;

	lockdep_assert_held(&ic->i_cm_mutex);
	/* The state went down before this look at the queue; a sender that
	 * chose the connection while it was up queues, then reads the state
	 * (rds_send_msg()): one of the two sees the other's write.
	 */
	smp_mb();
	if (ic->i_dying || ic->i_cur || list_empty_careful(&conn->c_send_queue))
		return;
	if (!rds_conn_transition(conn, RDS_CONN_DOWN, RDS_CONN_CONNECTING,
				 "reconnect"))
		return;
	min_ms = max_t(unsigned int, 1,
		       jiffies_to_msecs(READ_ONCE(rds_sysctl_reconnect_min_jiffies)));
	max_ms = max_t(unsigned int, min_ms,
		       jiffies_to_msecs(READ_ONCE(rds_sysctl_reconnect_max_jiffies)));
	ic->i_backoff_ms = clamp(ic->i_backoff_ms ? ic->i_backoff_ms * 2 :
				 min_ms, min_ms, max_ms);
	/* Jitter: between half and all of the backoff. */
	ms = ic->i_backoff_ms / 2 + get_random_u32_below(ic->i_backoff_ms / 2 + 1);
	queue_delayed_work(rds_ib_wq, &ic->i_connect_work, msecs_to_jiffies(ms));
}

/* Check at least every 10 s, so that a change of ib_idle_secs takes
 * effect on connections that are up.
 */
static void rds_ib_idle_arm(struct rds_ib_conn *ic, unsigned long delay)
{
	lockdep_assert_held(&ic->i_cm_mutex);
	if (!ic->i_dying && ic->i_proto->idle_close)
		mod_delayed_work(rds_ib_wq, &ic->i_idle_work,
				 min_t(unsigned long, delay, 10 * HZ));
}

/* Runs ib_idle_secs after the connection came up or was last checked.
 * An idle connection (no frame either way for that long, nothing queued,
 * nothing unacknowledged either way) is closed; the next send reconnects.
 */
static void rds_ib_idle_work(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(to_delayed_work(work),
					      struct rds_ib_conn, i_idle_work);
	struct rds_connection *conn = ic->i_conn;
	unsigned int secs = READ_ONCE(rds_ib_idle_secs);
	unsigned long last = READ_ONCE(ic->i_last_active);
	bool quiet;

	mutex_lock(&ic->i_cm_mutex);
	if (!ic->i_cur || atomic_read(&conn->c_state) != RDS_CONN_UP ||
	    !ic->i_proto->idle_close)
		goto out;
	if (!secs) {
		rds_ib_idle_arm(ic, 10 * HZ);
		goto out;
	}
	if (time_before(jiffies, last + secs * HZ)) {
		rds_ib_idle_arm(ic, last + secs * HZ - jiffies);
		goto out;
	}
	spin_lock_bh(&conn->c_lock);
	quiet = list_empty(&conn->c_send_queue) &&
		list_empty(&conn->c_retrans);
	spin_unlock_bh(&conn->c_lock);
	spin_lock_bh(&ic->i_lock);
	quiet = quiet && READ_ONCE(ic->i_rx_delivered) == ic->i_ack_sent;
	spin_unlock_bh(&ic->i_lock);
	if (!quiet) {
		rds_ib_idle_arm(ic, secs * HZ);
		goto out;
	}
	pr_info("%pI6c: idle for %u s: disconnecting\n", &conn->c_faddr, secs);
	rds_ib_attempt_end(ic, ic->i_cur, "idle");
	/* A sender may have queued during the end, seeing it still up. */
	rds_ib_reconnect_maybe(ic);
out:
	mutex_unlock(&ic->i_cm_mutex);
}

static void rds_ib_attempt_up(struct rds_ib_conn *ic)
{
	struct rds_connection *conn = ic->i_conn;
	struct rdma_cm_id *id = ic->i_cur->a_id;
	union ib_gid sgid, dgid;

	lockdep_assert_held(&ic->i_cm_mutex);
	/* Over IPv6 a connection exists: the kernel's connect race is over,
	 * its count of race refusals starts again, the memory stays
	 * (mlhs.h).  Not at its request (forged or not): at its connection.
	 */
	if (!ipv6_addr_v4mapped(&conn->c_faddr))
		ic->i_peer_ml = rds_ib_ml6_remember(ic->i_peer_ml, ic->i_req,
						    RDS_IB_ML6_UP,
						    &ic->i_ml6_raced);
	rdma_read_gids(id, &sgid, &dgid);
	spin_lock_bh(&ic->i_lock);
	ic->i_qp_info.q_sgid = sgid;
	ic->i_qp_info.q_dgid = dgid;
	ic->i_qp_info.q_sl = id->route.path_rec ? id->route.path_rec->sl : 0;
	/* The peer knows what our handshake said; deliveries since need
	 * an ACK.
	 */
	ic->i_ack_sent = ic->i_hs_ack;
	ic->i_ack_owed = READ_ONCE(ic->i_rx_delivered) != ic->i_hs_ack;
	ic->i_rx_unacked = 0;
	ic->i_rx_unacked_bytes = 0;
	ic->i_up = true;
	spin_unlock_bh(&ic->i_lock);
	rds_conn_set_state(conn, RDS_CONN_UP, "established");
	rds_ib_recv_unhold(ic);
	rds_ib_gate_leave(ic);
	rds_ib_accept_leave(ic, ic->i_cur);
	ic->i_backoff_ms = 0;
	rds_ib_count(RDS_IB_C_CONNECTS);
	pr_info("connected %pI6c -> %pI6c tos %u (%s, %s, %u credits each way at most)\n",
		&conn->c_laddr, &conn->c_faddr, conn->c_tos,
		ic->i_active ? "active" : "passive", ic->i_proto->name,
		ic->i_proto == &rds_ib_proto_ours ? ic->i_grant : 0);
	/* The peer's view of our congestion map starts empty. */
	if (ic->i_proto->map_every_connect || rds_cong_map_any(conn->c_lcong))
		rds_send_cong_map(conn);
	queue_work(rds_ib_wq, &ic->i_send_work);
	rds_ib_send_ctrl(ic);
	WRITE_ONCE(ic->i_last_active, jiffies);
	WRITE_ONCE(ic->i_last_rx, jiffies);
	ic->i_hb_asking = false;
	rds_ib_idle_arm(ic, READ_ONCE(rds_ib_idle_secs) * HZ);
	rds_ib_hb_start(ic);
}

static struct rds_ib_attempt *rds_ib_attempt_new(struct rds_ib_conn *ic,
						 struct rdma_cm_id *id)
{
	struct rds_ib_attempt *a = kzalloc(sizeof(*a), GFP_KERNEL);

	if (!a)
		return NULL;
	a->a_ic = ic;
	a->a_id = id;
	list_add_tail(&a->a_item, &ic->i_dead_ids);
	return a;
}

/* Refuse a request; our reply carries the reason and our version. */
static void rds_ib_cm_refuse(struct rdma_cm_id *cm_id,
			     enum rds_ib_hs_reason reason)
{
	struct rds_ib_hs hs = {
		.major		= RDS_IB_HS_MAJOR,
		.minor		= RDS_IB_HS_MINOR,
		.frag_shift	= RDS_IB_RX_SHIFT,
		.reason		= reason,
		.hello.gen	= rds_ib_gen,
	};
	u8 buf[sizeof(struct rds_ib_hs_wire)];

	atomic64_inc(&rds_ib_hs_count[reason]);
	if (trace_rds_ib_hs_refuse_enabled()) {
		struct in6_addr peer = { };

		rds_ib_addr_of((struct sockaddr *)&cm_id->route.addr.dst_addr,
			       &peer);
		trace_rds_ib_hs_refuse(&peer, rds_ib_hs_reason_name(reason));
	}
	/* (a peer or a device at its limit: rds_ib_cm_accept() says it) */
	if (reason != RDS_IB_HS_R_PEER_LIMIT &&
	    reason != RDS_IB_HS_R_ACCEPT_LIMIT)
		pr_info_ratelimited("refused a connection from %pISc: %s\n",
				    &cm_id->route.addr.dst_addr,
				    rds_ib_hs_reason_name(reason));
	rds_ib_hs_encode(&hs, buf);
	rdma_reject(cm_id, buf, sizeof(buf), IB_CM_REJ_CONSUMER_DEFINED);
}

/* A connection request on the listener (cm_id is the new child id).
 * Non-zero: rdma_cm destroys cm_id.
 */
/* RDMA READs and atomics in flight per queue pair, each way. */
static void rds_ib_cm_rd_atom(struct rds_ib_conn *ic,
			      struct rdma_conn_param *param)
{
	const struct ib_device_attr *attrs = &ic->i_rdev->rd_dev->attrs;

	param->responder_resources = clamp_t(int, attrs->max_qp_rd_atom, 1,
					     RDS_IB_RD_ATOM);
	param->initiator_depth = clamp_t(int, attrs->max_qp_init_rd_atom, 1,
					 RDS_IB_RD_ATOM);
}

/* A peer at its limit asks again about once a second (its backoff's
 * maximum): one line every 10 s, the counter counts every request.
 */
static DEFINE_RATELIMIT_STATE(rds_ib_peer_limit_rs, 10 * HZ, 1);

static void rds_ib_peer_refused(struct rdma_cm_id *cm_id, u8 tos,
				unsigned int conns)
{
	if (__ratelimit(&rds_ib_peer_limit_rs))
		pr_info("refused a connection from %pISc tos %u: it has %u connections with us (ib_peer_conn_max %u)\n",
			&cm_id->route.addr.dst_addr, tos, conns,
			READ_ONCE(rds_ib_peer_conn_max));
}

/* A place for the attempt a request of the peer makes on rdev (accept.c):
 * the current attempt's, which is ended next, if it holds one on rdev;
 * else a new one, taken before the current attempt is ended, so that a
 * refusal leaves it alone.  *acc: rdev, whose place the new attempt
 * holds; false at the bound (nothing taken).
 */
static bool rds_ib_accept_enter(struct rds_ib_conn *ic,
				struct rds_ib_device *rdev,
				struct rds_ib_device **acc,
				unsigned int *in_flight)
{
	struct rds_ib_attempt *cur = ic->i_cur;

	lockdep_assert_held(&ic->i_cm_mutex);
	*acc = NULL;
	*in_flight = 0;
	if (cur && cur->a_acc == rdev) {	/* RDS_IB_ACCEPT_KEEP */
		*acc = cur->a_acc;
		cur->a_acc = NULL;
		return true;
	}
	if (!rds_ib_accept_take(rdev, in_flight))
		return false;
	*acc = rdev;
	return true;
}

/* offer: our handshake; or ml: a request of the kernel's RDS (ml.h). */
static int rds_ib_cm_accept(struct rdma_cm_id *cm_id,
			    const struct rds_ib_hs *offer,
			    const struct rds_ib_pd_class *ml)
{
	struct rdma_conn_param param = { };
	struct rds_ib_device *rdev = NULL, *acc = NULL;
	struct rds_connection *conn;
	struct rds_ib_attempt *a;
	struct rds_ib_conn *ic;
	struct in6_addr laddr, faddr;
	enum rds_ib_hs_reason reason;
	struct rds_ib_hs hs;
	u8 buf[RDS_IB_MLHS_V6_LEN];
	const char *why = "accept failed";
	u8 minor = 0, tos = ml ? ml->ml.tos : offer->tos;
	bool replacing = false, racing = false;
	unsigned int conns, in_flight;
	u32 scope_id;
	int ret;

	BUILD_BUG_ON(sizeof(buf) < sizeof(struct rds_ib_hs_wire));
	if (ml)
		atomic64_inc(&rds_ib_hs_count[RDS_IB_HS_R_MAINLINE]);
	reason = ml ? RDS_IB_HS_OK : rds_ib_hs_negotiate(offer, tos, &minor);
	if (reason)
		goto refuse;
	reason = RDS_IB_HS_R_BUSY;
	if (!rds_ib_addr_of((struct sockaddr *)&cm_id->route.addr.src_addr,
			    &laddr) ||
	    !rds_ib_addr_of((struct sockaddr *)&cm_id->route.addr.dst_addr,
			    &faddr) ||
	    rds_ib_addr_req_scope(cm_id, &laddr, &faddr, &scope_id))
		goto refuse;
	/* A peer at its limit (peer.c) makes us allocate nothing for a
	 * connection it would add; rds_ib_peer_take() below decides for
	 * the rest.
	 */
	if (!rds_ib_peer_room(&faddr, scope_id, &conns) &&
	    !rds_conn_find(&init_net, &laddr, &faddr, &rds_ib_transport, tos,
			   scope_id)) {
		reason = RDS_IB_HS_R_PEER_LIMIT;
		rds_ib_peer_refused(cm_id, tos, conns);
		goto refuse;
	}
	/* So does a device at its bound on passive attempts in flight
	 * (accept.c); rds_ib_accept_enter() below decides for the rest.
	 * A device that is not ours (not yet, or no more): busy, as
	 * rds_ib_attempt_setup() would say, and every attempt we accept
	 * holds a place.
	 */
	rdev = rds_ib_device_get(cm_id->device);
	if (!rdev)
		goto refuse;
	if (!rds_ib_accept_room(rdev, &in_flight) &&
	    !rds_conn_find(&init_net, &laddr, &faddr, &rds_ib_transport, tos,
			   scope_id)) {
		reason = RDS_IB_HS_R_ACCEPT_LIMIT;
		rds_ib_accept_refused(cm_id, tos, rdev, in_flight);
		goto refuse;
	}
	conn = rds_conn_find_or_alloc(&init_net, &laddr, &faddr,
				      &rds_ib_transport, tos, scope_id, GFP_KERNEL);
	if (IS_ERR(conn))
		goto refuse;
	ic = conn->c_transport_data;

	mutex_lock(&ic->i_cm_mutex);
	if (ic->i_dying)
		goto unlock;
	if (ic->i_cur) {
		racing = ic->i_active &&
			 atomic_read(&conn->c_state) != RDS_CONN_UP;
		/* Both sides connecting: the lower address's attempt wins.
		 * The kernel's RDS refuses ours meanwhile: we yield.
		 */
		if (racing && !ml && memcmp(&laddr, &faddr, sizeof(laddr)) < 0)
			goto unlock;
	}
	/* A place among the device's passive attempts in flight. */
	if (!rds_ib_accept_enter(ic, rdev, &acc, &in_flight)) {
		reason = RDS_IB_HS_R_ACCEPT_LIMIT;
		rds_ib_accept_refused(cm_id, tos, rdev, in_flight);
		goto unlock;
	}
	if (ic->i_cur) {
		rds_ib_attempt_end(ic, ic->i_cur,
				   racing ? "lost the connect race" :
					    "the peer connected again");
		replacing = true;
	}
	/* A connection the peer adds must fit its limit (peer.c). */
	if (!rds_ib_peer_take(ic, !replacing)) {
		reason = RDS_IB_HS_R_PEER_LIMIT;
		rds_ib_peer_refused(cm_id, tos, rds_ib_peer_conns(ic));
		goto unlock;
	}
	a = rds_ib_attempt_new(ic, cm_id);
	if (!a)
		goto unlock;
	rds_ib_ml_attempt_begin(ic, !!ml, false);
	ret = rds_ib_attempt_setup(ic, cm_id);
	if (ret) {
		list_del(&a->a_item);
		kfree(a);
		goto unlock;
	}
	cm_id->context = a;
	ic->i_cur = a;
	ic->i_active = false;
	a->a_acc = acc;		/* its place: given back when up or ended */
	acc = NULL;
	/* A peer that never completes it (no RTU) holds it for no longer
	 * than our own attempts last (i_dying was read above, under the
	 * mutex: rds_ib_conn_stop() cancels the work after setting it).
	 */
	a->a_started = jiffies;
	mod_delayed_work(rds_ib_wq, &ic->i_timeout_work,
			 rds_ib_attempt_timeout());
	rds_conn_set_state(conn, RDS_CONN_CONNECTING, "accepting");
	/* Over IPv4 the protocol it ran last; over IPv6 a request in its
	 * layout may be forged for a peer of ours: only our own changes the
	 * memory, and its own leaves the count of race refusals too (reset
	 * when this attempt comes up: rds_ib_attempt_up()).
	 */
	if (ipv6_addr_v4mapped(&faddr))
		ic->i_peer_ml = !!ml;
	else
		ic->i_peer_ml = rds_ib_ml6_remember(ic->i_peer_ml, ic->i_req,
						    ml ? RDS_IB_ML6_PEER_ML :
						    RDS_IB_ML6_PEER_OURS,
						    &ic->i_ml6_raced);
	/* no flag toward the kernel's RDS (hs.h) */
	if (ic->i_peer_ml)
		ic->i_peer_minor = 0;
	/* (the ack_seq of a request in its layout frees nothing: mlhs.h) */
	if (ml ? !rds_ib_hs_ack_apply(ic, RDS_IB_PD_MAINLINE, false,
				      ml->ml.ack_seq) :
	    !rds_ib_cm_handshake_apply(ic, offer)) {
		reason = RDS_IB_HS_R_FLAGS;
		why = "handshake acknowledges unsent messages";
		cm_id->context = NULL;
		goto end;
	}

	if (ml) {
		param.private_data_len = rds_ib_ml_accept_pd(ml, buf,
							     sizeof(buf));
		hs.major = ml->proto >> 8;
		hs.minor = ml->proto & 0xff;
	} else {
		rds_ib_cm_handshake_fill(ic, &hs, tos,
					 rds_ib_hs_accept_flags(offer,
								rds_ib_cm_flags_wanted(ic)));
		hs.minor = minor;
		rds_ib_hs_encode(&hs, buf);
		param.private_data_len = sizeof(struct rds_ib_hs_wire);
	}
	param.private_data = buf;
	rds_ib_cm_rd_atom(ic, &param);
	param.rnr_retry_count = ic->i_proto->rnr_retry;
	ret = rdma_accept(cm_id, &param);
	if (ret) {
		cm_id->context = NULL;
		goto end;
	}
	mutex_unlock(&ic->i_cm_mutex);
	rds_ib_device_put(rdev);
	atomic64_inc(&rds_ib_hs_count[RDS_IB_HS_OK]);
	pr_info("accepted a connection from %pISc (%s protocol %u.%u)\n",
		&cm_id->route.addr.dst_addr, ic->i_proto->name, hs.major,
		hs.minor);
	return 0;

end:
	/* rdma_cm destroys this id: the reap work must not. */
	list_del(&a->a_item);
	rds_ib_attempt_end(ic, a, why);
	kfree(a);
unlock:
	if (acc)
		rds_ib_accept_give(acc);	/* no attempt took it */
	if (!ic->i_cur)
		rds_ib_peer_leave(ic);
	rds_ib_reconnect_maybe(ic);
	mutex_unlock(&ic->i_cm_mutex);
refuse:
	if (rdev)
		rds_ib_device_put(rdev);
	/* (a refusal in its protocol carries no reason: counted here) */
	if (ml && (reason == RDS_IB_HS_R_PEER_LIMIT ||
		   reason == RDS_IB_HS_R_ACCEPT_LIMIT))
		atomic64_inc(&rds_ib_hs_count[reason]);
	if (ml)
		rds_ib_ml_refuse(cm_id);
	else
		rds_ib_cm_refuse(cm_id, reason);
	return -ECONNREFUSED;
}

/* The active side got the route: set up and send the request. */
static int rds_ib_cm_connect(struct rds_ib_conn *ic, struct rdma_cm_id *id)
{
	struct rdma_conn_param param = { };
	u8 buf[RDS_IB_HS_OFFER_LEN];
	struct rds_ib_hs hs;
	int ret;

	/* Over IPv4 the peer's protocol as it was last time, a guess the
	 * accept corrects; over IPv6 the one of the request (mlcm.c).
	 */
	ic->i_req = rds_ib_ml6_request(!ipv6_addr_v4mapped(&ic->i_conn->c_faddr),
				       ic->i_peer_ml);
	rds_ib_ml_attempt_begin(ic, ic->i_peer_ml,
				ic->i_req == RDS_IB_REQ_OFFER);
	ret = rds_ib_attempt_setup(ic, id);
	if (ret)
		return ret;
	rds_ib_cm_handshake_fill(ic, &hs, ic->i_conn->c_tos,
				 rds_ib_hs_request_flags(ic->i_peer_minor,
							 rds_ib_cm_flags_wanted(ic)));
	param.private_data = buf;
	switch (ic->i_req) {
	case RDS_IB_REQ_OURS:
		/* Ours, marked (hs.h): the kernel's RDS refuses it.  At
		 * the length of its own IPv6 request, zero-padded: it takes
		 * a shorter one for version 4.0 whatever the mark says (the
		 * IB CM pads it so, a transport that does not would not).
		 */
		BUILD_BUG_ON(sizeof(buf) < sizeof(struct rds_ib_hs_wire));
		memset(buf, 0, sizeof(buf));
		rds_ib_hs_encode(&hs, buf);
		param.private_data_len = sizeof(buf);
		break;
	case RDS_IB_REQ_ML:
		/* IPv6, to a peer that refused ours as the kernel's RDS
		 * does: its own request, nothing of ours (no room).
		 */
		param.private_data_len = rds_ib_ml_request(ic, &hs, buf,
							   sizeof(buf));
		break;
	default:
		/* An offer (hs.h): taken by ours and by the kernel's RDS. */
		param.private_data_len = rds_ib_ml_offer(ic, &hs, buf,
							 sizeof(buf));
		break;
	}
	if (!param.private_data_len)
		return -EAFNOSUPPORT;
	rds_ib_cm_rd_atom(ic, &param);
	/* 7 would mean "retry forever" on some devices (rxe). */
	param.retry_count = 6;
	param.rnr_retry_count = ic->i_proto->rnr_retry;
	/* From the ROUTE_RESOLVED handler: the handler lock is held. */
	return rdma_connect_locked(id, &param);
}

/* Our request was refused: say why.  Over IPv6 a refusal by the peer's
 * RDS (not one of the CM's own, nor one with zeros for private data: no
 * listener, no answer) tells whether it runs the kernel's RDS: the next
 * request follows (mlhs.h).  The int 1 refusing its own request counts
 * as a race refusal until a connection comes up (rds_ib_attempt_up());
 * any other refusal by it sets the count to 0.
 */
static void rds_ib_cm_refused(struct rds_ib_conn *ic,
			      struct rdma_cm_event *event)
{
	bool consumer = event->status == IB_CM_REJ_CONSUMER_DEFINED;
	struct rds_connection *conn = ic->i_conn;
	bool was = ic->i_peer_ml;
	enum rds_ib_rej_kind kind;
	struct rds_ib_hs hs;
	u8 reason;

	lockdep_assert_held(&ic->i_cm_mutex);
	kind = rds_ib_rej_classify(consumer, event->param.conn.private_data,
				   event->param.conn.private_data_len, &reason);
	/* An old build's refusal (of our flags) says minor 0 or 1: the next
	 * request has none (hs.h).
	 */
	if (kind == RDS_IB_REJ_OURS &&
	    rds_ib_hs_decode(event->param.conn.private_data,
			     event->param.conn.private_data_len, &hs) == RDS_IB_HS_OK)
		ic->i_peer_minor = rds_ib_hs_refused_minor(&hs);
	if (kind != RDS_IB_REJ_NONE && !ipv6_addr_v4mapped(&conn->c_faddr)) {
		ic->i_peer_ml = rds_ib_ml6_remember(was, ic->i_req,
						    kind == RDS_IB_REJ_MAINLINE ?
						    RDS_IB_ML6_REFUSED_ML :
						    RDS_IB_ML6_REFUSED,
						    &ic->i_ml6_raced);
		if (ic->i_peer_ml != was) {
			pr_info_ratelimited("%pI6c refused our connection %s: the next attempt speaks %s\n",
					    &conn->c_faddr,
					    was ? "in the kernel's RDS protocol" :
						  "as the kernel's RDS does",
					    was ? "ours" : "its protocol");
			return;
		}
	}
	switch (kind) {
	case RDS_IB_REJ_OURS:
		if (reason != RDS_IB_HS_R_BUSY)
			pr_info_ratelimited("%pI6c refused our connection: %s\n",
					    &conn->c_faddr,
					    rds_ib_hs_reason_name(reason));
		return;
	case RDS_IB_REJ_MAINLINE:
		/* the int 1 in its byte order, then zeros (mlhs.h) */
		pr_info_ratelimited("%pI6c refused our connection as the kernel's RDS does (a connection race, or a version it does not speak)\n",
				    &conn->c_faddr);
		return;
	default:
		break;
	}
	pr_info_ratelimited("%pI6c refused our connection (status %d, %u bytes of private data)\n",
			    &conn->c_faddr, event->status,
			    event->param.conn.private_data_len);
}

static int rds_ib_cm_handler(struct rdma_cm_id *cm_id,
			     struct rdma_cm_event *event)
{
	struct rds_ib_attempt *a = cm_id->context;
	const char *why = NULL;
	struct rds_ib_conn *ic;
	struct rds_ib_hs hs;
	bool end = false;
	int ret;

	if (cm_id == rds_ib_listen_id || cm_id == rds_ib_listen6_id)
		return 0;
	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		enum rds_ib_hs_reason reason;
		struct rds_ib_pd_class c;

		rds_ib_test_req_delay();
		/* The kernel's RDS, over IPv4 or IPv6: in its protocol. */
		if (rds_ib_ml_classify(cm_id, event, &c) ==
		    RDS_IB_PD_MAINLINE)
			return rds_ib_cm_accept(cm_id, NULL, &c);
		reason = rds_ib_hs_decode(event->param.conn.private_data,
					  event->param.conn.private_data_len,
					  &hs);
		if (reason) {
			rds_ib_cm_refuse(cm_id, reason);
			return -ECONNREFUSED;
		}
		return rds_ib_cm_accept(cm_id, &hs, NULL);
	}
	if (!a)
		return 0;
	ic = a->a_ic;
	/* (i_active read without i_cm_mutex: a test hook's hint only) */
	if (event->event == RDMA_CM_EVENT_ESTABLISHED && READ_ONCE(ic->i_active))
		rds_ib_test_est_delay();

	pr_debug("%pI6c: %s (status %d)\n", &ic->i_conn->c_faddr,
		 rdma_event_msg(event->event), event->status);
	mutex_lock(&ic->i_cm_mutex);
	if (a->a_dead || ic->i_cur != a)
		goto out;
	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(cm_id, RDS_IB_RESOLVE_MS);
		end = ret;
		why = "cannot resolve the route";
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rds_ib_cm_connect(ic, cm_id);
		end = ret;
		why = "cannot send the request";
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ic->i_active) {
			bool ml;

			/* Ours or the kernel's RDS (mlcm.c), then ours. */
			why = rds_ib_ml_answer(ic, event, &ml);
			if (!why && !ml &&
			    (rds_ib_hs_decode(event->param.conn.private_data,
					      event->param.conn.private_data_len,
					      &hs) != RDS_IB_HS_OK ||
			     !rds_ib_cm_handshake_apply(ic, &hs))) {
				rds_ib_count(RDS_IB_C_BAD_FRAMES);
				why = "bad handshake answer";
			}
			if (why) {
				trace_rds_ib_hs_refuse(&ic->i_conn->c_faddr, why);
				end = true;
				break;
			}
		}
		rds_ib_attempt_up(ic);
		break;
	case RDMA_CM_EVENT_REJECTED:
		rds_ib_cm_refused(ic, event);
		end = true;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		end = true;
		break;
	default:
		break;
	}
	if (end) {
		pr_info_ratelimited("%pI6c: connection %s: %s (status %d)\n",
				    &ic->i_conn->c_faddr,
				    atomic_read(&ic->i_conn->c_state) ==
				    RDS_CONN_UP ? "lost" : "attempt failed",
				    rdma_event_msg(event->event),
				    event->status);
		if (atomic_read(&ic->i_conn->c_state) == RDS_CONN_UP)
			rds_ib_count(RDS_IB_C_RESETS);
		rds_ib_attempt_end(ic, a, why ?: rdma_event_msg(event->event));
		rds_ib_reconnect_maybe(ic);
	}
out:
	mutex_unlock(&ic->i_cm_mutex);
	return 0;
}

/* Runs when a (re)connect is due. */
static void rds_ib_connect_work(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(to_delayed_work(work),
					      struct rds_ib_conn,
					      i_connect_work);
	struct rds_connection *conn = ic->i_conn;
	struct sockaddr_storage src, dst;
	struct rds_ib_attempt *a;
	struct rdma_cm_id *id;
	int ret;

	pr_debug("connecting to %pI6c\n", &conn->c_faddr);
	mutex_lock(&ic->i_cm_mutex);
	if (ic->i_dying || ic->i_cur) {
		rds_ib_gate_leave(ic);
		goto out;
	}
	/* Not our turn: the gate queues this work again (gate.c). */
	if (!rds_ib_gate_enter(ic))
		goto out;
	rds_ib_sockaddr(&conn->c_laddr, conn->c_bound_if, 0, &src);
	rds_ib_sockaddr(&conn->c_faddr, conn->c_bound_if,
			htons(ipv6_addr_v4mapped(&conn->c_faddr) ?
			      RDS_IB_PORT : RDS_IB_PORT6), &dst);
	a = rds_ib_attempt_new(ic, NULL);
	if (!a)
		goto retry;
	id = rdma_create_id(&init_net, rds_ib_cm_handler, a, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		list_del(&a->a_item);
		kfree(a);
		goto retry;
	}
	a->a_id = id;
	a->a_started = jiffies;
	ic->i_cur = a;
	ic->i_active = true;
	rds_ib_peer_take(ic, false);	/* ours: counted, never refused */
	rds_conn_set_state(conn, RDS_CONN_CONNECTING, "connecting");
	if (!ic->i_dying)
		mod_delayed_work(rds_ib_wq, &ic->i_timeout_work,
				 rds_ib_attempt_timeout());
	rdma_set_service_type(id, conn->c_tos);
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst, RDS_IB_RESOLVE_MS);
	if (ret) {
		pr_info_ratelimited("%pI6c: cannot resolve: %d\n",
				    &conn->c_faddr, ret);
		rds_ib_attempt_end(ic, a, "cannot resolve the address");
		goto retry;
	}
	goto out;
retry:
	rds_ib_gate_leave(ic);
	rds_conn_set_state(conn, RDS_CONN_DOWN, "cannot start an attempt");
	rds_ib_reconnect_maybe(ic);
out:
	mutex_unlock(&ic->i_cm_mutex);
}

/* Whether an attempt on id may end now.  Ending it sends a MAD (a DREQ
 * or a REJ) through the port's GSI queue pair, and rxe fails that queue
 * pair for good when it has no route for the packet (its netdev down, or
 * just up with its GIDs not yet back): every later connection through the
 * device would then time out, until the device is re-created.  So while
 * the port or its netdev is down, and for RDS_IB_PORT_SETTLE after they
 * came back, the end waits (the data path is already stopped).  Nothing is lost by waiting:
 * the peer cannot be reached meanwhile.
 */
#define RDS_IB_PORT_POLL	(HZ / 4)
#define RDS_IB_PORT_SETTLE	HZ

/* The netdev under a RoCE id is running with a carrier.  A NIC going down
 * stops running, and loses its routes, before rxe marks the port down.
 */
static bool rds_ib_netdev_up(struct rdma_cm_id *id)
{
	struct rdma_dev_addr *da = &id->route.addr.dev_addr;
	struct net_device *ndev;
	bool up;

	if (!da->bound_dev_if)
		return true;	/* not bound to a netdev (IB) */
	ndev = dev_get_by_index(da->net ?: &init_net, da->bound_dev_if);
	if (!ndev)
		return false;
	up = netif_running(ndev) && netif_carrier_ok(ndev);
	dev_put(ndev);
	return up;
}

static bool rds_ib_port_ready(struct rds_ib_conn *ic, struct rdma_cm_id *id)
{
	struct ib_port_attr attr;

	lockdep_assert_held(&ic->i_cm_mutex);
	if (!id->device || ib_query_port(id->device, id->port_num, &attr))
		return true;	/* nothing to protect */
	if (attr.state != IB_PORT_ACTIVE || !rds_ib_netdev_up(id)) {
		ic->i_port_was_down = true;
		ic->i_port_up_at = 0;
		return false;
	}
	if (!ic->i_port_was_down)
		return true;
	if (!ic->i_port_up_at)
		ic->i_port_up_at = jiffies | 1;
	if (time_before(jiffies, ic->i_port_up_at + RDS_IB_PORT_SETTLE))
		return false;
	ic->i_port_was_down = false;
	return true;
}

/* Runs the attempt timeout after an attempt started, ours or the
 * peer's (limit.h).
 */
static void rds_ib_timeout_work(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(to_delayed_work(work),
					      struct rds_ib_conn,
					      i_timeout_work);
	struct rds_connection *conn = ic->i_conn;
	enum rds_ib_overdue due = RDS_IB_OVERDUE_NO;
	struct rds_ib_attempt *a;
	const char *why;

	mutex_lock(&ic->i_cm_mutex);
	a = ic->i_cur;
	if (a)
		due = rds_ib_attempt_overdue(ic->i_active,
					     atomic_read(&conn->c_state) ==
					     RDS_CONN_UP, a->a_started,
					     jiffies, rds_ib_attempt_timeout());
	if (due == RDS_IB_OVERDUE_PASSIVE && rds_neg_halfopen())
		due = RDS_IB_OVERDUE_NO;
	if (due == RDS_IB_OVERDUE_NO)
		goto unlock;
	if (!rds_ib_port_ready(ic, a->a_id)) {
		/* Its port is down: the attempt ends when the port is back,
		 * which may take long.  Its connect slot goes now, so that
		 * attempts through other ports and devices do not wait
		 * behind it.
		 */
		rds_ib_gate_leave(ic);
		queue_delayed_work(rds_ib_wq, &ic->i_timeout_work,
				   RDS_IB_PORT_POLL);
		goto unlock;
	}
	if (due == RDS_IB_OVERDUE_PASSIVE) {
		rds_ib_count(RDS_IB_C_ACCEPT_TIMEOUTS);
		why = "accepted connection not completed";
		pr_info_ratelimited("%pI6c tos %u: the peer did not complete the connection we accepted in %u s: ended\n",
				    &conn->c_faddr, conn->c_tos,
				    jiffies_to_msecs(rds_ib_attempt_timeout()) / 1000);
	} else {
		why = "connection attempt timed out";
		pr_info_ratelimited("%pI6c: connection attempt timed out\n",
				    &conn->c_faddr);
	}
	rds_ib_attempt_end(ic, a, why);
	rds_ib_reconnect_maybe(ic);
unlock:
	mutex_unlock(&ic->i_cm_mutex);
}

/* Runs after the data path saw an error on the current attempt, and again
 * every RDS_IB_PORT_POLL while its port is not ready for the end.
 */
static void rds_ib_down_work(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(to_delayed_work(work),
					      struct rds_ib_conn, i_down_work);

	mutex_lock(&ic->i_cm_mutex);
	if (ic->i_cur && ic->i_qp && ic->i_qp == READ_ONCE(ic->i_err_qp)) {
		if (!rds_ib_port_ready(ic, ic->i_cur->a_id)) {
			queue_delayed_work(rds_ib_wq, &ic->i_down_work,
					   RDS_IB_PORT_POLL);
			goto unlock;
		}
		rds_ib_count(RDS_IB_C_RESETS);
		rds_ib_attempt_end(ic, ic->i_cur,
				   READ_ONCE(ic->i_down_why) ?: "data path error");
		rds_ib_reconnect_maybe(ic);
	}
unlock:
	mutex_unlock(&ic->i_cm_mutex);
}

/* Runs after attempts ended: destroys their rdma_cm ids (which waits for
 * their handlers, so it must not run from one).
 */
static void rds_ib_reap_work(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(work, struct rds_ib_conn,
					      i_reap_work);
	struct rds_ib_attempt *a, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&ic->i_cm_mutex);
	list_for_each_entry_safe(a, tmp, &ic->i_dead_ids, a_item)
		if (a->a_dead)
			list_move(&a->a_item, &dead);
	mutex_unlock(&ic->i_cm_mutex);

	list_for_each_entry_safe(a, tmp, &dead, a_item) {
		WARN_ON_ONCE(a->a_acc);	/* its end gave its place back */
		if (a->a_id)
			rdma_destroy_id(a->a_id);
		kfree(a);
	}
}

/* The data path (any context) found the connection broken. */
/* The data path of ic failed (why): stop it now, end the attempt after
 * delay jiffies.
 */
void rds_ib_conn_error_after(struct rds_ib_conn *ic, const char *why,
			     unsigned long delay)
{
	spin_lock_bh(&ic->i_lock);
	ic->i_up = false;
	spin_unlock_bh(&ic->i_lock);
	/* Nothing after a lost or refused frame may be delivered: the peer
	 * retransmits from the first unacknowledged message.
	 */
	WRITE_ONCE(ic->i_rx_stopped, true);
	cmpxchg(&ic->i_down_why, NULL, why);	/* the first error's */
	WRITE_ONCE(ic->i_err_qp, READ_ONCE(ic->i_qp));
	rds_conn_set_reset_reason(ic->i_conn, why);
	pr_info_ratelimited("%pI6c: resetting the connection: %s\n",
			    &ic->i_conn->c_faddr, why);
	mod_delayed_work(rds_ib_wq, &ic->i_down_work, delay);
}

void rds_ib_conn_error(struct rds_ib_conn *ic, const char *why)
{
	rds_ib_conn_error_after(ic, why, 0);
}

int rds_ib_conn_connect(struct rds_connection *conn)
{
	struct rds_ib_conn *ic = conn->c_transport_data;

	if (rds_conn_transition(conn, RDS_CONN_DOWN, RDS_CONN_CONNECTING,
				"connect"))
		queue_delayed_work(rds_ib_wq, &ic->i_connect_work, 0);
	return 0;
}

int rds_ib_conn_alloc(struct rds_connection *conn, gfp_t gfp)
{
	struct rds_ib_conn *ic = kzalloc(sizeof(*ic), gfp);

	if (!ic)
		return -ENOMEM;
	ic->i_conn = conn;
	if (rds_ib_peer_get(ic, gfp)) {
		kfree(ic);
		return -ENOMEM;
	}
	ic->i_proto = &rds_ib_proto_ours;
	ic->i_peer_minor = RDS_IB_HS_PEER_UNKNOWN;
	INIT_LIST_HEAD(&ic->i_held);
	mutex_init(&ic->i_cm_mutex);
	INIT_LIST_HEAD(&ic->i_dead_ids);
	INIT_LIST_HEAD(&ic->i_gate_item);
	spin_lock_init(&ic->i_lock);
	spin_lock_init(&ic->i_rx_lock);
	spin_lock_init(&ic->i_hb_lock);
	init_completion(&ic->i_last_wqe);
	timer_setup(&ic->i_ack_timer, rds_ib_ack_timer, 0);
	INIT_WORK(&ic->i_send_work, rds_ib_send_work);
	INIT_DELAYED_WORK(&ic->i_connect_work, rds_ib_connect_work);
	INIT_DELAYED_WORK(&ic->i_down_work, rds_ib_down_work);
	INIT_WORK(&ic->i_reap_work, rds_ib_reap_work);
	INIT_DELAYED_WORK(&ic->i_idle_work, rds_ib_idle_work);
	INIT_DELAYED_WORK(&ic->i_hb_work, rds_ib_hb_work);
	INIT_DELAYED_WORK(&ic->i_timeout_work, rds_ib_timeout_work);
	conn->c_transport_data = ic;
	return 0;
}

/* The RDS connection goes away (module exit, namespace exit): no socket
 * uses it, nobody finds it.  Nothing starts again once i_dying is set;
 * ends the current attempt.  Again from rds_ib_conn_free(): then a no-op.
 */
void rds_ib_conn_stop(struct rds_connection *conn)
{
	struct rds_ib_conn *ic = conn->c_transport_data;
	bool again;

	mutex_lock(&ic->i_cm_mutex);
	again = ic->i_dying;
	ic->i_dying = true;
	mutex_unlock(&ic->i_cm_mutex);
	/* Off the gate's queue before the work it may queue is cancelled. */
	rds_ib_gate_leave(ic);
	cancel_delayed_work_sync(&ic->i_connect_work);
	/* Again (from rds_ib_conn_free()): the end of the first call may
	 * have queued i_down_work anew, this cancels it.
	 */
	if (!(again && rds_neg_downwork()))
		cancel_delayed_work_sync(&ic->i_down_work);
	cancel_delayed_work_sync(&ic->i_idle_work);
	/* the receive path may bring it forward until the attempt's end */
	spin_lock_bh(&ic->i_hb_lock);
	ic->i_hb_off = true;
	spin_unlock_bh(&ic->i_hb_lock);
	cancel_delayed_work_sync(&ic->i_hb_work);
	cancel_delayed_work_sync(&ic->i_timeout_work);

	mutex_lock(&ic->i_cm_mutex);
	if (ic->i_cur)
		rds_ib_attempt_end(ic, ic->i_cur, "connection freed");
	mutex_unlock(&ic->i_cm_mutex);
}

/* After rds_ib_conn_stop(), or with it: its queues are empty. */
void rds_ib_conn_free(struct rds_connection *conn)
{
	struct rds_ib_conn *ic = conn->c_transport_data;

	rds_ib_conn_stop(conn);
	/* The end drained the queue pair: an error it met meanwhile may
	 * have queued i_down_work again (and i_send_work), nothing can
	 * after it.
	 */
	if (!rds_neg_downwork())
		cancel_delayed_work_sync(&ic->i_down_work);
	cancel_work_sync(&ic->i_send_work);
	flush_work(&ic->i_reap_work);
	rds_ib_reap_work(&ic->i_reap_work);
	WARN_ON(!list_empty(&ic->i_dead_ids));
	WARN_ON_ONCE(!list_empty(&ic->i_held));
	/* Messages requeued by the last attempt_end. */
	rds_send_drop_acked(conn, conn->c_next_tx_seq - 1);
	rds_ib_peer_put(ic);
	conn->c_transport_data = NULL;
	kfree(ic);
}

int rds_ib_cm_init(void)
{
	struct rdma_cm_id *id;

	/* Non-zero, and one the kernel's RDS refuses (mlhs.h). */
	do {
		rds_ib_gen = get_random_u32();
	} while (!rds_ib_mlhs_gen_refused(rds_ib_gen));
	id = rds_ib_addr_listen(false, rds_ib_cm_handler, RDS_IB_BACKLOG);
	if (IS_ERR(id)) {
		pr_err("cannot listen on port %u: %ld\n", RDS_IB_PORT,
		       PTR_ERR(id));
		return PTR_ERR(id);
	}
	rds_ib_listen_id = id;
	/* Without IPv6 (disabled, or no such module) IPv4 goes on alone. */
	id = ipv6_mod_enabled() ?
	     rds_ib_addr_listen(true, rds_ib_cm_handler, RDS_IB_BACKLOG) :
	     ERR_PTR(-EAFNOSUPPORT);
	if (IS_ERR(id))
		pr_info("no IPv6 listener (port %u): %ld\n", RDS_IB_PORT6,
			PTR_ERR(id));
	else
		rds_ib_listen6_id = id;
	return 0;
}

/* No new request after this; connections go with the transport. */
void rds_ib_cm_exit(void)
{
	if (rds_ib_listen6_id)
		rdma_destroy_id(rds_ib_listen6_id);
	rdma_destroy_id(rds_ib_listen_id);
}
