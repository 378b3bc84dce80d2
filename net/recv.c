// SPDX-License-Identifier: GPL-2.0
/*
 * The receive path: sequence checks, ping answers, delivery to the bound
 * socket with receive-buffer congestion marking, and recvmsg().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/clock.h>
#include <linux/time.h>
#include <net/sock.h>

#include "rds.h"
#include "neg.h"
#include "seq.h"
#include "trace/rds.h"

void rds_inc_init(struct rds_incoming *inc, struct rds_connection *conn,
		  const struct in6_addr *saddr)
{
	refcount_set(&inc->i_refcount, 1);
	INIT_LIST_HEAD(&inc->i_item);
	inc->i_conn = conn;
	inc->i_saddr = *saddr;
	inc->i_rx_tstamp = 0;
	memset(inc->i_rx_lat_trace, 0, sizeof(inc->i_rx_lat_trace));
}

void rds_inc_get(struct rds_incoming *inc)
{
	refcount_inc(&inc->i_refcount);
}

void rds_inc_put(struct rds_incoming *inc)
{
	if (refcount_dec_and_test(&inc->i_refcount)) {
		WARN_ON_ONCE(!list_empty(&inc->i_item));
		inc->i_conn->c_trans->inc_free(inc);
	}
}

/* What inc costs rs's receive buffer while queued: its payload, and
 * RDS_MSG_MIN_CHARGE at least, so that a sender of empty messages
 * congests a socket that does not read as one of data messages does.
 */
static int rds_recv_charge(const struct rds_incoming *inc)
{
	return max_t(u32, be32_to_cpu(inc->i_hdr.h_len), RDS_MSG_MIN_CHARGE);
}

/* Account delta bytes on rs's receive queue and update the congestion
 * bit of its port: congested above rcvbuf, free again below rcvbuf/2.
 */
static void rds_recv_rcvbuf_delta(struct rds_sock *rs,
				  struct rds_cong_map *map, int delta)
{
	__be16 port = rs->rs_bound_port;
	bool changed = false, cleared = false;

	lockdep_assert_held(&rs->rs_recv_lock);

	if (!delta)
		return;
	rs->rs_rcv_bytes += delta;
	if (delta > 0)
		rds_stats_add(s_recv_bytes_added_to_socket, delta);
	else
		rds_stats_add(s_recv_bytes_removed_from_socket, -delta);

	if (!rs->rs_congested && rs->rs_rcv_bytes > rds_sk_rcvbuf(rs)) {
		if (rds_cong_set_bit(map, port)) {
			rs->rs_congested = true;
			changed = true;
		}
	} else if (rs->rs_congested &&
		   rs->rs_rcv_bytes < rds_sk_rcvbuf(rs) / 2) {
		rs->rs_congested = false;
		rds_cong_clear_bit(map, port);
		changed = true;
		cleared = true;
	}

	/* Local map: the update is visible to senders at once. */
	if (changed) {
		rds_cong_map_updated(map, cleared ?
				     RDS_CONG_MONITOR_MASK(be16_to_cpu(port)) :
				     0);
		/* Remote senders learn it from the transports that carry maps. */
		rds_cong_local_changed(map);
	}
}

/* The congestion map a socket's port lives in. */
static struct rds_cong_map *rds_recv_map(struct rds_incoming *inc)
{
	return inc->i_conn->c_lcong;
}

/* A complete message arrived on conn from saddr for daddr.  Called by the
 * transports, possibly in softirq context; takes its own reference on
 * inc if it keeps it.
 */
void rds_recv_incoming(struct rds_connection *conn,
		       const struct in6_addr *saddr,
		       const struct in6_addr *daddr,
		       struct rds_incoming *inc)
{
	struct rds_header *hdr = &inc->i_hdr;
	u64 seq = be64_to_cpu(hdr->h_sequence);
	struct rds_sock *rs;
	struct sock *sk;
	bool drop = false;

	inc->i_conn = conn;
	rds_neg_pageleak();
	/* The message starts being delivered.  The transport stamped when
	 * it first looked at its header (RDS_MSG_RX_HDR); one that did not
	 * gets this moment for both.
	 */
	inc->i_rx_lat_trace[RDS_MSG_RX_START] = local_clock();
	if (!inc->i_rx_lat_trace[RDS_MSG_RX_HDR])
		inc->i_rx_lat_trace[RDS_MSG_RX_HDR] =
			inc->i_rx_lat_trace[RDS_MSG_RX_START];

