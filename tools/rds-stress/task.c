// SPDX-License-Identifier: GPL-2.0
/*
 * One task: an RDS socket bound to port+1+idx that sends requests to every
 * remote task (depth outstanding per flow), answers the requests it gets
 * with acks, and checks everything that arrives.
 *
 * The socket is non-blocking and driven by poll(), as RDS applications
 * do: EAGAIN (send buffer full) waits for POLLOUT; ENOBUFS (destination
 * port congested) marks that destination until an RDS_CMSG_CONG_UPDATE
 * for its port arrives (RDS_CONG_MONITOR), or, without the monitor, until
 * the next wakeup.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/rds.h>

#include "rds_stress.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

#define ST_ADD(t, f, v) \
	__atomic_store_n(&(t)->st.f, (t)->st.f + (v), __ATOMIC_RELAXED)

/* Without RDS_CONG_MONITOR (or if an update never comes): retry after. */
#define CONG_RETRY_NOMON_NS	(10ULL * 1000000)
#define CONG_RETRY_MON_NS	(1000ULL * 1000000)

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void run_fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->lock);
	if (!r->failed) {
		va_start(ap, fmt);
		vsnprintf(r->fail_msg, sizeof(r->fail_msg), fmt, ap);
		va_end(ap);
		fprintf(stderr, "rds-stress: %s\n", r->fail_msg);
		__atomic_store_n(&r->failed, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&r->lock);
}

static const char *side(int active)
{
	return active ? "active" : "passive";
}

/* The RDS port of socket sock of task task. */
static unsigned int port_of(const struct run *r, unsigned int task,
			    unsigned int sock)
{
	return r->o.port + 1 + task * r->o.sockets + sock;
}

static socklen_t sin_of(const struct run *r, struct sockaddr_storage *s,
			const struct rs_addr *a, unsigned int task,
			unsigned int sock)
{
	return addr_sockaddr(a, port_of(r, task, sock), s);
}

/*
 * Sets a socket buffer and reads back what the kernel made of it (twice
 * the value asked, when it took it); says so when it took less.
 */
static int set_buf(int fd, int force, int name, const char *what, int want)
{
	int got = 0;
	socklen_t l = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, force, &want, sizeof(want)))
		setsockopt(fd, SOL_SOCKET, name, &want, sizeof(want));
	if (getsockopt(fd, SOL_SOCKET, name, &got, &l))
		return 0;
	if (what && got / 2 < want)
		fprintf(stderr,
			"rds-stress: %s: asked for %d, the kernel set %d (without CAP_NET_ADMIN, net.core.%s caps it)\n",
			what, want, got, name == SO_SNDBUF ? "wmem_max" :
			"rmem_max");
	return got;
}

/* Opens, binds and sets up socket k of task t; returns its fd or -1. */
static int open_socket(struct run *r, struct task *t, unsigned int k,
		       int buf)
{
	struct sockaddr_storage sin;
	char a[ADDR_STRLEN];
	int sbuf, rbuf, one = 1, fd, warn = t->idx == 0 && k == 0;
	socklen_t sl;

	addr_str(&r->local, a, sizeof(a));
	t->fds[k] = fd = socket(AF_RDS, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		if (errno == EAFNOSUPPORT)
			fprintf(stderr,
				"rds-stress: AF_RDS not available: load the rds module (socket: %s)\n",
				strerror(errno));
		else
			fprintf(stderr, "rds-stress: socket(AF_RDS): %s\n",
				strerror(errno));
		return -1;
	}
	if (r->o.transport >= 0 &&
	    setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &r->o.transport,
		       sizeof(r->o.transport)) < 0) {
		fprintf(stderr,
			"rds-stress: cannot pin the RDS transport to %s: %s%s\n",
			r->o.transport ? "tcp" : "ib", strerror(errno),
			errno == ENOPROTOOPT ?
			" (is its module, rds_tcp or rds_rdma, loaded?)" : "");
		return -1;
	}
	sl = sin_of(r, &sin, &r->local, t->idx, k);
	if (bind(fd, (struct sockaddr *)&sin, sl) < 0) {
		int e = errno;

		if (e == EADDRNOTAVAIL)
			fprintf(stderr,
				"rds-stress: cannot bind RDS socket to %s:%u: address not local, or no RDS transport (rds_rdma, rds_tcp) can use it\n",
				a, port_of(r, t->idx, k));
		else if (e == EADDRINUSE)
			fprintf(stderr,
				"rds-stress: RDS port %s:%u is in use (another rds-stress? use -p)\n",
				a, port_of(r, t->idx, k));
		else if (e == ENOPROTOOPT)
			fprintf(stderr,
				"rds-stress: cannot bind RDS socket to %s:%u: the pinned transport cannot use this address\n",
				a, port_of(r, t->idx, k));
		else
			fprintf(stderr,
				"rds-stress: cannot bind RDS socket to %s:%u: %s\n",
				a, port_of(r, t->idx, k), strerror(e));
		return -1;
	}
	sbuf = r->o.sndbuf ? (int)r->o.sndbuf : buf;
	rbuf = r->o.rcvbuf ? (int)r->o.rcvbuf : buf;
	sbuf = set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, warn ? "SO_SNDBUF" : NULL,
		       sbuf);
	rbuf = set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, warn ? "SO_RCVBUF" : NULL,
		       rbuf);
	if (warn) {
		r->o.eff_sndbuf = sbuf;
		r->o.eff_rcvbuf = rbuf;
	}
	if (r->o.tos) {
		uint8_t tos = r->o.tos;

		if (ioctl(fd, SIOCRDSSETTOS, &tos) < 0) {
			fprintf(stderr, "rds-stress: SIOCRDSSETTOS %u: %s\n",
				tos, strerror(errno));
			return -1;
		}
	}
	if (r->o.cong_monitor &&
	    setsockopt(fd, SOL_RDS, RDS_CONG_MONITOR, &one,
		       sizeof(one)) < 0) {
		fprintf(stderr, "rds-stress: RDS_CONG_MONITOR: %s\n",
			strerror(errno));
		return -1;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		fprintf(stderr, "rds-stress: O_NONBLOCK: %s\n", strerror(errno));
		return -1;
	}
	return fd;
}

