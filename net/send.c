// SPDX-License-Identifier: GPL-2.0
/*
 * The send path: sendmsg(), the per-socket accounting of unacknowledged
 * bytes, the per-connection send queue and the "sent, awaiting ack" list,
 * acknowledgment processing and cancellation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/socket.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "rds.h"
#include "seq.h"
#include "trace/rds.h"

/* Take rm off its socket: drop it from rs_send_queue (releasing its
 * snd_bytes) if it is still there, and drop the socket reference.
 */
static void rds_send_remove_from_sock(struct rds_message *rm)
{
	struct rds_sock *rs;
	bool was_on = false;

	spin_lock_bh(&rm->m_rs_lock);
	rs = rm->m_rs;
	if (!rs) {
		spin_unlock_bh(&rm->m_rs_lock);
		return;
	}
	spin_lock(&rs->rs_lock);
	if (test_and_clear_bit(RDS_MSG_ON_SOCK, &rm->m_flags)) {
		list_del_init(&rm->m_sock_item);
		rs->rs_snd_bytes -= rm->m_charge;
		was_on = true;
	}
	spin_unlock(&rs->rs_lock);
	rm->m_rs = NULL;
	spin_unlock_bh(&rm->m_rs_lock);

	if (was_on) {
		rds_sock_wake(rs);
		rds_message_put(rm);	/* the socket queue's reference */
	}
	sock_put(rds_rs_to_sk(rs));
}

/* The peer acknowledged everything up to and including ack: release
 * those messages from the "awaiting ack" list and from their sockets.
 */
void rds_send_drop_acked(struct rds_connection *conn, u64 ack)
{
	struct rds_message *rm, *tmp;
	LIST_HEAD(list);

	spin_lock_bh(&conn->c_lock);
	list_for_each_entry_safe(rm, tmp, &conn->c_retrans, m_conn_item) {
		if (rds_seq_after(be64_to_cpu(rm->m_inc.i_hdr.h_sequence), ack))
			break;
		rds_conn_queue_del(conn, rm, &list);
		clear_bit(RDS_MSG_ON_CONN, &rm->m_flags);
	}
	/* After a reconnect the unacknowledged ones wait on the send queue
	 * (rds_send_requeue()), and the handshake may acknowledge them.
	 */
	list_for_each_entry_safe(rm, tmp, &conn->c_send_queue, m_conn_item) {
		if (rds_seq_after(be64_to_cpu(rm->m_inc.i_hdr.h_sequence), ack))
			break;
		rds_conn_queue_del(conn, rm, &list);
		clear_bit(RDS_MSG_ON_CONN, &rm->m_flags);
	}
	spin_unlock_bh(&conn->c_lock);

	list_for_each_entry_safe(rm, tmp, &list, m_conn_item) {
		list_del_init(&rm->m_conn_item);
		rds_stats_inc(s_send_drop_acked);
		rds_rdma_op_end(rm, RDS_OP_END_ACKED);
		rds_send_remove_from_sock(rm);
		rds_message_put(rm);	/* the connection's reference */
	}
}

/* The connection was lost: everything sent but not acknowledged goes back
 * to the head of the send queue, in order, marked as retransmitted.  What
 * the peer delivered meanwhile is freed by the next handshake's ACK; a
 * message whose RDMA or atomic op was posted on this connection and that
 * is still held then is dropped with its op by rds_send_xmit().  That
 * includes one still on the send queue: its op went out, its frames did
 * not (the transport said "not now" in between).
 */
