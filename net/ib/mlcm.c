// SPDX-License-Identifier: GPL-2.0
/*
 * The connection handshake with a peer that runs the kernel's RDS over IB
 * (Documentation/interop.md): its private data (mlhs.c) on our requests
 * and accepts, and the choice of the protocol an attempt speaks.
 *
 * Over IPv6 there is no room for an offer: our request is our own
 * layout, marked so that it refuses it (hs.h), until it refused one; then
 * its own request, nothing of ours (rds_ib_ml_request(), mlhs.h's
 * rds_ib_ml6_remember()).  Its requests are accepted over both.
 *
 * - Its request (recognised by rds_ib_ml_classify()) is accepted with its
 *   own accept: the version its own rule chooses, credit 0 (its flow
 *   control stays off), ack_seq 0.  The ack_seq of its request or accept
 *   frees nothing (rds_ib_hs_acked()): it sends 0, and anyone can send
 *   such a request.
 * - Our request is an offer (hs.h): its layout at version 3.1, which it
 *   accepts, with the rest of our handshake where it never reads.  Our
 *   listener takes the offer as ours.  The accept tells which the peer
 *   is: our handshake, or its layout (rds_ib_ml_answer()).
 * - The attempt's protocol must be chosen before its queue pair exists
 *   (the peer's first frames may come before our ESTABLISHED event): a
 *   request names it; our own attempt guesses what the peer was last
 *   time (ours the first time).  A wrong guess is corrected if no frame
 *   came yet; else the attempt ends and the next one starts right.
 * - Toward it our ACKs count what we took on this connection only, as
 *   its own do (it forgets its ACK state at every disconnect): an ACK
 *   left over from before would make it free messages we never got.
 *
 * Everything here runs under ic->i_cm_mutex, from rdma_cm handlers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <rdma/ib_cm.h>

#include "ib.h"
#include "ml.h"
#include "../neg.h"

/* Toward it: our ACK and what we know of it start afresh (above). */
static void rds_ib_ml_reset_rx(struct rds_ib_conn *ic)
{
	lockdep_assert_held(&ic->i_lock);
	WRITE_ONCE(ic->i_rx_delivered, 0);
	ic->i_hs_ack = 0;
	WRITE_ONCE(ic->i_peer_gen, 0);
}

void rds_ib_ml_attempt_begin(struct rds_ib_conn *ic, bool ml, bool guess)
{
	lockdep_assert_held(&ic->i_cm_mutex);
	spin_lock_bh(&ic->i_lock);
	ic->i_proto = ml ? &rds_ib_proto_ml : &rds_ib_proto_ours;
	ic->i_guess = guess && !rds_neg_nohold();
	ic->i_rx_frames = 0;
	/* a heartbeat asked for on the last attempt is not the peer's */
	ic->i_hb_ask = false;
	ic->i_hb_answer = false;
	if (ml)
		rds_ib_ml_reset_rx(ic);
	spin_unlock_bh(&ic->i_lock);
}

const char *rds_ib_ml_use(struct rds_ib_conn *ic, bool ml)
{
	const struct rds_ib_proto *p = ml ? &rds_ib_proto_ml :
					    &rds_ib_proto_ours;
	const char *why = NULL;

	lockdep_assert_held(&ic->i_cm_mutex);
	/* over IPv6 the memory follows rds_ib_ml6_remember() alone */
	if (ipv6_addr_v4mapped(&ic->i_conn->c_faddr))
		ic->i_peer_ml = ml;
	if (ml)
		ic->i_peer_minor = 0;	/* no flag toward it (hs.h) */
	spin_lock_bh(&ic->i_lock);
	if (ic->i_proto != p) {
		if (ic->i_rx_frames) {
			why = "the peer's first frames came in the other protocol";
		} else {
			ic->i_proto = p;
			if (ml)
				rds_ib_ml_reset_rx(ic);
		}
	}
	spin_unlock_bh(&ic->i_lock);
	if (why)
		pr_info("%pI6c: %s: reconnecting\n", &ic->i_conn->c_faddr,
			why);
	return why;
}

enum rds_ib_pd_kind rds_ib_ml_classify(struct rdma_cm_id *cm_id,
				       const struct rdma_cm_event *event,
				       struct rds_ib_pd_class *c)
{
	struct in6_addr laddr, faddr;

	c->kind = RDS_IB_PD_UNKNOWN;
	if (!rds_ib_addr_of((struct sockaddr *)&cm_id->route.addr.src_addr,
			    &laddr) ||
	    !rds_ib_addr_of((struct sockaddr *)&cm_id->route.addr.dst_addr,
			    &faddr))
		return c->kind;
	/* A request over IPv6 carries its IPv6 layout. */
	return rds_ib_pd_classify(event->param.conn.private_data,
				  event->param.conn.private_data_len,
				  !ipv6_addr_v4mapped(&laddr), laddr.s6_addr,
				  faddr.s6_addr, c);
}

