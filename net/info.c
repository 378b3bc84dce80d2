// SPDX-License-Identifier: GPL-2.0
/*
 * getsockopt(SOL_RDS, RDS_INFO_*): snapshots of the module's state.
 *
 * A call with optlen 0 probes; a buffer too small for the whole snapshot
 * gets -ENOSPC and the needed length in optlen; success returns the size
 * of one item and sets optlen to the bytes written.  Handlers fill a
 * kernel buffer under their locks; it is copied out afterwards.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "rds.h"

#define RDS_INFO_COUNT	(RDS_INFO_LAST - RDS_INFO_FIRST + 1)
#define RDS_INFO_TRIES	4	/* snapshot retries while the state grows */

/* protects rds_info_funcs */
static DECLARE_RWSEM(rds_info_sem);
static rds_info_func rds_info_funcs[RDS_INFO_COUNT];

void rds_info_register(int optname, rds_info_func func)
{
	down_write(&rds_info_sem);
	WARN_ON_ONCE(rds_info_funcs[optname - RDS_INFO_FIRST]);
	rds_info_funcs[optname - RDS_INFO_FIRST] = func;
	up_write(&rds_info_sem);
}

void rds_info_unregister(int optname)
{
	down_write(&rds_info_sem);
	rds_info_funcs[optname - RDS_INFO_FIRST] = NULL;
	up_write(&rds_info_sem);
}

/* Append one item if it fits; handlers count every item regardless. */
void rds_info_copy(struct rds_info_buf *out, const void *data, size_t bytes)
{
	if (out->used + bytes > out->cap)
		return;
	memcpy(out->buf + out->used, data, bytes);
	out->used += bytes;
}

int rds_info_getsockopt(struct socket *sock, int optname,
			char __user *optval, int __user *optlen)
{
	struct rds_info_buf out = {};
	struct rds_info_lengths lens;
	unsigned long start = (unsigned long)optval;
	rds_info_func func;
	size_t total;
	int len, ret, tries;

	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0 || len > INT_MAX - PAGE_SIZE + 1 || start + len < start)
		return -EINVAL;
	/* mainline pins the buffer first and says EAGAIN if it cannot */
	if (len && !access_ok(optval, len))
		return -EAGAIN;

	down_read(&rds_info_sem);
	func = rds_info_funcs[optname - RDS_INFO_FIRST];
	if (!func) {
		ret = -ENOPROTOOPT;
		goto out;
	}

	for (tries = 0; ; tries++) {
		memset(&lens, 0, sizeof(lens));
		func(sock, &out, &lens);
		total = (size_t)lens.nr * lens.each;
		if (WARN_ON_ONCE(!lens.each)) {
			ret = -EINVAL;
			goto out;
		}
		if (total > (size_t)len) {
			len = min_t(size_t, total, INT_MAX);
			ret = -ENOSPC;
			break;
		}
		if (total <= out.cap) {
			/* A handler that counted more than it copied would
			 * hand out what the buffer held before.
			 */
			if (WARN_ON_ONCE(out.used != total)) {
				ret = -EIO;
				goto out;
			}
			len = total;
			ret = lens.each;
			break;
		}
		/* It fits the user buffer: size ours and take it again. */
		if (tries == RDS_INFO_TRIES) {
			len = total;
			ret = -ENOSPC;
			break;
		}
		kvfree(out.buf);
		out.cap = total + total / 4;
		if (out.cap > (size_t)len)
			out.cap = len;
		out.used = 0;
		out.buf = kvmalloc(out.cap, GFP_KERNEL);
		if (!out.buf) {
			ret = -ENOMEM;
			goto out;
		}
	}

	if (ret > 0 && len && copy_to_user(optval, out.buf, len)) {
		ret = -EAGAIN;
		goto out;
	}
	if (put_user(len, optlen))
		ret = -EFAULT;
