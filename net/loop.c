// SPDX-License-Identifier: GPL-2.0
/*
 * The loopback transport: carries messages between addresses of this
 * host without touching a network.  Sockets bind to it only on 127/8 and
 * ::1; a connection from any bound address to a destination local to the
 * host uses it too.  Transmit delivers the message itself to the receive
 * path of the reverse connection and acknowledges it at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/sched/clock.h>
#include <net/addrconf.h>
#include <net/route.h>

#include "rds.h"

/* True if addr is configured on this host (in net). */
bool rds_loop_addr_is_local(struct net *net, const struct in6_addr *addr,
			    u32 scope_id)
{
	struct net_device *dev = NULL;
	bool local;

	if (ipv6_addr_v4mapped(addr)) {
		__be32 a4 = addr->s6_addr32[3];

		return ipv4_is_loopback(a4) ||
		       inet_addr_type(net, a4) == RTN_LOCAL;
	}
	if (ipv6_addr_loopback(addr))
		return true;

	rcu_read_lock();
	if (scope_id) {
		dev = dev_get_by_index_rcu(net, scope_id);
		if (!dev) {
			rcu_read_unlock();
			return false;
		}
	}
	local = ipv6_chk_addr(net, addr, dev, 0);
	rcu_read_unlock();
	return local;
}

/* A socket binds to loopback only on a loopback address (any namespace). */
static int rds_loop_laddr_check(struct net *net, const struct in6_addr *addr,
				u32 scope_id)
{
	return rds_addr_is_loopback(addr) ? 0 : -EADDRNOTAVAIL;
}

/* Pair conn with its reverse, on which deliveries to conn->c_faddr
 * arrive; a connection to its own address is its own reverse.
 */
static int rds_loop_conn_connect(struct rds_connection *conn)
{
	struct rds_connection *peer;

	if (ipv6_addr_equal(&conn->c_laddr, &conn->c_faddr)) {
		peer = conn;
	} else {
		peer = rds_conn_find_or_alloc(rds_conn_net(conn),
					      &conn->c_faddr, &conn->c_laddr,
					      &rds_loop_transport, conn->c_tos,
					      conn->c_bound_if, GFP_KERNEL);
		if (IS_ERR(peer))
			return PTR_ERR(peer);
		cmpxchg(&peer->c_loop_peer, NULL, conn);
		rds_conn_set_state(peer, RDS_CONN_UP, "loopback");
	}
	cmpxchg(&conn->c_loop_peer, NULL, peer);
	rds_conn_set_state(conn, RDS_CONN_UP, "loopback");
	return 0;
}

#ifdef RDS_TEST_HOOKS
/* Test only (RDS_TEST_HOOKS=1, see Kbuild): with loop_hold_acks=1
 * loopback delivers but does not acknowledge, so unacknowledged bytes
 * pile up as on a network whose peer is slow to ACK and the
 * full-send-buffer paths can be tested on one host; writing 0
 * acknowledges everything delivered.
 */
static bool rds_loop_hold_acks;

static void rds_loop_release_acks(struct rds_connection *conn, void *arg)
{
	if (conn->c_trans == &rds_loop_transport)
		rds_send_drop_acked(conn, READ_ONCE(conn->c_loop_delivered));
}

static int rds_loop_hold_acks_set(const char *val,
				  const struct kernel_param *kp)
{
	int ret = param_set_bool(val, kp);

	/* Pairs with the barrier in rds_loop_xmit(): either it sees the
	 * hold cleared, or this walk sees what it delivered.
	 */
	smp_mb();
	if (!ret && !READ_ONCE(rds_loop_hold_acks))
		rds_conn_for_each(NULL, rds_loop_release_acks, NULL);
	return ret;
}

static const struct kernel_param_ops rds_loop_hold_acks_ops = {
	.set	= rds_loop_hold_acks_set,
	.get	= param_get_bool,
};
module_param_cb(loop_hold_acks, &rds_loop_hold_acks_ops,
		&rds_loop_hold_acks, 0600);
MODULE_PARM_DESC(loop_hold_acks,
		 "Test only: loopback holds its acknowledgments until set to 0");

static bool rds_loop_acks_held(void)
{
	return READ_ONCE(rds_loop_hold_acks);
}
#else
static bool rds_loop_acks_held(void)
{
	return false;
}
#endif

static int rds_loop_xmit(struct rds_connection *conn, struct rds_message *rm)
{
	struct rds_connection *peer = READ_ONCE(conn->c_loop_peer);
	u64 seq = be64_to_cpu(rm->m_inc.i_hdr.h_sequence);

	if (WARN_ON_ONCE(!peer))
		return -ENOTCONN;

	rds_inc_init(&rm->m_inc, peer, &conn->c_laddr);
	/* The handoff is where the receiving side first sees the header. */
	rm->m_inc.i_rx_lat_trace[RDS_MSG_RX_HDR] = local_clock();
	/* The incoming's reference on rm; dropped in rds_loop_inc_free. */
	rds_message_get(rm);
	rds_recv_incoming(peer, &conn->c_laddr, &conn->c_faddr, &rm->m_inc);
	rds_inc_put(&rm->m_inc);

	/* Delivered (or dropped for good): that is the acknowledgment. */
	WRITE_ONCE(conn->c_loop_delivered, seq);
	smp_mb();	/* pairs with rds_loop_hold_acks_set() */
	if (!rds_loop_acks_held())
		rds_send_drop_acked(conn, seq);
	return 0;
}

static int rds_loop_inc_copy_to_user(struct rds_incoming *inc,
				     struct iov_iter *to)
{
	struct rds_message *rm = container_of(inc, struct rds_message, m_inc);

	return rds_message_copy_to_user(rm, to);
}

static void rds_loop_inc_free(struct rds_incoming *inc)
{
	struct rds_message *rm = container_of(inc, struct rds_message, m_inc);

	rds_message_put(rm);
}

/* TOS is only a label on loopback; every value is accepted. */
static u8 rds_loop_get_tos_map(u8 tos)
{
	return tos;
}

struct rds_transport rds_loop_transport = {
	.t_name			= "loopback",
	.t_type			= RDS_TRANS_LOOP,
	.laddr_check		= rds_loop_laddr_check,
	.conn_connect		= rds_loop_conn_connect,
	.xmit			= rds_loop_xmit,
	.inc_copy_to_user	= rds_loop_inc_copy_to_user,
	.inc_free		= rds_loop_inc_free,
	.get_tos_map		= rds_loop_get_tos_map,
};

int rds_loop_init(void)
{
	rds_trans_register(&rds_loop_transport);
	return 0;
}

void rds_loop_exit(void)
{
	rds_trans_unregister(&rds_loop_transport);
}
