// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses of the IB transport, IPv4 and IPv6: which local address an
 * RDMA device serves, the rdma_cm socket addresses of a connection, the
 * addresses and scope of a request our listeners received.
 *
 * An RDS address is an in6_addr (IPv4 ones IPv4-mapped, ::ffff:a.b.c.d)
 * and, for a link-local IPv6 address, a scope id: the index of the netdev
 * it lives on (the socket's bound scope, the connection's c_bound_if).
 * IPv4 connections use rdma_cm's AF_INET and port RDS_IB_PORT, IPv6 ones
 * AF_INET6 and port RDS_IB_PORT6, as the kernel's RDS does.  RDMA devices
 * serve the initial network namespace only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/route.h>

#include "ib.h"

static bool rds_ib_addr_linklocal(const struct in6_addr *addr)
{
	return ipv6_addr_type(addr) & IPV6_ADDR_LINKLOCAL;
}

/* ss: the rdma_cm address of (addr, scope_id) at port (network order). */
void rds_ib_sockaddr(const struct in6_addr *addr, u32 scope_id, __be16 port,
		     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (ipv6_addr_v4mapped(addr)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = addr->s6_addr32[3];
		sin->sin_port = port;
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = *addr;
		sin6->sin6_port = port;
		/* the scope matters for a link-local address only */
		if (rds_ib_addr_linklocal(addr))
			sin6->sin6_scope_id = scope_id;
	}
}

/* The RDS form of an rdma_cm address (IPv4 becomes IPv4-mapped); false
 * for another family, and for an IPv6 address that is not unicast or is
 * IPv4-mapped (a request's addresses come from the wire: one of those
 * would be taken for an IPv4 connection, or a multicast one for a peer).
 */
bool rds_ib_addr_of(const struct sockaddr *sa, struct in6_addr *addr)
{
	const struct in6_addr *a6;

	switch (sa->sa_family) {
	case AF_INET:
		ipv6_addr_set_v4mapped(((const struct sockaddr_in *)sa)->sin_addr.s_addr,
				       addr);
		return true;
	case AF_INET6:
		a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (ipv6_addr_v4mapped(a6) ||
		    !(ipv6_addr_type(a6) & IPV6_ADDR_UNICAST))
			return false;
		*addr = *a6;
		return true;
	default:
		return false;
	}
}

/* Whether addr is an address of the initial namespace's netdev ifindex
 * (any netdev if ifindex is 0).
 */
static bool rds_ib_addr6_on(const struct in6_addr *addr, int ifindex)
{
	struct net_device *dev = NULL;
	bool on;

	if (ifindex) {
		dev = dev_get_by_index(&init_net, ifindex);
		if (!dev)
			return false;
	}
	on = ipv6_chk_addr(&init_net, addr, dev, 1);
	if (dev)
		dev_put(dev);
	return on;
}

/* The scope of a connection a request on our listener asks for: 0 unless
 * one of its addresses is link-local; then the netdev the request came in
 * on (rdma_cm's bound_dev_if for RoCE) if our address is on it, else the
 * first netdev that has our address.  -ENODEV: our link-local address is
 * on none; -EADDRNOTAVAIL: the request's address of ours is not local;
 * -EAFNOSUPPORT: an IPv6 request with IPv6 disabled.
 */
int rds_ib_addr_req_scope(struct rdma_cm_id *id, const struct in6_addr *laddr,
			  const struct in6_addr *faddr, u32 *scope_id)
{
	int ifindex = id->route.addr.dev_addr.bound_dev_if;
	struct net_device *dev;

	*scope_id = 0;
	/* Our address is one of ours (the request's header names it). */
	if (ipv6_addr_v4mapped(laddr))
		return inet_addr_type(&init_net, laddr->s6_addr32[3]) ==
		       RTN_LOCAL ? 0 : -EADDRNOTAVAIL;
	if (!ipv6_mod_enabled())
		return -EAFNOSUPPORT;
	if (!rds_ib_addr_linklocal(laddr) && !rds_ib_addr_linklocal(faddr))
		return rds_ib_addr6_on(laddr, 0) ? 0 : -EADDRNOTAVAIL;
	if (ifindex > 0 && rds_ib_addr6_on(laddr, ifindex)) {
		*scope_id = ifindex;
		return 0;
	}
	rcu_read_lock();
	for_each_netdev_rcu(&init_net, dev) {
		if (ipv6_chk_addr(&init_net, laddr, dev, 1)) {
			*scope_id = dev->ifindex;
			break;
		}
	}
	rcu_read_unlock();
	return *scope_id ? 0 : -ENODEV;
}

static int rds_ib_addr_handler(struct rdma_cm_id *id,
			       struct rdma_cm_event *event)
{
	return 0;
}

/* The device RDS uses for the local address (addr, scope_id), with a
 * reference, or NULL.  A link-local address needs its scope id and must
 * be on that netdev (rdma_cm binds any link-local address it is given).
 * Process context.
 */
struct rds_ib_device *rds_ib_device_of_addr(const struct in6_addr *addr,
					    u32 scope_id)
{
	struct rds_ib_device *rdev = NULL;
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;

	if (ipv6_addr_v4mapped(addr)) {
		__be32 a4 = addr->s6_addr32[3];

		if (ipv4_is_loopback(a4) || a4 == htonl(INADDR_ANY))
			return NULL;
	} else {
		if (!ipv6_mod_enabled() || ipv6_addr_any(addr) ||
		    ipv6_addr_loopback(addr))
			return NULL;
		if (rds_ib_addr_linklocal(addr) &&
		    (!scope_id || !rds_ib_addr6_on(addr, scope_id)))
			return NULL;
	}
	rds_ib_sockaddr(addr, scope_id, 0, &ss);
	id = rdma_create_id(&init_net, rds_ib_addr_handler, NULL,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return NULL;
	if (!rdma_bind_addr(id, (struct sockaddr *)&ss) && id->device)
		rdev = rds_ib_device_get(id->device);
	rdma_destroy_id(id);
	return rdev;
}

/* A listener on every address of one family at its port: IPv4 at
 * RDS_IB_PORT, IPv6 (IPv6 requests only) at RDS_IB_PORT6.  An ERR_PTR on
 * failure.
 */
struct rdma_cm_id *rds_ib_addr_listen(bool v6, rdma_cm_event_handler handler,
				      int backlog)
{
	struct sockaddr_storage ss;
	struct in6_addr any = in6addr_any;
	struct rdma_cm_id *id;
	int ret;

	if (!v6)
		ipv6_addr_set_v4mapped(htonl(INADDR_ANY), &any);
	rds_ib_sockaddr(&any, 0, htons(v6 ? RDS_IB_PORT6 : RDS_IB_PORT), &ss);
	id = rdma_create_id(&init_net, handler, NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return id;
	ret = v6 ? rdma_set_afonly(id, 1) : 0;
	if (!ret)
		ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (!ret)
		ret = rdma_listen(id, backlog);
	if (ret) {
		rdma_destroy_id(id);
		return ERR_PTR(ret);
	}
	return id;
}