out:
	up_read(&rds_info_sem);
	kvfree(out.buf);
	return ret;
}

/* RDS_INFO_SOCKETS / RDS6_INFO_SOCKETS */
static void rds_info_sockets(struct socket *sock, struct rds_info_buf *out,
			     struct rds_info_lengths *lens, bool v6)
{
	struct net *net = sock_net(sock->sk);
	struct rds_sock *rs;

	lens->each = v6 ? sizeof(struct rds6_info_socket) :
			  sizeof(struct rds_info_socket);
	spin_lock_bh(&rds_sock_lock);
	list_for_each_entry(rs, &rds_sock_list, rs_item) {
		struct sock *sk = rds_rs_to_sk(rs);

		if (!net_eq(sock_net(sk), net))
			continue;
		if (v6) {
			struct rds6_info_socket s6 = {
				.sndbuf = rds_sk_sndbuf(rs),
				.rcvbuf = rds_sk_rcvbuf(rs),
				.bound_addr = rs->rs_bound_addr,
				.connected_addr = rs->rs_conn_addr,
				.bound_port = rs->rs_bound_port,
				.connected_port = rs->rs_conn_port,
				.inum = sock_i_ino(sk),
			};

			rds_info_copy(out, &s6, sizeof(s6));
		} else {
			struct rds_info_socket s4 = {
				.sndbuf = rds_sk_sndbuf(rs),
				.rcvbuf = rds_sk_rcvbuf(rs),
				.bound_addr = rs->rs_bound_addr.s6_addr32[3],
				.connected_addr = rs->rs_conn_addr.s6_addr32[3],
				.bound_port = rs->rs_bound_port,
				.connected_port = rs->rs_conn_port,
				.inum = sock_i_ino(sk),
			};

			/* the v4 list holds v4-bound sockets only */
			if (!ipv6_addr_v4mapped(&rs->rs_bound_addr))
				continue;
			rds_info_copy(out, &s4, sizeof(s4));
		}
		lens->nr++;
	}
	spin_unlock_bh(&rds_sock_lock);
}

static void rds_info_sockets4(struct socket *sock, struct rds_info_buf *out,
			      struct rds_info_lengths *lens)
{
	rds_info_sockets(sock, out, lens, false);
}

static void rds_info_sockets6(struct socket *sock, struct rds_info_buf *out,
			      struct rds_info_lengths *lens)
{
	rds_info_sockets(sock, out, lens, true);
}

/* One message record, local side first. */
static void rds_info_message(struct rds_info_buf *out,
			     struct rds_info_lengths *lens, bool v6,
			     const struct rds_header *hdr,
			     const struct in6_addr *laddr,
			     const struct in6_addr *faddr, bool flip, u8 tos)
{
	__be16 lport = flip ? hdr->h_dport : hdr->h_sport;
	__be16 fport = flip ? hdr->h_sport : hdr->h_dport;
	u8 flags = 0;	/* mainline never sets the ACK flags either */

	if (v6) {
		struct rds6_info_message m6 = {
			.seq = be64_to_cpu(hdr->h_sequence),
			.len = be32_to_cpu(hdr->h_len),
			.laddr = *laddr,
			.faddr = *faddr,
			.lport = lport,
			.fport = fport,
			.flags = flags,
			.tos = tos,
		};

		rds_info_copy(out, &m6, sizeof(m6));
	} else {
		struct rds_info_message m4 = {
			.seq = be64_to_cpu(hdr->h_sequence),
			.len = be32_to_cpu(hdr->h_len),
			.laddr = laddr->s6_addr32[3],
			.faddr = faddr->s6_addr32[3],
			.lport = lport,
			.fport = fport,
			.flags = flags,
			.tos = tos,
		};

		rds_info_copy(out, &m4, sizeof(m4));
	}
	lens->nr++;
}

struct rds_info_walk {
	struct rds_info_buf	*out;
	struct rds_info_lengths	*lens;
	bool			v6;
	bool			retrans;	/* c_retrans, else c_send_queue */
};