int task_open(struct run *r, struct task *t)
{
	uint32_t maxmsg = max_msg(&r->o);
	unsigned int j, k, nf = r->o.tasks * r->o.sockets;
	int buf;

	/*
	 * Room for everything in flight from and to one socket: t flows
	 * each way, depth requests and their acks each.  RDS keeps half of
	 * what it stores; FORCE passes wmem_max when we may.
	 */
	{
		uint64_t want = (uint64_t)r->o.tasks * r->o.depth *
				((uint64_t)maxmsg + r->o.ack_bytes) * 2;

		if (want < 256 * 1024)
			want = 256 * 1024;
		if (want > (64U << 20))
			want = 64U << 20;
		buf = (int)want;
	}
	t->fds = malloc(r->o.sockets * sizeof(*t->fds));
	if (!t->fds)
		goto nomem;
	for (k = 0; k < r->o.sockets; k++)
		t->fds[k] = -1;
	for (k = 0; k < r->o.sockets; k++)
		if (open_socket(r, t, k, buf) < 0)
			return -1;
	t->fd = t->fds[0];

	t->txbuf = aligned_alloc(4096, (maxmsg + 4095) & ~4095U);
	t->rxbuf = aligned_alloc(4096, (maxmsg + 4096 + 4095) & ~4095U);
	t->flows = calloc(nf, sizeof(*t->flows));
	if (!t->txbuf || !t->rxbuf || !t->flows)
		goto nomem;
	for (j = 0; j < nf; j++) {
		struct flow *f = &t->flows[j];

		f->next_tx_seq = f->next_ack_seq = f->next_rx_seq = 1;
		f->ackq_cap = r->o.depth + 4;
		f->ackq = calloc(f->ackq_cap, sizeof(*f->ackq));
		f->tx_ts = calloc(r->o.depth, sizeof(*f->tx_ts));
		if (!f->ackq || !f->tx_ts)
			goto nomem;
	}
	if (rdma_setup(r, t))
		goto nomem;
	return 0;
nomem:
	fprintf(stderr, "rds-stress: out of memory\n");
	return -1;
}

/*
 * sendmsg on flow j (socket j / tasks to remote task j % tasks): 0,
 * -EAGAIN, -ENOBUFS or -1 (run failed).
 */
static int do_send_ctl(struct task *t, unsigned int j, const uint8_t *buf,
		       uint32_t len, void *ctl, size_t ctllen)
{
	struct run *r = t->run;
	struct sockaddr_storage to;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = {
		.msg_name = &to,
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctllen ? ctl : NULL, .msg_controllen = ctllen,
	};
	uint64_t t0;
	ssize_t n;
	int e;

	m.msg_namelen = sin_of(r, &to, &r->remote, j % r->o.tasks,
			       j / r->o.tasks);
	t0 = now_ns();
	n = sendmsg(t->fds[j / r->o.tasks], &m, MSG_DONTWAIT);
	e = errno;
	ST_ADD(t, send_calls, 1);
	ST_ADD(t, send_ns, now_ns() - t0);
	if (n == (ssize_t)len) {
		ST_ADD(t, tx_bytes, len);
		if (len > t->st.tx_max)
			ST_ADD(t, tx_max, len - t->st.tx_max);
		return 0;
	}
	if (n >= 0) {
		run_fail(r, "task %u: sendmsg to task %u sent %zd of %u bytes",
			 t->idx, j, n, len);
		return -1;
	}
	if (e == EAGAIN || e == EWOULDBLOCK) {
		ST_ADD(t, eagain, 1);
		return -EAGAIN;
	}
	if (e == ENOBUFS) {
		ST_ADD(t, enobufs, 1);
		return -ENOBUFS;
	}
	if (e == EINTR)
		return -EAGAIN;
	if (e == ENOMEM && r->o.enomem_retry) {
		ST_ADD(t, enomem, 1);
		return -EAGAIN;
	}
	if (ctllen && (e == EOPNOTSUPP || e == ENOPROTOOPT)) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		rdma_fail_send(t, c->cmsg_type == RDS_CMSG_RDMA_DEST ?
			       "sendmsg with RDS_CMSG_RDMA_DEST" :
			       c->cmsg_type == RDS_CMSG_RDMA_MAP ?
			       "sendmsg with RDS_CMSG_RDMA_MAP" :
			       "sendmsg with RDS_CMSG_RDMA_ARGS", e);
		return -1;
	}
	run_fail(r, "task %u: sendmsg of %u bytes to task %u (port %u): %s",
		 t->idx, len, j % r->o.tasks,
		 port_of(r, j % r->o.tasks, j / r->o.tasks), strerror(e));
	return -1;
}