	/* A retransmission of something already delivered. */
	spin_lock_bh(&conn->c_lock);
	if (rds_seq_before(seq, conn->c_next_rx_seq) &&
	    (hdr->h_flags & RDS_FLAG_RETRANSMITTED))
		drop = true;
	else
		/* Read without the lock by the IB window check. */
		WRITE_ONCE(conn->c_next_rx_seq, seq + 1);
	spin_unlock_bh(&conn->c_lock);
	if (drop || rds_neg_lost(inc)) {
		rds_stats_inc(s_recv_drop_old_seq);
		trace_rds_msg_drop(conn, hdr, "already delivered");
		return;
	}

	if (hdr->h_flags & RDS_FLAG_ACK_REQUIRED)
		rds_stats_inc(s_recv_ack_required);

	/* A ping: answered by the kernel from port 0, never delivered.  One
	 * from port 0 is not: its answer would go to port 0, a ping itself,
	 * and two hosts would answer each other for ever.  It is dropped as
	 * any message to port 0 is, which nobody can bind.
	 */
	if (READ_ONCE(rds_sysctl_ping_enable) && !hdr->h_dport) {
		if (!hdr->h_sport) {
			rds_stats_inc(s_recv_drop_no_sock);
			trace_rds_msg_drop(conn, hdr, "ping from port 0");
			return;
		}
		rds_stats_inc(s_recv_ping);
		rds_send_pong(conn, hdr->h_sport);
		return;
	}

	rs = rds_bind_find(rds_conn_net(conn), daddr, hdr->h_dport,
			   conn->c_bound_if);
	if (!rs) {
		rds_stats_inc(s_recv_drop_no_sock);
		trace_rds_msg_drop(conn, hdr, "no socket");
		return;
	}
	sk = rds_rs_to_sk(rs);
	/* An op on a USE_ONCE key of rs's came before this message. */
	rds_rdma_recv_used(rs, conn, hdr);
	/* It carried RDMA_SILENT ops only: delivered, but not queued. */
	if (hdr->h_flags & RDS_FLAG_SILENT) {
		rds_stats_inc(s_recv_rdma_silent);
		goto out;
	}

	spin_lock_bh(&rs->rs_recv_lock);
	if (sock_flag(sk, SOCK_DEAD)) {
		spin_unlock_bh(&rs->rs_recv_lock);
		rds_stats_inc(s_recv_drop_dead_sock);
		trace_rds_msg_drop(conn, hdr, "socket dead");
		goto out;
	}
	rds_recv_rcvbuf_delta(rs, rds_recv_map(inc), rds_recv_charge(inc));
	if (sock_flag(sk, SOCK_RCVTSTAMP))
		inc->i_rx_tstamp = ktime_get_real_ns();
	rds_inc_get(inc);
	inc->i_rx_lat_trace[RDS_MSG_RX_END] = local_clock();
	list_add_tail(&inc->i_item, &rs->rs_recv_queue);
	spin_unlock_bh(&rs->rs_recv_lock);

	rds_stats_inc(s_recv_queued);
	rds_sock_wake(rs);
	rds_neg_dup(conn, saddr, daddr, inc);
out:
	sock_put(sk);
}

/* The head of the receive queue, with a reference, or false. */
static bool rds_next_incoming(struct rds_sock *rs, struct rds_incoming **inc)
{
	if (*inc)
		return true;

	spin_lock_bh(&rs->rs_recv_lock);
	if (!list_empty(&rs->rs_recv_queue)) {
		*inc = list_first_entry(&rs->rs_recv_queue,
					struct rds_incoming, i_item);
		rds_inc_get(*inc);
	}
	spin_unlock_bh(&rs->rs_recv_lock);
	return *inc;
}

/* Is inc still queued (nobody raced us to it)?  If so and drop is set,
 * dequeue it.
 */
