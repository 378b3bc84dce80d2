// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA (-D): every REQ exposes a buffer of -D bytes of the requester,
 * with an RDS_CMSG_RDMA_MAP cmsg (or RDS_GET_MR + RDS_CMSG_RDMA_DEST with
 * --rdma-use-get-mr 1); the responder learns the cookie from the
 * RDS_CMSG_RDMA_DEST cmsg of the REQ and sends its ACK with an
 * RDS_CMSG_RDMA_ARGS cmsg: an RDMA WRITE of a pattern into the
 * requester's buffer, or an RDMA READ of the requester's pattern into -I
 * local pieces (-M: 0 alternate by seq, 1 read, 2 write).
 *
 * Every byte is checked: after a WRITE the requester checks its buffer
 * when the ACK arrives (RDS performs the RDMA before the SEND carrying
 * the ACK); after a READ the responder checks its buffer when the
 * RDS_CMSG_RDMA_STATUS of the op (NOTIFY_ME) arrives; the requester also
 * checks that a READ left its buffer as it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rds_stress.h"

#define ST_ADD(t, f, v) \
	__atomic_store_n(&(t)->st.f, (t)->st.f + (v), __ATOMIC_RELAXED)

#define POISON	0xa5

static const char *const op_name[] = { "none", "READ", "WRITE" };

int rdma_op_for(const struct run *r, uint64_t seq)
{
	if (!r->o.rdma_bytes)
		return RDMA_OP_NONE;
	switch (r->o.rdma_mode) {
	case RDMA_READ_ONLY:
		return RDMA_OP_READ;
	case RDMA_WRITE_ONLY:
		return RDMA_OP_WRITE;
	default:
		return seq & 1 ? RDMA_OP_WRITE : RDMA_OP_READ;
	}
}

/* The RDMA data of REQ seq from requester task rq to responder task rs. */
static uint64_t rdma_seed(const struct run *r, int req_active,
			  unsigned int rq, unsigned int rs, int op,
			  uint64_t seq)
{
	return msg_seed(r, req_active, rq, rs, 16 + op, seq);
}

static const char *side(int active)
{
	return active ? "active" : "passive";
}

int rdma_setup(struct run *r, struct task *t)
{
	uint32_t n = r->o.depth + 2, d = r->o.rdma_bytes, pieces, k;
	size_t sz = ((size_t)d + 4095) & ~(size_t)4095;
	unsigned int j;

	if (!d)
		return 0;
	pieces = r->o.rdma_buffers;
	if (pieces > d)
		pieces = d;
	for (j = 0; j < r->o.tasks; j++) {
		struct flow *f = &t->flows[j];

		f->nslots = n;
		f->rq = calloc(n, sizeof(*f->rq));
		f->rs = calloc(n, sizeof(*f->rs));
		if (!f->rq || !f->rs)
			return -1;
		for (k = 0; k < n; k++) {
			uint32_t p, off = 0;

			f->rq[k].buf = aligned_alloc(4096, sz);
			f->rs[k].buf = aligned_alloc(4096, sz);
			f->rs[k].iov = calloc(pieces, sizeof(struct rds_iovec));
			if (!f->rq[k].buf || !f->rs[k].buf || !f->rs[k].iov)
				return -1;
			for (p = 0; p < pieces; p++) {
				uint32_t len = d / pieces + (p < d % pieces);

				f->rs[k].iov[p].addr =
					(uintptr_t)(f->rs[k].buf + off);
				f->rs[k].iov[p].bytes = len;
				off += len;
			}
		}
	}
	return 0;
}

void rdma_fail_send(struct task *t, const char *what, int err)
{
	struct run *r = t->run;

	if (err == EOPNOTSUPP || err == ENOPROTOOPT) {
		r->rdma_unsupported = 1;
		run_fail(r, "kernel RDS lacks RDMA support: %s: %s", what,
			 strerror(err));
	} else {
		run_fail(r, "task %u: %s: %s", t->idx, what, strerror(err));
	}
}

/*
 * With --rdma-use-get-mr 1: RDS_GET_MR on a small buffer, before the run.
 * (RDMA_MAP needs a connection: it is probed by the first REQ.)
 * Returns 1 when it works, 0 when the kernel lacks it, -1 on another error.
 */