static int do_send(struct task *t, unsigned int j, const uint8_t *buf,
		   uint32_t len)
{
	return do_send_ctl(t, j, buf, len, NULL, 0);
}

/* For the corruption hook only: send now, waiting out EAGAIN/ENOBUFS. */
static int send_now(struct task *t, unsigned int j, const uint8_t *buf,
		    uint32_t len)
{
	uint64_t end = now_ns() + 10ULL * 1000000000;
	int rc;

	while ((rc = do_send(t, j, buf, len)) == -EAGAIN || rc == -ENOBUFS) {
		struct pollfd p = { .fd = t->fds[j / t->run->o.tasks],
				    .events = POLLOUT };

		if (now_ns() > end) {
			run_fail(t->run, "task %u: corruption hook: cannot send",
				 t->idx);
			return -1;
		}
		poll(&p, 1, 10);
	}
	return rc;
}

/*
 * "REQ of flow active.0->passive.1": a REQ that arrived here went from
 * the peer's src task to our dst task; an ACK that arrived here answers a
 * REQ of ours, from our dst task to the peer's src task.  With several
 * sockets, " (socket k)".
 */
static void flow_name(const struct run *r, char *b, size_t n, int op,
		      unsigned int src, unsigned int dst, unsigned int sock)
{
	const char *here = side(r->o.active), *there = side(!r->o.active);
	int l;

	if (op == OP_REQ)
		l = snprintf(b, n, "REQ of flow %s.%u->%s.%u", there, src,
			     here, dst);
	else
		l = snprintf(b, n, "ACK of flow %s.%u->%s.%u", here, dst,
			     there, src);
	if (r->o.sockets > 1 && l > 0 && (size_t)l < n)
		snprintf(b + l, n - l, " (socket %u)", sock);
}