static void rds_info_conn_messages(struct rds_connection *conn, void *arg)
{
	struct rds_info_walk *w = arg;
	struct list_head *head = w->retrans ? &conn->c_retrans :
					      &conn->c_send_queue;
	struct rds_message *rm;

	if (!w->v6 && !ipv6_addr_v4mapped(&conn->c_laddr))
		return;

	spin_lock_bh(&conn->c_lock);
	list_for_each_entry(rm, head, m_conn_item)
		rds_info_message(w->out, w->lens, w->v6, &rm->m_inc.i_hdr,
				 &conn->c_laddr, &conn->c_faddr, false,
				 conn->c_tos);
	spin_unlock_bh(&conn->c_lock);
}

static void rds_info_conn_queue(struct socket *sock, struct rds_info_buf *out,
				struct rds_info_lengths *lens, bool v6,
				bool retrans)
{
	struct rds_info_walk w = {
		.out = out, .lens = lens, .v6 = v6, .retrans = retrans,
	};

	lens->each = v6 ? sizeof(struct rds6_info_message) :
			  sizeof(struct rds_info_message);
	rds_conn_for_each(sock_net(sock->sk), rds_info_conn_messages, &w);
}

static void rds_info_send4(struct socket *sock, struct rds_info_buf *out,
			   struct rds_info_lengths *lens)
{
	rds_info_conn_queue(sock, out, lens, false, false);
}

static void rds_info_send6(struct socket *sock, struct rds_info_buf *out,
			   struct rds_info_lengths *lens)
{
	rds_info_conn_queue(sock, out, lens, true, false);
}

static void rds_info_retrans4(struct socket *sock, struct rds_info_buf *out,
			      struct rds_info_lengths *lens)
{
	rds_info_conn_queue(sock, out, lens, false, true);
}

static void rds_info_retrans6(struct socket *sock, struct rds_info_buf *out,
			      struct rds_info_lengths *lens)
{
	rds_info_conn_queue(sock, out, lens, true, true);
}

/* RDS_INFO_RECV_MESSAGES: what sits on the receive queues. */
static void rds_info_recv(struct socket *sock, struct rds_info_buf *out,
			  struct rds_info_lengths *lens, bool v6)
{
	struct net *net = sock_net(sock->sk);
	struct rds_incoming *inc;
	struct rds_sock *rs;

	lens->each = v6 ? sizeof(struct rds6_info_message) :
			  sizeof(struct rds_info_message);
	spin_lock_bh(&rds_sock_lock);
	list_for_each_entry(rs, &rds_sock_list, rs_item) {
		if (!net_eq(sock_net(rds_rs_to_sk(rs)), net))
			continue;
		if (!v6 && !ipv6_addr_v4mapped(&rs->rs_bound_addr))
			continue;
		spin_lock(&rs->rs_recv_lock);
		list_for_each_entry(inc, &rs->rs_recv_queue, i_item)
			rds_info_message(out, lens, v6, &inc->i_hdr,
					 &rs->rs_bound_addr, &inc->i_saddr,
					 true, inc->i_conn->c_tos);
		spin_unlock(&rs->rs_recv_lock);
	}
	spin_unlock_bh(&rds_sock_lock);
}

static void rds_info_recv4(struct socket *sock, struct rds_info_buf *out,
			   struct rds_info_lengths *lens)
{
	rds_info_recv(sock, out, lens, false);
}

static void rds_info_recv6(struct socket *sock, struct rds_info_buf *out,
			   struct rds_info_lengths *lens)
{
	rds_info_recv(sock, out, lens, true);
}

