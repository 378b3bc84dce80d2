// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/seq.c, the pure sequence/ACK/retransmission logic.
 *
 * A model of one sender S and one receiver R joined by an RC connection is
 * driven through every ordering of these events, up to a depth, and then
 * through long random walks (printed seed):
 *
 *   queue      S queues a message (with or without an RDMA op)
 *   post       S posts the next unsent message (and its op) on the QP
 *   complete   a send completion for ANY posted frame, in any order: before
 *              or after R delivered it, and after R's ACK freed it (the
 *              send-completion-after-reply case)
 *   deliver    R receives the oldest frame in flight
 *   acktimer   R's delayed-ACK timer fires
 *   ackarrive  S receives the oldest ACK in flight
 *   error      the connection dies: everything in flight is lost, whether
 *              or not its send completion was seen (an HCA may ack a send
 *              and then fail before the data reached memory)
 *   reconnect  hellos are exchanged, S frees / resends / drops
 *   restart    R's module is reloaded (new generation, state forgotten)
 *
 * After each sequence the model quiesces (reconnects, drains every frame
 * and ACK) and the invariants are checked:
 *   - R delivers in order and never delivers a message twice to the same
 *     incarnation; no sequence gap is ever seen;
 *   - S frees a message only after R delivered it;
 *   - an RDMA op is posted at most once; a message is dropped only if its
 *     op was posted, and then never delivered afterwards;
 *   - at the end nothing is held: each message was delivered (exactly once
 *     to the final incarnation unless acked by an earlier one) or dropped
 *     with its op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../net/seq.h"

#define MAXMSG		6
#define MAXFLIGHT	16
#define MAX_PKTS	2	/* small, so grouping decisions vary */
#define MAX_BYTES	1000000

static int failures;
static unsigned long checks;

#define CHECK(cond, st, fmt, ...) do {					\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		if (failures < 10) {					\
			printf("# FAIL %s:%d: " fmt "\n", __FILE__,	\
			       __LINE__, ##__VA_ARGS__);		\
			dump_trace(st);					\
		}							\
		return -1;						\
	}								\
} while (0)

enum ev { E_QUEUE, E_QUEUE_OP, E_POST, E_COMPLETE, E_DELIVER, E_ACKTIMER,
	E_ACKARRIVE, E_ERROR, E_RECONNECT, E_RESTART, E_MAX };
static const char *const ev_names[E_MAX] = {
	"queue", "queue+op", "post", "complete", "deliver", "acktimer",
	"ackarrive", "error", "reconnect", "restart",
};

struct msg {
	u64 seq;
	bool held;		/* on S's queues */
	bool has_op;
	enum rds_seq_op op;
	int op_posts;		/* how often the op was handed to the HCA */
	bool sent_this_conn;	/* posted on the current connection */
	bool retrans;		/* next post is a retransmission */
	bool dropped;
	int deliveries[4];	/* per R incarnation */
	bool delivered_any;
};

struct frame { int m; bool retrans; bool ack_req; };

struct state {
	/* S */
	u32 s_gen;
	struct rds_seq_tx tx;
	struct rds_seq_rx s_rx;		/* unused direction, for the hello */
	struct rds_seq_peer s_peer;
	struct msg msgs[MAXMSG];
	int nmsg;
	/* R */
	u32 r_gen;
	int r_inc;			/* incarnation index */
	struct rds_seq_rx rx;
	struct rds_seq_tx r_tx;		/* unused direction, for the hello */
	struct rds_seq_peer r_peer;
	u64 r_last;			/* last delivered seq this incarnation */
	bool r_have_last;		/* r_last is set (0 is a valid seq) */
	/* the connection */
	bool up;
	struct frame wire[MAXFLIGHT];	/* S -> R data */
	int nwire;
	u64 acks[MAXFLIGHT];		/* R -> S ACKs */
	int nacks;
	int pending[MAXFLIGHT];		/* posted frames awaiting completion */
	int npending;
	int errors, restarts;
	/* trace */
	int trace[64];
	int ntrace;
};

