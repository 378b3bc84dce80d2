// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/ib/credit.c, credit-based flow control.
 *
 * Two sides, each with P receive buffers for the connection plus a control
 * reserve of one, are driven through every ordering (to a depth) of: send
 * a data message, send a credit update when the policy wants one, deliver
 * the oldest frame in flight either way, a control frame's send completion
 * (any time after its delivery), and refill a consumed receive buffer.
 * Checked:
 *   - no SEND ever arrives without a posted receive buffer (no RNR), so a
 *     sender never has more data SENDs in flight than it was granted;
 *   - the receiver never sees a credit violation from a correct sender;
 *   - no deadlock: from every reached state, delivering, refilling and
 *     sending the updates the policy asks for lets both sides send data
 *     again.
 * Then long random walks with a printed seed, and the recv checks against
 * a misbehaving peer.
 *
 * The device pool's rules (rds_ib_pool_take(), rds_ib_pool_keep_back()):
 * connections of a pool of B buffers come and go and receive data frames,
 * in every order to a depth, on small pools, then in random walks on large
 * ones.  Checked after every event: no connection is refused and none
 * holds less than the smallest grant; the buffers free plus those the
 * connections hold are always B; a connection's peer has one credit per
 * buffer it holds but the control one; a data frame never deepens the
 * debt.  And from every reached state, frames on the connections above the
 * smallest grant pay the debt back: the pool comes out of debt or every
 * connection is at the smallest grant.  With rds_ib_pool_earn(): no
 * connection ever holds more than its cap (what it took at setup), a data
 * frame never takes the pool below zero, and, out of debt, frames on the
 * connections below their cap bring each back to it or the pool to no
 * free buffer.  Negative controls: the same checks must fail with an earn
 * rule that ignores the cap, one that earns into debt and one that never
 * earns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../net/ib/credit.h"

#define MAXF	64
#define MAXAVAIL 1000

static int failures;
static bool quiet;	/* a negative control runs: its failures are expected */
static unsigned long states;
static int tap_n;

struct frame { u8 grant; bool data; };

struct side {
	struct rds_ib_credit c;
	int posted;		/* receive buffers posted for the connection */
	int consumed;		/* used by an arrival, not yet refilled */
	int reserve;		/* control reserve posted (0 or 1) */
	int ctrl_delivered;	/* our control frame arrived, completion due */
	int sent;
};

struct model {
	int p[2];		/* buffers per side */
	int threshold;
	struct side s[2];
	struct frame wire[2][MAXF];	/* wire[x]: x -> other */
	int n[2];
};

enum { E_DATA, E_UPDATE, E_DELIVER, E_CTRL_DONE, E_REFILL, E_MAX };

#define FAIL(fmt, ...) do {						\
	if (++failures < 10 && !quiet)					\
		printf("# FAIL %s:%d: " fmt "\n", __FILE__, __LINE__,	\
		       ##__VA_ARGS__);					\
	return -1;							\
} while (0)

static void init_model(struct model *m, int p0, int p1, int threshold)
{
	memset(m, 0, sizeof(*m));
	m->p[0] = p0;
	m->p[1] = p1;
	m->threshold = threshold;
	m->s[0].posted = p0;
	m->s[1].posted = p1;
	m->s[0].reserve = 1;
	m->s[1].reserve = 1;
	/* Handshake: each grants the other all of its posted buffers. */
	rds_ib_credit_init(&m->s[0].c, p1, p0);
	rds_ib_credit_init(&m->s[1].c, p0, p1);
}

static bool enabled(const struct model *m, int e, int x, int maxsent)
{
	struct rds_ib_credit c = m->s[x].c;
	u8 g;

	switch (e) {
	case E_DATA:
		return m->s[x].sent < maxsent && m->n[x] < MAXF &&
		       rds_ib_credit_take(&c, &g);
	case E_UPDATE:
		(void)g;
		return m->n[x] < MAXF &&
		       rds_ib_credit_want_update(&c, m->threshold);
	case E_DELIVER:
		return m->n[x] > 0;
	case E_CTRL_DONE:
		return m->s[x].ctrl_delivered;
	case E_REFILL:
		return m->s[x].consumed > 0;
	}
	return false;
}

static int step(struct model *m, int e, int x)
{
	struct side *me = &m->s[x], *peer = &m->s[!x];
	struct frame f;
	u8 g;

	switch (e) {
	case E_DATA:
	case E_UPDATE:
		if (e == E_UPDATE)
			rds_ib_credit_take_ctrl(&me->c, &g);
		else if (!rds_ib_credit_take(&me->c, &g))
			FAIL("take refused although enabled");
		m->wire[x][m->n[x]].grant = g;
		m->wire[x][m->n[x]].data = e == E_DATA;
		m->n[x]++;
		if (e == E_DATA)
			me->sent++;
		return 0;
	case E_DELIVER:
		f = m->wire[x][0];
		memmove(&m->wire[x][0], &m->wire[x][1],
			(m->n[x] - 1) * sizeof(f));
		m->n[x]--;
		if (f.data) {
			if (peer->posted <= 0)
				FAIL("RNR: side %d got data with no receive posted",
				     !x);
			peer->posted--;
			peer->consumed++;
		} else {
			/* Taken from the reserve, reposted at once. */
			if (peer->reserve <= 0)
				FAIL("RNR: side %d got a control frame with no reserve",
				     !x);
			me->ctrl_delivered = 1;
		}
		if (!rds_ib_credit_recv(&peer->c, f.data, f.grant, MAXAVAIL))
			FAIL("side %d refused a correct sender's frame", !x);
		return 0;
	case E_CTRL_DONE:
		me->ctrl_delivered = 0;
		rds_ib_credit_ctrl_done(&me->c);
		return 0;
	case E_REFILL:
		me->consumed--;
		me->posted++;
		rds_ib_credit_refilled(&me->c, 1);
		return 0;
	}
	return -1;
}

/* Settle: deliver, refill and send wanted updates until nothing moves. */
static int settle(struct model *m)
{
	int guard, x, moved;

	for (guard = 0; guard < 10000; guard++) {
		moved = 0;
		for (x = 0; x < 2; x++) {
			if (enabled(m, E_DELIVER, x, 0)) {
				if (step(m, E_DELIVER, x))
					return -1;
				moved = 1;
			} else if (enabled(m, E_CTRL_DONE, x, 0)) {
				if (step(m, E_CTRL_DONE, x))
					return -1;
				moved = 1;
			} else if (enabled(m, E_REFILL, x, 0)) {
				if (step(m, E_REFILL, x))
					return -1;
				moved = 1;
			} else if (enabled(m, E_UPDATE, x, 0)) {
				if (step(m, E_UPDATE, x))
					return -1;
				moved = 1;
			}
		}
		if (!moved)
			return 0;
	}
	FAIL("updates never stop");
}

