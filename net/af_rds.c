// SPDX-License-Identifier: GPL-2.0
/*
 * The AF_RDS socket family: socket lifetime, the proto_ops table, poll,
 * connect/getname, ioctls and socket options.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/sockptr.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "rds.h"

/* protects rds_sock_list, and each socket's rs_conn and rs_tos */
DEFINE_SPINLOCK(rds_sock_lock);
LIST_HEAD(rds_sock_list);

/* pollers of sockets that met a congested destination */
DECLARE_WAIT_QUEUE_HEAD(rds_poll_waitq);

/* Wake everything sleeping on rs: recvmsg, blocked sendmsg, poll. */
void rds_sock_wake(struct rds_sock *rs)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(rds_rs_to_sk(rs)->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_all(&wq->wait);
	rcu_read_unlock();
}

static int rds_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs;

	if (!sk)
		return 0;
	rs = rds_sk_to_rs(sk);

	/* Deliveries check SOCK_DEAD under rs_recv_lock: none after this. */
	spin_lock_bh(&rs->rs_recv_lock);
	sock_orphan(sk);
	spin_unlock_bh(&rs->rs_recv_lock);

	rds_cong_remove_socket(rs);
	rds_bind_remove(rs);
	rds_recv_purge(rs);
	rds_send_drop_to(rs, NULL);
	rds_rdma_sock_release(rs);

	spin_lock_bh(&rds_sock_lock);
	list_del_init(&rs->rs_item);
	rs->rs_conn = NULL;
	spin_unlock_bh(&rds_sock_lock);

	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

static int rds_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct rds_sock *rs = rds_sk_to_rs(sock->sk);
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;
	struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;
	const struct in6_addr *addr;
	u32 scope_id;
	__be16 port;
	int ret;

	lock_sock(sock->sk);
	scope_id = rs->rs_bound_scope_id;
	if (peer) {
		ret = -ENOTCONN;
		if (ipv6_addr_any(&rs->rs_conn_addr))
			goto out;
		addr = &rs->rs_conn_addr;
		port = rs->rs_conn_port;
		scope_id = rs->rs_conn_scope_id ?: scope_id;
	} else if (ipv6_addr_any(&rs->rs_bound_addr)) {
		/* Unbound: an empty address of the connected family, or
		 * AF_UNSPEC with an IPv4 length if not connected either.
		 */
		if (ipv6_addr_any(&rs->rs_conn_addr)) {
			memset(sin, 0, sizeof(*sin));
			sin->sin_family = AF_UNSPEC;
			ret = sizeof(*sin);
		} else if (ipv6_addr_v4mapped(&rs->rs_conn_addr)) {
			memset(sin, 0, sizeof(*sin));
			sin->sin_family = AF_INET;
			ret = sizeof(*sin);
		} else {
			memset(sin6, 0, sizeof(*sin6));
			sin6->sin6_family = AF_INET6;
			ret = sizeof(*sin6);
		}
		goto out;
	} else {
		addr = &rs->rs_bound_addr;
		port = rs->rs_bound_port;
	}

	if (ipv6_addr_v4mapped(addr)) {
		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_port = port;
		sin->sin_addr.s_addr = addr->s6_addr32[3];
		ret = sizeof(*sin);
	} else {
		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		sin6->sin6_addr = *addr;
		sin6->sin6_scope_id = scope_id;
		ret = sizeof(*sin6);
	}
out:
	release_sock(sock->sk);
	return ret;
}

static __poll_t rds_poll(struct file *file, struct socket *sock,
			 poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	__poll_t mask = 0;

	poll_wait(file, sk_sleep(sk), wait);
	if (READ_ONCE(rs->rs_seen_congestion))
		poll_wait(file, &rds_poll_waitq, wait);

	if (!READ_ONCE(rs->rs_cong_monitor)) {
		/* historical: a congestion map change reads as POLLIN */
		if (rds_cong_updated_since(&rs->rs_cong_track))
			mask |= EPOLLIN | EPOLLRDNORM | EPOLLWRBAND;
	} else if (READ_ONCE(rs->rs_cong_notify)) {
		mask |= EPOLLIN | EPOLLRDNORM;
	}

	spin_lock_bh(&rs->rs_recv_lock);
	if (!list_empty(&rs->rs_recv_queue) ||
	    !list_empty(&rs->rs_notify_queue))
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock_bh(&rs->rs_recv_lock);

	if (READ_ONCE(rs->rs_snd_bytes) < (unsigned int)rds_sk_sndbuf(rs))
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (sk->sk_err || !skb_queue_empty_lockless(&sk->sk_error_queue))
		mask |= EPOLLERR;

	if (mask)
		WRITE_ONCE(rs->rs_seen_congestion, 0);
	return mask;
}