static void dump_trace(const struct state *st)
{
	int i;

	printf("#   events:");
	for (i = 0; i < st->ntrace; i++)
		printf(" %s", ev_names[st->trace[i]]);
	printf("\n");
}

static void init_state(struct state *st, u64 first)
{
	memset(st, 0, sizeof(*st));
	st->s_gen = 0x51;
	st->r_gen = 0x72;
	rds_seq_tx_init(&st->tx, first);
	rds_seq_tx_init(&st->r_tx, 1);
	rds_seq_rx_init(&st->rx);
	rds_seq_rx_init(&st->s_rx);
}

static u64 oldest_held(const struct state *st)
{
	int i;

	for (i = 0; i < st->nmsg; i++)
		if (st->msgs[i].held)
			return st->msgs[i].seq;
	return st->tx.next;
}

static void free_acked(struct state *st)
{
	int i;

	for (i = 0; i < st->nmsg; i++)
		if (st->msgs[i].held && rds_seq_tx_is_acked(&st->tx, st->msgs[i].seq))
			st->msgs[i].held = false;
}

static int conn_error(struct state *st)
{
	int i;

	st->up = false;
	st->nwire = 0;
	st->nacks = 0;
	/* Flushed WRs complete with an error: the op stays "posted". */
	st->npending = 0;
	for (i = 0; i < st->nmsg; i++)
		st->msgs[i].sent_this_conn = false;
	return 0;
}

static int reconnect(struct state *st)
{
	struct rds_seq_hello h;
	enum rds_seq_hello_verdict v;
	int i;

	/* S (active) -> R: R applies, then answers. */
	rds_seq_hello_fill(&h, st->s_gen, &st->s_peer, &st->s_rx, &st->tx,
			   oldest_held(st));
	v = rds_seq_hello_apply(&h, st->r_gen, &st->r_peer, &st->r_tx, &st->rx);
	CHECK(v != RDS_HELLO_BAD, st, "R refused S's hello");
	if (v == RDS_HELLO_NEW_PEER)
		st->r_have_last = false;
	rds_seq_hello_fill(&h, st->r_gen, &st->r_peer, &st->rx, &st->r_tx, 1);
	v = rds_seq_hello_apply(&h, st->s_gen, &st->s_peer, &st->tx, &st->s_rx);
	CHECK(v != RDS_HELLO_BAD, st, "S refused R's hello");

	for (i = 0; i < st->nmsg; i++) {
		struct msg *m = &st->msgs[i];

		if (!m->held)
			continue;
		switch (rds_seq_resend_choice(&st->tx, m->seq, m->op)) {
		case RDS_RESEND_FREE:
			CHECK(m->delivered_any, st, "seq %llu freed undelivered",
			      (unsigned long long)m->seq);
			m->held = false;
			break;
		case RDS_RESEND_DROP:
			CHECK(m->has_op && m->op_posts > 0, st,
			      "seq %llu dropped without a posted op",
			      (unsigned long long)m->seq);
			m->held = false;
			m->dropped = true;
			break;
		case RDS_RESEND_SEND:
			CHECK(!m->has_op || m->op_posts == 0, st,
			      "seq %llu resent with a posted op",
			      (unsigned long long)m->seq);
			m->retrans = true;
			break;
		}
	}
	st->up = true;
	return 0;
}

static bool enabled(const struct state *st, int e, int maxmsg, int maxerr,
		    int maxrestart)
{
	int i;

	switch (e) {
	case E_QUEUE:
	case E_QUEUE_OP:
		return st->nmsg < maxmsg;
	case E_POST:
		if (!st->up || st->nwire >= MAXFLIGHT)
			return false;
		for (i = 0; i < st->nmsg; i++)
			if (st->msgs[i].held && !st->msgs[i].sent_this_conn)
				return true;
		return false;
	case E_COMPLETE:
		return st->npending > 0;
	case E_DELIVER:
		return st->nwire > 0;
	case E_ACKTIMER:
		return st->up && st->rx.unacked > 0 && st->nacks < MAXFLIGHT;
	case E_ACKARRIVE:
		return st->nacks > 0;
	case E_ERROR:
		return st->up && st->errors < maxerr;
	case E_RECONNECT:
		return !st->up;
	case E_RESTART:
		return st->restarts < maxrestart;
	}
	return false;
}