void rds_send_requeue(struct rds_connection *conn)
{
	struct rds_message *rm;

	spin_lock_bh(&conn->c_lock);
	list_for_each_entry(rm, &conn->c_retrans, m_conn_item) {
		rm->m_inc.i_hdr.h_flags |= RDS_FLAG_RETRANSMITTED;
		set_bit(RDS_MSG_RETRANSMITTED, &rm->m_flags);
		trace_rds_retransmit(conn,
				     be64_to_cpu(rm->m_inc.i_hdr.h_sequence));
		conn->c_retransmits++;
		clear_bit(RDS_MSG_ON_RETRANS, &rm->m_flags);
	}
	list_splice_init(&conn->c_retrans, &conn->c_send_queue);
	conn->c_send_queue_n += conn->c_retrans_n;
	conn->c_retrans_n = 0;
	list_for_each_entry(rm, &conn->c_send_queue, m_conn_item)
		if (READ_ONCE(rm->m_op.o_state) == RDS_OP_POSTED ||
		    READ_ONCE(rm->m_op.o_state) == RDS_OP_DONE)
			set_bit(RDS_MSG_OP_STALE, &rm->m_flags);
	spin_unlock_bh(&conn->c_lock);
}

/* Is rm, at the head of the send queue of a connection that is back, to
 * be dropped rather than sent again (rds_seq_resend_choice())?
 */
static bool rds_send_drop_stale_op(struct rds_message *rm)
{
	u64 seq = be64_to_cpu(rm->m_inc.i_hdr.h_sequence);
	/* Not acknowledged: it would have been freed. */
	struct rds_seq_tx tx = { .acked = seq - 1 };

	return test_bit(RDS_MSG_OP_STALE, &rm->m_flags) &&
	       rds_seq_resend_choice(&tx, seq, READ_ONCE(rm->m_op.o_state)) ==
	       RDS_RESEND_DROP;
}

/* Put rm back on the send queue at its place in sequence order: it may
 * have been requeued meanwhile together with the messages sent before it.
 */
static void rds_send_putback(struct rds_connection *conn,
			     struct rds_message *rm)
{
	u64 seq = be64_to_cpu(rm->m_inc.i_hdr.h_sequence);
	struct rds_message *pos;

	lockdep_assert_held(&conn->c_lock);
	list_for_each_entry(pos, &conn->c_send_queue, m_conn_item) {
		if (pos != rm &&
		    rds_seq_after(be64_to_cpu(pos->m_inc.i_hdr.h_sequence), seq))
			break;
	}
	rds_conn_queue_move(conn, rm, &pos->m_conn_item, false);
}

/* Drop rs's unacknowledged messages to dest (all of them if dest is
 * NULL): RDS_CANCEL_SENT_TO and close.
 */
void rds_send_drop_to(struct rds_sock *rs, const struct sockaddr_in6 *dest)
{
	struct rds_message *rm, *tmp;
	LIST_HEAD(list);

	spin_lock_bh(&rs->rs_lock);
	list_for_each_entry_safe(rm, tmp, &rs->rs_send_queue, m_sock_item) {
		if (dest &&
		    (!ipv6_addr_equal(&rm->m_daddr, &dest->sin6_addr) ||
		     rm->m_inc.i_hdr.h_dport != dest->sin6_port))
			continue;
		list_move(&rm->m_sock_item, &list);
		clear_bit(RDS_MSG_ON_SOCK, &rm->m_flags);
		rs->rs_snd_bytes -= rm->m_charge;
	}
	spin_unlock_bh(&rs->rs_lock);

	if (list_empty(&list))
		return;
	rds_sock_wake(rs);

	list_for_each_entry_safe(rm, tmp, &list, m_sock_item) {
		struct rds_connection *conn = rm->m_conn;
		bool on_conn = false, put_sock = false;

		spin_lock_bh(&conn->c_lock);
		if (test_and_clear_bit(RDS_MSG_ON_CONN, &rm->m_flags)) {
			rds_conn_queue_del(conn, rm, NULL);
			on_conn = true;
		}
		spin_unlock_bh(&conn->c_lock);

		if (on_conn)
			trace_rds_msg_drop(conn, &rm->m_inc.i_hdr,
					   "send cancelled");
		rds_rdma_op_end(rm, RDS_OP_END_CANCELED);
		spin_lock_bh(&rm->m_rs_lock);
		if (rm->m_rs == rs) {
			rm->m_rs = NULL;
			put_sock = true;
		}
		spin_unlock_bh(&rm->m_rs_lock);

		list_del_init(&rm->m_sock_item);
		if (put_sock)
			sock_put(rds_rs_to_sk(rs));
		if (on_conn)
			rds_message_put(rm);
		rds_message_put(rm);	/* the socket queue's reference */
	}
}