static int check_live(const struct model *m0)
{
	struct model m = *m0;
	int x;

	if (settle(&m))
		return -1;
	for (x = 0; x < 2; x++) {
		if (m.s[x].posted + m.s[x].consumed != m.p[x])
			FAIL("side %d lost receive buffers", x);
		if (!enabled(&m, E_DATA, x, 1 << 30))
			FAIL("deadlock: side %d cannot send (avail %u unadv %u "
			     "peer_avail %u; peer avail %u unadv %u)", x,
			     m.s[x].c.avail, m.s[x].c.unadv, m.s[x].c.peer_avail,
			     m.s[!x].c.avail, m.s[!x].c.unadv);
	}
	return 0;
}

/* Without give-back every credit side x used is somewhere: its data
 * frame on the wire, the peer's buffer waiting for its refill, the
 * refill not yet granted, or the grant on its way back.
 */
static int check_used(const struct model *m)
{
	int x, k;

	for (x = 0; x < 2; x++) {
		u32 where = m->s[!x].consumed + m->s[!x].c.unadv;

		for (k = 0; k < m->n[x]; k++)
			where += m->wire[x][k].data;
		for (k = 0; k < m->n[!x]; k++)
			where += m->wire[!x][k].grant;
		if (m->s[x].c.used != where)
			FAIL("side %d: %u credits in use, %u sent and not granted back",
			     x, m->s[x].c.used, where);
		if (m->s[x].c.used + m->s[x].c.avail != (u32)m->p[!x])
			FAIL("side %d: %u in use and %u available of a grant of %d",
			     x, m->s[x].c.used, m->s[x].c.avail, m->p[!x]);
	}
	return 0;
}

static void explore(const struct model *m, int depth, int maxsent)
{
	struct model c;
	int e, x;

	if (failures >= 10)
		return;
	states++;
	if (check_used(m) || check_live(m) || !depth)
		return;
	for (e = 0; e < E_MAX; e++) {
		for (x = 0; x < 2; x++) {
			if (!enabled(m, e, x, maxsent))
				continue;
			c = *m;
			if (step(&c, e, x) == 0)
				explore(&c, depth - 1, maxsent);
		}
	}
}

static void report(const char *name, int before)
{
	printf("%sok %d %s\n", failures > before ? "not " : "", ++tap_n, name);
}

static u64 rng;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static int misbehaving_peer(void)
{
	struct rds_ib_credit c;
	u8 g;

	rds_ib_credit_init(&c, 0, 2);
	if (rds_ib_credit_take(&c, &g))
		FAIL("sent with no credit");
	if (!rds_ib_credit_recv(&c, true, 0, MAXAVAIL) ||
	    !rds_ib_credit_recv(&c, true, 0, MAXAVAIL))
		FAIL("two granted sends refused");
	if (rds_ib_credit_recv(&c, true, 0, MAXAVAIL))
		FAIL("a third data SEND beyond the grant accepted");
	if (!rds_ib_credit_recv(&c, false, 1, MAXAVAIL))
		FAIL("a control frame needs no grant");
	rds_ib_credit_init(&c, MAXAVAIL - 10, 5);
	if (rds_ib_credit_recv(&c, false, 11, MAXAVAIL))
		FAIL("a grant past the maximum accepted");
	rds_ib_credit_init(&c, 1, 0);
	rds_ib_credit_refilled(&c, 300);
	if (!rds_ib_credit_want_update(&c, 1000))
		FAIL("no update for a peer with no grant left");
	rds_ib_credit_take_ctrl(&c, &g);
	if (g != 255 || c.unadv != 45)
		FAIL("grants are capped at 255 per frame (%u, %u left)", g,
		     c.unadv);
	if (rds_ib_credit_want_update(&c, 1))
		FAIL("a second control frame while one is in flight");
	rds_ib_credit_ctrl_done(&c);
	if (!rds_ib_credit_want_update(&c, 1))
		FAIL("no update once the first completed");
	return 0;
}

/* Returns a receiver must refuse, and the sender's side of a return. */
static int bad_returns(void)
{
	struct rds_ib_credit c;

	rds_ib_credit_init(&c, 0, 10);
	if (rds_ib_credit_returned(&c, false, false, 6, 4))
		FAIL("a return we did not ask for accepted");
	if (rds_ib_credit_returned(&c, true, true, 6, 4))
		FAIL("a return on a data frame accepted");
	if (rds_ib_credit_returned(&c, true, false, 0, 4))
		FAIL("a return of 0 credits accepted");
	if (rds_ib_credit_returned(&c, true, false, 11, 4))
		FAIL("a return of more than was granted accepted");
	if (rds_ib_credit_returned(&c, true, false, 7, 4))
		FAIL("a return leaving the peer fewer than keep accepted");
	if (c.peer_avail != 10)
		FAIL("a refused return changed the grants (%u)", c.peer_avail);
	if (!rds_ib_credit_returned(&c, true, false, 6, 4) || c.peer_avail != 4)
		FAIL("a return down to keep refused (%u left)", c.peer_avail);
	rds_ib_credit_init(&c, 4, 0);
	if (rds_ib_credit_give_back(&c, 4, 255))
		FAIL("gave back the last keep credits");
	rds_ib_credit_init(&c, 300, 0);
	if (rds_ib_credit_give_back(&c, 4, 255) != 255 || c.avail != 45)
		FAIL("a return is capped at what a frame carries (%u left)",
		     c.avail);
	c.ctrl_busy = true;
	if (rds_ib_credit_give_back(&c, 4, 255))
		FAIL("a return while a control frame is in flight");
	if (rds_ib_pool_release(65, 60, 5) != 60 ||
	    rds_ib_pool_release(8, 60, 5) != 3 ||
	    rds_ib_pool_release(5, 1, 5) != 0)
		FAIL("release below the smallest grant");
	return 0;
}

/* The corking rule of packed frames (the credits' part), or the one
 * before credits in use were counted: the grant less avail, which
 * counts the credits given back as in use.
 */
static bool (*corked)(const struct rds_ib_credit *c, u32 grant) =
	rds_ib_credit_corked;

static bool corked_by_avail(const struct rds_ib_credit *c, u32 grant)
{
	u32 eighth = grant / 8;

	return c->avail < grant && grant - c->avail >= (eighth ? eighth : 1);
}

