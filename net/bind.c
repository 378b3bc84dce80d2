// SPDX-License-Identifier: GPL-2.0
/*
 * The bound-address table: which socket owns (netns, address, port,
 * scope).  Lookups on the receive path run under RCU; bound sockets are
 * RCU-freed (SOCK_RCU_FREE) so a lookup never touches freed memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/in.h>
#include <linux/jhash.h>
#include <linux/random.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "rds.h"

#define RDS_BIND_HASH_BITS	10

/* protects rds_bind_hash (writers; readers use RCU) */
static DEFINE_SPINLOCK(rds_bind_lock);
static DEFINE_HASHTABLE(rds_bind_hash, RDS_BIND_HASH_BITS);
static u32 rds_bind_seed __read_mostly;

static u32 rds_bind_hashfn(const struct in6_addr *addr, __be16 port,
			   u32 scope_id)
{
	return jhash_3words(ipv6_addr_hash(addr), (__force u32)port, scope_id,
			    rds_bind_seed);
}

static bool rds_bind_match(struct rds_sock *rs, struct net *net,
			   const struct in6_addr *addr, __be16 port,
			   u32 scope_id)
{
	return rs->rs_bound_port == port &&
	       rs->rs_bound_scope_id == scope_id &&
	       ipv6_addr_equal(&rs->rs_bound_addr, addr) &&
	       net_eq(sock_net(rds_rs_to_sk(rs)), net);
}

static struct rds_sock *rds_bind_lookup(struct net *net,
					const struct in6_addr *addr,
					__be16 port, u32 scope_id)
{
	struct rds_sock *rs;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held() &&
			 !lockdep_is_held(&rds_bind_lock),
			 "bind lookup needs RCU or rds_bind_lock");
	hash_for_each_possible_rcu(rds_bind_hash, rs, rs_bound_node,
				   rds_bind_hashfn(addr, port, scope_id)) {
		if (rds_bind_match(rs, net, addr, port, scope_id))
			return rs;
	}
	return NULL;
}

/* The live socket bound to (addr, port, scope_id) with a reference the
 * caller drops with sock_put(), or NULL.
 */
struct rds_sock *rds_bind_find(struct net *net, const struct in6_addr *addr,
			       __be16 port, u32 scope_id)
{
	struct rds_sock *rs;

	rcu_read_lock();
	rs = rds_bind_lookup(net, addr, port, scope_id);
	if (rs && (sock_flag(rds_rs_to_sk(rs), SOCK_DEAD) ||
		   !refcount_inc_not_zero(&rds_rs_to_sk(rs)->sk_refcnt)))
		rs = NULL;
	rcu_read_unlock();
	return rs;
}

/* Insert rs at addr:*port, choosing a random port >= 2 if *port is 0. */
static int rds_bind_insert(struct rds_sock *rs, struct net *net,
			   const struct in6_addr *addr, __be16 *port,
			   u32 scope_id)
{
	u16 rover, last;

	if (*port) {
		rover = be16_to_cpu(*port);
		if (rover == RDS_FLAG_PROBE_PORT)
			return -EINVAL;
		last = rover;
	} else {
		rover = max_t(u16, get_random_u32() & 0xffff, 2);
		last = rover - 1;
	}

	spin_lock_bh(&rds_bind_lock);
	do {
		if (rover == 0 || rover == RDS_FLAG_PROBE_PORT)
			continue;
		if (rds_bind_lookup(net, addr, cpu_to_be16(rover), scope_id))
			continue;

		rs->rs_bound_addr = *addr;
		rs->rs_bound_port = cpu_to_be16(rover);
		rs->rs_bound_scope_id = scope_id;
		sock_hold(rds_rs_to_sk(rs));	/* the table's reference */
		hash_add_rcu(rds_bind_hash, &rs->rs_bound_node,
			     rds_bind_hashfn(addr, rs->rs_bound_port,
					     scope_id));
		spin_unlock_bh(&rds_bind_lock);
		*port = rs->rs_bound_port;
		return 0;
	} while (rover++ != last);
	spin_unlock_bh(&rds_bind_lock);

	return -EADDRINUSE;
}