int rdma_probe(struct run *r, struct task *t)
{
	struct rds_get_mr_args mr;
	struct rds_free_mr_args fr;
	uint64_t cookie = 0;
	void *b = aligned_alloc(4096, 4096);
	int rc;

	(void)r;
	if (!b) {
		fprintf(stderr, "rds-stress: out of memory\n");
		return -1;
	}
	memset(b, 0, 4096);
	memset(&mr, 0, sizeof(mr));
	mr.vec.addr = (uintptr_t)b;
	mr.vec.bytes = 4096;
	mr.cookie_addr = (uintptr_t)&cookie;
	rc = setsockopt(t->fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr));
	if (rc == 0) {
		memset(&fr, 0, sizeof(fr));
		fr.cookie = cookie;
		setsockopt(t->fd, SOL_RDS, RDS_FREE_MR, &fr, sizeof(fr));
		free(b);
		return 1;
	}
	rc = errno;
	free(b);
	if (rc == ENOPROTOOPT || rc == EOPNOTSUPP || rc == ENODEV) {
		fprintf(stderr,
			"rds-stress: kernel RDS lacks RDMA support: RDS_GET_MR on this socket's transport: %s%s\n",
			strerror(rc), rc == ENODEV ?
			" (no RDMA device serves this address yet)" : "");
		return 0;
	}
	fprintf(stderr, "rds-stress: RDMA probe (RDS_GET_MR): %s\n",
		strerror(rc));
	return -1;
}

static struct rslot *slot(struct rslot *s, const struct flow *f,
			  uint64_t seq)
{
	return &s[seq % f->nslots];
}

int rdma_req_cmsg(struct task *t, unsigned int j, uint64_t seq, void *ctl,
		  size_t len)
{
	struct run *r = t->run;
	struct flow *f = &t->flows[j];
	struct rslot *s = slot(f->rq, f, seq);
	int op = rdma_op_for(r, seq);
	uint32_t d = r->o.rdma_bytes;
	struct msghdr m = { .msg_control = ctl, .msg_controllen = len };
	struct cmsghdr *c;

	if (s->busy) {
		run_fail(r, "task %u: RDMA slot of REQ seq %llu still holds seq %llu",
			 t->idx, (unsigned long long)seq,
			 (unsigned long long)s->seq);
		return -1;
	}
	if (op == RDMA_OP_WRITE) {
		memset(s->buf, POISON, d);
	} else {
		pattern_fill(s->buf, d, rdma_seed(r, r->o.active, t->idx, j,
						  op, seq));
		if (r->corrupt.mode && !strcmp(r->corrupt.mode, "rdma-read") &&
		    !r->corrupt.done && t->idx == 0 && j == 0 &&
		    seq >= r->corrupt.seq) {
			r->corrupt.done = 1;
			r->corrupt.hit = seq;
			s->buf[d / 2] ^= 0x5a;
			fprintf(stderr,
				"rds-stress: RDS_STRESS_CORRUPT=rdma-read: corrupting the RDMA READ source of REQ seq %llu of flow %s.0->%s.0 at offset %u\n",
				(unsigned long long)seq, side(r->o.active),
				side(!r->o.active), d / 2);
		}
	}
	s->seq = seq;
	s->op = op;
	s->cookie = 0;
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_RDS;
	if (r->o.rdma_use_get_mr) {
		struct rds_get_mr_args mr = {
			.vec = { .addr = (uintptr_t)s->buf, .bytes = d },
			.cookie_addr = (uintptr_t)&s->cookie,
			.flags = r->o.rdma_use_once ? RDS_RDMA_USE_ONCE : 0,
		};

		if (setsockopt(t->fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr))) {
			/*
			 * The device's MR pool is exhausted (the socket is
			 * non-blocking): an ACK will free one; retry later.
			 */
			if (errno == EAGAIN) {
				ST_ADD(t, rdma_getmr_eagain, 1);
				return -EAGAIN;
			}
			rdma_fail_send(t, "RDS_GET_MR", errno);
			return -1;
		}
		c->cmsg_type = RDS_CMSG_RDMA_DEST;
		c->cmsg_len = CMSG_LEN(sizeof(uint64_t));
		memcpy(CMSG_DATA(c), &s->cookie, sizeof(uint64_t));
		return CMSG_SPACE(sizeof(uint64_t));
	}
	{
		struct rds_get_mr_args mr = {
			.vec = { .addr = (uintptr_t)s->buf, .bytes = d },
			.cookie_addr = (uintptr_t)&s->cookie,
			.flags = r->o.rdma_use_once ? RDS_RDMA_USE_ONCE : 0,
		};

		c->cmsg_type = RDS_CMSG_RDMA_MAP;
		c->cmsg_len = CMSG_LEN(sizeof(mr));
		memcpy(CMSG_DATA(c), &mr, sizeof(mr));
		return CMSG_SPACE(sizeof(mr));
	}
}

static void free_mr(struct task *t, uint64_t cookie)
{
	struct rds_free_mr_args fr = { .cookie = cookie };

	if (cookie)
		setsockopt(t->fd, SOL_RDS, RDS_FREE_MR, &fr, sizeof(fr));
}