/* rds_send_xmit() stops for now (the transport said "not now", or a
 * message it may not send or drop yet is at the head): let go of the
 * connection.  True if a kick came meanwhile: look again.
 */
static bool rds_send_xmit_pause(struct rds_connection *conn)
{
	clear_bit_unlock(RDS_CONN_IN_XMIT, &conn->c_flags);
	rds_stats_inc(s_send_delayed_retry);
	/* Pairs with the barrier of a caller that found the bit taken: its
	 * kick is ours to act on.
	 */
	smp_mb__after_atomic();
	return test_bit(RDS_CONN_XMIT_AGAIN, &conn->c_flags);
}

/* Drain conn's send queue through its transport.  Only one thread
 * transmits on a connection at a time; others (and nested calls from the
 * receive path, e.g. a pong) just queue and leave the draining to it.
 */
void rds_send_xmit(struct rds_connection *conn)
{
	struct rds_message *rm;
	int ret;

restart:
	if (test_and_set_bit_lock(RDS_CONN_IN_XMIT, &conn->c_flags)) {
		/* Tell the holder to look again before it leaves: it may be
		 * on its way out after the transport said "not now" just
		 * before the transport kicked us (room, or connection up).
		 */
		set_bit(RDS_CONN_XMIT_AGAIN, &conn->c_flags);
		/* Order the flag before the second look at IN_XMIT; pairs
		 * with the barrier after the holder's clear below.
		 */
		smp_mb__after_atomic();
		if (test_and_set_bit_lock(RDS_CONN_IN_XMIT, &conn->c_flags)) {
			rds_stats_inc(s_send_lock_contention);
			return;
		}
	}
	clear_bit(RDS_CONN_XMIT_AGAIN, &conn->c_flags);

	for (;;) {
		spin_lock_bh(&conn->c_lock);
		rm = list_first_entry_or_null(&conn->c_send_queue,
					      struct rds_message, m_conn_item);
		if (!rm) {
			spin_unlock_bh(&conn->c_lock);
			rds_stats_inc(s_send_queue_empty);
			if (conn->c_trans->xmit_done)
				conn->c_trans->xmit_done(conn);
			break;
		}
		if (rds_send_drop_stale_op(rm)) {
			/* Not before the connection is back: its handshake
			 * may say that the peer delivered rm (then rm is
			 * acknowledged, not dropped).  Nor sent: the
			 * transport may already take frames.
			 */
			if (atomic_read(&conn->c_state) != RDS_CONN_UP) {
				spin_unlock_bh(&conn->c_lock);
				if (rds_send_xmit_pause(conn))
					goto restart;
				return;
			}
			/* Its op may have run: it never runs twice. */
			rds_conn_queue_del(conn, rm, NULL);
			clear_bit(RDS_MSG_ON_CONN, &rm->m_flags);
			spin_unlock_bh(&conn->c_lock);
			rds_stats_inc(s_send_rdma_dropped);
			trace_rds_msg_drop(conn, &rm->m_inc.i_hdr,
					   "RDMA op dropped after reconnect");
			rds_rdma_op_end(rm, RDS_OP_END_DROPPED);
			rds_send_remove_from_sock(rm);
			rds_message_put(rm);	/* the connection's reference */
			continue;
		}
		/* Sent from now on: it waits for its ack on c_retrans. */
		rds_conn_queue_move(conn, rm, &conn->c_retrans, true);
		rds_message_get(rm);
		spin_unlock_bh(&conn->c_lock);

		/* A map goes with the bits of when it first leaves. */
		if (test_and_clear_bit(RDS_MSG_CONG_FILL, &rm->m_flags))
			rds_cong_map_fill(conn, rm);

		ret = conn->c_trans->xmit(conn, rm);
		if (ret) {
			/* Put it back at the head, unless it was cancelled. */
			spin_lock_bh(&conn->c_lock);
			if (test_bit(RDS_MSG_ON_CONN, &rm->m_flags))
				rds_send_putback(conn, rm);
			spin_unlock_bh(&conn->c_lock);
			rds_message_put(rm);
			if (rds_send_xmit_pause(conn))
				goto restart;
			return;
		}
		rds_message_put(rm);
	}

	clear_bit_unlock(RDS_CONN_IN_XMIT, &conn->c_flags);
	/* Order the clear before the check below.  A sender queues under
	 * c_lock and then tries IN_XMIT: either it saw the bit clear and
	 * transmits itself, or we see its message here.
	 */
	smp_mb__after_atomic();

	/* Something queued while we were finishing: it is ours to send.  So
	 * is a kick that found the bit taken: credits or room for what the
	 * transport holds back (rds_ib_xmit_done()) may have come after its
	 * look, and its kicker left it to us.
	 */
	if (!list_empty_careful(&conn->c_send_queue) ||
	    test_bit(RDS_CONN_XMIT_AGAIN, &conn->c_flags)) {
		rds_stats_inc(s_send_lock_queue_raced);
		goto restart;
	}
}

