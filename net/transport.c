// SPDX-License-Identifier: GPL-2.0
/*
 * The transport registry: which transport a bind() or a new connection
 * uses.  Transports register at module init and unregister at exit, after
 * every socket is gone, so a transport pointer held by a socket or a
 * connection never dangles.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

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

static bool rds_addr_is_loopback(const struct in6_addr *addr)
{
	if (ipv6_addr_v4mapped(addr))
		return ipv4_is_loopback(addr->s6_addr32[3]);
	return ipv6_addr_loopback(addr);
}

/* The transport for a bind to addr: loopback for 127/8 and ::1, else the
 * first registered network transport that owns the address, and as a
 * last resort loopback for any other address local to this host.
 */
struct rds_transport *rds_trans_get_preferred(struct net *net,
					      const struct in6_addr *addr,
					      u32 scope_id)
{
	struct rds_transport *trans, *found = NULL;

	if (rds_addr_is_loopback(addr))
		return &rds_loop_transport;

	down_read(&rds_trans_sem);
	list_for_each_entry(trans, &rds_transports, t_item) {
		if (trans == &rds_loop_transport || !trans->laddr_check)
			continue;
		if (trans->laddr_check(net, addr, scope_id) == 0) {
			found = trans;
			break;
		}
	}
	up_read(&rds_trans_sem);

	if (!found && rds_loop_addr_is_local(net, addr, scope_id))
		found = &rds_loop_transport;
	return found;
}
