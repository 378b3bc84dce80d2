/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Speaking the kernel's own RDS over IB ("mainline") to a peer that runs
 * it (Documentation/interop.md): its connection handshake (mlcm.c, on
 * top of the pure mlhs.c) and its data path (mlpath.c), the protocol
 * table rds_ib_proto_ml (proto.c) of such a connection.
 */
#ifndef _RDS_IB_ML_H
#define _RDS_IB_ML_H

#include "ib.h"
#include "mlhs.h"

/* What we ask of the peer's queue pair toward a peer of the kernel's
 * RDS: RNR retries for ever (7), as it asks of ours.  Neither side
 * grants credits: a SEND that finds no receive posted waits for one.
 */
#define RDS_IB_ML_RNR_RETRY	7

/* mlcm.c, under ic->i_cm_mutex */
/* Before the attempt's queue pair exists: speak ml's protocol (or ours). */
void rds_ib_ml_attempt_begin(struct rds_ib_conn *ic, bool ml, bool guess);
/* The peer's answer says which it speaks: switch to it if the attempt
 * took no frame yet; else why the attempt must end (the next one starts
 * in the right one).
 */
const char *rds_ib_ml_use(struct rds_ib_conn *ic, bool ml);
/* A request on a listener: is it the kernel's RDS (c filled; c->ml.v6
 * for one over IPv6)?
 */
enum rds_ib_pd_kind rds_ib_ml_classify(struct rdma_cm_id *cm_id,
				       const struct rdma_cm_event *event,
				       struct rds_ib_pd_class *c);
/* The active side's accept: NULL if it is ours (*ml false, the caller
 * applies our handshake) or the kernel's RDS applied (*ml true); else why
 * the attempt must end.
 */
const char *rds_ib_ml_answer(struct rds_ib_conn *ic,
			     const struct rdma_cm_event *event, bool *ml);
/* Free what the acknowledgment of a handshake (kind: ours or the
 * kernel's; knows_us, ack: rds_ib_hs_acked()) frees of our messages;
 * false if it acknowledges what was never posted.
 */
bool rds_ib_hs_ack_apply(struct rds_ib_conn *ic, enum rds_ib_pd_kind kind,
			 bool knows_us, u64 ack);
/* Our request (hs.h, an offer) into buf: its length, 0 if it cannot be. */
size_t rds_ib_ml_offer(struct rds_ib_conn *ic, const struct rds_ib_hs *hs,
		       u8 *buf, size_t room);
/* Its own request (IPv6: mlhs.h), from hs's TOS and ACK: the same. */
size_t rds_ib_ml_request(struct rds_ib_conn *ic, const struct rds_ib_hs *hs,
			 u8 *buf, size_t room);
/* The accept of a request c of the kernel's RDS into buf: its length. */
size_t rds_ib_ml_accept_pd(const struct rds_ib_pd_class *c, u8 *buf,
			   size_t room);
/* Refuse a request of the kernel's RDS the way it refuses one. */
void rds_ib_ml_refuse(struct rdma_cm_id *cm_id);

/* mlpath.c: the data path's hooks (struct rds_ib_proto) */
struct rds_ib_send_slot *rds_ib_ml_slot_take(struct rds_ib_conn *ic,
					     u8 *grant);
void rds_ib_ml_frame_hdr(struct rds_ib_conn *ic, struct rds_ib_send_slot *s,
			 const struct rds_message *rm, unsigned int frag,
			 bool more);
void rds_ib_ml_recv_frame(struct rds_ib_conn *ic, struct rds_ib_rx_buf *buf,
			  struct ib_wc *wc);

#endif /* _RDS_IB_ML_H */