/* Queue rm on conn with the next sequence number.  rm must already be on
 * its socket, or have none (a pong).
 */
static void rds_send_queue_on_conn(struct rds_connection *conn,
				   struct rds_message *rm, __be16 sport,
				   __be16 dport, bool ack_required)
{
	bool stake;

	spin_lock_bh(&conn->c_lock);
	stake = !conn->c_send_queue_n && !conn->c_retrans_n;
	rds_message_populate_header(rm, sport, dport, conn->c_next_tx_seq++);
	conn->c_unacked_packets++;
	conn->c_unacked_bytes += rm->m_len;
	if (ack_required ||
	    conn->c_unacked_packets >= READ_ONCE(rds_sysctl_max_unacked_packets) ||
	    conn->c_unacked_bytes >= READ_ONCE(rds_sysctl_max_unacked_bytes)) {
		rm->m_inc.i_hdr.h_flags |= RDS_FLAG_ACK_REQUIRED;
		conn->c_unacked_packets = 0;
		conn->c_unacked_bytes = 0;
		rds_stats_inc(s_send_ack_required);
	}
	rm->m_conn = conn;
	set_bit(RDS_MSG_ON_CONN, &rm->m_flags);
	rds_message_get(rm);	/* the connection's reference */
	list_add_tail(&rm->m_conn_item, &conn->c_send_queue);
	conn->c_send_queue_n++;
	if (stake && conn->c_trans->stake)
		conn->c_trans->stake(conn);
	spin_unlock_bh(&conn->c_lock);
}

/* What rm costs its socket's send buffer until it is acknowledged (or
 * cancelled): its payload, RDS_MSG_MIN_CHARGE at least, so that empty and
 * RDMA-only messages count too, and the pages its op keeps pinned.
 */
static unsigned int rds_send_charge(const struct rds_message *rm)
{
	return max_t(unsigned int, rm->m_len, RDS_MSG_MIN_CHARGE) +
	       rm->m_op.o_npages * PAGE_SIZE;
}

/* Account rm against rs's send buffer and queue it.  Fails (false) while
 * the unacknowledged bytes (rds_send_charge()) have reached the send
 * buffer; one message always fits in an empty one.
 */
static bool rds_send_queue_rm(struct rds_sock *rs, struct rds_connection *conn,
			      struct rds_message *rm, __be16 sport,
			      __be16 dport, bool *queued)
{
	bool ack_required;

	if (*queued)
		return true;

	spin_lock_bh(&rs->rs_lock);
	if (rs->rs_snd_bytes >= (unsigned int)rds_sk_sndbuf(rs)) {
		spin_unlock_bh(&rs->rs_lock);
		return false;
	}
	rs->rs_snd_bytes += rm->m_charge;
	ack_required = rs->rs_snd_bytes >= (unsigned int)rds_sk_sndbuf(rs) / 2;
	sock_hold(rds_rs_to_sk(rs));
	rm->m_rs = rs;
	set_bit(RDS_MSG_ON_SOCK, &rm->m_flags);
	rds_message_get(rm);	/* the socket queue's reference */
	list_add_tail(&rm->m_sock_item, &rs->rs_send_queue);
	/* Regions the socket registered go with its next message. */
	rds_rdma_take_pending(rs, rm, conn);
	/* Queue on the connection under rs_lock too, so that a concurrent
	 * rds_send_drop_to() never sees the message half queued.
	 */
	rds_send_queue_on_conn(conn, rm, sport, dport, ack_required);
	spin_unlock_bh(&rs->rs_lock);

	*queued = true;
	return true;
}