bool rds_ib_hs_ack_apply(struct rds_ib_conn *ic, enum rds_ib_pd_kind kind,
			 bool knows_us, u64 ack)
{
	enum rds_ib_hs_ack verdict;

	lockdep_assert_held(&ic->i_cm_mutex);
	spin_lock_bh(&ic->i_lock);
	verdict = rds_ib_hs_acked(kind, knows_us, ack, ic->i_posted_seq);
	if (verdict == RDS_IB_HS_ACK_FREE && rds_seq_after(ack, ic->i_ack_seen))
		WRITE_ONCE(ic->i_ack_seen, ack);
	spin_unlock_bh(&ic->i_lock);
	if (verdict == RDS_IB_HS_ACK_FREE)
		rds_send_drop_acked(ic->i_conn, ack);
	return verdict != RDS_IB_HS_ACK_BAD;
}

const char *rds_ib_ml_answer(struct rds_ib_conn *ic,
			     const struct rdma_cm_event *event, bool *ml)
{
	struct rds_connection *conn = ic->i_conn;
	bool v6 = !ipv6_addr_v4mapped(&conn->c_faddr);
	enum rds_ib_pd_kind kind;
	struct rds_ib_pd_class c;
	const char *why;

	lockdep_assert_held(&ic->i_cm_mutex);
	kind = rds_ib_pd_classify(event->param.conn.private_data,
				  event->param.conn.private_data_len, v6,
				  conn->c_laddr.s6_addr, conn->c_faddr.s6_addr,
				  &c);
	*ml = kind == RDS_IB_PD_MAINLINE;
	/* Over IPv6 the request said which protocol: the accept must be in
	 * it (its own request: its layout; our handshake: ours).  An accept
	 * answers our own request: it sets the count of race refusals to 0
	 * at once (mlhs.h), before the attempt comes up.
	 */
	if (v6) {
		bool asked_ml = ic->i_req == RDS_IB_REQ_ML;

		ic->i_peer_ml = rds_ib_ml6_remember(ic->i_peer_ml, ic->i_req,
						    *ml ? RDS_IB_ML6_ACCEPT_ML :
						    kind == RDS_IB_PD_OURS ?
						    RDS_IB_ML6_ACCEPT_OURS :
						    RDS_IB_ML6_ACCEPT_BAD,
						    &ic->i_ml6_raced);
		if (*ml != asked_ml) {
			*ml = false;
			return asked_ml ?
			       "the kernel's request accepted in another protocol" :
			       "our request accepted in the kernel's protocol";
		}
	}
	why = rds_ib_ml_use(ic, *ml);
	if (why || !*ml)
		return why;
	/* (its ack_seq frees nothing: rds_ib_hs_acked()) */
	if (!rds_ib_hs_ack_apply(ic, kind, false, c.ml.ack_seq))
		return "the peer acknowledged unsent messages";
	pr_info("%pI6c runs the kernel's RDS: protocol %u.%u\n",
		&conn->c_faddr, c.proto >> 8, c.proto & 0xff);
	return NULL;
}

size_t rds_ib_ml_offer(struct rds_ib_conn *ic, const struct rds_ib_hs *hs,
		       u8 *buf, size_t room)
{
	struct rds_connection *conn = ic->i_conn;
	struct rds_ib_mlhs m = {
		.major		= 3,
		.minor		= 1,
		.minor_mask	= RDS_IB_MLHS_MASK,
		.tos		= hs->tos,
		/* what we took of it; 0 if it was the kernel's RDS */
		.ack_seq	= hs->hello.rx_next - 1,
	};

	if (room < RDS_IB_HS_OFFER_LEN)
		return 0;
	memcpy(m.saddr, conn->c_laddr.s6_addr, sizeof(m.saddr));
	memcpy(m.daddr, conn->c_faddr.s6_addr, sizeof(m.daddr));
	memset(buf, 0, RDS_IB_HS_OFFER_LEN);
	if (!rds_ib_mlhs_encode(&m, buf, RDS_IB_HS_OFFER_LEN))
		return 0;
	rds_ib_hs_offer_put(hs, buf);
	return RDS_IB_HS_OFFER_LEN;
}

size_t rds_ib_ml_request(struct rds_ib_conn *ic, const struct rds_ib_hs *hs,
			 u8 *buf, size_t room)
{
	struct rds_connection *conn = ic->i_conn;

	memset(buf, 0, room);
	/* ack_seq 0: its protocol's ACKs start afresh (attempt_begin) */
	return rds_ib_mlhs_request(conn->c_laddr.s6_addr, conn->c_faddr.s6_addr,
				   !ipv6_addr_v4mapped(&conn->c_faddr), hs->tos,
				   0, buf, room);
}

size_t rds_ib_ml_accept_pd(const struct rds_ib_pd_class *c, u8 *buf,
			   size_t room)
{
	struct rds_ib_mlhs m = {
		.v6		= c->ml.v6,
		.major		= c->proto >> 8,
		.minor		= c->proto & 0xff,
		.minor_mask	= RDS_IB_MLHS_MASK,
		.tos		= c->ml.tos,
	};

	memcpy(m.saddr, c->ml.daddr, sizeof(m.saddr));
	memcpy(m.daddr, c->ml.saddr, sizeof(m.daddr));
	memset(buf, 0, room);
	return rds_ib_mlhs_encode(&m, buf, room);
}

void rds_ib_ml_refuse(struct rdma_cm_id *cm_id)
{
	int rej = RDS_IB_MLHS_REJ_INCOMPAT;

	rdma_reject(cm_id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
}
