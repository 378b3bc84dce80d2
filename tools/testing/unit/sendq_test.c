// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/ib/sendq.c, the send queue of a connection.
 *
 * sizes     every wanted number of data slots 0..2100 against devices of
 *           several queue, CQ and SGE limits: the data slots are a power
 *           of two within RDS_IB_SEND_RING_MIN..MAX, not above what was
 *           wanted (MIN at least), the largest that fits; the queue pair
 *           asks for data + control + extra + drain, the CQ as many; the
 *           SGEs 2..3; false exactly when even the smallest queue or two
 *           SGEs do not fit.  The default: 64 slots, 127 WRs, a 127-entry
 *           CQ, 3 SGEs.
 * rxe       rxe's queue memory by its rule (rxe_queue_init(): entries + 1
 *           rounded up to a power of two, entries rounded up to a power of
 *           two bytes, 384 bytes of indexes, whole pages): 56 KiB per
 *           connection now, against the 168 KiB of 193 WRs of 16 SGEs and
 *           a 194-entry CQ before; a fourth SGE or one more WR would each
 *           double the send queue.
 * walks     random walks (seed printed; argv[1] replays one) of a
 *           connection's send side as send.c and mr.c run it: data frames
 *           under rds_ib_sendq_data_room() with the signalling rule of
 *           rds_ib_sendq_signal() (every signal_every-th, some forced, as
 *           a message's last frame, and the frame after which nothing can
 *           go when a packed frame's copy would stay; some frames carry a
 *           copy, some have nothing behind them), control frames one at a
 *           time, RDMA/REG_MR/LOCAL_INV
 *           requests one or two at a time under rds_ib_sendq_extra_room(),
 *           against a model of the queue pair (a FIFO of qp_wr entries
 *           that completes in order; in the error state every entry
 *           completes, signalled or not) and of the CQ (cqe entries, until
 *           the completion's handler runs, which gives the count back).
 *           The queue pair fails at random times (posts go on until the
 *           module notices), attempts end with the drain's request, and
 *           the walk checks that no post ever finds the queue pair full,
 *           no completion the CQ full, and that the drain completes; and,
 *           at random times when the last data frame had nothing behind
 *           it, that once the device and the handler are done no slot
 *           holds a copy (an idle connection holds none).
 * negative  the same walks with one data frame too many admitted, with no
 *           room kept for the drain, and with a CQ one entry short: each
 *           MUST see an overflow; and with the rule before the copies
 *           counted (signal_every-th and forced only): it MUST leave
 *           copies held at idle.
 * rdma      ops of 1..2048 work requests (a 1 MiB op of 256 pages is 86
 *           WRs of 3 SGEs) go out in rounds of what the extra room allows,
 *           completions freeing room, and always end; REG_MR pairs too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../net/ib/sendq.h"
#include "unit.h"

/* ---- sizes -------------------------------------------------------------- */

static u32 pow2_floor(u32 x)
{
	u32 p = 1;

	while (p <= x / 2)
		p *= 2;
	return p;
}

static u32 wrs_of(u32 data)
{
	return data + 1 + RDS_IB_EXTRA_WRS + 1;
}

static bool fits(u32 wrs, u32 max_qp_wr, u32 max_cqe)
{
	return (!max_qp_wr || wrs <= max_qp_wr) && (!max_cqe || wrs <= max_cqe);
}

static void test_sizes(void)
{
	static const u32 lims[] = { 0, 1, 50, 79, 80, 94, 95, 126, 127, 128,
				    190, 191, 200, 1086, 1087, 16384 };
	static const u32 sges[] = { 0, 1, 2, 3, 4, 16, 32 };
	struct rds_ib_sendq_sizes sz;
	int before = failures;
	unsigned int a, b, c;
	u32 want;
	bool ok;

	for (want = 0; want <= 2100; want++)
		for (a = 0; a < sizeof(lims) / sizeof(lims[0]); a++)
			for (b = 0; b < sizeof(lims) / sizeof(lims[0]); b++)
				for (c = 0; c < sizeof(sges) / sizeof(sges[0]); c++) {
	u32 qp = lims[a], cq = lims[b], sge = sges[c];
	u32 cap = want < RDS_IB_SEND_RING_MIN ? RDS_IB_SEND_RING_MIN :
		  want > RDS_IB_SEND_RING_MAX ? RDS_IB_SEND_RING_MAX : want;

	ok = rds_ib_sendq_size(want, qp, cq, sge, &sz);
	EXPECT(sz.data && !(sz.data & (sz.data - 1)), "want %u: data %u",
	       want, sz.data);
	EXPECT(sz.data >= RDS_IB_SEND_RING_MIN &&
	       sz.data <= RDS_IB_SEND_RING_MAX && sz.data <= cap,
	       "want %u: data %u", want, sz.data);
	EXPECT(sz.qp_wr == sz.data + 1 + sz.extra + 1 && sz.cqe == sz.qp_wr &&
	       sz.extra == RDS_IB_EXTRA_WRS, "want %u: %u %u %u", want,
	       sz.qp_wr, sz.cqe, sz.extra);
	EXPECT(sz.sge >= 2 && sz.sge <= 3 &&
	       (sge < 2 || sz.sge == (sge < 3 ? sge : 3)), "sge %u -> %u",
	       sge, sz.sge);
	EXPECT(ok == (fits(sz.qp_wr, qp, cq) && sge >= 2),
	       "want %u qp %u cq %u sge %u: ok %d", want, qp, cq, sge, ok);
	/* the largest that fits: twice as many would not (or not wanted) */
	if (sz.data < pow2_floor(cap))
		EXPECT(!fits(wrs_of(sz.data * 2), qp, cq),
		       "want %u qp %u cq %u: data %u, could be more", want, qp,
		       cq, sz.data);
	if (!fits(wrs_of(RDS_IB_SEND_RING_MIN), qp, cq))
		EXPECT(!ok, "qp %u cq %u: ok", qp, cq);
				}
	ok = rds_ib_sendq_size(64, 16384, 4194303, 32, &sz);
	EXPECT(ok && sz.data == 64 && sz.qp_wr == 127 && sz.cqe == 127 &&
	       sz.sge == 3, "default: %u %u %u %u", sz.data, sz.qp_wr, sz.cqe,
	       sz.sge);
	printf("# default: %u data slots, %u extra, %u WRs, %u CQ entries, %u SGEs\n",
	       sz.data, sz.extra, sz.qp_wr, sz.cqe, sz.sge);
	/* signal_every: 1 .. data / 2 */
	for (want = 0; want < 200; want++)
		for (a = 16; a <= 1024; a *= 2) {
			u32 e = rds_ib_sendq_signal_every(want, a);

			EXPECT(e >= 1 && e <= a / 2 &&
			       (want < 1 || want > a / 2 || e == want),
			       "signal_every(%u, %u) = %u", want, a, e);
		}
	EXPECT(rds_ib_sendq_op_wrs(256, 3) == 86 &&
	       rds_ib_sendq_op_wrs(256, 16) == 16 &&
	       rds_ib_sendq_op_wrs(0, 3) == 0, "op_wrs");
	EXPECT(rds_ib_recvq_wr(65) == 66 && rds_ib_recvq_cqe(65) == 66,
	       "recvq");
	report("sizes", before);
}

/* ---- rxe's queue memory ------------------------------------------------- */

static u32 roundup_pow2(u32 x)
{
	u32 p = 1;

	while (p < x)
		p *= 2;
	return p;
}

/* The vmalloc'd bytes of one rxe queue of n entries of elem bytes, in
 * KiB (whole 4 KiB pages): rxe_queue_init().
 */
static u32 rxe_kib(u32 n, u32 elem)
{
	u32 slots = roundup_pow2(n + 1);
	u32 bytes;

	elem = roundup_pow2(elem < 64 ? 64 : elem);
	bytes = 384 + slots * elem;	/* struct rxe_queue_buf: 3 x 128 */
	return (bytes + 4095) / 4096 * 4;
}

#define RXE_SEND_WQE	208	/* sizeof(struct rxe_send_wqe) */
#define RXE_SGE		16	/* sizeof(struct ib_sge) */
#define RXE_CQE		128	/* struct rxe_cqe (an ib_wc), rounded */

static u32 rxe_conn_kib(u32 qp_wr, u32 sge, u32 cqe)
{
	return rxe_kib(qp_wr, RXE_SEND_WQE + sge * RXE_SGE) +
	       rxe_kib(cqe, RXE_CQE);
}

static void test_rxe(void)
{
	struct rds_ib_sendq_sizes sz;
	int before = failures;
	u32 now, old;

	rds_ib_sendq_size(RDS_IB_SEND_RING, 16384, 4194303, 32, &sz);
	now = rxe_conn_kib(sz.qp_wr, sz.sge, sz.cqe);
	old = rxe_conn_kib(128 + 1 + 64, 16, 128 + 2 + 64);
	printf("# rxe per connection: %u KiB (send queue %u + CQ %u), before %u KiB (%u + %u)\n",
	       now, rxe_kib(sz.qp_wr, RXE_SEND_WQE + sz.sge * RXE_SGE),
	       rxe_kib(sz.cqe, RXE_CQE), old,
	       rxe_kib(193, RXE_SEND_WQE + 16 * RXE_SGE),
	       rxe_kib(194, RXE_CQE));
	EXPECT(now == 56, "now %u KiB", now);
	EXPECT(old == 168, "before %u KiB", old);
	/* what one more would cost */
	EXPECT(rxe_kib(sz.qp_wr, RXE_SEND_WQE + 4 * RXE_SGE) == 68,
	       "a fourth SGE: %u",
	       rxe_kib(sz.qp_wr, RXE_SEND_WQE + 4 * RXE_SGE));
	EXPECT(rxe_kib(sz.qp_wr + 1, RXE_SEND_WQE + sz.sge * RXE_SGE) == 68,
	       "one more WR: %u",
	       rxe_kib(sz.qp_wr + 1, RXE_SEND_WQE + sz.sge * RXE_SGE));
	EXPECT(rxe_kib(sz.cqe + 1, RXE_CQE) == 36, "one more CQE");
	report("rxe", before);
}

/* ---- walks --------------------------------------------------------------- */

enum { W_DATA, W_CTRL, W_EXTRA, W_DRAIN };

struct wr {
	u8	kind;
	bool	signalled;
	u32	slot;		/* W_DATA: its absolute slot number */
};

#define QMAX	4096

struct fifo {
	struct wr	e[QMAX];
	u32		first, n, cap;
};

static bool fifo_push(struct fifo *f, struct wr w)
{
	if (f->n >= f->cap)
		return false;
	f->e[(f->first + f->n++) % QMAX] = w;
	return true;
}

static struct wr fifo_pop(struct fifo *f)
{
	struct wr w = f->e[f->first];

	f->first = (f->first + 1) % QMAX;
	f->n--;
	return w;
}

/* How a walk breaks the rules, for the negative controls. */
struct flaw {
	u32	data_more;	/* data frames admitted beyond the slots */
	u32	qp_less;	/* queue pair entries short */
	u32	cq_less;	/* CQ entries short */
	bool	copies_unseen;	/* the signalling rule before the copies */
};

struct conn {
	struct rds_ib_sendq_sizes sz;
	struct flaw flaw;
	struct fifo sq, cq;
	u32	head, tail, since, every;
	bool	copy[QMAX];	/* by slot % QMAX: it holds a copy */
	bool	copy_unsig;	/* i_copy_unsig */
	bool	last_alone;	/* the last data frame had nothing behind */
	bool	ctrl_busy;
	u32	extra;
	bool	up, err, drained;
	unsigned long overflows;
	unsigned long posts;
	unsigned long idle_checks;	/* idle points checked */
	unsigned long idle_copies;	/* of them, with copies held */
	u32	idle_copies_max;	/* the most copies held at one */
};

static void overflow(struct conn *c, const char *what, bool quiet)
{
	c->overflows++;
	if (!quiet)
		EXPECT(0, "%s overflows: data %u qp_wr %u cqe %u", what,
		       c->sz.data, c->sz.qp_wr, c->sz.cqe);
}

static bool post(struct conn *c, struct wr w, bool quiet)
{
	c->posts++;
	if (!fifo_push(&c->sq, w)) {
		overflow(c, "queue pair", quiet);
		return false;
	}
	return true;
}

static void conn_start(struct conn *c, bool quiet)
{
	u32 want = 1 + rnd() % 300;
	u32 qp = rnd() % 4 ? 0 : 60 + rnd() % 400;

	if (rnd() % 2)
		want = RDS_IB_SEND_RING;
	rds_ib_sendq_size(want, qp, qp, 3, &c->sz);
	memset(&c->sq, 0, sizeof(c->sq));
	memset(&c->cq, 0, sizeof(c->cq));
	c->sq.cap = c->sz.qp_wr - c->flaw.qp_less;
	c->cq.cap = c->sz.cqe - c->flaw.cq_less - c->flaw.qp_less;
	c->every = rds_ib_sendq_signal_every(1 + rnd() % 64, c->sz.data);
	c->head = c->tail = c->since = 0;
	memset(c->copy, 0, sizeof(c->copy));
	c->copy_unsig = false;
	c->last_alone = false;
	c->ctrl_busy = false;
	c->extra = 0;
	c->up = true;
	c->err = false;
	c->drained = false;
	(void)quiet;
}

/* The device completes the oldest work request: into the CQ if it is
 * signalled or flushed.
 */
static void hw_complete(struct conn *c, bool quiet)
{
	struct wr w;

	if (!c->sq.n)
		return;
	w = fifo_pop(&c->sq);
	if ((w.signalled || c->err) && !fifo_push(&c->cq, w))
		overflow(c, "CQ", quiet);
}

/* The CQ's handler runs for its oldest completion (send.c, mr.c). */
static void handle(struct conn *c)
{
	struct wr w;

	if (!c->cq.n)
		return;
	w = fifo_pop(&c->cq);
	switch (w.kind) {
	case W_DATA:
		/* retire every slot up to and including this one */
		if (w.slot - c->tail < c->head - c->tail)
			c->tail = w.slot + 1;
		break;
	case W_CTRL:
		c->ctrl_busy = false;
		break;
	case W_EXTRA:
		c->extra--;
		break;
	case W_DRAIN:
		c->drained = true;
		break;
	}
}

/* A data frame as send.c posts it (rds_ib_slot_post()): copy, it holds
 * a packed frame's copy; alone, nothing behind it can go now.
 */
static void post_data(struct conn *c, bool copy, bool alone, bool quiet)
{
	struct wr w = { 0 };
	bool copies = (c->copy_unsig || copy) && !c->flaw.copies_unseen;

	w.kind = W_DATA;
	w.slot = c->head++;
	c->copy[w.slot % QMAX] = copy;
	w.signalled = rds_ib_sendq_signal(c->since, c->every, !(rnd() % 8),
					  copies, alone);
	if (w.signalled) {
		c->since = 0;
		c->copy_unsig = false;
	} else {
		c->since++;
		c->copy_unsig = c->copy_unsig || copy;
	}
	c->last_alone = alone;
	post(c, w, quiet);
}

static void try_post(struct conn *c, bool quiet)
{
	struct wr w = { 0 };
	u32 n;

	switch (rnd() % 4) {
	case 0:
	case 1:
		if (!rds_ib_sendq_data_room(c->head, c->tail,
					    c->sz.data + c->flaw.data_more))
			return;
		/* runs of packed frames, and of frames with more behind */
		post_data(c, rnd() % 3 == 0, rnd() % 6 == 0, quiet);
		break;
	case 2:
		if (c->ctrl_busy)
			return;
		w.kind = W_CTRL;
		w.signalled = true;
		c->ctrl_busy = true;
		post(c, w, quiet);
		break;
	case 3:
		n = 1 + rnd() % 2;	/* an op's WR, or LOCAL_INV + REG_MR */
		if (!rds_ib_sendq_extra_room(c->extra, n, c->sz.extra))
			return;
		w.kind = W_EXTRA;
		w.signalled = true;
		while (n--) {
			c->extra++;
			post(c, w, quiet);
		}
		break;
	}
}

/* The attempt ends: no more posts, the queue pair in the error state,
 * the drain's request, everything completed and handled.
 */
static void conn_end(struct conn *c, bool quiet)
{
	struct wr w = { .kind = W_DRAIN, .signalled = true };
	unsigned long guard = 0;
	bool slow;

	c->up = false;
	c->err = true;
	/* some completions may be handled before the drain is posted */
	while (c->cq.n && rnd() % 2)
		handle(c);
	if (!post(c, w, quiet))
		return;
	/* the handler may run late: every flush already in the CQ */
	slow = !(rnd() % 4);
	while (!c->drained && guard++ < 10 * QMAX) {
		if (c->sq.n && (slow || rnd() % 2 || !c->cq.n))
			hw_complete(c, quiet);
		else
			handle(c);
	}
	if (!quiet)
		EXPECT(c->drained && !c->sq.n && !c->cq.n,
		       "drain: %d sq %u cq %u", c->drained, c->sq.n, c->cq.n);
}

/* The traffic stopped after a data frame with nothing behind it: once
 * the device completed everything and the handler ran for it, no slot
 * may hold a copy.
 */
static void idle_check(struct conn *c, bool quiet)
{
	u32 s, held = 0;

	while (c->sq.n)
		hw_complete(c, quiet);
	while (c->cq.n)
		handle(c);
	for (s = c->tail; s != c->head; s++)
		held += c->copy[s % QMAX];
	c->idle_checks++;
	if (!held)
		return;
	c->idle_copies++;
	if (held > c->idle_copies_max)
		c->idle_copies_max = held;
	if (!quiet)
		EXPECT(0, "idle: %u copies held (slots %u..%u, every %u)", held,
		       c->tail, c->head, c->every);
}

/* What walks saw. */
struct seen {
	unsigned long posts;
	unsigned long idle_checks, idle_copies;
	u32 idle_copies_max;
};

/* One walk of steps events over attempts; the overflows seen. */
static unsigned long walk(const struct flaw *flaw, unsigned long steps,
			  bool quiet, struct seen *seen)
{
	struct conn *c = calloc(1, sizeof(*c));
	unsigned long i, over;
	u32 bias = 0;

	if (!c)
		abort();
	c->flaw = *flaw;
	conn_start(c, quiet);
	for (i = 0; i < steps; i++) {
		u32 r = rnd() % 16;

		/* bias changes now and then: a filling or an idle queue */
		if (!(rnd() % 500))
			bias = rnd() % 8;
		if (r < 6 + bias) {
			if (c->up)
				try_post(c, quiet);
		} else if (r < 12) {
			if (c->up && !c->err && c->last_alone && !(rnd() % 16))
				idle_check(c, quiet);
			else
				hw_complete(c, quiet);
		} else if (r < 15) {
			handle(c);
		} else if (!(rnd() % 64)) {
			c->err = true;		/* it fails; posts go on */
		} else if (!(rnd() % 32)) {
			conn_end(c, quiet);
			conn_start(c, quiet);
		}
	}
	conn_end(c, quiet);
	over = c->overflows;
	seen->posts += c->posts;
	seen->idle_checks += c->idle_checks;
	seen->idle_copies += c->idle_copies;
	if (c->idle_copies_max > seen->idle_copies_max)
		seen->idle_copies_max = c->idle_copies_max;
	free(c);
	return over;
}

static void test_walks(void)
{
	static const struct flaw good = { 0 };
	struct seen seen = { 0 };
	unsigned long over = 0;
	int before = failures, i;

	for (i = 0; i < 200; i++)
		over += walk(&good, 20000, false, &seen);
	printf("# walks: 200 x 20000 steps, %lu work requests posted, %lu overflows\n",
	       seen.posts, over);
	printf("# idle points: %lu checked, %lu with copies held\n",
	       seen.idle_checks, seen.idle_copies);
	EXPECT(!over, "%lu overflows", over);
	EXPECT(seen.idle_checks >= 1000 && !seen.idle_copies,
	       "idle: %lu checked, %lu with copies", seen.idle_checks,
	       seen.idle_copies);
	report("walks", before);
}

static void test_negative(void)
{
	static const struct {
		const char *name;
		struct flaw flaw;
	} negs[] = {
		{ "one data frame too many", { .data_more = 1 } },
		{ "no room for the drain", { .qp_less = 1 } },
		{ "a CQ one entry short", { .cq_less = 1 } },
	};
	int before = failures;
	unsigned int k;
	int i;

	static const struct flaw old_rule = { .copies_unseen = true };
	struct seen seen = { 0 };
	unsigned long over;

	for (k = 0; k < sizeof(negs) / sizeof(negs[0]); k++) {
		memset(&seen, 0, sizeof(seen));
		over = 0;
		for (i = 0; i < 200; i++)
			over += walk(&negs[k].flaw, 20000, true, &seen);
		printf("# negative control \"%s\": %lu overflows in %lu posts\n",
		       negs[k].name, over, seen.posts);
		EXPECT(over > 0, "negative control \"%s\" saw no overflow",
		       negs[k].name);
	}
	/* the rule before: no overflow, but copies stay at idle */
	memset(&seen, 0, sizeof(seen));
	over = 0;
	for (i = 0; i < 200; i++)
		over += walk(&old_rule, 20000, true, &seen);
	printf("# negative control \"copies not counted\": %lu of %lu idle points with copies held (%u at most), %lu overflows\n",
	       seen.idle_copies, seen.idle_checks, seen.idle_copies_max, over);
	EXPECT(seen.idle_copies > 0 && !over,
	       "negative control \"copies not counted\": %lu idle points with copies, %lu overflows",
	       seen.idle_copies, over);
	report("negative controls", before);
}

/* ---- rdma ops ------------------------------------------------------------ */

/* An op of nwr work requests posted as send.c does: as many as the extra
 * room allows, the rest when completions free room (the send work runs
 * again).  In flight already: busy other extra requests.  The rounds.
 */
static u32 op_rounds(u32 nwr, u32 extra, u32 busy, u32 pair)
{
	u32 posted = 0, done = 0, in_flight = busy, rounds = 0;
	unsigned long guard = 0;

	while (done < nwr && guard++ < 100000) {
		bool any = false;

		while (posted < nwr &&
		       rds_ib_sendq_extra_room(in_flight, pair, extra)) {
			posted++;
			in_flight++;
			any = true;
		}
		rounds += any;
		/* some completions: the op's or the others' */
		if (in_flight) {
			u32 k = 1 + rnd() % in_flight;

			while (k--) {
				if (busy && rnd() % 2) {
					busy--;
				} else if (done < posted) {
					done++;
				} else if (busy) {
					busy--;
				} else {
					break;
				}
				in_flight--;
			}
		}
	}
	EXPECT(done == nwr, "op of %u WRs: %u done", nwr, done);
	return rounds;
}

static void test_rdma(void)
{
	struct rds_ib_sendq_sizes sz;
	int before = failures;
	u32 nwr, r, mib;

	rds_ib_sendq_size(RDS_IB_SEND_RING, 0, 0, 3, &sz);
	for (nwr = 1; nwr <= 2048; nwr++) {
		r = op_rounds(nwr, sz.extra, rnd() % (sz.extra + 1), 1);
		EXPECT(r >= (nwr + sz.extra - 1) / sz.extra, "%u WRs in %u",
		       nwr, r);
	}
	/* REG_MR with its LOCAL_INV: two at once always fit eventually */
	for (nwr = 1; nwr <= 200; nwr++)
		op_rounds(nwr, sz.extra, rnd() % (sz.extra + 1), 2);
	mib = rds_ib_sendq_op_wrs(256, sz.sge);
	r = op_rounds(mib, sz.extra, 0, 1);
	printf("# a 1 MiB op: %u WRs of %u SGEs, %u rounds with the queue idle\n",
	       mib, sz.sge, r);
	EXPECT(mib == 86 && r >= 2, "1 MiB: %u WRs, %u rounds", mib, r);
	report("rdma", before);
}

int main(int argc, char **argv)
{
	unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 0) :
				       (unsigned long)time(NULL);

	rng = seed ? seed : 1;
	printf("TAP version 13\n1..5\n# seed %lu (rerun: %s %lu)\n", seed,
	       argv[0], seed);
	test_sizes();
	test_rxe();
	test_walks();
	test_negative();
	test_rdma();
	return failures ? 1 : 0;
}