static u8 rds_info_conn_flags(struct rds_connection *conn)
{
	u8 flags = 0;

	if (test_bit(RDS_CONN_IN_XMIT, &conn->c_flags))
		flags |= RDS_INFO_CONNECTION_FLAG_SENDING;
	switch (atomic_read(&conn->c_state)) {
	case RDS_CONN_CONNECTING:
		flags |= RDS_INFO_CONNECTION_FLAG_CONNECTING;
		break;
	case RDS_CONN_UP:
		flags |= RDS_INFO_CONNECTION_FLAG_CONNECTED;
		break;
	}
	return flags;
}

static void rds_info_one_conn(struct rds_connection *conn, void *arg)
{
	struct rds_info_walk *w = arg;
	u64 tx, rx;

	if (!w->v6 && !ipv6_addr_v4mapped(&conn->c_laddr))
		return;

	spin_lock_bh(&conn->c_lock);
	tx = conn->c_next_tx_seq;
	rx = conn->c_next_rx_seq;
	spin_unlock_bh(&conn->c_lock);

	if (w->v6) {
		struct rds6_info_connection c6 = {
			.next_tx_seq = tx,
			.next_rx_seq = rx,
			.laddr = conn->c_laddr,
			.faddr = conn->c_faddr,
			.flags = rds_info_conn_flags(conn),
		};

		strscpy_pad((char *)c6.transport, conn->c_trans->t_name,
			    sizeof(c6.transport));
		rds_info_copy(w->out, &c6, sizeof(c6));
	} else {
		struct rds_info_connection c4 = {
			.next_tx_seq = tx,
			.next_rx_seq = rx,
			.laddr = conn->c_laddr.s6_addr32[3],
			.faddr = conn->c_faddr.s6_addr32[3],
			.flags = rds_info_conn_flags(conn),
			.tos = conn->c_tos,
		};

		strscpy_pad((char *)c4.transport, conn->c_trans->t_name,
			    sizeof(c4.transport));
		rds_info_copy(w->out, &c4, sizeof(c4));
	}
	w->lens->nr++;
}

static void rds_info_conns(struct socket *sock, struct rds_info_buf *out,
			   struct rds_info_lengths *lens, bool v6)
{
	struct rds_info_walk w = { .out = out, .lens = lens, .v6 = v6 };

	lens->each = v6 ? sizeof(struct rds6_info_connection) :
			  sizeof(struct rds_info_connection);
	rds_conn_for_each(sock_net(sock->sk), rds_info_one_conn, &w);
}

static void rds_info_conns4(struct socket *sock, struct rds_info_buf *out,
			    struct rds_info_lengths *lens)
{
	rds_info_conns(sock, out, lens, false);
}

static void rds_info_conns6(struct socket *sock, struct rds_info_buf *out,
			    struct rds_info_lengths *lens)
{
	rds_info_conns(sock, out, lens, true);
}

static const struct {
	int		optname;
	rds_info_func	func;
} rds_info_core[] = {
	{ RDS_INFO_CONNECTIONS,		rds_info_conns4 },
	{ RDS6_INFO_CONNECTIONS,	rds_info_conns6 },
	{ RDS_INFO_SEND_MESSAGES,	rds_info_send4 },
	{ RDS6_INFO_SEND_MESSAGES,	rds_info_send6 },
	{ RDS_INFO_RETRANS_MESSAGES,	rds_info_retrans4 },
	{ RDS6_INFO_RETRANS_MESSAGES,	rds_info_retrans6 },
	{ RDS_INFO_RECV_MESSAGES,	rds_info_recv4 },
	{ RDS6_INFO_RECV_MESSAGES,	rds_info_recv6 },
	{ RDS_INFO_SOCKETS,		rds_info_sockets4 },
	{ RDS6_INFO_SOCKETS,		rds_info_sockets6 },
};

int rds_info_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rds_info_core); i++)
		rds_info_register(rds_info_core[i].optname,
				  rds_info_core[i].func);
	return 0;
}

void rds_info_exit(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rds_info_core); i++)
		rds_info_unregister(rds_info_core[i].optname);
}