static int send_ack(struct state *st)
{
	if (st->nacks < MAXFLIGHT)
		st->acks[st->nacks++] = rds_seq_rx_ack(&st->rx);
	rds_seq_rx_acked(&st->rx);
	return 0;
}

/* Apply event e; "arg" picks which pending completion when several. */
static int step(struct state *st, int e, int arg)
{
	struct msg *m;
	int i;

	if (st->ntrace < 64)
		st->trace[st->ntrace++] = e;
	switch (e) {
	case E_QUEUE:
	case E_QUEUE_OP:
		m = &st->msgs[st->nmsg++];
		memset(m, 0, sizeof(*m));
		m->seq = rds_seq_tx_assign(&st->tx);
		m->held = true;
		m->has_op = e == E_QUEUE_OP;
		m->op = m->has_op ? RDS_OP_UNPOSTED : RDS_OP_NONE;
		return 0;
	case E_POST:
		for (i = 0; i < st->nmsg; i++)
			if (st->msgs[i].held && !st->msgs[i].sent_this_conn)
				break;
		m = &st->msgs[i];
		m->sent_this_conn = true;
		rds_seq_tx_posted(&st->tx, m->seq);
		if (m->has_op) {
			CHECK(m->op_posts == 0, st, "op of seq %llu posted twice",
			      (unsigned long long)m->seq);
			m->op_posts++;
			m->op = RDS_OP_POSTED;
		}
		st->wire[st->nwire].m = i;
		st->wire[st->nwire].retrans = m->retrans;
		st->wire[st->nwire].ack_req =
			rds_seq_tx_want_ack(&st->tx, 100, MAX_PKTS, MAX_BYTES,
					    false, m->retrans);
		st->nwire++;
		st->pending[st->npending++] = i;
		return 0;
	case E_COMPLETE:
		i = st->pending[arg];
		memmove(&st->pending[arg], &st->pending[arg + 1],
			(st->npending - arg - 1) * sizeof(int));
		st->npending--;
		/* The message may be long freed: only a held one changes. */
		m = &st->msgs[i];
		if (m->held && m->op == RDS_OP_POSTED)
			m->op = RDS_OP_DONE;
		return 0;
	case E_DELIVER: {
		struct frame f = st->wire[0];

		memmove(&st->wire[0], &st->wire[1], (st->nwire - 1) * sizeof(f));
		st->nwire--;
		m = &st->msgs[f.m];
		switch (rds_seq_rx_check(&st->rx, m->seq)) {
		case RDS_RX_DELIVER:
			CHECK(!st->r_have_last || rds_seq_after(m->seq, st->r_last), st,
			      "delivered %llu after %llu",
			      (unsigned long long)m->seq,
			      (unsigned long long)st->r_last);
			/* Whatever is skipped must be gone from S for good. */
			for (i = 0; i < st->nmsg; i++) {
				struct msg *o = &st->msgs[i];

				if (rds_seq_before(o->seq, m->seq) &&
				    (!st->r_have_last ||
				     rds_seq_after(o->seq, st->r_last)))
					CHECK(!o->held, st,
					      "skipped %llu still held",
					      (unsigned long long)o->seq);
			}
			CHECK(!m->dropped, st, "seq %llu delivered after its drop",
			      (unsigned long long)m->seq);
			m->deliveries[st->r_inc]++;
			CHECK(m->deliveries[st->r_inc] == 1, st,
			      "seq %llu delivered twice to incarnation %d",
			      (unsigned long long)m->seq, st->r_inc);
			m->delivered_any = true;
			st->r_last = m->seq;
			st->r_have_last = true;
			rds_seq_rx_done(&st->rx, m->seq, 100);
			break;
		case RDS_RX_DUP:
			CHECK(f.retrans, st, "duplicate %llu not flagged",
			      (unsigned long long)m->seq);
			break;
		case RDS_RX_UNSYNCED:
			CHECK(0, st, "data %llu before the hello",
			      (unsigned long long)m->seq);
			break;
		case RDS_RX_FAR:
			CHECK(0, st, "data %llu outside the window of %llu",
			      (unsigned long long)m->seq,
			      (unsigned long long)st->rx.next);
		}
		if (rds_seq_rx_ack_when(&st->rx, f.ack_req, MAX_PKTS, MAX_BYTES) ==
		    RDS_ACK_NOW)
			send_ack(st);
		return 0;
	}
	case E_ACKTIMER:
		return send_ack(st);
	case E_ACKARRIVE: {
		u64 a = st->acks[0];

		memmove(&st->acks[0], &st->acks[1], (st->nacks - 1) * sizeof(u64));
		st->nacks--;
		CHECK(rds_seq_tx_ack(&st->tx, a) != RDS_ACK_BOGUS, st,
		      "bogus ack %llu", (unsigned long long)a);
		for (i = 0; i < st->nmsg; i++)
			if (st->msgs[i].held &&
			    rds_seq_tx_is_acked(&st->tx, st->msgs[i].seq))
				CHECK(st->msgs[i].delivered_any, st,
				      "ack frees undelivered %llu",
				      (unsigned long long)st->msgs[i].seq);
		free_acked(st);
		return 0;
	}
	case E_ERROR:
		st->errors++;
		return conn_error(st);
	case E_RECONNECT:
		return reconnect(st);
	case E_RESTART:
		st->restarts++;
		conn_error(st);
		st->r_gen += 0x100;
		st->r_inc++;
		rds_seq_rx_init(&st->rx);
		rds_seq_tx_init(&st->r_tx, 1);
		st->r_peer.gen = 0;
		st->r_have_last = false;
		return 0;
	}
	return -1;
}