/* Answer a ping that arrived on conn: an empty message from port 0 back to
 * dport.  conn is the receiving side's connection (laddr is the pinged
 * address), so the answer goes out on it.
 */
int rds_send_pong(struct rds_connection *conn, __be16 dport)
{
	struct rds_message *rm;

	rm = rds_message_alloc(0, GFP_ATOMIC);
	if (!rm)
		return -ENOMEM;
	rds_send_queue_on_conn(conn, rm, 0, dport, false);
	rds_stats_inc(s_send_pong);
	rds_message_put(rm);
	rds_send_xmit(conn);
	return 0;
}

/* Queue the map of conn's local address for its peer (transports with
 * t_cong_maps).  Sent like a message, from port 0 to port 0, flagged
 * RDS_FLAG_CONG_BITMAP; the peer applies it instead of delivering it.
 * The bits are copied in when it is first handed to the transport
 * (rds_cong_map_fill()), so one waiting map per connection carries every
 * change made meanwhile: however often the map changes, and however long
 * the connection stays down, no more than two are queued (one handed to
 * a transport that said "not now" keeps the bits of that moment, and one
 * more takes every later change).
 */
void rds_send_cong_map(struct rds_connection *conn)
{
	struct rds_message *rm;

	if (test_and_set_bit(RDS_CONN_CONG_PENDING, &conn->c_flags))
		return;
	rm = rds_message_alloc(RDS_CONG_MAP_BYTES, GFP_ATOMIC);
	if (!rm) {
		clear_bit(RDS_CONN_CONG_PENDING, &conn->c_flags);
		rds_stats_inc(s_cong_send_error);
		return;
	}
	set_bit(RDS_MSG_CONG_FILL, &rm->m_flags);
	rm->m_inc.i_hdr.h_flags = RDS_FLAG_CONG_BITMAP;
	rds_send_queue_on_conn(conn, rm, 0, 0, false);
	rds_stats_inc(s_cong_update_queued);
	rds_message_put(rm);
	rds_send_xmit(conn);
}

/* rm, a map, is posted whole toward a peer that acknowledges no map (the
 * kernel's RDS: a map goes with sequence 0 there): it is done.  Left on
 * c_retrans it would wait for the ACK of a later message (none comes
 * while only the peer sends), and every reconnect would send it again
 * beside the new map: maps would pile up.  One that a reconnect put back
 * on c_send_queue meanwhile goes once more.
 */
void rds_send_map_posted(struct rds_connection *conn, struct rds_message *rm)
{
	bool drop;

	spin_lock_bh(&conn->c_lock);
	drop = test_bit(RDS_MSG_ON_RETRANS, &rm->m_flags);
	if (drop) {
		rds_conn_queue_del(conn, rm, NULL);
		clear_bit(RDS_MSG_ON_CONN, &rm->m_flags);
	}
	spin_unlock_bh(&conn->c_lock);
	if (drop)
		rds_message_put(rm);	/* the connection's reference */
}

static bool rds_v4_usable(__be32 addr)
{
	return addr != htonl(INADDR_ANY) && addr != htonl(INADDR_BROADCAST) &&
	       !ipv4_is_multicast(addr);
}

