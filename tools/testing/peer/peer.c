// SPDX-License-Identifier: GPL-2.0
/*
 * libpeer (see peer.h): frames and messages, sent and received; the
 * connections are in peer_cm.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "peer_int.h"

#define PEER_WR_RDMA	(~0ull)	/* wr_id of our one-sided op */

_Static_assert(sizeof(struct rds_header) == RDS_IB_HDR_LEN, "header size");
_Static_assert(offsetof(struct rds_header, h_ack) == RDS_IB_HDR_ACK, "h_ack");
_Static_assert(offsetof(struct rds_header, h_len) == RDS_IB_HDR_LENGTH, "h_len");
_Static_assert(offsetof(struct rds_header, h_flags) == RDS_IB_HDR_FLAGS, "h_flags");
_Static_assert(offsetof(struct rds_header, h_credit) == RDS_IB_HDR_CREDIT, "h_credit");
_Static_assert(offsetof(struct rds_header, h_csum) == 30, "h_csum");

u64 peer_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The harness's time scale (RDS_TIME_SCALE, run-tests --time-scale): a
 * debug kernel under emulation runs many times slower, and every wait
 * for the module stretches by it.
 */
unsigned int peer_time_scale(void)
{
	static unsigned int scale;
	const char *s;

	if (!scale) {
		s = getenv("RDS_TIME_SCALE");
		scale = s ? (unsigned int)strtoul(s, NULL, 10) : 1;
		if (scale < 1 || scale > 100)
			scale = 1;
	}
	return scale;
}

/* When a wait of ms milliseconds for the module ends. */
u64 peer_deadline(u64 ms)
{
	return peer_now_ms() + ms * peer_time_scale();
}

void peer_log(struct peer *p, const char *fmt, ...)
{
	va_list ap;

	if (p && p->quiet)
		return;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}


/* The ACK we put on the wire: frozen while we withhold ACKs. */
u64 peer_ack_value(struct peer *p)
{
	return p->no_ack ? p->ack_sent : p->rx_last;
}

u16 peer_csum(const struct rds_header *h)
{
	struct rds_header t = *h;
	const u16 *w = (const u16 *)&t;
	u32 sum = 0;
	unsigned int i;

	t.h_csum = 0;
	for (i = 0; i < sizeof(t) / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

void peer_hdr_fill(struct peer *p, struct rds_header *h, u64 seq, u32 len,
		   u16 sport, u16 dport, u8 flags)
{
	memset(h, 0, sizeof(*h));
	h->h_sequence = cpu_to_be64(seq);
	h->h_ack = cpu_to_be64(peer_ack_value(p));
	h->h_len = cpu_to_be32(len);
	h->h_sport = cpu_to_be16(sport);
	h->h_dport = cpu_to_be16(dport);
	h->h_flags = flags;
}


void peer_lost(struct peer *p, const char *why)
{
	if (!p->gone)
		peer_log(p, "connection gone: %s", why);
	p->gone = true;
	p->up = false;
	p->gone_why = why;
}

/* Reap send completions; -1 on an error completion. */
static int peer_reap_tx(struct peer *p)
{
	struct ibv_wc wc[16];
	int n, i, ret = 0;

	if (!p->scq)
		return -1;
	while ((n = ibv_poll_cq(p->scq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			p->tx_busy--;
			if (wc[i].wr_id == PEER_WR_RDMA) {
				p->rdma_status = wc[i].status;
				p->rdma_busy = false;
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				peer_lost(p, ibv_wc_status_str(wc[i].status));
				ret = -1;
			}
		}
	}
	return ret;
}


int peer_send_drain(struct peer *p, int tmo_ms)
{
	u64 end = peer_deadline(tmo_ms);
	int ret = 0;

	while (p->tx_busy) {
		if (peer_reap_tx(p))
			ret = -1;
		if (!p->tx_busy)
			break;
		/* A reset by the module: our SENDs would be retried for ever
		 * (retry count 7), the CM says the connection is gone.
		 */
		peer_cm_events(p);
		if (p->gone || (s64)(end - peer_now_ms()) <= 0)
			return -1;
		usleep(100);
	}
	return ret;
}

static int peer_post(struct peer *p, const struct rds_header *hdr, u32 hlen,
		     const void *data, u32 len, bool wait)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	u8 *slot;

	if (!p->id || !p->id->qp || p->gone || len > PEER_SLOT - RDS_IB_HDR_LEN)
		return -1;
	peer_reap_tx(p);
	while (p->tx_busy >= p->ntx) {
		if (peer_send_drain(p, 10000))
			return -1;
	}
	slot = p->sbuf + (size_t)p->tx_head * PEER_SLOT;
	memcpy(slot, hdr, hlen);
	if (len)
		memcpy(slot + hlen, data, len);
	sge.addr = (uintptr_t)slot;
	sge.length = hlen + len;
	sge.lkey = p->smr->lkey;
	wr.wr_id = p->tx_head;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return -1;
	p->tx_head = (p->tx_head + 1) % p->ntx;
	p->tx_busy++;
	p->st.tx_frames++;
	return wait ? peer_send_drain(p, 20000) : 0;
}

struct ibv_mr *peer_reg_mr(struct peer *p, void *buf, size_t len, u64 iova,
			   int access)
{
	if (!p->pd)
		return NULL;
	if (iova == PEER_NO_IOVA)
		return ibv_reg_mr(p->pd, buf, len, access);
	return ibv_reg_mr_iova(p->pd, buf, len, iova, access);
}

int peer_rdma(struct peer *p, bool write, struct ibv_mr *mr, void *local,
	      u32 len, u32 rkey, u64 addr, int tmo_ms)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = len, .lkey = mr->lkey,
	};
	u64 end = peer_deadline(tmo_ms);

	if (!p->id || !p->id->qp || p->gone || p->rdma_busy)
		return -1;
	peer_reap_tx(p);
	if (p->tx_busy >= p->ntx && peer_send_drain(p, 10000))
		return -1;
	wr.wr_id = PEER_WR_RDMA;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return -1;
	p->tx_busy++;
	p->rdma_busy = true;
	while (p->rdma_busy && (s64)(end - peer_now_ms()) > 0) {
		if (peer_poll(p, 20, false) < 0) {
			/* Gone: the completion (its error or a flush) still
			 * comes on the send queue.
			 */
			peer_reap_tx(p);
			if (p->rdma_busy)
				usleep(1000);
		}
	}
	if (p->rdma_busy)
		return -1;
	return p->rdma_status;
}

