// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: one per (netns, laddr, faddr, tos, transport, scope).  A
 * connection owns the per-peer transmit sequence, the send queue and the
 * list of messages sent but not yet acknowledged.  Connections are
 * created on the first send to a peer and live until their namespace or
 * their transport goes away.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "rds.h"
#include "trace/rds.h"

/* 1024 buckets: a thousand connections (issue 17) one or two a bucket */
#define RDS_CONN_HASH_BITS	10

/* protects rds_conn_hash (writers; readers use RCU) */
static DEFINE_SPINLOCK(rds_conn_lock);
static DEFINE_HASHTABLE(rds_conn_hash, RDS_CONN_HASH_BITS);
static u32 rds_conn_seed __read_mostly;

/* Runs the transports' conn_stop of the connections being destroyed, at
 * most RDS_CONN_STOP_MAX at a time: with a thousand connections, stopping
 * them one after the other took the module's unload a minute or more
 * (each waits for its queue pair to drain).
 */
#define RDS_CONN_STOP_MAX	32
static struct workqueue_struct *rds_conn_stop_wq;

/* The TOS is part of the hash: the connections of one pair of addresses,
 * one per TOS (up to 256), would otherwise share a bucket.
 */
static u32 rds_conn_hashfn(const struct in6_addr *laddr,
			   const struct in6_addr *faddr, u8 tos)
{
	return jhash_3words(ipv6_addr_hash(laddr), ipv6_addr_hash(faddr), tos,
			    rds_conn_seed);
}

static struct rds_connection *rds_conn_lookup(struct net *net,
					      const struct in6_addr *laddr,
					      const struct in6_addr *faddr,
					      struct rds_transport *trans,
					      u8 tos, u32 scope_id)
{
	struct rds_connection *conn;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held() &&
			 !lockdep_is_held(&rds_conn_lock),
			 "conn lookup needs RCU or rds_conn_lock");
	hash_for_each_possible_rcu(rds_conn_hash, conn, c_hash_node,
				   rds_conn_hashfn(laddr, faddr, tos)) {
		if (ipv6_addr_equal(&conn->c_faddr, faddr) &&
		    ipv6_addr_equal(&conn->c_laddr, laddr) &&
		    conn->c_trans == trans && conn->c_tos == tos &&
		    conn->c_bound_if == scope_id &&
		    net_eq(rds_conn_net(conn), net))
			return conn;
	}
	return NULL;
}

static void rds_conn_stop_work(struct work_struct *work)
{
	struct rds_connection *conn = container_of(work, struct rds_connection,
						   c_stop_work);

	conn->c_trans->conn_stop(conn);
}

static void rds_conn_free(struct rds_connection *conn)
{
	if (conn->c_transport_data)
		conn->c_trans->conn_free(conn);
	kfree(conn);
}

/* The connection, if there is one (it lives until its namespace or its
 * transport goes away).
 */
struct rds_connection *rds_conn_find(struct net *net,
				     const struct in6_addr *laddr,
				     const struct in6_addr *faddr,
				     struct rds_transport *trans,
				     u8 tos, u32 scope_id)
{
	struct rds_connection *conn;

	rcu_read_lock();
	conn = rds_conn_lookup(net, laddr, faddr, trans, tos, scope_id);
	rcu_read_unlock();
	return conn;
}

/* Find the connection, or allocate and insert it without starting it.
 * Transports that pair connections (loopback) use this directly.
 */