/* Parse msg_name into a destination, mainline's errno rules. */
static int rds_send_parse_name(struct msghdr *msg, struct in6_addr *daddr,
			       __be16 *dport, u32 *scope_id)
{
	DECLARE_SOCKADDR(struct sockaddr_in *, sin, msg->msg_name);
	DECLARE_SOCKADDR(struct sockaddr_in6 *, sin6, msg->msg_name);
	int type;

	if (msg->msg_namelen < (int)sizeof(*sin))
		return -EINVAL;

	switch (sin->sin_family) {
	case AF_INET:
		if (!rds_v4_usable(sin->sin_addr.s_addr))
			return -EINVAL;
		ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, daddr);
		*dport = sin->sin_port;
		return 0;
	case AF_INET6:
		if (msg->msg_namelen < (int)sizeof(*sin6))
			return -EINVAL;
		type = ipv6_addr_type(&sin6->sin6_addr);
		if (!(type & IPV6_ADDR_UNICAST) &&
		    (!(type & IPV6_ADDR_MAPPED) ||
		     !rds_v4_usable(sin6->sin6_addr.s6_addr32[3])))
			return -EINVAL;
		if (type & IPV6_ADDR_LINKLOCAL) {
			if (!sin6->sin6_scope_id)
				return -EINVAL;
			*scope_id = sin6->sin6_scope_id;
		}
		*daddr = sin6->sin6_addr;
		*dport = sin6->sin6_port;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Validate the combination of control messages; rds_rdma_cmsgs() parses
 * the RDMA ones.
 */
static int rds_send_check_cmsgs(struct msghdr *msg, bool zcopy)
{
	bool zcopy_cookie = false;
	unsigned int groups = 0;
	struct cmsghdr *cmsg;

	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_RDS)
			continue;

		switch (cmsg->cmsg_type) {
		case RDS_CMSG_RDMA_ARGS:
		case RDS_CMSG_ATOMIC_CSWP:
		case RDS_CMSG_ATOMIC_FADD:
		case RDS_CMSG_MASKED_ATOMIC_CSWP:
		case RDS_CMSG_MASKED_ATOMIC_FADD:
			groups |= 1;
			break;
		case RDS_CMSG_ZCOPY_COOKIE:
			zcopy_cookie = true;
			groups |= 2;
			break;
		case RDS_CMSG_RDMA_DEST:
		case RDS_CMSG_RDMA_MAP:
			groups |= 2;
			break;
		default:
			return -EINVAL;
		}
	}

	if ((msg->msg_flags & MSG_ZEROCOPY) && !zcopy_cookie)
		return -EINVAL;
	/* {DEST, MAP, ZCOPY} never go with {ARGS, ATOMIC} */
	if (groups == 3)
		return -EINVAL;
	/* A cookie without zerocopy has nothing to complete. */
	if (zcopy_cookie && !zcopy)
		return -EINVAL;
	return 0;
}