int peer_send_frame(struct peer *p, const struct rds_header *hdr,
		    const void *data, u32 len, bool wait)
{
	return peer_post(p, hdr, RDS_IB_HDR_LEN, data, len, wait);
}

int peer_send_bytes(struct peer *p, const void *buf, u32 len, bool wait)
{
	if (len > RDS_IB_HDR_LEN)
		return -1;
	return peer_post(p, buf, len, NULL, 0, wait);
}

/* The grant a frame we send carries: what we refilled, unless withheld. */
static u8 peer_take_grant_ctrl(struct peer *p)
{
	u8 g = 0;

	if (!p->withhold) {
		rds_ib_credit_take_ctrl(&p->cr, &g);
		rds_ib_credit_ctrl_done(&p->cr);
	}
	return g;
}

int peer_send_ctrl(struct peer *p, u8 flags)
{
	struct rds_header h;

	if (p->ml)
		return peer_ml_send_ack(p);

	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL | flags);
	h.h_credit = peer_take_grant_ctrl(p);
	h.h_csum = peer_csum(&h);
	p->ack_sent = peer_ack_value(p);
	p->st.tx_ctrl++;
	return peer_send_frame(p, &h, NULL, 0, true);
}

int peer_release_credits(struct peer *p)
{
	p->withhold = false;
	rds_ib_credit_refilled(&p->cr, p->inflight);
	p->inflight = 0;
	return peer_send_ctrl(p, 0);
}

static int peer_take_credit(struct peer *p, u8 *grant, int tmo_ms)
{
	u64 end = peer_deadline(tmo_ms);

	for (;;) {
		if (p->gone)
			return -1;
		if (p->withhold && p->cr.avail) {
			p->cr.avail--;
			*grant = 0;
			return 0;
		}
		if (!p->withhold && rds_ib_credit_take(&p->cr, grant))
			return 0;
		if ((s64)(end - peer_now_ms()) <= 0)
			return -1;
		if (peer_poll(p, (int)(end - peer_now_ms()), false) < 0)
			return -1;
	}
}