/* The module's figures: a grant of 64, keep 4.  A connection sends 20
 * frames and is granted them back, gives back 60, then sends again while
 * its peer earns the 60 back (two credits a frame); then a peer that
 * keeps 10 refills back and earns them back.  The corking rule (the
 * credits' part) must let a lone message go while fewer than 8 credits
 * are in use, whatever was given back, and hold it from 8.
 */
static int cork_after_give_back(void)
{
	struct rds_ib_credit c;
	u32 i, back;
	u8 g;

	rds_ib_credit_init(&c, 64, 64);
	for (i = 0; i < 20; i++)
		rds_ib_credit_take(&c, &g);
	if (c.used != 20 || !corked(&c, 64))
		FAIL("20 credits in use (%u) do not cork", c.used);
	if (!rds_ib_credit_recv(&c, false, 20, 64) || c.used || corked(&c, 64))
		FAIL("all granted back: %u in use, corked %d", c.used,
		     corked(&c, 64));
	back = rds_ib_credit_give_back(&c, RDS_IB_CREDIT_KEEP, 255);
	if (back != 60 || c.avail != 4 || c.used)
		FAIL("gave back %u: %u left, %u in use", back, c.avail, c.used);
	rds_ib_credit_ctrl_done(&c);
	if (corked(&c, 64))
		FAIL("after a give-back, idle: corked with %u available", c.avail);
	for (i = 0; i < 3; i++)
		rds_ib_credit_take(&c, &g);
	if (c.used != 3 || corked(&c, 64))
		FAIL("after a give-back, 3 in use (%u), 1 available: corked %d",
		     c.used, corked(&c, 64));
	/* The peer earns: 6 for the 3. */
	if (!rds_ib_credit_recv(&c, false, 6, 64) || c.avail != 7 || c.used)
		FAIL("earned 6: %u available, %u in use", c.avail, c.used);
	for (i = 0; i < 7; i++)
		rds_ib_credit_take(&c, &g);
	if (c.used != 7 || corked(&c, 64))
		FAIL("7 in use (%u): corked", c.used);
	/* 6 come back with 6 more (earned), 1 is on its way: an earn's
	 * extra grant cannot be told from a refill, none is in use now.
	 */
	if (!rds_ib_credit_recv(&c, false, 12, 64) || c.avail != 12 ||
	    c.used)
		FAIL("earned 12: %u available, %u in use", c.avail, c.used);
	for (i = 0; i < 7; i++)
		rds_ib_credit_take(&c, &g);
	if (c.used != 7 || corked(&c, 64))
		FAIL("7 in use (%u), after a give-back: corked", c.used);
	rds_ib_credit_take(&c, &g);
	if (c.used != 8 || !corked(&c, 64))
		FAIL("8 in use (%u), after a give-back: not corked", c.used);
	/* The rest is earned back: the full grant again, none in use. */
	while (c.avail + c.used < 64) {
		u32 used = c.used;

		if (!rds_ib_credit_recv(&c, false, used + 1, 64) ||
		    c.used || !rds_ib_credit_take(&c, &g))
			FAIL("earning back: %u available, %u in use", c.avail,
			     c.used);
	}
	if (!rds_ib_credit_recv(&c, false, c.used, 64) || c.avail != 64 ||
	    c.used)
		FAIL("earned back: %u available, %u in use", c.avail, c.used);

	/* Kept back: in use, as the grant less avail, until earned back. */
	rds_ib_credit_init(&c, 64, 64);
	for (i = 0; i < 10; i++)
		rds_ib_credit_take(&c, &g);
	if (!rds_ib_credit_recv(&c, false, 0, 64) || c.used != 10 ||
	    !corked(&c, 64))
		FAIL("10 kept back: %u in use, corked %d", c.used,
		     corked(&c, 64));
	for (i = 0; i < 10; i++) {
		rds_ib_credit_take(&c, &g);
		if (!rds_ib_credit_recv(&c, false, 2, 64) ||
		    c.used + c.avail != 64)
			FAIL("earning back: %u in use, %u available", c.used,
			     c.avail);
	}
	if (c.used || c.avail != 64)
		FAIL("earned back: %u in use, %u available", c.used, c.avail);
	return 0;
}

/* The rules under test here, or broken ones (negative controls):
 * an init that leaves the credits in use as they were, a give-back that
 * takes the credits given back off the credits in use.
 */
static void (*credit_init)(struct rds_ib_credit *c, u32 granted_to_us,
			   u32 granted_to_peer) = rds_ib_credit_init;
static u32 (*credit_give_back)(struct rds_ib_credit *c, u32 keep, u32 max) =
	rds_ib_credit_give_back;

static void init_keeps_used(struct rds_ib_credit *c, u32 granted_to_us,
			    u32 granted_to_peer)
{
	u32 used = c->used;

	rds_ib_credit_init(c, granted_to_us, granted_to_peer);
	c->used = used;
}

static u32 give_back_lowers_used(struct rds_ib_credit *c, u32 keep, u32 max)
{
	u32 n = rds_ib_credit_give_back(c, keep, max);

	c->used -= c->used < n ? c->used : n;
	return n;
}

/* A reconnect initialises the credit state of the connection before
 * (cm.c): nothing of it may be left, the credits in use least of all
 * (a lone message would be corked on a new connection with nothing in
 * flight).  And credits given back are not those in use: a peer that
 * kept all 10 refills back leaves 10 in use after a give-back of 50,
 * as do 10 frames whose grants have not come yet.
 */
static int reinit_and_keep_back(void)
{
	struct rds_ib_credit c;
	u32 i, back;
	u8 g;

	memset(&c, 0xa5, sizeof(c));
	c.ctrl_busy = true;
	credit_init(&c, 64, 32);
	if (c.avail != 64 || c.used || c.unadv || c.peer_avail != 32 ||
	    c.ctrl_busy || corked(&c, 64))
		FAIL("init over a used state: avail %u used %u unadv %u peer_avail %u busy %d",
		     c.avail, c.used, c.unadv, c.peer_avail, c.ctrl_busy);
	for (i = 0; i < 10; i++)
		rds_ib_credit_take(&c, &g);
	rds_ib_credit_refilled(&c, 3);
	rds_ib_credit_take_ctrl(&c, &g);
	credit_init(&c, 64, 64);
	if (c.avail != 64 || c.used || c.unadv || c.peer_avail != 64 ||
	    c.ctrl_busy || corked(&c, 64))
		FAIL("reconnect after 10 sent: avail %u used %u unadv %u peer_avail %u busy %d",
		     c.avail, c.used, c.unadv, c.peer_avail, c.ctrl_busy);

	for (i = 0; i < 2; i++) {
		credit_init(&c, 64, 64);
		while (c.used < 10)
			rds_ib_credit_take(&c, &g);
		/* i == 0: the peer keeps all 10 refills back (a grant of
		 * 0 rides on its next frame); i == 1: no grant yet.
		 */
		if (!i && !rds_ib_credit_recv(&c, false, 0, 64))
			FAIL("a grant of 0 refused");
		back = credit_give_back(&c, RDS_IB_CREDIT_KEEP, 255);
		if (back != 50 || c.avail != 4 || c.used != 10 ||
		    !corked(&c, 64))
			FAIL("%s, gave back %u: %u left, %u in use (10), corked %d",
			     i ? "10 on their way" : "10 kept back", back,
			     c.avail, c.used, corked(&c, 64));
	}
	return 0;
}

