// SPDX-License-Identifier: GPL-2.0
/*
 * libpeer's connections (see peer.h): the queue pair and its buffers,
 * connect, listen, accept and disconnect, and rdma_cm's events.  The
 * handshake is ours (net/ib/hs.c), or the kernel's RDS in mainline mode
 * (mlpeer.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer_int.h"

void peer_hs_default(struct rds_ib_hs *hs, u32 gen, u32 credits, u8 tos)
{
	memset(hs, 0, sizeof(*hs));
	hs->major = RDS_IB_HS_MAJOR;
	hs->minor = RDS_IB_HS_MINOR;
	hs->frag_shift = 12;
	hs->credits = credits;
	hs->tos = tos;
	hs->hello.gen = gen;
	hs->hello.peer_gen = 0;
	hs->hello.rx_next = 1;
	hs->hello.tx_first = 1;
}

int peer_init(struct peer *p, u32 credits)
{
	memset(p, 0, sizeof(*p));
	p->ec = rdma_create_event_channel();
	if (!p->ec)
		return -1;
	fcntl(p->ec->fd, F_SETFL, fcntl(p->ec->fd, F_GETFL) | O_NONBLOCK);
	p->accept_tos = -1;
	p->grant0 = credits;
	p->nrx = credits + 8;
	p->ntx = PEER_NTX;
	p->rbuf = calloc(p->nrx, PEER_BUF);
	p->sbuf = calloc(p->ntx, PEER_SLOT);
	return p->rbuf && p->sbuf ? 0 : -1;
}

static void peer_qp_down(struct peer *p)
{
	if (p->id && p->id->qp)
		rdma_destroy_qp(p->id);
	if (p->rmr)
		ibv_dereg_mr(p->rmr);
	if (p->smr)
		ibv_dereg_mr(p->smr);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->rcq)
		ibv_destroy_cq(p->rcq);
	if (p->ch)
		ibv_destroy_comp_channel(p->ch);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	p->rmr = p->smr = NULL;
	p->scq = p->rcq = NULL;
	p->ch = NULL;
	p->pd = NULL;
	p->tx_busy = 0;
}

int peer_post_recv(struct peer *p, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->rbuf + (size_t)i * PEER_BUF),
		.length = PEER_BUF,
		.lkey = p->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad) ? -1 : 0;
}

/* PD, CQs, buffers and an RC queue pair on id, receives posted. */
static int peer_qp_up(struct peer *p, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = { 0 };
	unsigned int i;

	p->id = id;
	p->pd = ibv_alloc_pd(id->verbs);
	if (!p->pd)
		goto err;
	p->ch = ibv_create_comp_channel(id->verbs);
	if (!p->ch)
		goto err;
	fcntl(p->ch->fd, F_SETFL, fcntl(p->ch->fd, F_GETFL) | O_NONBLOCK);
	p->rcq = ibv_create_cq(id->verbs, p->nrx + 1, NULL, p->ch, 0);
	p->scq = ibv_create_cq(id->verbs, p->ntx + 1, NULL, NULL, 0);
	if (!p->rcq || !p->scq)
		goto err;
	p->rmr = ibv_reg_mr(p->pd, p->rbuf, (size_t)p->nrx * PEER_BUF,
			    IBV_ACCESS_LOCAL_WRITE);
	p->smr = ibv_reg_mr(p->pd, p->sbuf, (size_t)p->ntx * PEER_SLOT, 0);
	if (!p->rmr || !p->smr)
		goto err;
	qa.send_cq = p->scq;
	qa.recv_cq = p->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = p->ntx;
	qa.cap.max_recv_wr = p->nrx;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, p->pd, &qa))
		goto err;
	for (i = 0; i < p->nrx; i++)
		if (peer_post_recv(p, i))
			goto err;
	ibv_req_notify_cq(p->rcq, 0);
	return 0;
err:
	peer_qp_down(p);
	return -1;
}