static int send_req(struct task *t, unsigned int j)
{
	struct run *r = t->run;
	struct flow *f = &t->flows[j];
	uint64_t seq = f->next_tx_seq, ts = now_ns();
	unsigned int k = j / r->o.tasks, rt = j % r->o.tasks;
	uint32_t len = req_len(&r->o, r->o.active, t->idx, rt, k, seq);
	int rc;

	f->tx_ts[seq % r->o.depth] = ts;	/* for the RTT of a short REQ */
	if (r->corrupt.mode && !r->o.rdma_bytes && !r->corrupt.done &&
	    t->idx == 0 && j == 0 && seq == r->corrupt.seq) {
		const char *m = r->corrupt.mode;

		r->corrupt.done = 1;
		fprintf(stderr,
			"rds-stress: RDS_STRESS_CORRUPT=%s: corrupting REQ seq %llu of flow %s.0->%s.0\n",
			m, (unsigned long long)seq, side(r->o.active),
			side(!r->o.active));
		if (!strcmp(m, "byte")) {
			msg_build(r, t->txbuf, len, OP_REQ, t->idx, rt, k, seq, ts, 0, 0);
			if (len > HDR_BYTES)
				t->txbuf[HDR_BYTES + (len - HDR_BYTES) / 2] ^= 0x5a;
			else if (len == HDR_BYTES)	/* hit the header */
				t->txbuf[20] ^= 0x5a;
			else if (len)	/* no header */
				t->txbuf[len / 2] ^= 0x5a;
			if (send_now(t, j, t->txbuf, len))
				return -1;
		} else if (!strcmp(m, "drop")) {
			seq++;
			f->next_tx_seq++;
			msg_build(r, t->txbuf, len, OP_REQ, t->idx, rt, k, seq, ts, 0, 0);
			if (send_now(t, j, t->txbuf, len))
				return -1;
		} else if (!strcmp(m, "dup")) {
			msg_build(r, t->txbuf, len, OP_REQ, t->idx, rt, k, seq, ts, 0, 0);
			if (send_now(t, j, t->txbuf, len) ||
			    send_now(t, j, t->txbuf, len))
				return -1;
			ST_ADD(t, tx_req, 1);
		} else {	/* reorder: seq+1 goes first */
			msg_build(r, t->txbuf, len, OP_REQ, t->idx, rt, k,
				  seq + 1, ts, 0, 0);
			if (send_now(t, j, t->txbuf, len))
				return -1;
			msg_build(r, t->txbuf, len, OP_REQ, t->idx, rt, k, seq, ts, 0, 0);
			if (send_now(t, j, t->txbuf, len))
				return -1;
			f->next_tx_seq++;
			f->outstanding++;
			ST_ADD(t, tx_req, 1);
		}
		f->next_tx_seq++;
		f->outstanding++;
		ST_ADD(t, tx_req, 1);
		return 0;
	}

	if (r->o.rdma_bytes) {
		uint64_t ctl[16];
		int op = rdma_op_for(r, seq), cl;

		cl = rdma_req_cmsg(t, j, seq, ctl, sizeof(ctl));
		if (cl == -EAGAIN) {	/* GET_MR: no MR free: back off */
			t->rdma_backoff = 1;
			return -EAGAIN;
		}
		if (cl < 0)
			return -1;
		msg_build(r, t->txbuf, len, OP_REQ, t->idx, j, 0, seq, ts, op,
			  f->rq[seq % f->nslots].cookie);
		rc = do_send_ctl(t, j, t->txbuf, len, ctl, cl);
		if (rc) {
			if (rc == -EAGAIN || rc == -ENOBUFS)
				rdma_req_unsent(t, j, seq);
			if (rc == -EAGAIN) {
				/*
				 * Also what RDMA_MAP says while the
				 * connection is not up (ENODEV): no
				 * POLLOUT will tell, so back off.
				 */
				ST_ADD(t, rdma_eagain, 1);
				t->rdma_backoff = 1;
			}
			return rc;
		}
		f->rq[seq % f->nslots].busy = 1;
	} else {
		msg_build(r, t->txbuf, len, OP_REQ, t->idx, rt, k, seq, ts, 0, 0);
		rc = do_send(t, j, t->txbuf, len);
		if (rc)
			return rc;
	}
	f->next_tx_seq++;
	f->outstanding++;
	ST_ADD(t, tx_req, 1);
	return 0;
}

static int send_ack(struct task *t, unsigned int j)
{
	struct run *r = t->run;
	struct flow *f = &t->flows[j];
	struct ackq_ent *e = &f->ackq[f->ackq_head];
	int rc;

	msg_build(r, t->txbuf, r->o.ack_bytes, OP_ACK, t->idx,
		  j % r->o.tasks, j / r->o.tasks, e->seq, e->ts_ns, e->rdma_op,
		  e->cookie);
	if (e->rdma_op) {
		uint64_t ctl[16];
		int cl = rdma_ack_cmsg(t, j, e, ctl, sizeof(ctl));

		if (cl < 0)
			return cl;
		rc = do_send_ctl(t, j, t->txbuf, r->o.ack_bytes, ctl, cl);
		if (rc == -EAGAIN) {	/* maybe no MR free for the op */
			ST_ADD(t, rdma_eagain, 1);
			t->rdma_backoff = 1;
		}
		if (rc)
			return rc;
		rdma_ack_sent(t, j, e);
	} else {
		rc = do_send(t, j, t->txbuf, r->o.ack_bytes);
		if (rc)
			return rc;
	}
	f->ackq_head = (f->ackq_head + 1) % f->ackq_cap;
	f->ackq_len--;
	ST_ADD(t, tx_ack, 1);
	return 0;
}

static void cong_update(struct task *t, uint64_t mask)
{
	struct run *r = t->run;
	unsigned int j;

	ST_ADD(t, cong_updates, 1);
	for (j = 0; j < r->o.tasks * r->o.sockets; j++) {
		unsigned int port = port_of(r, j % r->o.tasks,
					    j / r->o.tasks);

		if (mask & (1ULL << (port % 64)))
			t->flows[j].congested = 0;
	}
}

static void gap_why(const struct flow *f, char *why, size_t n)
{
	if (f->gap_arrived - f->gap_expected == 1)
		snprintf(why, n, "seq %llu missing: dropped",
			 (unsigned long long)f->gap_expected);
	else
		snprintf(why, n, "seq %llu..%llu missing: dropped",
			 (unsigned long long)f->gap_expected,
			 (unsigned long long)f->gap_arrived - 1);
}