/* Bring everything to rest and check the final invariants. */
static int quiesce_and_check(struct state *st)
{
	int guard = 0, i;

	if (!st->up && reconnect(st))
		return -1;
	while (guard++ < 1000) {
		if (enabled(st, E_POST, 0, 0, 0)) {
			if (step(st, E_POST, 0))
				return -1;
		} else if (st->nwire) {
			if (step(st, E_DELIVER, 0))
				return -1;
		} else if (st->rx.unacked || st->rx.owed) {
			send_ack(st);
		} else if (st->nacks) {
			if (step(st, E_ACKARRIVE, 0))
				return -1;
		} else {
			break;
		}
	}
	CHECK(guard < 1000, st, "no quiescence");
	for (i = 0; i < st->nmsg; i++) {
		struct msg *m = &st->msgs[i];
		int inc, total = 0;

		CHECK(!m->held, st, "seq %llu still held at rest",
		      (unsigned long long)m->seq);
		for (inc = 0; inc <= st->r_inc; inc++) {
			CHECK(m->deliveries[inc] <= 1, st, "double delivery");
			total += m->deliveries[inc];
		}
		if (m->dropped)
			CHECK(m->has_op && m->op_posts == 1, st,
			      "dropped seq %llu: op posts %d",
			      (unsigned long long)m->seq, m->op_posts);
		else
			CHECK(total >= 1, st, "seq %llu lost",
			      (unsigned long long)m->seq);
		/* With no restart, exactly once and never dropped after delivery. */
		if (!st->restarts)
			CHECK(total + m->dropped == 1, st,
			      "seq %llu: %d deliveries, dropped %d",
			      (unsigned long long)m->seq, total, m->dropped);
		CHECK(m->op_posts <= 1, st, "op posted %d times", m->op_posts);
	}
	return 0;
}

static unsigned long sequences;

static void explore(const struct state *st, int depth, int maxmsg, int maxerr,
		    int maxrestart)
{
	struct state c;
	int e, a;

	if (failures >= 10)
		return;
	c = *st;
	sequences++;
	quiesce_and_check(&c);
	if (!depth)
		return;
	for (e = 0; e < E_MAX; e++) {
		if (!enabled(st, e, maxmsg, maxerr, maxrestart))
			continue;
		for (a = 0; a < (e == E_COMPLETE ? st->npending : 1); a++) {
			c = *st;
			if (step(&c, e, a) == 0)
				explore(&c, depth - 1, maxmsg, maxerr, maxrestart);
		}
	}
}