/* The REQ was not sent (EAGAIN, ENOBUFS): undo what the cmsg did. */
void rdma_req_unsent(struct task *t, unsigned int j, uint64_t seq)
{
	struct flow *f = &t->flows[j];
	struct rslot *s = slot(f->rq, f, seq);

	if (t->run->o.rdma_use_get_mr)
		free_mr(t, s->cookie);
	s->cookie = 0;
}

/* The ACK of our REQ arrived: the RDMA on our buffer is over. */
int rdma_req_acked(struct task *t, unsigned int j, const struct msg_hdr *h)
{
	struct run *r = t->run;
	struct flow *f = &t->flows[j];
	struct rslot *s = slot(f->rq, f, h->seq);
	uint32_t d = r->o.rdma_bytes;
	uint8_t want = 0, got = 0;
	long off;

	if (!d)
		return 0;
	if (s->seq != h->seq || s->op != h->rdma_op) {
		run_fail(r, "task %u: ACK seq %llu: RDMA slot holds seq %llu op %s",
			 t->idx, (unsigned long long)h->seq,
			 (unsigned long long)s->seq, op_name[s->op]);
		return -1;
	}
	/* The rdma-read hook spoilt this READ's source: the peer must say so. */
	if (s->op == RDMA_OP_READ && r->corrupt.mode && r->corrupt.done &&
	    r->corrupt.hit == h->seq && !t->idx && !j)
		off = -1;
	else
		off = pattern_find(s->buf, d,
				   rdma_seed(r, r->o.active, t->idx, j, s->op,
					     h->seq), &want, &got);
	if (off >= 0) {
		run_fail(r, "task %u: RDMA %s of REQ seq %llu of flow %s.%u->%s.%u: %s at offset %ld of %u: expected 0x%02x, arrived 0x%02x%s",
			 t->idx, op_name[s->op], (unsigned long long)h->seq,
			 side(r->o.active), t->idx, side(!r->o.active), j,
			 s->op == RDMA_OP_WRITE ? "written data wrong" :
			 "the READ changed our buffer",
			 off, d, want, got,
			 s->op == RDMA_OP_WRITE && got == POISON ?
			 " (not written)" : "");
		return -1;
	}
	if (s->op == RDMA_OP_WRITE)
		ST_ADD(t, mbi, d);
	else
		ST_ADD(t, mbo, d);
	if (!r->o.rdma_use_once)
		free_mr(t, s->cookie);
	s->cookie = 0;
	return 0;
}

static uint64_t token(unsigned int j, uint64_t seq)
{
	return (uint64_t)j << 48 | (seq & ((1ULL << 48) - 1));
}

int rdma_ack_cmsg(struct task *t, unsigned int j, const struct ackq_ent *e,
		  void *ctl, size_t len)
{
	struct run *r = t->run;
	struct flow *f = &t->flows[j];
	struct rslot *s = slot(f->rs, f, e->seq);
	uint32_t d = r->o.rdma_bytes;
	struct msghdr m = { .msg_control = ctl, .msg_controllen = len };
	struct cmsghdr *c;
	struct rds_rdma_args a;

	if (s->busy)
		return -EBUSY;
	if (e->rdma_op == RDMA_OP_WRITE) {
		pattern_fill(s->buf, d, rdma_seed(r, !r->o.active, j, t->idx,
						  e->rdma_op, e->seq));
		if (r->corrupt.mode && !strcmp(r->corrupt.mode, "rdma-write") &&
		    !r->corrupt.done && t->idx == 0 && j == 0 &&
		    e->seq >= r->corrupt.seq) {
			r->corrupt.done = 1;
			s->buf[d / 2] ^= 0x5a;
			fprintf(stderr,
				"rds-stress: RDS_STRESS_CORRUPT=rdma-write: corrupting the RDMA WRITE for REQ seq %llu of flow %s.0->%s.0 at offset %u\n",
				(unsigned long long)e->seq, side(!r->o.active),
				side(r->o.active), d / 2);
		}
	} else {
		memset(s->buf, POISON, d);
	}
	memset(&a, 0, sizeof(a));
	a.cookie = e->cookie;
	a.remote_vec.addr = 0;
	a.remote_vec.bytes = d;
	a.local_vec_addr = (uintptr_t)s->iov;
	a.nr_local = r->o.rdma_buffers < d ? r->o.rdma_buffers : d;
	a.flags = RDS_RDMA_NOTIFY_ME;
	if (e->rdma_op == RDMA_OP_WRITE)
		a.flags |= RDS_RDMA_READWRITE;
	else if (r->o.rdma_use_fence)
		a.flags |= RDS_RDMA_FENCE;
	a.user_token = token(j, e->seq);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(a));
	memcpy(CMSG_DATA(c), &a, sizeof(a));
	return CMSG_SPACE(sizeof(a));
}