/* A gap nothing filled within a second: the missing REQs were dropped. */
static void check_gaps(struct task *t, uint64_t now)
{
	struct run *r = t->run;
	char why[128], fl[96];
	unsigned int j;

	for (j = 0; j < r->o.tasks * r->o.sockets; j++) {
		struct flow *f = &t->flows[j];

		if (!f->gap || now - f->gap_ns < 1000000000ULL)
			continue;
		gap_why(f, why, sizeof(why));
		flow_name(r, fl, sizeof(fl), OP_REQ, j % r->o.tasks, t->idx,
			  j / r->o.tasks);
		run_fail(r, "task %u: %s: sequence: expected %llu, arrived %llu, nothing else for 1 s (%s, or delayed)",
			 t->idx, fl, (unsigned long long)f->gap_expected,
			 (unsigned long long)f->gap_arrived, why);
		return;
	}
}



/*
 * Room for another REQ: depth outstanding, and with RDMA also a span of
 * depth from the oldest unacked (an ACK dropped and resent leaves a gap,
 * and the RDMA slots are indexed by seq).
 */
static int window_open(const struct run *r, const struct flow *f)
{
	if (f->outstanding >= r->o.depth)
		return 0;
	return !r->o.rdma_bytes || f->next_tx_seq - f->next_ack_seq < r->o.depth;
}

/*
 * An ACK for an outstanding RDMA REQ after the one we wait for: the one
 * we wait for was dropped with its op and will be resent.  Only with
 * RDMA (every REQ then holds its slot until acked); anything else out of
 * order is an error.
 */
static int ack_overtook(const struct run *r, const struct flow *f,
			const struct msg_hdr *h)
{
	const struct rslot *s;

	if (!r->o.rdma_bytes || !h->rdma_op || !f->outstanding ||
	    h->seq <= f->next_ack_seq || h->seq >= f->next_tx_seq)
		return 0;
	s = &f->rq[h->seq % f->nslots];
	return s->busy && s->seq == h->seq;
}

/*
 * A REQ shorter than the header: the next REQ of flow fi, whose length
 * and every byte it must have (it cannot say which it is).
 */
static int handle_short(struct task *t, unsigned int fi, unsigned int sport,
			uint32_t len)
{
	struct run *r = t->run;
	unsigned int stask = fi % r->o.tasks, k = fi / r->o.tasks;
	struct flow *f = &t->flows[fi];
	char why[400], fl[96];

	flow_name(r, fl, sizeof(fl), OP_REQ, stask, t->idx, k);
	if (f->gap) {
		run_fail(r, "task %u: %s: sequence: expected %llu, arrived %llu then a REQ of %u bytes (without a header)",
			 t->idx, fl, (unsigned long long)f->gap_expected,
			 (unsigned long long)f->gap_arrived, len);
		return -1;
	}
	if (short_check(r, t->rxbuf, len, stask, t->idx, k, f->next_rx_seq,
			why, sizeof(why))) {
		run_fail(r, "task %u: %s (port %u): %s", t->idx, fl, sport,
			 why);
		return -1;
	}
	if (f->ackq_len == f->ackq_cap) {
		run_fail(r, "task %u: %s: more than %u requests outstanding (depth %u)",
			 t->idx, fl, f->ackq_cap, r->o.depth);
		return -1;
	}
	/* ts 0: the requester takes the RTT from its own clock */
	f->ackq[(f->ackq_head + f->ackq_len) % f->ackq_cap] =
		(struct ackq_ent){ .seq = f->next_rx_seq };
	f->ackq_len++;
	f->next_rx_seq++;
	ST_ADD(t, rx_bytes, len);
	ST_ADD(t, rx_req, 1);
	ST_ADD(t, rx_short, 1);
	if (!len)
		ST_ADD(t, rx_zero, 1);
	return 0;
}