static u64 rng_state;

static unsigned int rnd(unsigned int n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? rng_state % n : 0;
}

static int tap_n;

static void report(const char *name, int fails_before)
{
	printf("%sok %d %s\n", failures > fails_before ? "not " : "", ++tap_n,
	       name);
}

static int test_compare(void)
{
	struct state dummy = { 0 };
	u64 big = ~0ULL;

	CHECK(rds_seq_before(1, 2), &dummy, "1 < 2");
	CHECK(!rds_seq_before(2, 2), &dummy, "2 !< 2");
	CHECK(rds_seq_before(big, 0), &dummy, "wrap: ~0 < 0");
	CHECK(rds_seq_before(big - 5, 3), &dummy, "wrap: ~0-5 < 3");
	CHECK(rds_seq_after(3, big - 5), &dummy, "wrap: 3 > ~0-5");
	CHECK(!rds_seq_after(5, 5), &dummy, "5 !> 5");
	return 0;
}

static int test_tx_ack(void)
{
	struct state d = { 0 };
	struct rds_seq_tx tx;

	rds_seq_tx_init(&tx, 1);
	CHECK(rds_seq_tx_ack(&tx, 1) == RDS_ACK_BOGUS, &d, "ack of unsent");
	CHECK(rds_seq_tx_ack(&tx, 0) == RDS_ACK_OLD, &d, "ack 0 at start");
	rds_seq_tx_assign(&tx);
	rds_seq_tx_assign(&tx);
	/* Numbered (queued) is not sent: an ACK of it is a lie. */
	CHECK(rds_seq_tx_ack(&tx, 1) == RDS_ACK_BOGUS, &d, "ack of queued");
	rds_seq_tx_posted(&tx, 1);
	CHECK(rds_seq_tx_ack(&tx, 2) == RDS_ACK_BOGUS, &d,
	      "ack of the one not posted");
	CHECK(rds_seq_tx_ack(&tx, 1) == RDS_ACK_NEW, &d, "ack 1");
	CHECK(rds_seq_tx_is_acked(&tx, 1) && !rds_seq_tx_is_acked(&tx, 2), &d,
	      "window after ack 1");
	CHECK(rds_seq_tx_ack(&tx, 1) == RDS_ACK_OLD, &d, "repeated ack");
	CHECK(rds_seq_tx_ack(&tx, 0) == RDS_ACK_OLD, &d, "reordered ack");
	CHECK(rds_seq_tx_ack(&tx, 3) == RDS_ACK_BOGUS, &d, "ack beyond sent");
	rds_seq_tx_posted(&tx, 2);
	rds_seq_tx_posted(&tx, 1);	/* a resend: posted never goes back */
	CHECK(rds_seq_tx_ack(&tx, 2) == RDS_ACK_NEW, &d, "ack 2");
	return 0;
}