static bool rds_still_queued(struct rds_sock *rs, struct rds_incoming *inc,
			     bool drop)
{
	bool queued;

	spin_lock_bh(&rs->rs_recv_lock);
	queued = !list_empty(&inc->i_item);
	if (queued && drop) {
		rds_recv_rcvbuf_delta(rs, rds_recv_map(inc),
				      -rds_recv_charge(inc));
		list_del_init(&inc->i_item);
	}
	spin_unlock_bh(&rs->rs_recv_lock);

	if (queued && drop)
		rds_inc_put(inc);	/* the queue's reference */
	return queued;
}

/* Empty the receive queue of a socket being closed. */
void rds_recv_purge(struct rds_sock *rs)
{
	struct rds_incoming *inc, *tmp;
	LIST_HEAD(list);

	spin_lock_bh(&rs->rs_recv_lock);
	list_for_each_entry(inc, &rs->rs_recv_queue, i_item)
		rds_recv_rcvbuf_delta(rs, rds_recv_map(inc),
				      -rds_recv_charge(inc));
	list_splice_init(&rs->rs_recv_queue, &list);
	spin_unlock_bh(&rs->rs_recv_lock);

	list_for_each_entry_safe(inc, tmp, &list, i_item) {
		list_del_init(&inc->i_item);
		rds_inc_put(inc);
	}
}

static int rds_recv_cong_notify(struct rds_sock *rs, struct msghdr *msg)
{
	u64 notify;
	int ret;

	spin_lock_bh(&rs->rs_lock);
	notify = rs->rs_cong_notify;
	spin_unlock_bh(&rs->rs_lock);

	ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_CONG_UPDATE, sizeof(notify),
		       &notify);
	if (ret)
		return ret;

	spin_lock_bh(&rs->rs_lock);
	rs->rs_cong_notify &= ~notify;
	spin_unlock_bh(&rs->rs_lock);
	return 0;
}

static int rds_recv_cmsgs(struct rds_sock *rs, struct rds_incoming *inc,
			  struct msghdr *msg)
{
	struct sock *sk = rds_rs_to_sk(rs);
	int ret;

	ret = rds_rdma_recv_cmsgs(&inc->i_hdr, msg);
	if (ret)
		return ret;
	if (inc->i_rx_tstamp && sock_flag(sk, SOCK_RCVTSTAMP)) {
		struct __kernel_old_timeval tv =
			ns_to_kernel_old_timeval(inc->i_rx_tstamp);

		if (sock_flag(sk, SOCK_TSTAMP_NEW)) {
			struct __kernel_sock_timeval stv = {
				.tv_sec = tv.tv_sec,
				.tv_usec = tv.tv_usec,
			};

			ret = put_cmsg(msg, SOL_SOCKET, SO_TIMESTAMP_NEW,
				       sizeof(stv), &stv);
		} else {
			ret = put_cmsg(msg, SOL_SOCKET, SO_TIMESTAMP_OLD,
				       sizeof(tv), &tv);
		}
		if (ret)
			return ret;
	}

	if (rs->rs_rx_traces) {
		struct rds_cmsg_rx_trace t;
		unsigned int i, n = min_t(unsigned int, rs->rs_rx_traces,
					  RDS_MSG_RX_DGRAM_TRACE_MAX);

		memset(&t, 0, sizeof(t));
		inc->i_rx_lat_trace[RDS_MSG_RX_CMSG] = local_clock();
		t.rx_traces = n;
		for (i = 0; i < n; i++) {
			unsigned int j = rs->rs_rx_trace[i];

			/* validated by setsockopt: j + 1 < RDS_RX_MAX_TRACES */
			t.rx_trace_pos[i] = j;
			t.rx_trace[i] = inc->i_rx_lat_trace[j + 1] -
					inc->i_rx_lat_trace[j];
		}
		ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_RXPATH_LATENCY,
			       sizeof(t), &t);
		if (ret)
			return ret;
	}
	return 0;
}