/* The connection state once the handshakes are exchanged. */
static void peer_start(struct peer *p)
{
	p->ack_seen_valid = false;
	p->part_busy = false;
	p->rdma_busy = false;
	p->up = true;
	p->gone = false;
	p->gone_why = NULL;
	if (p->ml) {
		peer_ml_start(p);
		return;
	}
	rds_ib_credit_init(&p->cr, p->theirs.credits, p->mine.credits);
	p->grant0 = p->mine.credits;
	p->inflight = 0;
	p->tx_next = p->mine.hello.tx_first;
	/* A new peer for the module: it delivers from its tx_first on. */
	p->rx_last = p->theirs.hello.tx_first - 1;
	if (p->mine.hello.peer_gen == p->theirs.hello.gen)
		p->rx_last = p->mine.hello.rx_next - 1;
	p->ack_sent = p->rx_last;
}

/* A connection request seen while waiting for something else: kept
 * (not acknowledged) for peer_accept.
 */
static bool peer_stash(struct peer *p, struct rdma_cm_event *ev)
{
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST || p->pending)
		return false;
	p->pending = ev;
	return true;
}

static struct rdma_cm_event *peer_cm_wait(struct peer *p, int tmo_ms)
{
	struct rdma_cm_event *ev;
	u64 end = peer_deadline(tmo_ms);

	for (;;) {
		struct pollfd pf = { .fd = p->ec->fd, .events = POLLIN };
		s64 left;

		if (!rdma_get_cm_event(p->ec, &ev))
			return ev;
		if (errno != EAGAIN)
			return NULL;
		left = (s64)(end - peer_now_ms());
		if (left <= 0)
			return NULL;
		poll(&pf, 1, (int)left);
	}
}

/* 0 accepted, 3 refused by RDS, 4 retry, 1 error */
static int peer_attempt(struct peer *p, struct sockaddr_storage *src,
			struct sockaddr_storage *dst, const void *pd,
			size_t len, int *reason)
{
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int ret = 1, r;

	if (rdma_create_id(p->ec, &id, NULL, RDMA_PS_TCP))
		return 1;
	p->id = id;
	if (rdma_resolve_addr(id, (struct sockaddr *)src,
			      (struct sockaddr *)dst, 2000))
		goto out;
	ev = peer_cm_wait(p, 5000);
	if (!ev)
		goto retry;
	r = ev->event;
	rdma_ack_cm_event(ev);
	if (r != RDMA_CM_EVENT_ADDR_RESOLVED)
		goto retry;
	if (rdma_resolve_route(id, 2000))
		goto out;
	ev = peer_cm_wait(p, 5000);
	if (!ev)
		goto retry;
	r = ev->event;
	rdma_ack_cm_event(ev);
	if (r != RDMA_CM_EVENT_ROUTE_RESOLVED)
		goto retry;
	if (peer_qp_up(p, id))
		goto out;
	cp.private_data = pd;
	cp.private_data_len = len;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	/* 7: rxe retries for ever.  Under emulation a guest can stall past
	 * any finite transport timeout; the test peer then sees the module's
	 * own verdict (reset, heartbeat) rather than its own retry error.
	 */
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(id, &cp))
		goto out;
	ev = peer_cm_wait(p, 20000);
	if (!ev)
		goto retry;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (p->ml)
			r = peer_ml_answer(p, ev->param.conn.private_data,
					   ev->param.conn.private_data_len) ?
			    RDS_IB_HS_R_VERSION : RDS_IB_HS_OK;
		else
			r = rds_ib_hs_decode(ev->param.conn.private_data,
					     ev->param.conn.private_data_len,
					     &p->theirs);
		rdma_ack_cm_event(ev);
		if (r) {
			peer_log(p, "accepted, but the answer is malformed: %s",
				 p->ml ? "not the kernel's RDS" :
				 rds_ib_hs_reason_name(r));
			goto out;
		}
		peer_start(p);
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		if (p->ml) {
			/* the kernel's RDS refuses with an int */
			if (ev->status == 28 &&
			    ev->param.conn.private_data_len >= sizeof(int))
				memcpy(&p->ml_rej, ev->param.conn.private_data,
				       sizeof(int));
			/* as rds_rdma does: try again later */
			ret = 4;
			*reason = p->ml_rej;
			rdma_ack_cm_event(ev);
			goto out;
		}
		r = rds_ib_hs_decode(ev->param.conn.private_data,
				     ev->param.conn.private_data_len,
				     &p->theirs);
		if (ev->status == 28 && r == RDS_IB_HS_OK &&
		    p->theirs.reason != RDS_IB_HS_R_BUSY) {
			*reason = p->theirs.reason;
			ret = 3;
		} else {
			ret = 4;
		}
		rdma_ack_cm_event(ev);
		goto out;
	default:
		rdma_ack_cm_event(ev);
		goto retry;
	}