void rdma_ack_sent(struct task *t, unsigned int j, const struct ackq_ent *e)
{
	struct flow *f = &t->flows[j];
	struct rslot *s = slot(f->rs, f, e->seq);

	s->busy = 1;
	s->seq = e->seq;
	s->op = e->rdma_op;
	s->cookie = e->cookie;
	s->ts_ns = e->ts_ns;
	ST_ADD(t, rdma_ops, 1);
}

/*
 * RDS dropped our ACK with its op (RDS_RDMA_DROPPED: the connection was
 * lost after the op was posted, and a posted op is never posted again):
 * the requester never saw this ACK.  Send it again, first, with a new op;
 * the requester accepts it after the ACKs that overtook it.
 */
static int rdma_resend(struct task *t, struct rslot *s, unsigned int j)
{
	struct flow *f = &t->flows[j];

	if (f->ackq_len == f->ackq_cap) {
		run_fail(t->run, "task %u: no room to resend the ACK of seq %llu to task %u",
			 t->idx, (unsigned long long)s->seq, j);
		return -1;
	}
	f->ackq_head = (f->ackq_head + f->ackq_cap - 1) % f->ackq_cap;
	f->ackq[f->ackq_head] = (struct ackq_ent){
		.seq = s->seq, .ts_ns = s->ts_ns, .cookie = s->cookie,
		.rdma_op = s->op,
	};
	f->ackq_len++;
	s->busy = 0;
	ST_ADD(t, rdma_dropped, 1);
	/* tx_ack counts the ACKs the peer gets: this one it did not */
	ST_ADD(t, tx_ack, -1);
	return 0;
}

/* RDS_CMSG_RDMA_STATUS of one of our ops as responder. */
int rdma_status(struct task *t, const struct rds_rdma_notify *n)
{
	static const char *const st[] = {
		"SUCCESS", "REMOTE_ERROR", "CANCELED", "DROPPED", "OTHER_ERROR",
	};
	struct run *r = t->run;
	unsigned int j = n->user_token >> 48;
	uint64_t seq = n->user_token & ((1ULL << 48) - 1);
	uint32_t d = r->o.rdma_bytes;
	struct flow *f;
	struct rslot *s;
	uint8_t want = 0, got = 0;
	long off;

	if (!d || j >= r->o.tasks) {
		run_fail(r, "task %u: RDMA status for an unknown op (token %016llx)",
			 t->idx, (unsigned long long)n->user_token);
		return -1;
	}
	f = &t->flows[j];
	s = slot(f->rs, f, seq);
	if (!s->busy || (s->seq & ((1ULL << 48) - 1)) != seq) {
		run_fail(r, "task %u: RDMA status for seq %llu of task %u, which is not in flight",
			 t->idx, (unsigned long long)seq, j);
		return -1;
	}
	if (n->status == RDS_RDMA_DROPPED)
		return rdma_resend(t, s, j);
	if (n->status) {
		run_fail(r, "task %u: RDMA %s for REQ seq %llu of flow %s.%u->%s.%u: status %d (%s)",
			 t->idx, op_name[s->op], (unsigned long long)s->seq,
			 side(!r->o.active), j, side(r->o.active), t->idx,
			 n->status, n->status >= 0 && n->status <= 4 ?
			 st[n->status] : "?");
		return -1;
	}
	if (s->op == RDMA_OP_READ) {
		off = pattern_find(s->buf, d, rdma_seed(r, !r->o.active, j,
							t->idx, s->op, s->seq),
				   &want, &got);
		if (off >= 0) {
			run_fail(r, "task %u: RDMA READ for REQ seq %llu of flow %s.%u->%s.%u: data read wrong at offset %ld of %u: expected 0x%02x, arrived 0x%02x%s",
				 t->idx, (unsigned long long)s->seq,
				 side(!r->o.active), j, side(r->o.active),
				 t->idx, off, d, want, got,
				 got == POISON ? " (not read yet)" : "");
			return -1;
		}
		ST_ADD(t, mbi, d);
	} else {
		ST_ADD(t, mbo, d);
	}
	s->busy = 0;
	return 0;
}

unsigned int rdma_busy(const struct task *t)
{
	const struct run *r = t->run;
	unsigned int j, k, n = 0;

	if (!r->o.rdma_bytes)
		return 0;
	for (j = 0; j < r->o.tasks; j++)
		for (k = 0; k < t->flows[j].nslots; k++)
			n += t->flows[j].rs[k].busy;
	return n;
}