static int rds_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct rds_sock *rs = rds_sk_to_rs(sock->sk);
	struct rds_transport *trans;
	rds_tos_t utos, tos;

	switch (cmd) {
	case SIOCRDSSETTOS:
		if (get_user(utos, (rds_tos_t __user *)arg))
			return -EFAULT;
		trans = READ_ONCE(rs->rs_transport);
		if (!trans || !trans->get_tos_map)
			return -ENOIOCTLCMD;
		tos = trans->get_tos_map(utos);

		spin_lock_bh(&rds_sock_lock);
		if (rs->rs_tos || rs->rs_conn) {
			spin_unlock_bh(&rds_sock_lock);
			return -EINVAL;
		}
		rs->rs_tos = tos;
		spin_unlock_bh(&rds_sock_lock);
		return 0;
	case SIOCRDSGETTOS:
		spin_lock_bh(&rds_sock_lock);
		tos = rs->rs_tos;
		spin_unlock_bh(&rds_sock_lock);
		return put_user(tos, (rds_tos_t __user *)arg) ? -EFAULT : 0;
	default:
		return -ENOIOCTLCMD;
	}
}

static int rds_cancel_sent_to(struct rds_sock *rs, sockptr_t optval,
			      unsigned int optlen)
{
	struct sockaddr_in6 sin6 = {};
	struct sockaddr_in sin;

	if (ipv6_addr_any(&rs->rs_bound_addr))
		return -ENOTCONN;

	if (optlen < sizeof(sin))
		return -EINVAL;
	if (optlen < sizeof(sin6)) {
		if (copy_from_sockptr(&sin, optval, sizeof(sin)))
			return -EFAULT;
		ipv6_addr_set_v4mapped(sin.sin_addr.s_addr, &sin6.sin6_addr);
		sin6.sin6_port = sin.sin_port;
	} else if (copy_from_sockptr(&sin6, optval, sizeof(sin6))) {
		return -EFAULT;
	}

	rds_send_drop_to(rs, &sin6);
	return 0;
}

static int rds_get_bool(bool *out, sockptr_t optval, unsigned int optlen)
{
	int value;

	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&value, optval, sizeof(int)))
		return -EFAULT;
	*out = !!value;
	return 0;
}

static int rds_set_cong_monitor(struct rds_sock *rs, sockptr_t optval,
				unsigned int optlen)
{
	bool on;
	int ret;

	ret = rds_get_bool(&on, optval, optlen);
	if (ret)
		return ret;

	WRITE_ONCE(rs->rs_cong_monitor, on);
	if (on) {
		rds_cong_add_socket(rs);
	} else {
		rds_cong_remove_socket(rs);
		spin_lock_bh(&rs->rs_lock);
		rs->rs_cong_mask = 0;
		rs->rs_cong_notify = 0;
		spin_unlock_bh(&rs->rs_lock);
	}
	return 0;
}

static int rds_set_transport(struct sock *sk, sockptr_t optval,
			     unsigned int optlen)
{
	struct rds_sock *rs = rds_sk_to_rs(sk);
	struct rds_transport *trans;
	int t_type;

	sock_owned_by_me(sk);
	if (rs->rs_transport)
		return -EOPNOTSUPP;	/* bound, or pinned already */
	if (optlen != sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&t_type, optval, sizeof(t_type)))
		return -EFAULT;
	if (t_type < 0 || t_type >= RDS_TRANS_COUNT)
		return -EINVAL;
	/* only TCP would work outside the initial namespace */
	if (t_type != RDS_TRANS_TCP && !net_eq(sock_net(sk), &init_net))
		return -EPROTOTYPE;

	trans = rds_trans_get(t_type);
	if (!trans)
		return -ENOPROTOOPT;
	rs->rs_transport = trans;
	return 0;
}

static int rds_set_timestamp(struct sock *sk, sockptr_t optval,
			     unsigned int optlen, int optname)
{
	int val;

	if (optlen != sizeof(int))
		return -EFAULT;
	if (copy_from_sockptr(&val, optval, sizeof(int)))
		return -EFAULT;

	if (optname == SO_TIMESTAMP_NEW)
		sock_set_flag(sk, SOCK_TSTAMP_NEW);
	else
		sock_reset_flag(sk, SOCK_TSTAMP_NEW);
	if (val)
		sock_set_flag(sk, SOCK_RCVTSTAMP);
	else
		sock_reset_flag(sk, SOCK_RCVTSTAMP);
	return 0;
}