int peer_send_data(struct peer *p, struct rds_header *h, const void *data,
		   u32 len, int tmo_ms)
{
	u8 g;

	if (peer_take_credit(p, &g, tmo_ms))
		return -1;
	h->h_ack = cpu_to_be64(peer_ack_value(p));
	h->h_credit = g;
	h->h_csum = peer_csum(h);
	p->ack_sent = peer_ack_value(p);
	return peer_send_frame(p, h, data, len, false);
}

int peer_send_msg(struct peer *p, u16 sport, u16 dport, u8 flags,
		  const void *data, u32 len, int tmo_ms)
{
	return peer_send_msg_at(p, p->tx_next, sport, dport, flags, data, len,
				tmo_ms);
}

int peer_send_msg_at(struct peer *p, u64 seq, u16 sport, u16 dport, u8 flags,
		     const void *data, u32 len, int tmo_ms)
{
	const u8 *d = data;
	struct rds_header h;
	u32 off = 0;

	if (!rds_seq_before(seq, p->tx_next))
		p->tx_next = seq + 1;
	do {
		u32 n = len - off < PEER_FRAG ? len - off : PEER_FRAG;

		peer_hdr_fill(p, &h, seq, len, sport, dport, flags);
		if (peer_send_data(p, &h, d + off, n, tmo_ms))
			return -1;
		off += n;
	} while (off < len);
	p->st.tx_msgs++;
	return 0;
}

int peer_send_packed(struct peer *p, u16 sport, u16 dport, unsigned int n,
		     const u8 *const *data, const u32 *lens, int tmo_ms)
{
	u8 frame[PEER_FRAG];
	struct rds_header h, in;
	u32 used = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		u64 seq = p->tx_next++;

		if (!rds_ib_pack_fits(used, i, lens[i], PEER_FRAG, n))
			return -1;
		if (!i) {
			peer_hdr_fill(p, &h, seq, lens[0], sport, dport,
				      RDS_IB_FLAG_PACK);
			memcpy(frame, data[0], lens[0]);
			used = lens[0];
			continue;
		}
		peer_hdr_fill(p, &in, seq, lens[i], sport, dport, 0);
		in.h_ack = 0;
		in.h_csum = peer_csum(&in);
		memcpy(frame + used, &in, sizeof(in));
		memcpy(frame + used + sizeof(in), data[i], lens[i]);
		used += rds_ib_pack_cost(i, lens[i]);
	}
	p->st.tx_msgs += n;
	return peer_send_data(p, &h, frame, used, tmo_ms);
}

void peer_queue(struct peer *p, struct peer_msg *m)
{
	if (p->qn == p->qcap) {
		p->qcap = p->qcap ? 2 * p->qcap : 64;
		p->q = realloc(p->q, p->qcap * sizeof(*p->q));
		if (!p->q)
			abort();
	}
	p->q[p->qn++] = *m;
}

/* A whole message from the module. */
static void peer_deliver(struct peer *p, struct peer_msg *m)
{
	m->seq = be64_to_cpu(m->hdr.h_sequence);
	m->len = be32_to_cpu(m->hdr.h_len);
	m->sport = be16_to_cpu(m->hdr.h_sport);
	m->dport = be16_to_cpu(m->hdr.h_dport);
	m->flags = m->hdr.h_flags;
	p->st.msgs++;
	if (m->flags & RDS_FLAG_RETRANSMITTED)
		p->st.retrans_msgs++;
	if (m->flags & RDS_FLAG_CONG_BITMAP)
		p->st.cong_maps++;
	p->rx_last = m->seq;
	if (m->flags & RDS_FLAG_ACK_REQUIRED) {
		p->st.ack_req++;
		if (!p->no_ack)
			peer_send_ctrl(p, 0);
	}
	peer_queue(p, m);
}

static void peer_whole(struct peer *p, const struct rds_header *h,
		       const u8 *data, u32 len)
{
	struct peer_msg m = { .hdr = *h };

	m.data = malloc(len ? len : 1);
	if (!m.data)
		abort();
	memcpy(m.data, data, len);
	peer_deliver(p, &m);
}

void peer_bad(struct peer *p, const char *why)
{
	peer_log(p, "VIOLATION by the module: %s", why);
	p->st.violations++;
}

bool peer_frame_head(struct peer *p, const u8 *b, u32 len,
		     struct rds_header *h, u32 *dlen)
{
	if (len < RDS_IB_HDR_LEN) {
		peer_bad(p, "short frame");
		return false;
	}
	memcpy(h, b, sizeof(*h));
	*dlen = len - RDS_IB_HDR_LEN;
	if (h->h_csum != peer_csum(h)) {
		p->st.bad_csum++;
		peer_bad(p, "header checksum");
	}
	return true;
}