/* Take rs out of the table (on close); no-op for an unbound socket. */
void rds_bind_remove(struct rds_sock *rs)
{
	if (ipv6_addr_any(&rs->rs_bound_addr))
		return;

	spin_lock_bh(&rds_bind_lock);
	hash_del_rcu(&rs->rs_bound_node);
	spin_unlock_bh(&rds_bind_lock);
	/* The socket is RCU-freed, so concurrent lookups stay safe. */
	sock_put(rds_rs_to_sk(rs));
}

/* A unicast v4 address usable as an RDS endpoint. */
static bool rds_v4_usable(__be32 addr)
{
	return addr != htonl(INADDR_ANY) && addr != htonl(INADDR_BROADCAST) &&
	       !ipv4_is_multicast(addr);
}

int rds_bind_addr(struct socket *sock, struct sockaddr *uaddr, int addr_len)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	struct net *net = sock_net(sk);
	struct rds_transport *trans;
	struct in6_addr addr;
	u32 scope_id = 0;
	__be16 port;
	int ret;

	if (addr_len < (int)offsetofend(struct sockaddr, sa_family))
		return -EINVAL;

	if (uaddr->sa_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;

		if (addr_len < (int)sizeof(*sin) ||
		    !rds_v4_usable(sin->sin_addr.s_addr))
			return -EINVAL;
		ipv6_addr_set_v4mapped(sin->sin_addr.s_addr, &addr);
		port = sin->sin_port;
	} else if (uaddr->sa_family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;
		int type;

		if (addr_len < (int)sizeof(*sin6))
			return -EINVAL;
		type = ipv6_addr_type(&sin6->sin6_addr);
		if (!(type & IPV6_ADDR_UNICAST)) {
			if (!(type & IPV6_ADDR_MAPPED) ||
			    !rds_v4_usable(sin6->sin6_addr.s6_addr32[3]))
				return -EINVAL;
		}
		if (type & IPV6_ADDR_LINKLOCAL) {
			if (!sin6->sin6_scope_id)
				return -EINVAL;
			scope_id = sin6->sin6_scope_id;
		}
		addr = sin6->sin6_addr;
		port = sin6->sin6_port;
	} else {
		return -EINVAL;
	}

	lock_sock(sk);

	/* No rebinding. */
	if (!ipv6_addr_any(&rs->rs_bound_addr)) {
		ret = -EINVAL;
		goto out;
	}
	/* A link-local peer set by connect() fixes the scope. */
	if (!ipv6_addr_any(&rs->rs_conn_addr) && scope_id &&
	    rs->rs_conn_scope_id && scope_id != rs->rs_conn_scope_id) {
		ret = -EINVAL;
		goto out;
	}

	/* rs_transport is set before a bind only by SO_RDS_TRANSPORT */
	trans = rds_trans_for_bind(net, rs->rs_transport, &addr, scope_id);
	if (IS_ERR(trans)) {
		ret = PTR_ERR(trans);
		goto out;
	}

	sock_set_flag(sk, SOCK_RCU_FREE);
	ret = rds_bind_insert(rs, net, &addr, &port, scope_id);
	if (!ret)
		rs->rs_transport = trans;
out:
	release_sock(sk);
	return ret;
}

int rds_bind_init(void)
{
	rds_bind_seed = get_random_u32();
	return 0;
}

void rds_bind_exit(void)
{
	int bkt;
	struct rds_sock *rs;

	/* Every socket is gone before the module can be unloaded. */
	hash_for_each(rds_bind_hash, bkt, rs, rs_bound_node)
		WARN_ONCE(1, "socket %p still bound at exit\n", rs);
}