retry:
	ret = 4;
out:
	peer_qp_down(p);
	rdma_destroy_id(id);
	p->id = NULL;
	return ret;
}

/* An rdma_cm address of s (IPv4, or IPv6 with an optional %scope) at
 * port: 0, or -1.
 */
static int peer_addr(const char *s, int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_flags = AI_NUMERICHOST,
	};
	struct addrinfo *ai;

	memset(ss, 0, sizeof(*ss));
	if (getaddrinfo(s, NULL, &hints, &ai))
		return -1;
	if (ai->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(ai);
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	return 0;
}

bool peer_is_v6(const char *addr)
{
	return strchr(addr, ':');
}

int peer_rds_port(const char *addr)
{
	return peer_is_v6(addr) ? PEER_RDS_PORT6 : PEER_RDS_PORT;
}

int peer_connect(struct peer *p, const char *src, const char *dst, int port,
		 const void *pd, size_t len, int retries, int *reason)
{
	struct sockaddr_storage s, d;
	int i, ret = 1;

	if (peer_addr(src, 0, &s) || peer_addr(dst, port, &d) ||
	    s.ss_family != d.ss_family)
		return 1;
	p->v6 = d.ss_family == AF_INET6;
	for (i = 0; i <= retries; i++) {
		ret = peer_attempt(p, &s, &d, pd, len, reason);
		if (ret != 4)
			break;
		usleep(100000u << (i < 4 ? i : 4));
	}
	return ret == 4 ? 1 : ret;
}

int peer_connect_hs(struct peer *p, const char *src, const char *dst,
		    int retries)
{
	u8 buf[sizeof(struct rds_ib_hs_wire)];
	int reason = 0, r;

	p->tos = p->mine.tos;
	rds_ib_hs_encode(&p->mine, buf);
	r = peer_connect(p, src, dst, peer_rds_port(dst), buf, sizeof(buf),
			 retries, &reason);
	if (r == 3)
		peer_log(p, "refused: %s", rds_ib_hs_reason_name(reason));
	return r ? -1 : 0;
}

int peer_listen(struct peer *p, const char *addr, int port)
{
	struct sockaddr_storage sin;

	if (peer_addr(addr, port, &sin))
		return -1;
	p->v6 = sin.ss_family == AF_INET6;
	if (rdma_create_id(p->ec, &p->listen_id, NULL, RDMA_PS_TCP))
		return -1;
	if (rdma_bind_addr(p->listen_id, (struct sockaddr *)&sin) ||
	    rdma_listen(p->listen_id, 16)) {
		rdma_destroy_id(p->listen_id);
		p->listen_id = NULL;
		return -1;
	}
	return 0;
}

int peer_accept(struct peer *p, int tmo_ms)
{
	return peer_accept_pd(p, tmo_ms, NULL, 0);
}