void peer_ack_take(struct peer *p, const struct rds_header *h)
{
	u64 ack = be64_to_cpu(h->h_ack);

	if (p->ack_seen_valid && rds_seq_before(ack, p->ack_seen)) {
		p->st.ack_back++;
		peer_log(p, "module ACK went back from %llu to %llu",
			 (unsigned long long)p->ack_seen,
			 (unsigned long long)ack);
	}
	p->ack_seen = ack;
	p->ack_seen_valid = true;
}

enum peer_part peer_part_add(struct peer *p, const struct rds_header *h,
			     const u8 *data, u32 dlen, struct peer_msg *m)
{
	u32 hlen = be32_to_cpu(h->h_len);

	if (!p->part_busy) {
		if (hlen > PEER_MAX_MSG) {
			peer_bad(p, "message too long");
			return PEER_PART_BAD;
		}
		p->part.hdr = *h;
		p->part.data = malloc(hlen ? hlen : 1);
		if (!p->part.data)
			abort();
		p->part.frags = 0;
		p->part_off = 0;
		p->part_busy = true;
	} else if (p->part.hdr.h_sequence != h->h_sequence ||
		   p->part.hdr.h_len != h->h_len ||
		   p->part.hdr.h_sport != h->h_sport ||
		   p->part.hdr.h_dport != h->h_dport) {
		peer_bad(p, "fragment of another message");
		free(p->part.data);
		p->part_busy = false;
		return PEER_PART_BAD;
	}
	/* Every fragment but the last is 4 KiB. */
	if (dlen != (hlen - p->part_off < PEER_FRAG ? hlen - p->part_off :
		     PEER_FRAG)) {
		peer_bad(p, "fragment length");
		free(p->part.data);
		p->part_busy = false;
		return PEER_PART_BAD_LEN;
	}
	memcpy(p->part.data + p->part_off, data, dlen);
	p->part_off += dlen;
	p->part.frags++;
	if (p->part_off < hlen)
		return PEER_PART_MORE;
	memset(m, 0, sizeof(*m));
	m->hdr = p->part.hdr;
	m->data = p->part.data;
	m->frags = p->part.frags;
	p->part_busy = false;
	return PEER_PART_DONE;
}

/* One frame of the module (idx: its receive buffer, len: bytes). */
static void peer_frame(struct peer *p, unsigned int idx, u32 len)
{
	u8 *b = p->rbuf + (size_t)idx * PEER_BUF;
	struct peer_msg m;
	struct rds_header h;
	u32 dlen, hlen;
	bool ctrl;

	p->st.frames++;
	if (p->ml) {
		peer_ml_frame(p, b, len);
		goto repost;
	}
	if (!peer_frame_head(p, b, len, &h, &dlen))
		goto repost;
	hlen = be32_to_cpu(h.h_len);
	ctrl = h.h_flags & RDS_IB_FLAG_CTRL;
	if (!rds_ib_credit_recv(&p->cr, !ctrl, h.h_credit, p->theirs.credits))
		peer_bad(p, ctrl ? "grant beyond its handshake" :
				   "data frame without a credit");
	p->st.grants += h.h_credit;
	peer_ack_take(p, &h);
	if (ctrl) {
		p->st.ctrl_frames++;
		if (dlen || hlen)
			peer_bad(p, "control frame with data");
		if ((h.h_flags & RDS_IB_FLAG_HB) && !p->no_hb) {
			p->st.hb_asked++;
			peer_send_ctrl(p, 0);
		}
		goto repost;
	}
	p->st.data_frames++;
	p->inflight++;
	if (p->inflight > p->st.inflight_peak)
		p->st.inflight_peak = p->inflight;
	if (h.h_flags & RDS_IB_FLAG_PACK) {
		u32 off, hoff, l;
		enum rds_ib_frame_err e;
		struct rds_header in;

		p->st.packed_frames++;
		e = rds_ib_pack_first(hlen, h.h_flags, dlen);
		if (e || p->part_busy) {
			peer_bad(p, e ? rds_ib_frame_err_name(e) :
				 "packed frame inside a message");
			goto refill;
		}
		peer_whole(p, &h, b + RDS_IB_HDR_LEN, hlen);
		for (off = hlen; off < dlen; ) {
			e = rds_ib_pack_next(b + RDS_IB_HDR_LEN, dlen, &off,
					     &hoff, &l);
			if (e) {
				peer_bad(p, rds_ib_frame_err_name(e));
				break;
			}
			memcpy(&in, b + RDS_IB_HDR_LEN + hoff, sizeof(in));
			if (in.h_csum != peer_csum(&in)) {
				p->st.bad_csum++;
				peer_bad(p, "packed header checksum");
			}
			peer_whole(p, &in, b + RDS_IB_HDR_LEN + hoff +
				   sizeof(in), l);
		}
		goto refill;
	}
	if (peer_part_add(p, &h, b + RDS_IB_HDR_LEN, dlen, &m) ==
	    PEER_PART_DONE)
		peer_deliver(p, &m);
refill:
	if (!p->withhold) {
		rds_ib_credit_refilled(&p->cr, 1);
		p->inflight--;
	}
repost:
	if (peer_post_recv(p, idx))
		peer_lost(p, "cannot repost a receive");
}