struct rds_connection *rds_conn_find_or_alloc(struct net *net,
					      const struct in6_addr *laddr,
					      const struct in6_addr *faddr,
					      struct rds_transport *trans,
					      u8 tos, u32 scope_id, gfp_t gfp)
{
	struct rds_connection *conn, *found;
	int ret;

	conn = rds_conn_find(net, laddr, faddr, trans, tos, scope_id);
	if (conn)
		return conn;

	conn = kzalloc(sizeof(*conn), gfp);
	if (!conn)
		return ERR_PTR(-ENOMEM);

	write_pnet(&conn->c_net, net);
	conn->c_laddr = *laddr;
	conn->c_faddr = *faddr;
	conn->c_bound_if = scope_id;
	conn->c_tos = tos;
	conn->c_trans = trans;
	atomic_set(&conn->c_state, RDS_CONN_DOWN);
	conn->c_state_since = jiffies;
	spin_lock_init(&conn->c_lock);
	INIT_LIST_HEAD(&conn->c_send_queue);
	INIT_LIST_HEAD(&conn->c_retrans);
	INIT_WORK(&conn->c_stop_work, rds_conn_stop_work);
	conn->c_next_tx_seq = 1;
	conn->c_next_rx_seq = 0;

	conn->c_lcong = rds_cong_map_get(net, laddr, gfp);
	conn->c_fcong = rds_cong_map_get(net, faddr, gfp);
	if (!conn->c_lcong || !conn->c_fcong) {
		kfree(conn);
		return ERR_PTR(-ENOMEM);
	}

	if (trans->conn_alloc) {
		ret = trans->conn_alloc(conn, gfp);
		if (ret) {
			kfree(conn);
			return ERR_PTR(ret);
		}
	}

	spin_lock_bh(&rds_conn_lock);
	found = rds_conn_lookup(net, laddr, faddr, trans, tos, scope_id);
	if (!found)
		hash_add_rcu(rds_conn_hash, &conn->c_hash_node,
			     rds_conn_hashfn(laddr, faddr, tos));
	spin_unlock_bh(&rds_conn_lock);

	if (found) {
		rds_conn_free(conn);
		return found;
	}
	pr_debug("new connection %pI6c -> %pI6c tos %u over %s\n",
		 laddr, faddr, tos, trans->t_name);
	return conn;
}

/* The connection from laddr to faddr, created and started if needed.  A
 * destination local to this host always goes over loopback; loopback
 * carries nothing else: from a loopback-bound socket a destination that
 * is not local is unreachable (-ENETUNREACH), not delivered to this host.
 */
struct rds_connection *rds_conn_create(struct net *net,
				       const struct in6_addr *laddr,
				       const struct in6_addr *faddr,
				       struct rds_transport *trans, u8 tos,
				       u32 scope_id, gfp_t gfp)
{
	struct rds_connection *conn;
	int ret;

	if (rds_loop_addr_is_local(net, faddr, scope_id))
		trans = &rds_loop_transport;
	else if (trans == &rds_loop_transport)
		return ERR_PTR(-ENETUNREACH);

	conn = rds_conn_find_or_alloc(net, laddr, faddr, trans, tos, scope_id,
				      gfp);
	if (IS_ERR(conn))
		return conn;

	if (atomic_read(&conn->c_state) == RDS_CONN_DOWN &&
	    trans->conn_connect) {
		ret = trans->conn_connect(conn);
		if (ret)
			return ERR_PTR(ret);
	}
	return conn;
}

/* Every change of c_state goes through these two: they stamp the time
 * of the change (c_state_since, for /proc) and trace it with its reason
 * (a string that outlives the call: it is copied only into the trace
 * ring).
 *
 * Set conn's state (RDS_CONN_*).
 */
void rds_conn_set_state(struct rds_connection *conn, int state,
			const char *why)
{
	int old = atomic_xchg(&conn->c_state, state);

	if (old != state) {
		WRITE_ONCE(conn->c_state_since, jiffies);
		trace_rds_conn_state(conn, old, state, why);
	}
}

/* Move conn from state old to new if it is in old: true if it was. */
bool rds_conn_transition(struct rds_connection *conn, int old, int new,
			 const char *why)
{
	if (atomic_cmpxchg(&conn->c_state, old, new) != old)
		return false;
	WRITE_ONCE(conn->c_state_since, jiffies);
	trace_rds_conn_state(conn, old, new, why);
	return true;
}