int peer_accept_pd(struct peer *p, int tmo_ms, const void *pd, size_t len)
{
	u8 buf[RDS_IB_MLHS_V6_LEN];
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;
	u64 end = peer_deadline(tmo_ms);
	struct rdma_cm_id *id;
	int r;

	for (;;) {
		ev = p->pending;
		p->pending = NULL;
		if (!ev)
			ev = peer_cm_wait(p, (int)(end - peer_now_ms()));
		if (!ev)
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			id = ev->id;
			if (p->ml)
				r = peer_ml_request(p, ev->param.conn.private_data,
						    ev->param.conn.private_data_len) ?
				    RDS_IB_HS_R_VERSION : RDS_IB_HS_OK;
			else
				r = rds_ib_hs_decode(ev->param.conn.private_data,
						     ev->param.conn.private_data_len,
						     &p->theirs);
			/* In mainline mode a request it cannot speak (our
			 * module's own handshake over IPv6, say) is refused
			 * as rds_rdma refuses it: the int 1 (mlhs.h).  The
			 * module then sends the kernel's own request.
			 */
			if (r && p->ml) {
				peer_ml_refuse(p, ev);
				continue;
			}
			/* Another of the module's connections (one with
			 * queued congestion maps, say) is not ours to play
			 * with: refused, it tries again later.
			 */
			if (r || p->accept_tos < 0 ||
			    p->theirs.tos == p->accept_tos)
				break;
			peer_log(p, "request on TOS %u refused: not %d",
				 p->theirs.tos, p->accept_tos);
			rdma_ack_cm_event(ev);
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
			continue;
		}
		rdma_ack_cm_event(ev);
		if ((s64)(end - peer_now_ms()) <= 0)
			return -1;
	}
	rdma_ack_cm_event(ev);
	if (r) {
		peer_log(p, "request with a bad handshake: %s",
			 rds_ib_hs_reason_name(r));
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -1;
	}
	if (peer_qp_up(p, id)) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		p->id = NULL;
		return -1;
	}
	p->mine.tos = p->theirs.tos;
	p->tos = p->theirs.tos;
	if (p->theirs.minor < p->mine.minor)
		p->mine.minor = p->theirs.minor;
	if (p->ml && !pd) {
		pd = buf;
		len = peer_ml_accept_pd(p, buf);
	} else if (!pd) {
		rds_ib_hs_encode(&p->mine, buf);
		pd = buf;
		len = sizeof(struct rds_ib_hs_wire);
	}
	cp.private_data = pd;
	cp.private_data_len = len;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_accept(id, &cp))
		goto err;
	for (;;) {
		ev = peer_cm_wait(p, (int)(end - peer_now_ms()) + 5000);
		if (!ev)
			goto err;
		if (ev->id != id && peer_stash(p, ev))
			continue;
		r = ev->event;
		rdma_ack_cm_event(ev);
		if (r == RDMA_CM_EVENT_ESTABLISHED)
			break;
		if (r != RDMA_CM_EVENT_CONNECT_REQUEST)
			goto err;
	}
	peer_start(p);
	return 0;
err:
	peer_qp_down(p);
	rdma_destroy_id(id);
	p->id = NULL;
	return -1;
}

void peer_disconnect(struct peer *p)
{
	struct rdma_cm_event *ev;

	if (!p->id)
		return;
	if (!p->gone)
		rdma_disconnect(p->id);
	/* DISCONNECTED (ours or theirs), TIMEWAIT_EXIT: take what comes. */
	while ((ev = peer_cm_wait(p, p->gone ? 10 : 2000)) != NULL) {
		int e = ev->event;

		if (peer_stash(p, ev))
			continue;
		rdma_ack_cm_event(ev);
		if (e == RDMA_CM_EVENT_DISCONNECTED)
			break;
	}
	peer_qp_down(p);
	rdma_destroy_id(p->id);
	p->id = NULL;
	p->up = false;
	p->gone = true;
	while (p->qn)
		peer_msg_free(&p->q[--p->qn]);
	if (p->part_busy)
		free(p->part.data);
	p->part_busy = false;
}

void peer_fini(struct peer *p)
{
	peer_disconnect(p);
	if (p->pending) {
		struct rdma_cm_id *child = p->pending->id;

		rdma_reject(child, NULL, 0);
		rdma_ack_cm_event(p->pending);
		rdma_destroy_id(child);
		p->pending = NULL;
	}
	if (p->listen_id)
		rdma_destroy_id(p->listen_id);
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	free(p->rbuf);
	free(p->sbuf);
	free(p->q);
	memset(p, 0, sizeof(*p));
}

void peer_cm_events(struct peer *p)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(p->ec, &ev)) {
		int e = ev->event;
		bool ours = ev->id == p->id;

		if (peer_stash(p, ev))
			continue;
		rdma_ack_cm_event(ev);
		if (ours && (e == RDMA_CM_EVENT_DISCONNECTED ||
			     e == RDMA_CM_EVENT_DEVICE_REMOVAL ||
			     e == RDMA_CM_EVENT_TIMEWAIT_EXIT))
			peer_lost(p, rdma_event_str(e));
	}
}