static int test_grouping(void)
{
	struct state d = { 0 };
	struct rds_seq_tx tx;
	struct rds_seq_rx rx;
	int i, req = 0, now = 0;

	rds_seq_tx_init(&tx, 1);
	for (i = 0; i < 64; i++)
		req += rds_seq_tx_want_ack(&tx, 10, 8, 1 << 20, false, false);
	CHECK(req == 8, &d, "ACK requested %d times in 64 messages", req);
	CHECK(rds_seq_tx_want_ack(&tx, 10, 8, 1 << 20, false, true), &d,
	      "a retransmission asks for an ACK");
	CHECK(rds_seq_tx_want_ack(&tx, 10, 8, 1 << 20, true, false), &d,
	      "a short send buffer asks for an ACK");
	CHECK(rds_seq_tx_want_ack(&tx, 2 << 20, 8, 1 << 20, false, false), &d,
	      "many bytes ask for an ACK");

	rds_seq_rx_init(&rx);
	rx.synced = true;
	for (i = 1; i <= 64; i++) {
		CHECK(rds_seq_rx_check(&rx, i) == RDS_RX_DELIVER, &d, "in order");
		rds_seq_rx_done(&rx, i, 10);
		if (rds_seq_rx_ack_when(&rx, false, 8, 1 << 20) == RDS_ACK_NOW) {
			now++;
			CHECK(rds_seq_rx_ack(&rx) == (u64)i, &d, "cumulative ack");
			rds_seq_rx_acked(&rx);
		}
	}
	CHECK(now == 8, &d, "%d ACKs for 64 messages (one per 8)", now);
	CHECK(rds_seq_rx_ack_when(&rx, false, 8, 1 << 20) == RDS_ACK_NONE, &d,
	      "nothing pending");
	CHECK(rds_seq_rx_check(&rx, 10) == RDS_RX_DUP, &d, "duplicate");
	CHECK(rds_seq_rx_ack_when(&rx, false, 8, 1 << 20) == RDS_ACK_NOW, &d,
	      "a duplicate makes an ACK owed");
	CHECK(rds_seq_rx_check(&rx, 70) == RDS_RX_DELIVER, &d,
	      "skipped numbers (cancelled or dropped messages) are fine");
	/* The window's edges, from next = 71 and from next = 3 (whose lower
	 * edge wraps below 0).
	 */
	rds_seq_rx_done(&rx, 70, 10);
	CHECK(rds_seq_rx_check(&rx, 70 + RDS_SEQ_RX_WINDOW) == RDS_RX_DELIVER,
	      &d, "last number of the window ahead");
	CHECK(rds_seq_rx_check(&rx, 71 + RDS_SEQ_RX_WINDOW) == RDS_RX_FAR, &d,
	      "first number beyond the window ahead");
	CHECK(rds_seq_rx_check(&rx, 71 - RDS_SEQ_RX_WINDOW) == RDS_RX_DUP, &d,
	      "last number of the window behind");
	CHECK(rds_seq_rx_check(&rx, 70 - RDS_SEQ_RX_WINDOW) == RDS_RX_FAR, &d,
	      "first number beyond the window behind");
	CHECK(rds_seq_rx_check(&rx, 71 + (1ULL << 62)) == RDS_RX_FAR, &d,
	      "2^62 ahead");
	CHECK(rds_seq_rx_check(&rx, 71 + (1ULL << 63)) == RDS_RX_FAR, &d,
	      "2^63 away");
	rx.next = 3;
	CHECK(rds_seq_rx_check(&rx, 3 - RDS_SEQ_RX_WINDOW) == RDS_RX_DUP, &d,
	      "window behind across the wrap");
	CHECK(rds_seq_rx_check(&rx, 2 - RDS_SEQ_RX_WINDOW) == RDS_RX_FAR, &d,
	      "beyond the window behind across the wrap");
	CHECK(rds_seq_rx_check(&rx, (u64)-1) == RDS_RX_DUP, &d,
	      "2^64 - 1 is just behind 3");
	rds_seq_rx_init(&rx);
	CHECK(rds_seq_rx_check(&rx, 1) == RDS_RX_UNSYNCED, &d,
	      "data before the hello");
	return 0;
}