static int handle_msg(struct task *t, unsigned int k,
		      const struct sockaddr_storage *from, uint32_t len,
		      int have_cookie, uint64_t cookie)
{
	struct run *r = t->run;
	char why[400], fl[96], a[ADDR_STRLEN], b[ADDR_STRLEN];
	unsigned int sport = 0, stask, n = r->o.tasks;
	struct rs_addr src;
	int bad_src;
	unsigned int lo = port_of(r, 0, k), hi = port_of(r, n - 1, k);
	struct msg_hdr h;
	struct flow *f;

	/* socket k of each remote task: lo, lo + sockets, ... hi */
	/* the family too: RDS never gives a v4 source as v4-mapped */
	bad_src = addr_of_sockaddr((const struct sockaddr *)from, &src,
				   &sport) ||
		  from->ss_family != r->remote.family ||
		  !addr_equal(&src, &r->remote);
	if (bad_src || sport < lo || sport > hi ||
	    (sport - lo) % r->o.sockets) {
		addr_str(&r->remote, a, sizeof(a));
		if (bad_src && from->ss_family != AF_INET &&
		    from->ss_family != AF_INET6)
			snprintf(b, sizeof(b), "family %u", from->ss_family);
		else
			addr_str(&src, b, sizeof(b));
		run_fail(r, "task %u: message of %u bytes from an unexpected source: expected %s:%u-%u%s, arrived from %s:%u",
			 t->idx, len, a, lo, hi,
			 r->o.sockets > 1 ? " (every --sockets-th)" : "", b,
			 sport);
		return -1;
	}
	stask = (sport - lo) / r->o.sockets;
	if (len > t->st.rx_max)
		ST_ADD(t, rx_max, len - t->st.rx_max);
	if (len < HDR_BYTES)
		return handle_short(t, k * n + stask, sport, len);
	if (msg_check(r, t->rxbuf, len, t->idx, k, why, sizeof(why), &h)) {
		run_fail(r, "task %u: message from task %u (port %u): %s",
			 t->idx, stask, sport, why);
		return -1;
	}
	flow_name(r, fl, sizeof(fl), h.op, h.src_task, h.dst_task, k);
	if (h.src_task != stask) {
		run_fail(r, "task %u: %s: source task: expected %u (its port %u), arrived %u",
			 t->idx, fl, stask, sport, h.src_task);
		return -1;
	}
	f = &t->flows[k * n + stask];
	ST_ADD(t, rx_bytes, len);
	if (h.op == OP_REQ) {
		if (f->gap) {
			if (h.seq == f->gap_expected)
				snprintf(why, sizeof(why),
					 "reordered: seq %llu arrived after seq %llu",
					 (unsigned long long)h.seq,
					 (unsigned long long)f->gap_arrived);
			else
				gap_why(f, why, sizeof(why));
			run_fail(r, "task %u: %s: sequence: expected %llu, arrived %llu then %llu (%s)",
				 t->idx, fl,
				 (unsigned long long)f->gap_expected,
				 (unsigned long long)f->gap_arrived,
				 (unsigned long long)h.seq, why);
			return -1;
		}
		if (h.seq < f->next_rx_seq) {
			run_fail(r, "task %u: %s: sequence: expected %llu, arrived %llu (seq %llu was already received: a duplicate)",
				 t->idx, fl,
				 (unsigned long long)f->next_rx_seq,
				 (unsigned long long)h.seq,
				 (unsigned long long)h.seq);
			return -1;
		}
		if (h.seq > f->next_rx_seq) {
			f->gap = 1;
			f->gap_expected = f->next_rx_seq;
			f->gap_arrived = h.seq;
			f->gap_ns = now_ns();
			return 0;
		}
		if (f->ackq_len == f->ackq_cap) {
			run_fail(r, "task %u: %s: more than %u requests outstanding (depth %u)",
				 t->idx, fl, f->ackq_cap, r->o.depth);
			return -1;
		}
		if (h.rdma_op && !have_cookie) {
			run_fail(r, "task %u: %s seq %llu: announces an RDMA %s but no RDS_CMSG_RDMA_DEST arrived with it",
				 t->idx, fl, (unsigned long long)h.seq,
				 h.rdma_op == RDMA_OP_READ ? "READ" : "WRITE");
			return -1;
		}
		if (h.rdma_op && r->o.rdma_use_get_mr &&
		    h.rdma_cookie != cookie) {
			run_fail(r, "task %u: %s seq %llu: RDMA cookie: the header says %016llx, RDS_CMSG_RDMA_DEST %016llx",
				 t->idx, fl, (unsigned long long)h.seq,
				 (unsigned long long)h.rdma_cookie,
				 (unsigned long long)cookie);
			return -1;
		}
		if (!h.rdma_op && have_cookie) {
			run_fail(r, "task %u: %s seq %llu: an RDS_CMSG_RDMA_DEST arrived with a REQ without RDMA",
				 t->idx, fl, (unsigned long long)h.seq);
			return -1;
		}
		f->ackq[(f->ackq_head + f->ackq_len) % f->ackq_cap] =
			(struct ackq_ent){ .seq = h.seq, .ts_ns = h.ts_ns,
					   .cookie = cookie,
					   .rdma_op = h.rdma_op };
		f->ackq_len++;
		f->next_rx_seq++;
		ST_ADD(t, rx_req, 1);
		return 0;
	}
	/* ACK */
	if (ack_overtook(r, f, &h)) {
		/*
		 * With RDMA, RDS drops an ACK with its op when the
		 * connection is lost after the op was posted; the responder
		 * resends it, after the ACKs that overtook it.
		 */
		ST_ADD(t, acks_overtaking, 1);
	} else if (!f->outstanding || h.seq != f->next_ack_seq) {
		run_fail(r, "task %u: %s: sequence: expected %llu, arrived %llu (%s)",
			 t->idx, fl, (unsigned long long)f->next_ack_seq,
			 (unsigned long long)h.seq,
			 !f->outstanding ? "no request is outstanding" :
			 h.seq < f->next_ack_seq ? "a duplicate ack" :
			 "acks missing or reordered");
		return -1;
	}
	if (h.rdma_op) {
		if (rdma_req_acked(t, stask, &h))
			return -1;
		f->rq[h.seq % f->nslots].busy = 0;
	}
	f->outstanding--;
	if (h.seq == f->next_ack_seq) {
		f->next_ack_seq++;
		/* past the ACKs that overtook this one */
		while (f->next_ack_seq < f->next_tx_seq && r->o.rdma_bytes &&
		       !f->rq[f->next_ack_seq % f->nslots].busy)
			f->next_ack_seq++;
	}
	ST_ADD(t, rx_ack, 1);
	{
		uint64_t now = now_ns(), ts = h.ts_ns ? h.ts_ns :
			      f->tx_ts[h.seq % r->o.depth];
		uint64_t rtt = now > ts ? now - ts : 0;

		ST_ADD(t, rtt_n, 1);
		ST_ADD(t, rtt_ns, rtt);
		hist_add(&t->st, rtt);
	}
	return 0;
}