#define POOL_CONNS	4

struct pool {
	int b, want, min;
	int free;
	int held[POOL_CONNS];	/* 0: no connection in this slot */
	int credits[POOL_CONNS];
	int cap[POOL_CONNS];	/* what it took at setup */
};

/* The earn rule under test: rds_ib_pool_earn(), or a broken one. */
static bool (*pool_earn)(int free, u32 reserved, u32 cap) = rds_ib_pool_earn;

static bool earn_uncapped(int free, u32 reserved, u32 cap)
{
	(void)reserved;
	(void)cap;
	return free > 0;
}

static bool earn_into_debt(int free, u32 reserved, u32 cap)
{
	return free >= 0 && reserved < cap;
}

static bool earn_never(int free, u32 reserved, u32 cap)
{
	(void)free;
	(void)reserved;
	(void)cap;
	return false;
}

static unsigned long pool_states;

static int pool_least(const struct pool *p)
{
	return p->want < p->min ? p->want : p->min;
}

static int pool_check(const struct pool *p)
{
	int i, sum = p->free;

	for (i = 0; i < POOL_CONNS; i++) {
		if (!p->held[i])
			continue;
		sum += p->held[i];
		if (p->held[i] < pool_least(p))
			FAIL("pool %d want %d min %d: connection %d holds %d",
			     p->b, p->want, p->min, i, p->held[i]);
		if (p->credits[i] != p->held[i] - 1)
			FAIL("pool %d: connection %d holds %d with %d credits",
			     p->b, i, p->held[i], p->credits[i]);
		if (p->held[i] > p->cap[i])
			FAIL("pool %d: connection %d holds %d, above its cap %d",
			     p->b, i, p->held[i], p->cap[i]);
	}
	if (sum != p->b)
		FAIL("pool %d want %d min %d: %d free and held", p->b,
		     p->want, p->min, sum);
	return 0;
}

/* Event e on slot i: 0 connect, 1 end, 2 a data frame received. */
static int pool_step(struct pool *p, int e, int i)
{
	int take, before = p->free;

	switch (e) {
	case 0:
		take = rds_ib_pool_take(p->free, p->want, p->min);
		if (take < pool_least(p) || take > p->want)
			FAIL("pool %d want %d min %d free %d: took %d", p->b,
			     p->want, p->min, p->free, take);
		if (p->free >= p->want && take != p->want)
			FAIL("pool %d: %d free, %d wanted, took %d", p->b,
			     p->free, p->want, take);
		p->free -= take;
		p->held[i] = take;
		p->credits[i] = take - 1;
		p->cap[i] = take;
		break;
	case 1:
		p->free += p->held[i];
		p->held[i] = 0;
		p->credits[i] = 0;
		break;
	default:
		/* the peer used a credit; the buffer is reposted */
		p->credits[i]--;
		if (rds_ib_pool_keep_back(p->free, p->held[i], p->min)) {
			p->held[i]--;
			p->free++;
		} else if (pool_earn(p->free, p->held[i], p->cap[i])) {
			p->held[i]++;
			p->free--;
			p->credits[i] += 2;
		} else {
			p->credits[i]++;
		}
		if (p->free < before && p->free < 0)
			FAIL("pool %d: a data frame deepened the debt (%d -> %d)",
			     p->b, before, p->free);
	}
	return pool_check(p);
}

static bool pool_enabled(const struct pool *p, int e, int i)
{
	return e == 0 ? !p->held[i] : e == 1 ? p->held[i] > 0 :
	       p->credits[i] > 0;
}

/* Frames on the connections above the smallest grant pay the debt. */
static int pool_check_repaid(const struct pool *p0)
{
	struct pool p = *p0;
	int i, steps, busy;

	for (steps = 0; steps < 10000 && p.free < 0; steps++) {
		busy = 0;
		for (i = 0; i < POOL_CONNS; i++)
			if (p.held[i] > pool_least(&p) && p.credits[i] > 0) {
				if (pool_step(&p, 2, i))
					return -1;
				busy = 1;
			}
		if (!busy)
			break;
	}
	if (p.free < 0) {
		for (i = 0; i < POOL_CONNS; i++)
			if (p.held[i] > pool_least(&p))
				FAIL("pool %d want %d min %d: debt %d left, connection %d holds %d",
				     p.b, p.want, p.min, -p.free, i,
				     p.held[i]);
		return 0;
	}
	/* Out of debt: frames on the connections below their cap (that
	 * have a credit to send one with) earn back.
	 */
	for (steps = 0; steps < 10000 && p.free > 0; steps++) {
		busy = 0;
		for (i = 0; i < POOL_CONNS; i++)
			if (p.held[i] && p.held[i] < p.cap[i] &&
			    p.credits[i] > 0) {
				if (pool_step(&p, 2, i))
					return -1;
				busy = 1;
			}
		if (!busy)
			break;
	}
	if (p.free <= 0)
		return 0;
	for (i = 0; i < POOL_CONNS; i++)
		if (p.held[i] && p.held[i] < p.cap[i] && p.credits[i] > 0)
			FAIL("pool %d want %d min %d: %d free, connection %d holds %d of its %d",
			     p.b, p.want, p.min, p.free, i, p.held[i], p.cap[i]);
	return 0;
}

static void pool_explore(const struct pool *p, int depth)
{
	int e, i;

	pool_states++;
	if (pool_check_repaid(p) || !depth)
		return;
	for (e = 0; e < 3; e++)
		for (i = 0; i < POOL_CONNS; i++) {
			struct pool q = *p;

			if (!pool_enabled(&q, e, i))
				continue;
			if (pool_step(&q, e, i))
				return;
			pool_explore(&q, depth - 1);
		}
}

static void pool_init(struct pool *p, int b, int want, int min)
{
	memset(p, 0, sizeof(*p));
	p->b = b;
	p->want = want;
	p->min = min;
	p->free = b;
}