static void rds_recv_fill_name(struct rds_sock *rs, struct rds_incoming *inc,
			       struct msghdr *msg)
{
	if (ipv6_addr_v4mapped(&inc->i_saddr)) {
		DECLARE_SOCKADDR(struct sockaddr_in *, sin, msg->msg_name);

		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_port = inc->i_hdr.h_sport;
		sin->sin_addr.s_addr = inc->i_saddr.s6_addr32[3];
		msg->msg_namelen = sizeof(*sin);
	} else {
		DECLARE_SOCKADDR(struct sockaddr_in6 *, sin6, msg->msg_name);

		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = inc->i_hdr.h_sport;
		sin6->sin6_addr = inc->i_saddr;
		sin6->sin6_scope_id = rs->rs_bound_scope_id;
		msg->msg_namelen = sizeof(*sin6);
	}
}

static bool rds_recv_ready(struct rds_sock *rs)
{
	bool ready;

	spin_lock_bh(&rs->rs_recv_lock);
	ready = !list_empty(&rs->rs_recv_queue) ||
		!list_empty(&rs->rs_notify_queue);
	spin_unlock_bh(&rs->rs_recv_lock);
	return ready || READ_ONCE(rs->rs_cong_notify);
}

static long rds_recv_wait(struct rds_sock *rs, long timeo)
{
	struct sock *sk = rds_rs_to_sk(rs);

	return wait_event_interruptible_timeout(*sk_sleep(sk),
						rds_recv_ready(rs), timeo);
}

int rds_recv_msg(struct socket *sock, struct msghdr *msg, size_t size,
		 int flags)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	bool nonblock = flags & MSG_DONTWAIT;
	long timeo = sock_rcvtimeo(sk, nonblock);
	struct rds_incoming *inc = NULL;
	bool notice_left;
	int ret;

	if (flags & MSG_OOB)
		return 0;
	if (flags & MSG_ERRQUEUE)
		return sock_recv_errqueue(sk, msg, size, SOL_IP, IP_RECVERR);

	for (;;) {
		/* RDMA completion notices, then congestion notifications,
		 * come before data.  Notices this control buffer cannot take
		 * (none, or too short) stay queued, and the caller is told
		 * by MSG_CTRUNC.
		 */
		notice_left = false;
		if (!list_empty_careful(&rs->rs_notify_queue)) {
			ret = rds_rdma_notify_cmsg(rs, msg);
			if (ret > 0) {
				ret = 0;
				break;
			}
			if (ret == -ENOBUFS)
				notice_left = true;
			else if (ret < 0)
				break;
		}
		if (READ_ONCE(rs->rs_cong_notify)) {
			ret = rds_recv_cong_notify(rs, msg);
			break;
		}

		if (!rds_next_incoming(rs, &inc)) {
			/* Only notices it cannot take: return, as waiting
			 * would find the socket ready at once, forever.
			 */
			if (notice_left) {
				msg->msg_flags |= MSG_CTRUNC;
				rds_stats_inc(s_recv_notice_ctrunc);
				ret = 0;
				break;
			}
			if (nonblock) {
				ret = -EAGAIN;
				break;
			}
			timeo = rds_recv_wait(rs, timeo);
			if (timeo > 0 || timeo == MAX_SCHEDULE_TIMEOUT)
				continue;
			ret = timeo ? timeo : -ETIMEDOUT;
			break;
		}

		ret = inc->i_conn->c_trans->inc_copy_to_user(inc,
							     &msg->msg_iter);
		if (ret < 0)
			break;

		/* Someone else took it first: undo the copy and retry. */
		if (!rds_still_queued(rs, inc, !(flags & MSG_PEEK))) {
			rds_inc_put(inc);
			inc = NULL;
			rds_stats_inc(s_recv_deliver_raced);
			iov_iter_revert(&msg->msg_iter, ret);
			continue;
		}

		if (ret < (int)be32_to_cpu(inc->i_hdr.h_len)) {
			if (flags & MSG_TRUNC)
				ret = be32_to_cpu(inc->i_hdr.h_len);
			msg->msg_flags |= MSG_TRUNC;
		}

		if (rds_recv_cmsgs(rs, inc, msg)) {
			ret = -EFAULT;
			break;
		}
		rds_stats_inc(s_recv_delivered);
		if (notice_left)
			msg->msg_flags |= MSG_CTRUNC;

		if (msg->msg_name)
			rds_recv_fill_name(rs, inc, msg);
		break;
	}

	if (inc)
		rds_inc_put(inc);
	return ret;
}