/* Drain the receive CQ; returns frames taken, -1 gone. */
static int peer_reap_rx(struct peer *p)
{
	struct ibv_wc wc[16];
	int n, i, got = 0;

	if (!p->rcq)
		return -1;
	while ((n = ibv_poll_cq(p->rcq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				peer_lost(p, ibv_wc_status_str(wc[i].status));
				continue;
			}
			peer_frame(p, wc[i].wr_id, wc[i].byte_len);
			got++;
		}
	}
	return got;
}


int peer_poll(struct peer *p, int tmo_ms, bool want_msg)
{
	u64 end = peer_deadline(tmo_ms > 0 ? tmo_ms : 0);
	int any = 0;

	for (;;) {
		struct pollfd pf[2];
		struct ibv_cq *cq;
		void *ctx;
		int n;
		s64 left;

		n = peer_reap_rx(p);
		if (n > 0)
			any = 1;
		peer_reap_tx(p);
		/* Grouped: one ACK for what this batch delivered; in
		 * mainline mode only when a message asked for it.
		 */
		if (p->ml) {
			if (!p->gone && !p->no_ack && p->ml_ack_asked)
				peer_ml_send_ack(p);
		} else if (!p->gone && !p->no_ack && p->rx_last != p->ack_sent)
			peer_send_ctrl(p, 0);
		else if (!p->gone && !p->withhold &&
			 rds_ib_credit_want_update(&p->cr, p->grant0 / 2 ?: 1))
			peer_send_ctrl(p, 0);
		peer_cm_events(p);
		if (p->gone)
			return -1;
		if (want_msg ? p->qn > 0 : any)
			return 1;
		left = (s64)(end - peer_now_ms());
		if (left <= 0)
			return 0;
		ibv_req_notify_cq(p->rcq, 0);
		if (peer_reap_rx(p) > 0) {
			any = 1;
			continue;
		}
		pf[0].fd = p->ch->fd;
		pf[0].events = POLLIN;
		pf[1].fd = p->ec->fd;
		pf[1].events = POLLIN;
		poll(pf, 2, (int)(left < 50 ? left : 50));
		if (!ibv_get_cq_event(p->ch, &cq, &ctx))
			ibv_ack_cq_events(cq, 1);
	}
}

int peer_recv_msg(struct peer *p, struct peer_msg *m, int tmo_ms)
{
	u64 end = peer_deadline(tmo_ms);

	while (!p->qn) {
		s64 left = (s64)(end - peer_now_ms());

		if (left <= 0 || peer_poll(p, (int)left, true) < 0)
			break;
	}
	if (!p->qn)
		return -1;
	*m = p->q[0];
	memmove(p->q, p->q + 1, --p->qn * sizeof(*p->q));
	return 0;
}

void peer_msg_free(struct peer_msg *m)
{
	free(m->data);
	m->data = NULL;
}

int peer_wait_gone(struct peer *p, int tmo_ms)
{
	u64 end = peer_deadline(tmo_ms);

	while (!p->gone) {
		s64 left = (s64)(end - peer_now_ms());

		if (left <= 0)
			return -1;
		peer_poll(p, (int)left, false);
		/* Keep the queue from growing while we wait. */
		while (p->qn)
			peer_msg_free(&p->q[--p->qn]);
	}
	return 0;
}