/* Every order to depth 7 on pools of 1..8 buffers; stops at a failure. */
static void pool_exhaustive(void)
{
	int f = failures, k, want, min;

	pool_states = 0;
	for (k = 1; k <= 8 && failures == f; k++)
		for (want = 1; want <= 4; want++)
			for (min = 1; min <= 3; min++) {
				struct pool p;

				pool_init(&p, k, want, min);
				pool_explore(&p, 7);
			}
}

/*
 * Give-back (rds_ib_credit_give_back(), rds_ib_credit_returned(),
 * rds_ib_pool_release()) with the pool rules, end to end: GB_CONNS
 * connections of one sender host to one receiver host whose pool has B
 * buffers.  Each connection has the sender's credit state, the
 * receiver's, the buffers the receiver holds for it (held, its setup
 * take cap), and two wires: data frames and returns toward the
 * receiver, grants (control frames) back.  Events, per connection: send
 * a data frame, give back (idle), receive the oldest frame at the
 * receiver (a data frame's buffer is refilled by the pool rules), send
 * a credit update, receive the oldest update at the sender.  Every
 * order to a depth, each state once with the most depth left.
 */
#define GB_CONNS	3
#define GB_WIRE		6
#define GB_DEPTH	12

struct gb_conn {
	struct rds_ib_credit s;		/* the sender's side */
	struct rds_ib_credit r;		/* the receiver's side */
	int held, cap;
	int kept;			/* refills kept back, not earned back */
	int earned;			/* extra grants earning back credits
					 * given back, since nothing was in
					 * flight (below)
					 */
	u8 fw[GB_WIRE];			/* to the receiver: 0 data, n return */
	u8 bw[GB_WIRE];			/* to the sender: grants */
	u8 nf, nb;
};

struct gb {
	int b, want, min, keep, threshold;
	int free;
	struct gb_conn c[GB_CONNS];
};

enum { G_SEND, G_RETURN, G_RECV, G_GRANT, G_GRANT_RECV, G_MAX };

/* The rules under test, or broken ones (negative controls). */
static u32 (*gb_give_back)(struct rds_ib_credit *c, u32 keep, u32 max) =
	rds_ib_credit_give_back;
static u32 (*gb_release)(u32 reserved, u32 n, u32 min) = rds_ib_pool_release;

/* The sender takes a grant (the receiver's control frame). */
static bool grant_recv(struct rds_ib_credit *c, u8 grant, u32 max)
{
	return rds_ib_credit_recv(c, false, grant, max);
}

static bool (*gb_grant_recv)(struct rds_ib_credit *c, u8 grant, u32 max) =
	grant_recv;

static bool grant_recv_unfloored(struct rds_ib_credit *c, u8 grant, u32 max)
{
	u32 used = c->used;

	if (!rds_ib_credit_recv(c, false, grant, max))
		return false;
	c->used = used - grant;
	return true;
}

static bool grant_recv_keeps_used(struct rds_ib_credit *c, u8 grant, u32 max)
{
	u32 used = c->used;

	if (!rds_ib_credit_recv(c, false, grant, max))
		return false;
	c->used = used;
	return true;
}

static u32 give_back_keeps_count(struct rds_ib_credit *c, u32 keep, u32 max)
{
	struct rds_ib_credit tmp = *c;

	return rds_ib_credit_give_back(&tmp, keep, max);
}

static u32 release_one_more(u32 reserved, u32 n, u32 min)
{
	return rds_ib_pool_release(reserved, n, min) + 1;
}

static u32 give_back_never(struct rds_ib_credit *c, u32 keep, u32 max)
{
	(void)c;
	(void)keep;
	(void)max;
	return 0;
}

static int gb_least(const struct gb *g)
{
	return g->want < g->min ? g->want : g->min;
}

static void gb_init(struct gb *g, int b, int want, int keep, int threshold)
{
	int i, take;

	memset(g, 0, sizeof(*g));
	g->b = b;
	g->want = want;
	g->keep = keep;
	g->min = keep + 1;
	g->threshold = threshold;
	g->free = b;
	for (i = 0; i < GB_CONNS; i++) {
		struct gb_conn *c = &g->c[i];

		take = rds_ib_pool_take(g->free, want, g->min);
		g->free -= take;
		c->held = take;
		c->cap = take;
		rds_ib_credit_init(&c->s, take - 1, 0);
		rds_ib_credit_init(&c->r, 0, take - 1);
	}
}

static bool gb_enabled(const struct gb *g, int e, int i)
{
	const struct gb_conn *c = &g->c[i];
	struct rds_ib_credit t = c->s;

	switch (e) {
	case G_SEND:
		return c->nf < GB_WIRE && c->s.avail;
	case G_RETURN:
		return c->nf < GB_WIRE && gb_give_back(&t, g->keep, 255);
	case G_RECV:
		return c->nf;
	case G_GRANT:
		return c->nb < GB_WIRE &&
		       rds_ib_credit_want_update(&c->r, g->threshold);
	case G_GRANT_RECV:
		return c->nb;
	}
	return false;
}

/* The receiver's refill of a data frame's buffer (srq.c). */
static u32 gb_refill(struct gb *g, struct gb_conn *c)
{
	if (rds_ib_pool_keep_back(g->free, c->held, g->min)) {
		c->held--;
		g->free++;
		c->kept++;
		return 0;
	}
	if (pool_earn(g->free, c->held, c->cap)) {
		c->held++;
		g->free--;
		if (c->kept)
			c->kept--;
		else
			c->earned++;
		return 2;
	}
	return 1;
}

/* Connection c's data frames sent and not granted back: on the wire,
 * refills not yet granted and grants on their way back (an earn's extra
 * grant counts as one more: the sender cannot tell it from a refill).
 */
static u32 gb_sent(const struct gb_conn *c)
{
	u32 sent = c->r.unadv;
	int k;

	for (k = 0; k < c->nf; k++)
		sent += !c->fw[k];
	for (k = 0; k < c->nb; k++)
		sent += c->bw[k];
	return sent;
}