static int test_hello(void)
{
	struct state d = { 0 };
	struct rds_seq_hello h = { 0 };
	struct rds_seq_peer peer = { 0 };
	struct rds_seq_tx tx;
	struct rds_seq_rx rx;

	rds_seq_tx_init(&tx, 1);
	rds_seq_rx_init(&rx);
	CHECK(rds_seq_hello_apply(&h, 7, &peer, &tx, &rx) == RDS_HELLO_BAD, &d,
	      "generation 0 refused");
	h.gen = 9;
	h.tx_first = 100;
	CHECK(rds_seq_hello_apply(&h, 7, &peer, &tx, &rx) == RDS_HELLO_NEW_PEER,
	      &d, "first contact");
	CHECK(rx.next == 100 && peer.gen == 9, &d, "rx starts at tx_first");
	h.tx_first = 90;
	h.peer_gen = 7;
	h.rx_next = 5;		/* acks 4, never sent */
	CHECK(rds_seq_hello_apply(&h, 7, &peer, &tx, &rx) == RDS_HELLO_BAD, &d,
	      "hello acking the unsent");
	h.peer_gen = 6;		/* meant for an older generation of ours */
	CHECK(rds_seq_hello_apply(&h, 7, &peer, &tx, &rx) == RDS_HELLO_SAME, &d,
	      "stale-generation ack ignored");
	CHECK(tx.acked == 0, &d, "nothing acked by a stale hello");

	/* Messages 1..5 were numbered and cancelled before they were
	 * posted, none is held: our hello says tx_first 6, and a peer that
	 * starts afresh there acknowledges 5 at once.  Not a lie.
	 */
	rds_seq_tx_init(&tx, 1);
	rds_seq_rx_init(&rx);
	peer.gen = 0;
	for (int i = 0; i < 5; i++)
		rds_seq_tx_assign(&tx);
	CHECK(rds_seq_tx_ack(&tx, 5) == RDS_ACK_BOGUS, &d,
	      "ack of the cancelled before any hello");
	rds_seq_hello_fill(&h, 7, &peer, &rx, &tx, tx.next);
	CHECK(h.tx_first == 6, &d, "tx_first after the cancelled");
	CHECK(rds_seq_tx_ack(&tx, 5) == RDS_ACK_NEW, &d,
	      "ack of tx_first - 1 after the hello");
	CHECK(rds_seq_tx_ack(&tx, 6) == RDS_ACK_BOGUS, &d,
	      "ack of tx_first itself, never posted");
	return 0;
}

int main(int argc, char **argv)
{
	struct state st;
	unsigned long walks = 200000, w;
	int f, depth = 12, i;
	u64 seed = (u64)time(NULL);
	u64 firsts[] = { 1, ~0ULL - 3 };	/* and across the wrap */
	unsigned int k;

	if (argc > 1)
		seed = strtoull(argv[1], NULL, 0);
	if (argc > 2)
		depth = atoi(argv[2]);
	rng_state = seed | 1;
	printf("TAP version 13\n1..8\n");
	printf("# seed 0x%llx (rerun: %s 0x%llx)\n", (unsigned long long)seed,
	       argv[0], (unsigned long long)seed);

	f = failures;
	test_compare();
	report("sequence compare survives wrap-around", f);
	f = failures;
	test_tx_ack();
	report("cumulative ACK window: new, old, bogus", f);
	f = failures;
	test_grouping();
	report("ACKs are grouped: 1 per 8 messages, at once when asked", f);
	f = failures;
	test_hello();
	report("hello: first contact, restart, stale and bogus ACKs, cancelled before posted", f);

	for (k = 0; k < 2; k++) {
		char name[128];

		f = failures;
		sequences = 0;
		init_state(&st, firsts[k]);
		reconnect(&st);
		explore(&st, depth, 2, 2, 1);
		snprintf(name, sizeof(name),
			 "every ordering to depth %d, 2 messages, start %s: %lu sequences",
			 depth, k ? "before the wrap" : "at 1", sequences);
		report(name, f);
	}

	f = failures;
	sequences = 0;
	init_state(&st, 1);
	reconnect(&st);
	explore(&st, depth - 1, 3, 1, 1);
	{
		char name[128];

		snprintf(name, sizeof(name),
			 "every ordering to depth %d, 3 messages: %lu sequences",
			 depth - 1, sequences);
		report(name, f);
	}

	f = failures;
	for (w = 0; w < walks && failures < 10; w++) {
		init_state(&st, rnd(2) ? 1 : ~0ULL - rnd(8));
		reconnect(&st);
		for (i = 0; i < 60; i++) {
			int e = rnd(E_MAX), a = 0;

			if (!enabled(&st, e, MAXMSG, 4, 2))
				continue;
			if (e == E_COMPLETE)
				a = rnd(st.npending);
			if (step(&st, e, a))
				break;
		}
		if (i == 60)
			quiesce_and_check(&st);
	}
	{
		char name[128];

		snprintf(name, sizeof(name),
			 "%lu random walks of 60 events, 6 messages", walks);
		report(name, f);
	}
	printf("# %lu checks\n", checks);
	return failures ? 1 : 0;
}