static int rds_set_rx_latency(struct rds_sock *rs, sockptr_t optval,
			      unsigned int optlen)
{
	struct rds_rx_trace_so trace;
	unsigned int i;

	if (optlen != sizeof(trace))
		return -EFAULT;
	if (copy_from_sockptr(&trace, optval, sizeof(trace)))
		return -EFAULT;
	if (trace.rx_traces > RDS_MSG_RX_DGRAM_TRACE_MAX)
		return -EFAULT;
	for (i = 0; i < trace.rx_traces; i++) {
		/* position p measures the step p -> p + 1 */
		if (trace.rx_trace_pos[i] >= RDS_MSG_RX_DGRAM_TRACE_MAX) {
			rs->rs_rx_traces = 0;
			return -EFAULT;
		}
	}
	for (i = 0; i < trace.rx_traces; i++)
		rs->rs_rx_trace[i] = trace.rx_trace_pos[i];
	rs->rs_rx_traces = trace.rx_traces;
	return 0;
}

static int rds_setsockopt(struct socket *sock, int level, int optname,
			  sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	bool on;
	int ret;

	if (level != SOL_RDS)
		return -ENOPROTOOPT;

	switch (optname) {
	case RDS_CANCEL_SENT_TO:
		return rds_cancel_sent_to(rs, optval, optlen);
	case RDS_RECVERR:
		ret = rds_get_bool(&on, optval, optlen);
		if (!ret)
			WRITE_ONCE(rs->rs_recverr, on);
		return ret;
	case RDS_CONG_MONITOR:
		lock_sock(sk);
		ret = rds_set_cong_monitor(rs, optval, optlen);
		release_sock(sk);
		return ret;
	case SO_RDS_TRANSPORT:
		lock_sock(sk);
		ret = rds_set_transport(sk, optval, optlen);
		release_sock(sk);
		return ret;
	case SO_TIMESTAMP_OLD:
	case SO_TIMESTAMP_NEW:
		lock_sock(sk);
		ret = rds_set_timestamp(sk, optval, optlen, optname);
		release_sock(sk);
		return ret;
	case SO_RDS_MSG_RXPATH_LATENCY:
		lock_sock(sk);
		ret = rds_set_rx_latency(rs, optval, optlen);
		release_sock(sk);
		return ret;
	case RDS_GET_MR:
	case RDS_GET_MR_FOR_DEST:
	case RDS_FREE_MR:
		return rds_rdma_setsockopt(rs, optname, optval, optlen);
	default:
		return -ENOPROTOOPT;
	}
}

static int rds_put_int(int value, char __user *optval, int __user *optlen,
		       int len)
{
	if (len < (int)sizeof(int))
		return -EINVAL;
	if (put_user(value, (int __user *)optval) ||
	    put_user(sizeof(int), optlen))
		return -EFAULT;
	return 0;
}

static int rds_getsockopt(struct socket *sock, int level, int optname,
			  char __user *optval, int __user *optlen)
{
	struct rds_sock *rs = rds_sk_to_rs(sock->sk);
	struct rds_transport *trans;
	int len;

	if (level != SOL_RDS)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;

	switch (optname) {
	case RDS_INFO_FIRST ... RDS_INFO_LAST:
		return rds_info_getsockopt(sock, optname, optval, optlen);
	case RDS_RECVERR:
		return rds_put_int(READ_ONCE(rs->rs_recverr), optval, optlen,
				   len);
	case SO_RDS_TRANSPORT:
		trans = READ_ONCE(rs->rs_transport);
		return rds_put_int(trans ? trans->t_type : RDS_TRANS_NONE,
				   optval, optlen, len);
	default:
		return -ENOPROTOOPT;
	}
}