static int gb_step_one(struct gb *g, int e, int i)
{
	struct gb_conn *c = &g->c[i];
	u32 n, rel;
	u8 grant, f;

	switch (e) {
	case G_SEND:
		if (!rds_ib_credit_take(&c->s, &grant) || grant)
			FAIL("give-back: send refused or granting");
		c->fw[c->nf++] = 0;
		return 0;
	case G_RETURN:
		n = gb_give_back(&c->s, g->keep, 255);
		if (!n)
			FAIL("give-back: nothing given back although enabled");
		rds_ib_credit_take_ctrl(&c->s, &grant);
		c->fw[c->nf++] = n;
		return 0;
	case G_RECV:
		f = c->fw[0];
		memmove(c->fw, c->fw + 1, --c->nf);
		if (!rds_ib_credit_recv(&c->r, !f, 0, MAXAVAIL))
			FAIL("give-back: a correct sender's frame refused");
		if (!f) {
			rds_ib_credit_refilled(&c->r, gb_refill(g, c));
			return 0;
		}
		if (!rds_ib_credit_returned(&c->r, true, false, f, g->keep))
			FAIL("give-back: a correct return of %u refused (%u granted)",
			     f, c->r.peer_avail);
		rel = gb_release(c->held, f, g->min);
		c->held -= rel;
		g->free += rel;
		rds_ib_credit_ctrl_done(&c->s);
		return 0;
	case G_GRANT:
		rds_ib_credit_take_ctrl(&c->r, &grant);
		c->bw[c->nb++] = grant;
		return 0;
	case G_GRANT_RECV:
		f = c->bw[0];
		memmove(c->bw, c->bw + 1, --c->nb);
		if (!gb_grant_recv(&c->s, f, c->cap - 1))
			FAIL("give-back: a grant of %u refused (%u held)", f,
			     c->s.avail);
		rds_ib_credit_ctrl_done(&c->r);
		return 0;
	}
	return -1;
}

/* An event, then: with nothing in flight nor kept back, the credits in
 * use are 0 (gb_check()), exact again, and the count of extras that may
 * make them short starts over.
 */
static int gb_step(struct gb *g, int e, int i)
{
	struct gb_conn *c = &g->c[i];

	if (gb_step_one(g, e, i))
		return -1;
	if (!gb_sent(c) && !c->kept)
		c->earned = 0;
	return 0;
}

/* After every event. */
static int gb_check(const struct gb *g)
{
	int i, k, sum = g->free;

	for (i = 0; i < GB_CONNS; i++) {
		const struct gb_conn *c = &g->c[i];
		u32 inflight = 0, sent = gb_sent(c);

		sum += c->held;
		for (k = 0; k < c->nf; k++)
			inflight += c->fw[k] ? c->fw[k] : 1;
		for (k = 0; k < c->nb; k++)
			inflight += c->bw[k];
		if ((u32)c->held != 1 + c->r.peer_avail + c->r.unadv)
			FAIL("give-back B %d: connection %d holds %d, promised 1 + %u + %u",
			     g->b, i, c->held, c->r.peer_avail, c->r.unadv);
		if (c->r.peer_avail != c->s.avail + inflight)
			FAIL("give-back B %d: connection %d: %u granted, the sender has %u and %u in flight",
			     g->b, i, c->r.peer_avail, c->s.avail, inflight);
		if (c->held < gb_least(g) || c->held > c->cap)
			FAIL("give-back B %d: connection %d holds %d (least %d, setup %d)",
			     g->b, i, c->held, gb_least(g), c->cap);
		/* The credits in use: within the grant, and none but those
		 * sent and not granted back, or kept back.
		 */
		if (c->s.avail > (u32)c->cap - 1 ||
		    c->s.used > (u32)c->cap - 1 - c->s.avail)
			FAIL("give-back B %d: connection %d: %u in use and %u available of a grant of %d",
			     g->b, i, c->s.used, c->s.avail, c->cap - 1);
		if (c->s.used > sent + c->kept)
			FAIL("give-back B %d: connection %d: %u in use, %u sent and not granted back, %d kept back",
			     g->b, i, c->s.used, sent, c->kept);
		/* A lower estimate: sent + kept - used is the extra grants
		 * that earned back credits given back and were taken off
		 * (each grant received takes its count off), less what the
		 * floor at 0 left out; so short by at most earned.
		 */
		if (c->s.used + c->earned < sent + c->kept)
			FAIL("give-back B %d: connection %d: %u in use, %u sent and not granted back, %d kept back, %d earned back",
			     g->b, i, c->s.used, sent, c->kept, c->earned);
	}
	if (sum != g->b)
		FAIL("give-back B %d: %d free and held", g->b, sum);
	return 0;
}

/* Deliver everything both ways and send the updates wanted. */
static int gb_settle(struct gb *g)
{
	int guard, i, moved;

	for (guard = 0; guard < 10000; guard++) {
		moved = 0;
		for (i = 0; i < GB_CONNS; i++) {
			int e;

			for (e = G_RECV; e < G_MAX; e++)
				if (gb_enabled(g, e, i)) {
					if (gb_step(g, e, i) || gb_check(g))
						return -1;
					moved = 1;
				}
		}
		if (!moved)
			return 0;
	}
	FAIL("give-back: updates never stop");
}

/* Connection i, settled, is idle: the receiver's ACK of its last frame
 * grants the refills left (a control frame carries them all).  Then no
 * credit of i is in use but those kept back, and, with none kept back,
 * a lone small message goes at once (rds_ib_pack_corked()).
 */
static int gb_check_idle(struct gb *g, int i)
{
	struct gb_conn *c = &g->c[i];

	if (c->r.unadv && !c->r.ctrl_busy &&
	    (gb_step(g, G_GRANT, i) || gb_check(g) || gb_settle(g)))
		return -1;
	if (c->r.unadv)
		FAIL("give-back B %d: connection %d: %u refills never granted",
		     g->b, i, c->r.unadv);
	if (c->s.used > (u32)c->kept)
		FAIL("give-back B %d: idle connection %d: %u credits in use, %d kept back",
		     g->b, i, c->s.used, c->kept);
	if (!c->kept && corked(&c->s, c->cap - 1))
		FAIL("give-back B %d: idle connection %d (%u of %d available, %u in use) corks a lone message",
		     g->b, i, c->s.avail, c->cap - 1, c->s.used);
	return 0;
}

/* Connection i keeps sending (the others idle, or first giving back
 * when others_return): it must come back to its setup grant unless the
 * pool has no free buffer left.
 */
