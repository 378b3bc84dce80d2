// SPDX-License-Identifier: GPL-2.0
/*
 * RDS_INFO_IB_CONNECTIONS and RDS6_INFO_IB_CONNECTIONS (rds-info -I): one
 * record per IB connection of the caller's namespace, as mainline lists
 * them: the addresses and TOS always; the queue pair's side (GIDs, SL,
 * work requests, SGEs, the memory region pool, receive memory) only while
 * its attempt may post frames (i_up: from the handshake's end to the
 * first error), zero otherwise.  The v4 list leaves out IPv6
 * connections; the v6 list holds every one, v4 ones v4-mapped.
 *
 * What the fields mean here (Documentation/ib-transport.md):
 *   max_send_wr, max_send_sge  the send queue as the QP was created (the
 *       provider may report more than asked: 6.12's rxe its rounding up)
 *   max_recv_wr   the QP's own receive queue as created; with the
 *       device's shared receive queue (the default), the SRQ buffers the
 *       connection took when its QP was set up (its grant plus one)
 *   rdma_mr_max   regions the device may have registered (ib_mr_max)
 *   rdma_mr_size  pages one region spans at most
 *   cache_allocs  KiB of receive buffers the connection holds now (its
 *       SRQ share shrinks while the pool is in debt)
 */
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "ib.h"

struct rds_ib_info_walk {
	struct rds_info_buf	*out;
	struct rds_info_lengths	*lens;
	bool			v6;
};

/* The v6 form of conn's record (the v4 one is taken from it).  Under
 * rcu_read_lock(): conn and its IB state stay (rds_conn_for_each()).
 */
static void rds_ib_info_record(struct rds_connection *conn,
			       struct rds_ib_conn *ic,
			       struct rds6_info_rdma_connection *r)
{
	const struct rds_ib_qp_info *q = &ic->i_qp_info;
	bool up;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(),
			 "IB connection records need the connection walk's RCU");
	memset(r, 0, sizeof(*r));	/* the padding too: copied out whole */
	r->src_addr = conn->c_laddr;
	r->dst_addr = conn->c_faddr;
	r->tos = conn->c_tos;

	spin_lock_bh(&ic->i_lock);
	up = ic->i_up;
	if (up) {
		memcpy(r->src_gid, q->q_sgid.raw, sizeof(r->src_gid));
		memcpy(r->dst_gid, q->q_dgid.raw, sizeof(r->dst_gid));
		r->sl = q->q_sl;
		r->max_send_wr = q->q_send_wr;
		r->max_recv_wr = q->q_recv_wr;
		r->max_send_sge = q->q_send_sge;
		r->cache_allocs = (q->q_srq ? ic->i_reserved : ic->i_rx_nr) *
				  (RDS_IB_RX_BYTES / SZ_1K);
	}
	spin_unlock_bh(&ic->i_lock);
	if (up) {
		r->rdma_mr_max = READ_ONCE(rds_ib_mr_max);
		r->rdma_mr_size = RDS_MR_MAX_PAGES;
	}
}

static void rds_ib_info_conn(struct rds_connection *conn, void *arg)
{
	struct rds_ib_info_walk *w = arg;
	struct rds_ib_conn *ic = conn->c_transport_data;
	struct rds6_info_rdma_connection r6;
	struct rds_info_rdma_connection r4;

	if (conn->c_trans != &rds_ib_transport || !ic)
		return;
	if (!w->v6 && !ipv6_addr_v4mapped(&conn->c_laddr))
		return;
	rds_ib_info_record(conn, ic, &r6);
	if (w->v6) {
		rds_info_copy(w->out, &r6, sizeof(r6));
	} else {
		memset(&r4, 0, sizeof(r4));
		r4.src_addr = r6.src_addr.s6_addr32[3];
		r4.dst_addr = r6.dst_addr.s6_addr32[3];
		memcpy(r4.src_gid, r6.src_gid, sizeof(r4.src_gid));
		memcpy(r4.dst_gid, r6.dst_gid, sizeof(r4.dst_gid));
		r4.max_send_wr = r6.max_send_wr;
		r4.max_recv_wr = r6.max_recv_wr;
		r4.max_send_sge = r6.max_send_sge;
		r4.rdma_mr_max = r6.rdma_mr_max;
		r4.rdma_mr_size = r6.rdma_mr_size;
		r4.tos = r6.tos;
		r4.sl = r6.sl;
		r4.cache_allocs = r6.cache_allocs;
		rds_info_copy(w->out, &r4, sizeof(r4));
	}
	w->lens->nr++;
}

static void rds_ib_info_conns(struct socket *sock, struct rds_info_buf *out,
			      struct rds_info_lengths *lens, bool v6)
{
	struct rds_ib_info_walk w = { .out = out, .lens = lens, .v6 = v6 };

	lens->each = v6 ? sizeof(struct rds6_info_rdma_connection) :
			  sizeof(struct rds_info_rdma_connection);
	rds_conn_for_each(sock_net(sock->sk), rds_ib_info_conn, &w);
}

static void rds_ib_info_conns4(struct socket *sock, struct rds_info_buf *out,
			       struct rds_info_lengths *lens)
{
	rds_ib_info_conns(sock, out, lens, false);
}

static void rds_ib_info_conns6(struct socket *sock, struct rds_info_buf *out,
			       struct rds_info_lengths *lens)
{
	rds_ib_info_conns(sock, out, lens, true);
}

/* The records' sizes are ABI (<linux/rds.h>): naturally aligned, padded. */
static_assert(sizeof(struct rds_info_rdma_connection) == 68);
static_assert(sizeof(struct rds6_info_rdma_connection) == 92);

void rds_ib_info_init(void)
{
	rds_info_register(RDS_INFO_IB_CONNECTIONS, rds_ib_info_conns4);
	rds_info_register(RDS6_INFO_IB_CONNECTIONS, rds_ib_info_conns6);
}

void rds_ib_info_exit(void)
{
	rds_info_unregister(RDS6_INFO_IB_CONNECTIONS);
	rds_info_unregister(RDS_INFO_IB_CONNECTIONS);
}
