// SPDX-License-Identifier: GPL-2.0
/*
 * The transport registry: which transport a bind() or a new connection
 * uses.  Transports register at module init and unregister at exit, after
 * every socket is gone, so a transport pointer held by a socket or a
 * connection never dangles.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/list.h>
#include <linux/rwsem.h>

#include "rds.h"

/* protects rds_transports (the list and the t_item links) */
static DECLARE_RWSEM(rds_trans_sem);
static LIST_HEAD(rds_transports);

void rds_trans_register(struct rds_transport *trans)
{
	down_write(&rds_trans_sem);
	list_add_tail(&trans->t_item, &rds_transports);
	up_write(&rds_trans_sem);
	pr_debug("registered transport %s\n", trans->t_name);
}

void rds_trans_unregister(struct rds_transport *trans)
{
	down_write(&rds_trans_sem);
	list_del_init(&trans->t_item);
	up_write(&rds_trans_sem);
	rds_conn_destroy_trans(trans);
	pr_debug("unregistered transport %s\n", trans->t_name);
}

/* The transport SO_RDS_TRANSPORT pins a socket to, or NULL. */
struct rds_transport *rds_trans_get(unsigned int t_type)
{
	struct rds_transport *trans, *found = NULL;

	down_read(&rds_trans_sem);
	list_for_each_entry(trans, &rds_transports, t_item) {
		if (trans->t_type == t_type) {
			found = trans;
			break;
		}
	}
	up_read(&rds_trans_sem);
	return found;
}

/* Appends every transport's counters to an RDS_INFO_COUNTERS snapshot,
 * in the order the transports registered; how many it appended.
 */
unsigned int rds_trans_stats_info(struct rds_info_buf *out)
{
	struct rds_transport *trans;
	unsigned int n = 0;

	down_read(&rds_trans_sem);
	list_for_each_entry(trans, &rds_transports, t_item)
		if (trans->stats_info)
			n += trans->stats_info(out);
	up_read(&rds_trans_sem);
	return n;
}

/* Every transport's part of /proc/net/rds/devices, in registration order. */
void rds_trans_devices_proc(struct seq_file *m, struct net *net)
{
	struct rds_transport *trans;

	down_read(&rds_trans_sem);
	list_for_each_entry(trans, &rds_transports, t_item)
		if (trans->devices_proc)
			trans->devices_proc(m, net);
	up_read(&rds_trans_sem);
}

/* Why no transport took addr (err: the most telling laddr_check answer). */
static const char *rds_trans_why_not(struct net *net,
				     const struct in6_addr *addr,
				     u32 scope_id, int err)
{
	if (rds_addr_is_loopback(addr))
		return "a loopback address is for the loopback transport only";
	if (!rds_loop_addr_is_local(net, addr, scope_id))
		return "not an address of this host";
	switch (err) {
	case -EPROTOTYPE:
		return "RDMA devices serve the initial network namespace only";
	default:
		return "no RDMA device has this address";
	}
}

static void rds_trans_refused(struct net *net, const struct in6_addr *addr,
			      u32 scope_id, struct rds_transport *pinned,
			      int err)
{
	char name[INET6_ADDRSTRLEN + sizeof("%4294967295")];

	if (ipv6_addr_v4mapped(addr))
		snprintf(name, sizeof(name), "%pI4", &addr->s6_addr32[3]);
	else if (scope_id)
		snprintf(name, sizeof(name), "%pI6c%%%u", addr, scope_id);
	else
		snprintf(name, sizeof(name), "%pI6c", addr);
	pr_info_ratelimited("cannot bind to %s%s%s: %s\n", name,
			    pinned ? " over " : "",
			    pinned ? pinned->t_name : "",
			    rds_trans_why_not(net, addr, scope_id, err));
}

/* The transport a bind to addr uses.  A socket pinned with
 * SO_RDS_TRANSPORT keeps its transport if that one serves addr.  Else
 * 127/8 and ::1 go to loopback and any other address to the first network
 * transport whose laddr_check takes it; loopback serves no other address,
 * so nothing is bound that no transport can reach.  On failure an ERR_PTR
 * (-ENOPROTOOPT for a pinned socket, -EADDRNOTAVAIL otherwise) and one
 * rate-limited line saying why.
 */
struct rds_transport *rds_trans_for_bind(struct net *net,
					 struct rds_transport *pinned,
					 const struct in6_addr *addr,
					 u32 scope_id)
{
	struct rds_transport *trans, *found = NULL;
	int ret, err = -EADDRNOTAVAIL;

	if (pinned) {
		err = pinned->laddr_check ?
		      pinned->laddr_check(net, addr, scope_id) : -EADDRNOTAVAIL;
		if (!err)
			return pinned;
		rds_trans_refused(net, addr, scope_id, pinned, err);
		return ERR_PTR(-ENOPROTOOPT);
	}

	if (rds_addr_is_loopback(addr))
		return &rds_loop_transport;

	down_read(&rds_trans_sem);
	list_for_each_entry(trans, &rds_transports, t_item) {
		if (trans == &rds_loop_transport || !trans->laddr_check)
			continue;
		ret = trans->laddr_check(net, addr, scope_id);
		if (!ret) {
			found = trans;
			break;
		}
		if (ret != -EADDRNOTAVAIL)
			err = ret;
	}
	up_read(&rds_trans_sem);

	if (found)
		return found;
	rds_trans_refused(net, addr, scope_id, NULL, err);
	return ERR_PTR(-EADDRNOTAVAIL);
}