static int gb_check_regain(const struct gb *g0, int i, bool others_return)
{
	struct gb g = *g0;
	int j, rounds;

	if (gb_settle(&g))
		return -1;
	if (others_return) {
		for (j = 0; j < GB_CONNS; j++) {
			if (j == i)
				continue;
			if (gb_enabled(&g, G_RETURN, j) &&
			    (gb_step(&g, G_RETURN, j) || gb_check(&g)))
				return -1;
		}
		if (gb_settle(&g))
			return -1;
		for (j = 0; j < GB_CONNS; j++)
			if (j != i &&
			    (u32)g.c[j].held > 1 + g.keep + g.c[j].r.unadv &&
			    g.c[j].cap > 1 + g.keep)
				FAIL("give-back B %d: idle connection %d still holds %d (keep %d, %u refills ungranted)",
				     g.b, j, g.c[j].held, g.keep,
				     g.c[j].r.unadv);
		for (j = 0; j < GB_CONNS; j++)
			if (j != i && gb_check_idle(&g, j))
				return -1;
	}
	for (rounds = 0; rounds < 1000; rounds++) {
		if (g.c[i].held == g.c[i].cap || g.free <= 0)
			return 0;
		if (!gb_enabled(&g, G_SEND, i))
			FAIL("give-back B %d: connection %d starved", g.b, i);
		if (gb_step(&g, G_SEND, i) || gb_check(&g) || gb_settle(&g))
			return -1;
	}
	FAIL("give-back B %d want %d keep %d: connection %d sends on and holds %d of %d, %d free",
	     g.b, g.want, g.keep, i, g.c[i].held, g.c[i].cap, g.free);
}

static int gb_check_live(const struct gb *g0)
{
	struct gb g = *g0;
	int i;

	if (gb_settle(&g))
		return -1;
	for (i = 0; i < GB_CONNS; i++)
		if (!g.c[i].s.avail)
			FAIL("give-back B %d: connection %d cannot send", g.b, i);
	for (i = 0; i < GB_CONNS; i++)
		if (gb_check_idle(&g, i))
			return -1;
	for (i = 0; i < GB_CONNS; i++)
		if (gb_check_regain(g0, i, false) ||
		    gb_check_regain(g0, i, true))
			return -1;
	return 0;
}

/* Visited states (a key of every field that changes), with the most
 * depth left they were explored with.
 */
#define GB_HASH_BITS	20
#define GB_KEY		(GB_CONNS * (11 + 2 * GB_WIRE) + 1)

struct gb_seen {
	u8 key[GB_KEY];
	u8 depth;
	bool used;
};

static struct gb_seen *gb_seen;
static unsigned long gb_states, gb_full;

static void gb_key(const struct gb *g, u8 *key)
{
	int i, k = 0;

	memset(key, 0, GB_KEY);
	key[k++] = (u8)g->free;
	for (i = 0; i < GB_CONNS; i++) {
		const struct gb_conn *c = &g->c[i];

		key[k++] = c->s.avail;
		key[k++] = c->s.used;
		key[k++] = c->kept;
		key[k++] = c->earned;
		key[k++] = c->s.ctrl_busy;
		key[k++] = c->r.peer_avail;
		key[k++] = c->r.unadv;
		key[k++] = c->r.ctrl_busy;
		key[k++] = c->held;
		key[k++] = c->nf;
		key[k++] = c->nb;
		memcpy(key + k, c->fw, c->nf);
		memcpy(key + k + GB_WIRE, c->bw, c->nb);
		k += 2 * GB_WIRE;
	}
}

/* Whether g was explored with depth or more left; else records it. */
static bool gb_visited(const struct gb *g, int depth)
{
	size_t k, mask = ((size_t)1 << GB_HASH_BITS) - 1;
	u64 h = 1469598103934665603ULL;
	u8 key[GB_KEY];

	gb_key(g, key);
	for (k = 0; k < GB_KEY; k++)
		h = (h ^ key[k]) * 1099511628211ULL;
	for (k = 0; k <= mask; k++) {
		struct gb_seen *s = &gb_seen[(h + k) & mask];

		if (!s->used) {
			memcpy(s->key, key, GB_KEY);
			s->depth = depth;
			s->used = true;
			gb_states++;
			return false;
		}
		if (!memcmp(s->key, key, GB_KEY)) {
			if (s->depth >= depth)
				return true;
			s->depth = depth;
			return false;
		}
	}
	gb_full++;
	return false;
}

static void gb_explore(const struct gb *g, int depth)
{
	int e, i;

	if (failures >= 10 || gb_visited(g, depth))
		return;
	if (gb_check(g) || gb_check_live(g) || !depth)
		return;
	for (e = 0; e < G_MAX; e++)
		for (i = 0; i < GB_CONNS; i++) {
			struct gb c = *g;

			if (!gb_enabled(&c, e, i))
				continue;
			if (gb_step(&c, e, i))
				return;
			gb_explore(&c, depth - 1);
		}
}

/* Pools of 3 x keep + 3 (every connection at the smallest grant) up to
 * three full grants and 2 more, want keep + 2 and keep + 3.
 */
static void gb_exhaustive(int depth)
{
	int f = failures, keep, want, b, thr;

	gb_states = 0;
	gb_full = 0;
	for (keep = 1; keep <= 2 && failures == f; keep++)
		for (want = keep + 2; want <= keep + 3; want++)
			for (b = GB_CONNS * (keep + 1);
			     b <= GB_CONNS * want + 2 && failures == f; b++)
				for (thr = 1; thr <= 2; thr++) {
					struct gb g;

					memset(gb_seen, 0, sizeof(*gb_seen) <<
					       GB_HASH_BITS);
					gb_init(&g, b, want, keep, thr);
					gb_explore(&g, depth);
				}
}