static int rds_connect(struct socket *sock, struct sockaddr *uaddr,
		       int addr_len, int flags)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	int ret = 0;

	if (addr_len < (int)offsetofend(struct sockaddr, sa_family))
		return -EINVAL;

	lock_sock(sk);
	switch (uaddr->sa_family) {
	case AF_INET: {
		struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;
		__be32 a4 = sin->sin_addr.s_addr;

		if (addr_len < (int)sizeof(*sin)) {
			ret = -EINVAL;
		} else if (a4 == htonl(INADDR_ANY)) {
			ret = -EDESTADDRREQ;
		} else if (ipv4_is_multicast(a4) ||
			   a4 == htonl(INADDR_BROADCAST)) {
			ret = -EINVAL;
		} else {
			ipv6_addr_set_v4mapped(a4, &rs->rs_conn_addr);
			rs->rs_conn_port = sin->sin_port;
		}
		break;
	}
	case AF_INET6: {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;
		int type;

		if (addr_len < (int)sizeof(*sin6)) {
			ret = -EINVAL;
			break;
		}
		type = ipv6_addr_type(&sin6->sin6_addr);
		if (!(type & IPV6_ADDR_UNICAST)) {
			__be32 a4 = sin6->sin6_addr.s6_addr32[3];

			if (!(type & IPV6_ADDR_MAPPED) ||
			    a4 == htonl(INADDR_ANY) ||
			    a4 == htonl(INADDR_BROADCAST) ||
			    ipv4_is_multicast(a4)) {
				ret = -EPROTOTYPE;
				break;
			}
		}
		if (type & IPV6_ADDR_LINKLOCAL) {
			/* the peer must be on the link we are bound to */
			if (!sin6->sin6_scope_id ||
			    (!ipv6_addr_any(&rs->rs_bound_addr) &&
			     rs->rs_bound_scope_id &&
			     sin6->sin6_scope_id != rs->rs_bound_scope_id)) {
				ret = -EINVAL;
				break;
			}
			/* Kept apart from rs_bound_scope_id: that one is
			 * part of the socket's key in the bind table.
			 */
			rs->rs_conn_scope_id = sin6->sin6_scope_id;
		} else {
			rs->rs_conn_scope_id = 0;
		}
		rs->rs_conn_addr = sin6->sin6_addr;
		rs->rs_conn_port = sin6->sin6_port;
		break;
	}
	default:
		ret = -EAFNOSUPPORT;
		break;
	}
	release_sock(sk);
	return ret;
}

static struct proto rds_proto = {
	.name		= "RDS",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct rds_sock),
};

static const struct proto_ops rds_proto_ops = {
	.family		= AF_RDS,
	.owner		= THIS_MODULE,
	.release	= rds_release,
	.bind		= rds_bind_addr,
	.connect	= rds_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= rds_getname,
	.poll		= rds_poll,
	.ioctl		= rds_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.setsockopt	= rds_setsockopt,
	.getsockopt	= rds_getsockopt,
	.sendmsg	= rds_send_msg,
	.recvmsg	= rds_recv_msg,
	.mmap		= sock_no_mmap,
};

static void rds_sock_destruct(struct sock *sk)
{
	struct rds_sock *rs = rds_sk_to_rs(sk);

	WARN_ON_ONCE(!list_empty(&rs->rs_send_queue));
	WARN_ON_ONCE(!list_empty(&rs->rs_recv_queue));
	WARN_ON_ONCE(!list_empty(&rs->rs_item));
	WARN_ON_ONCE(!list_empty(&rs->rs_cong_item));
}

static int rds_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct rds_sock *rs;
	struct sock *sk;

	if (sock->type != SOCK_SEQPACKET || protocol)
		return -ESOCKTNOSUPPORT;

	sk = sk_alloc(net, AF_RDS, GFP_KERNEL, &rds_proto, kern);
	if (!sk)
		return -ENOMEM;

	sock_init_data(sock, sk);
	sock->ops = &rds_proto_ops;
	sk->sk_protocol = protocol;
	sk->sk_destruct = rds_sock_destruct;

	rs = rds_sk_to_rs(sk);
	spin_lock_init(&rs->rs_lock);
	spin_lock_init(&rs->rs_recv_lock);
	INIT_LIST_HEAD(&rs->rs_send_queue);
	INIT_LIST_HEAD(&rs->rs_recv_queue);
	INIT_LIST_HEAD(&rs->rs_notify_queue);
	spin_lock_init(&rs->rs_rdma_lock);
	rs->rs_mr_tree = RB_ROOT;
	INIT_LIST_HEAD(&rs->rs_mr_pending);
	INIT_LIST_HEAD(&rs->rs_cong_item);
	INIT_HLIST_NODE(&rs->rs_bound_node);

	spin_lock_bh(&rds_sock_lock);
	list_add_tail(&rs->rs_item, &rds_sock_list);
	spin_unlock_bh(&rds_sock_lock);
	return 0;
}

static const struct net_proto_family rds_family_ops = {
	.family	= AF_RDS,
	.create	= rds_create,
	.owner	= THIS_MODULE,
};

int rds_af_init(void)
{
	int ret;

	ret = proto_register(&rds_proto, 1);
	if (ret)
		return ret;

	ret = sock_register(&rds_family_ops);
	if (ret) {
		/* -EEXIST: the in-tree rds module is loaded. */
		pr_err("cannot register PF_RDS: %d\n", ret);
		proto_unregister(&rds_proto);
	}
	return ret;
}

void rds_af_exit(void)
{
	sock_unregister(AF_RDS);
	proto_unregister(&rds_proto);
}