/*
 * From socket k: 1 handled something, 0 nothing to receive, -1 the run
 * failed.
 */
static int recv_one(struct task *t, unsigned int k)
{
	struct run *r = t->run;
	struct sockaddr_storage from;
	uint64_t cbuf[64];
	uint32_t cap = max_msg(&r->o) + 4096;
	struct iovec iov = { .iov_base = t->rxbuf, .iov_len = cap };
	struct msghdr m = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int notified = 0, have_cookie = 0;
	uint64_t cookie = 0;
	ssize_t n;

	memset(&from, 0, sizeof(from));
	n = recvmsg(t->fds[k], &m, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		run_fail(r, "task %u: recvmsg: %s", t->idx, strerror(errno));
		return -1;
	}
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_CONG_UPDATE &&
		    c->cmsg_len >= CMSG_LEN(sizeof(uint64_t))) {
			uint64_t mask;

			memcpy(&mask, CMSG_DATA(c), sizeof(mask));
			cong_update(t, mask);
			notified = 1;
		} else if (c->cmsg_type == RDS_CMSG_RDMA_STATUS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(struct rds_rdma_notify))) {
			struct rds_rdma_notify nt;

			memcpy(&nt, CMSG_DATA(c), sizeof(nt));
			if (rdma_status(t, &nt))
				return -1;
			notified = 1;
		} else if (c->cmsg_type == RDS_CMSG_RDMA_DEST &&
			   c->cmsg_len >= CMSG_LEN(sizeof(uint64_t))) {
			memcpy(&cookie, CMSG_DATA(c), sizeof(cookie));
			have_cookie = 1;
		}
	}
	/*
	 * Notifications only: RDS gives them with no data and no source
	 * (an empty message, legal too, has its source).
	 */
	if (n == 0 && from.ss_family != AF_INET &&
	    from.ss_family != AF_INET6 &&
	    (notified || m.msg_controllen))
		return 1;
	if (m.msg_flags & MSG_TRUNC) {
		run_fail(r, "task %u: message truncated: more than %u bytes arrived, at most %u expected",
			 t->idx, cap, cap - 4096);
		return -1;
	}
	return handle_msg(t, k, &from, (uint32_t)n, have_cookie, cookie) ?
	       -1 : 1;
}

/*
 * --slow-reader: the passive side reads nothing for the first slow_ms of
 * every second; returns the ns left of the pause, 0 when reading.
 */
static uint64_t slow_pause(struct task *t, uint64_t now)
{
	struct run *r = t->run;
	uint64_t in = now % 1000000000ULL, ms = r->o.slow_ms * 1000000ULL;

	if (!r->o.slow_ms || r->o.active || in >= ms)
		return 0;
	if (now / 1000000000ULL != t->paused_sec) {
		t->paused_sec = now / 1000000000ULL;
		ST_ADD(t, slow_pauses, 1);
	}
	return ms - in;
}

/* Flows fi of socket k that met EAGAIN this round wait for POLLOUT.
 * Returns 1 if this kind found a send buffer full (met EAGAIN, or had a
 * message to send on a socket already marked full), 0, or -1 (run
 * failed).
 */
static int send_flows(struct task *t, unsigned int start, int acks,
		      uint8_t *wout)
{
	struct run *r = t->run;
	unsigned int nf = r->o.tasks * r->o.sockets, n = r->o.tasks, i, j;
	int rc = 0, full = 0;

	for (i = 0; i < nf; i++) {
		struct flow *f = &t->flows[j = (start + i) % nf];

		if (wout[j / n]) {
			if (!f->congested &&
			    (acks ? f->ackq_len != 0 : window_open(r, f)))
				full = 1;
			continue;
		}
		while (!f->congested &&
		       (acks ? f->ackq_len != 0 : window_open(r, f))) {
			rc = acks ? send_ack(t, j) : send_req(t, j);
			if (rc == -EBUSY) {	/* RDMA slot busy */
				rc = 0;
				break;
			}
			if (rc == -EAGAIN) {
				wout[j / n] = 1;
				full = 1;
				rc = 0;
				break;
			}
			if (rc == -ENOBUFS) {
				f->congested = 1;
				f->congested_ns = now_ns();
				rc = 0;
			}
			if (rc < 0)
				return rc;
		}
	}
	return full;
}