int main(int argc, char **argv)
{
	u64 seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (u64)time(NULL);
	static const int cfg[][3] = {
		/* buffers side 0, side 1, update threshold */
		{ 1, 1, 1 }, { 1, 2, 2 }, { 2, 2, 2 }, { 2, 3, 1 }, { 3, 3, 2 },
		{ 4, 2, 3 },
	};
	struct model m;
	unsigned int k, w;
	char name[512];
	int f;

	rng = seed | 1;
	printf("TAP version 13\n1..%zu\n", sizeof(cfg) / sizeof(cfg[0]) + 23);
	printf("# seed 0x%llx (rerun: %s 0x%llx)\n", (unsigned long long)seed,
	       argv[0], (unsigned long long)seed);

	for (k = 0; k < sizeof(cfg) / sizeof(cfg[0]); k++) {
		f = failures;
		states = 0;
		init_model(&m, cfg[k][0], cfg[k][1], cfg[k][2]);
		explore(&m, 11, 4);
		snprintf(name, sizeof(name),
			 "every ordering to depth 11, buffers %d/%d, threshold %d: "
			 "%lu states, no RNR, no deadlock, credits in use exact",
			 cfg[k][0], cfg[k][1], cfg[k][2], states);
		report(name, f);
	}

	f = failures;
	for (w = 0; w < 20000 && failures == f; w++) {
		int i, p0 = 1 + rnd(40), p1 = 1 + rnd(40);

		init_model(&m, p0, p1, 1 + rnd(p0 > p1 ? p0 : p1));
		for (i = 0; i < 400; i++) {
			int e = rnd(E_MAX), x = rnd(2);

			if (enabled(&m, e, x, 1 << 30) && step(&m, e, x))
				break;
			if (check_used(&m) || (i % 50 == 0 && check_live(&m)))
				break;
		}
	}
	report("20000 random walks of 400 events, 1..40 buffers a side, credits in use exact", f);

	f = failures;
	misbehaving_peer();
	report("a peer sending beyond its grant or over-granting is caught", f);

	f = failures;
	pool_exhaustive();
	snprintf(name, sizeof(name),
		 "the receive pool, every order to depth 7, 1..8 buffers, want 1..4, min 1..3: %lu states, never refused, conserved, within caps, debt repaid, earned back",
		 pool_states);
	report(name, f);

	f = failures;
	for (w = 0; w < 2000 && failures == f; w++) {
		struct pool p;
		int i;

		pool_init(&p, 1 + rnd(2048), 2 + rnd(128), 1 + rnd(8));
		for (i = 0; i < 2000; i++) {
			int e = rnd(3), c = rnd(POOL_CONNS);

			if (pool_enabled(&p, e, c) && pool_step(&p, e, c))
				break;
			if (i % 100 == 0 && pool_check_repaid(&p))
				break;
		}
	}
	report("the receive pool, 2000 random walks of 2000 events, pools of 1..2048", f);

	/* Negative controls: each broken earn rule must be caught. */
	for (k = 0; k < 3; k++) {
		static bool (*const broken[])(int, u32, u32) = {
			earn_uncapped, earn_into_debt, earn_never,
		};
		static const char *const what[] = {
			"ignores the cap", "earns into debt", "never earns",
		};

		f = failures;
		pool_earn = broken[k];
		quiet = true;
		pool_exhaustive();
		quiet = false;
		pool_earn = rds_ib_pool_earn;
		snprintf(name, sizeof(name),
			 "negative control: an earn rule that %s is caught",
			 what[k]);
		/* the control's failures are its pass, none its failure */
		w = failures > f;
		failures = f + !w;
		report(name, f);
	}

	f = failures;
	bad_returns();
	report("give-back: returns unasked, on data, of 0, beyond the grant or below keep are refused; a return keeps keep credits", f);

	f = failures;
	cork_after_give_back();
	report("grant 64, keep 4: after giving back 60 a lone message is corked from 8 credits in use, not before; earned back to 64; kept-back credits in use until earned back", f);

	f = failures;
	corked = corked_by_avail;
	quiet = true;
	cork_after_give_back();
	quiet = false;
	corked = rds_ib_credit_corked;
	w = failures > f;
	failures = f + !w;
	report("negative control: the corking rule by the grant less avail is caught after a give-back", f);

	f = failures;
	reinit_and_keep_back();
	report("grant 64, keep 4: an init over a used state (a reconnect) leaves none in use; 10 kept back or on their way stay in use after a give-back of 50", f);

	for (k = 0; k < 2; k++) {
		f = failures;
		quiet = true;
		if (k)
			credit_give_back = give_back_lowers_used;
		else
			credit_init = init_keeps_used;
		reinit_and_keep_back();
		credit_init = rds_ib_credit_init;
		credit_give_back = rds_ib_credit_give_back;
		quiet = false;
		w = failures > f;
		failures = f + !w;
		report(k ? "negative control: a give-back that lowers the credits in use is caught" :
			   "negative control: an init that keeps the credits in use is caught", f);
	}

	gb_seen = calloc((size_t)1 << GB_HASH_BITS, sizeof(*gb_seen));
	if (!gb_seen) {
		printf("Bail out! no memory for the give-back model\n");
		return 1;
	}
	f = failures;
	gb_exhaustive(GB_DEPTH);
	snprintf(name, sizeof(name),
		 "give-back, %d connections, every order to depth %d, keep 1..2, want keep+2..keep+3, pools 3(keep+1)..3want+2: %lu states (%lu unrecorded), promised == granted, grants within min..setup, no starvation, idle ones give back, a sender regains its setup grant, credits in use within the grant and those sent or kept back, short of them by at most the extras earned back since nothing was in flight, none but kept back when idle, an idle connection not corked",
		 GB_CONNS, GB_DEPTH, gb_states, gb_full);
	report(name, f);

	f = failures;
	for (w = 0; w < 300 && failures == f; w++) {
		struct gb g;
		int i, want = 2 + rnd(128);

		gb_init(&g, 1 + rnd(3 * want + 8), want, RDS_IB_CREDIT_KEEP,
			1 + rnd(want / 4 + 1));
		for (i = 0; i < 3000; i++) {
			int e = rnd(G_MAX), c = rnd(GB_CONNS);

			if (gb_enabled(&g, e, c) &&
			    (gb_step(&g, e, c) || gb_check(&g)))
				break;
			if (i % 500 == 0 && gb_check_live(&g))
				break;
		}
	}
	report("give-back, 300 random walks of 3000 events, keep 4, want 2..129", f);

	/* Negative controls: each broken rule must be caught. */
	for (k = 0; k < 8; k++) {
		static const char *const what[] = {
			"a sender that does not lower its count after a return",
			"a receiver releasing one buffer too many",
			"no earn-back",
			"no give-back",
			"the corking rule by the grant less avail",
			"credits in use not floored at 0",
			"credits in use that grants do not lower",
			"a return that lowers the credits in use",
		};

		f = failures;
		quiet = true;
		if (k == 0)
			gb_give_back = give_back_keeps_count;
		else if (k == 1)
			gb_release = release_one_more;
		else if (k == 2)
			pool_earn = earn_never;
		else if (k == 3)
			gb_give_back = give_back_never;
		else if (k == 4)
			corked = corked_by_avail;
		else if (k == 5)
			gb_grant_recv = grant_recv_unfloored;
		else if (k == 6)
			gb_grant_recv = grant_recv_keeps_used;
		else
			gb_give_back = give_back_lowers_used;
		gb_exhaustive(GB_DEPTH);
		gb_give_back = rds_ib_credit_give_back;
		gb_release = rds_ib_pool_release;
		pool_earn = rds_ib_pool_earn;
		corked = rds_ib_credit_corked;
		gb_grant_recv = grant_recv;
		quiet = false;
		snprintf(name, sizeof(name),
			 "negative control: give-back with %s is caught",
			 what[k]);
		w = failures > f;
		failures = f + !w;
		report(name, f);
	}
	free(gb_seen);
	return failures ? 1 : 0;
}