/* Drop everything still queued on a connection that is going away. */
static void rds_conn_drop_messages(struct rds_connection *conn)
{
	struct rds_message *rm, *tmp;
	unsigned int n = 0;
	LIST_HEAD(list);

	spin_lock_bh(&conn->c_lock);
	list_splice_init(&conn->c_send_queue, &list);
	list_splice_init(&conn->c_retrans, &list);
	list_for_each_entry(rm, &list, m_conn_item) {
		clear_bit(RDS_MSG_ON_CONN, &rm->m_flags);
		n++;
	}
	/* The lengths /proc shows, checked once in a connection's life. */
	WARN_ONCE(n != conn->c_send_queue_n + conn->c_retrans_n,
		  "rds: %u messages on the queues, counted %u + %u\n", n,
		  conn->c_send_queue_n, conn->c_retrans_n);
	conn->c_send_queue_n = 0;
	conn->c_retrans_n = 0;
	spin_unlock_bh(&conn->c_lock);

	list_for_each_entry_safe(rm, tmp, &list, m_conn_item) {
		list_del_init(&rm->m_conn_item);
		trace_rds_msg_drop(conn, &rm->m_inc.i_hdr,
				   "connection destroyed");
		rds_message_put(rm);
	}
}

static void rds_conn_destroy_matching(struct net *net,
				      struct rds_transport *trans)
{
	struct rds_connection *conn, *next;
	struct hlist_node *tmp;
	LIST_HEAD(doomed);
	int bkt;

	spin_lock_bh(&rds_conn_lock);
	hash_for_each_safe(rds_conn_hash, bkt, tmp, conn, c_hash_node) {
		if ((net && !net_eq(rds_conn_net(conn), net)) ||
		    (trans && conn->c_trans != trans))
			continue;
		/* A reader under RCU may stand on it and go on to the next
		 * in the bucket: c_hash_node keeps pointing there.
		 */
		hash_del_rcu(&conn->c_hash_node);
		list_add_tail(&conn->c_doomed_item, &doomed);
	}
	spin_unlock_bh(&rds_conn_lock);

	if (list_empty(&doomed))
		return;
	synchronize_rcu();

	/* Nobody finds them any more: stop them side by side, then free. */
	list_for_each_entry(conn, &doomed, c_doomed_item)
		if (conn->c_trans->conn_stop)
			queue_work(rds_conn_stop_wq, &conn->c_stop_work);
	flush_workqueue(rds_conn_stop_wq);

	list_for_each_entry_safe(conn, next, &doomed, c_doomed_item) {
		list_del(&conn->c_doomed_item);
		rds_conn_drop_messages(conn);
		rds_conn_free(conn);
	}
}

/* Called when a transport unregisters: no socket uses it any more. */
void rds_conn_destroy_trans(struct rds_transport *trans)
{
	rds_conn_destroy_matching(NULL, trans);
}

/* Call visit on every connection of net (all if net is NULL), under RCU:
 * visit must not sleep.
 */
void rds_conn_for_each(struct net *net, rds_conn_visit_t visit, void *arg)
{
	struct rds_connection *conn;
	int bkt;

	rcu_read_lock();
	hash_for_each_rcu(rds_conn_hash, bkt, conn, c_hash_node) {
		if (net && !net_eq(rds_conn_net(conn), net))
			continue;
		visit(conn, arg);
	}
	rcu_read_unlock();
}

static void __net_exit rds_conn_net_exit(struct net *net)
{
	rds_conn_destroy_matching(net, NULL);
	rds_cong_net_exit(net);
}

static struct pernet_operations rds_conn_net_ops = {
	.exit = rds_conn_net_exit,
};

int rds_conn_init(void)
{
	int ret;

	rds_conn_seed = get_random_u32();
	rds_conn_stop_wq = alloc_workqueue("rds_conn_stop", WQ_UNBOUND,
					   RDS_CONN_STOP_MAX);
	if (!rds_conn_stop_wq)
		return -ENOMEM;
	ret = register_pernet_subsys(&rds_conn_net_ops);
	if (ret)
		destroy_workqueue(rds_conn_stop_wq);
	return ret;
}

void rds_conn_exit(void)
{
	unregister_pernet_subsys(&rds_conn_net_ops);
	rds_conn_destroy_matching(NULL, NULL);
	destroy_workqueue(rds_conn_stop_wq);
}