int rds_send_msg(struct socket *sock, struct msghdr *msg, size_t payload_len)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	bool nonblock = msg->msg_flags & MSG_DONTWAIT;
	long timeo = sock_sndtimeo(sk, nonblock);
	struct rds_connection *conn = NULL;
	struct rds_transport *trans;
	struct rds_message *rm;
	struct in6_addr daddr, saddr;
	__be16 dport, sport;
	u32 scope_id = 0;
	bool zcopy, queued = false;
	u8 tos;
	int ret;

	if (msg->msg_flags & ~(MSG_DONTWAIT | MSG_CMSG_COMPAT | MSG_ZEROCOPY))
		return -EOPNOTSUPP;

	if (msg->msg_namelen) {
		ret = rds_send_parse_name(msg, &daddr, &dport, &scope_id);
		if (ret)
			return ret;
	}

	/* A consistent snapshot of the binding (bind may race with us). */
	lock_sock(sk);
	if (!msg->msg_namelen) {
		daddr = rs->rs_conn_addr;
		dport = rs->rs_conn_port;
		/* a link-local peer set by connect() has its own scope */
		scope_id = rs->rs_conn_scope_id ?: rs->rs_bound_scope_id;
	}
	if (ipv6_addr_any(&rs->rs_bound_addr) || ipv6_addr_any(&daddr)) {
		release_sock(sk);
		return -ENOTCONN;
	}
	if (msg->msg_namelen) {
		if (ipv6_addr_v4mapped(&daddr) ^
		    ipv6_addr_v4mapped(&rs->rs_bound_addr)) {
			release_sock(sk);
			return -EOPNOTSUPP;
		}
		if (scope_id != rs->rs_bound_scope_id) {
			if (!scope_id) {
				scope_id = rs->rs_bound_scope_id;
			} else if (rs->rs_bound_scope_id) {
				release_sock(sk);
				return -EINVAL;
			}
		}
	}
	saddr = rs->rs_bound_addr;
	sport = rs->rs_bound_port;
	trans = rs->rs_transport;
	release_sock(sk);

	if (payload_len > RDS_MAX_MSG_SIZE ||
	    payload_len > (size_t)rds_sk_sndbuf(rs))
		return -EMSGSIZE;

	zcopy = (msg->msg_flags & MSG_ZEROCOPY) &&
		sock_flag(sk, SOCK_ZEROCOPY);
	/* Zerocopy is a TCP-transport feature; we have none. */
	if (zcopy)
		return -EOPNOTSUPP;

	ret = rds_send_check_cmsgs(msg, zcopy);
	if (ret)
		return ret;

	/* Charged to the sender's memory cgroup, as socket buffers are. */
	rm = rds_message_alloc(payload_len, GFP_KERNEL_ACCOUNT);
	if (!rm)
		return -ENOMEM;
	ret = rds_message_copy_from_user(rm, &msg->msg_iter);
	if (ret)
		goto out;
	ret = rds_rdma_cmsgs(rs, rm, msg, nonblock, timeo);
	if (ret)
		goto out;
	rm->m_charge = rds_send_charge(rm);
	rm->m_daddr = daddr;

	spin_lock_bh(&rds_sock_lock);
	tos = rs->rs_tos;
	if (rs->rs_conn && rs->rs_conn->c_tos == tos &&
	    ipv6_addr_equal(&rs->rs_conn->c_faddr, &daddr) &&
	    rs->rs_conn->c_bound_if == scope_id &&
	    atomic_read(&rs->rs_conn->c_state) == RDS_CONN_UP)
		conn = rs->rs_conn;
	spin_unlock_bh(&rds_sock_lock);

	if (!conn) {
		conn = rds_conn_create(sock_net(sk), &saddr, &daddr, trans, tos,
				       scope_id, GFP_KERNEL);
		if (IS_ERR(conn)) {
			ret = PTR_ERR(conn);
			goto out;
		}
		spin_lock_bh(&rds_sock_lock);
		rs->rs_conn = conn;
		spin_unlock_bh(&rds_sock_lock);
	}

	/* An op needs a transport that does RDMA, whatever the binding. */
	if (rm->m_op.o_kind != RDS_OPK_NONE && !conn->c_trans->mr_register) {
		ret = -EOPNOTSUPP;
		goto out;
	}

	ret = rds_cong_wait(conn->c_fcong, dport, nonblock, &timeo, rs);
	if (ret) {
		WRITE_ONCE(rs->rs_seen_congestion, 1);
		goto out;
	}

	while (!rds_send_queue_rm(rs, conn, rm, sport, dport, &queued)) {
		rds_stats_inc(s_send_queue_full);
		if (nonblock) {
			ret = -EAGAIN;
			goto out;
		}
		timeo = wait_event_interruptible_timeout(*sk_sleep(sk),
							 rds_send_queue_rm(rs, conn, rm, sport,
									   dport, &queued),
							 timeo);
		if (timeo > 0 || timeo == MAX_SCHEDULE_TIMEOUT)
			continue;
		ret = timeo ? timeo : -ETIMEDOUT;
		goto out;
	}

	rds_stats_inc(s_send_queued);
	/* The connection may have gone down since it was chosen above, and
	 * the end of that attempt, finding nothing queued, made no new one.
	 * Queued first, then the state read; the transport sets the state,
	 * then looks at the queue (rds_ib_reconnect_maybe()): with a full
	 * barrier on each side, one of the two sees the other.
	 */
	smp_mb();
	if (atomic_read(&conn->c_state) == RDS_CONN_DOWN &&
	    conn->c_trans->conn_connect)
		conn->c_trans->conn_connect(conn);
	rds_send_xmit(conn);
	ret = payload_len;
out:
	rds_message_put(rm);
	return ret;
}