void *task_main(void *arg)
{
	struct task *t = arg;
	struct run *r = t->run;
	unsigned int ns = r->o.sockets, nf = r->o.tasks * ns, j, k, i;
	unsigned int start = t->idx % nf;
	int sends_reqs = !r->o.one_way || r->o.active, reqs_first = 0, reqs, rq;
	uint8_t wout[MAX_SOCKETS], wreq[MAX_SOCKETS];
	struct pollfd p[MAX_SOCKETS];
	int rc = 0;

	while (!__atomic_load_n(&r->finish, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&r->failed, __ATOMIC_ACQUIRE)) {
		int stopping, any_cong = 0, drained = 1, ms;
		uint64_t now = now_ns(), pause = slow_pause(t, now);

		t->rdma_backoff = 0;
		memset(wout, 0, ns);

		/* Up to 256 messages a round, from every socket in turn. */
		for (k = 0; !pause && k < ns && rc >= 0; k++)
			for (i = 0; i < (256 + ns - 1) / ns; i++) {
				rc = recv_one(t, k);
				if (rc <= 0)
					break;
			}
		if (rc < 0)
			break;

		now = now_ns();
		check_gaps(t, now);
		if (r->failed)
			break;
		for (j = 0; j < nf; j++) {
			struct flow *f = &t->flows[j];

			if (f->congested &&
			    now - f->congested_ns > (r->o.cong_monitor ?
				CONG_RETRY_MON_NS : CONG_RETRY_NOMON_NS)) {
				f->congested = 0;
				if (r->o.cong_monitor)
					ST_ADD(t, cong_timeouts, 1);
			}
		}

		/* Acks first (they free the peer's window), unless requests
		 * found the send buffer full last round: then they go first,
		 * or acks would take every byte the buffer frees and our own
		 * requests would starve (an ack carrying an RDMA op charges
		 * its pages, so a few fill the buffer).  Requests are held
		 * by the window: they cannot starve the acks in turn.
		 */
		stopping = __atomic_load_n(&r->stopping, __ATOMIC_ACQUIRE);
		reqs = sends_reqs && !stopping;
		if (reqs && reqs_first) {
			/* A request's EAGAIN may be the MR pool's, not the
			 * buffer's: it must not keep the acks from trying.
			 */
			memset(wreq, 0, ns);
			rq = send_flows(t, start, 0, wreq);
			if (rq < 0 || send_flows(t, start, 1, wout) < 0)
				break;
			for (k = 0; k < ns; k++)
				wout[k] |= wreq[k];
		} else {
			if (send_flows(t, start, 1, wout) < 0)
				break;
			rq = reqs ? send_flows(t, start, 0, wout) : 0;
			if (rq < 0)
				break;
		}
		reqs_first = rq > 0;
		rc = 0;
		start = (start + 1) % nf;

		for (j = 0; j < nf; j++) {
			any_cong |= t->flows[j].congested;
			if (t->flows[j].outstanding)
				drained = 0;
		}
		if (stopping && drained && !t->drained)
			__atomic_store_n(&t->drained, 1, __ATOMIC_RELEASE);

		for (k = 0; k < ns; k++) {
			p[k].fd = t->fds[k];
			p[k].events = pause ? 0 : POLLIN;
			p[k].revents = 0;
			if (wout[k] && !t->rdma_backoff)
				p[k].events |= POLLOUT;
		}
		ms = t->rdma_backoff ? 5 : any_cong && !r->o.cong_monitor ? 10 :
		     any_cong ? 50 : 100;
		if (pause && (uint64_t)ms * 1000000 > pause)
			ms = (int)(pause / 1000000) + 1;
		if (poll(p, ns, ms) < 0 && errno != EINTR) {
			run_fail(r, "task %u: poll: %s", t->idx, strerror(errno));
			break;
		}
	}
	/* Our RDMA ops as responder: wait for their status (and checks). */
	if (!r->failed && rdma_busy(t)) {
		uint64_t end = now_ns() + 5000000000ULL;

		while (rdma_busy(t) && !r->failed && now_ns() < end) {
			struct pollfd p = { .fd = t->fd, .events = POLLIN };

			if (recv_one(t, 0) == 0)
				poll(&p, 1, 10);
		}
		if (rdma_busy(t) && !r->failed)
			run_fail(r, "task %u: %u RDMA ops never reported their status",
				 t->idx, rdma_busy(t));
	}
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}
