// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/ib/limit.c: the attempt timeout's verdict, the
 * per-peer connection bound, the bound on passive attempts, the
 * heartbeat's asking interval and when its work runs next.
 *
 * The timeout: an attempt is ended exactly when it is not up and at least
 * the timeout old, for either side, with the side told apart; across the
 * wrap of jiffies (started just below the top of the word).
 *
 * The bound: a peer's connections come and go in random order (a new
 * request, a replacement of a current attempt, an attempt of ours, an
 * end), the module's bookkeeping replayed with rds_ib_peer_admit() as the
 * only rule: the count never passes the bound through a request, and a
 * request below the bound is never refused; replacements and attempts of
 * ours are never refused; with 0, nothing is.  Negative controls: the
 * same checks must fail with a rule that admits one too many and with one
 * that refuses one too early.
 *
 * The bound on passive attempts in flight per device: connections come
 * and go in random order (a request of the peer, new or replacing the
 * current attempt, an attempt of ours, an attempt up, an attempt ended),
 * the module's bookkeeping (cm.c, accept.c) replayed with
 * rds_ib_accept_verdict() as the only rule: after every step the count is
 * exactly the passive attempts in flight, each of them holds one place
 * and no other attempt does; a new request never passes the bound and is
 * never refused below it; a replacement of a passive attempt in flight is
 * never refused; with 0, nothing is.  Negative controls: one too many,
 * one too early, a rule that ignores the place of the attempt replaced
 * (a replacement refused at the bound) and one that keeps a place the
 * connection does not hold (the count falls behind).
 *
 * The heartbeat's asking interval: over every pair of heartbeat_ms and
 * heartbeat_idle_ms from a grid of edge values (0, 1, below and above each
 * other, the defaults, the hour), with and without messages at stake: 0
 * when the heartbeat is off; the heartbeat's interval with messages at
 * stake; without, 0 when the idle interval is 0, else the larger of the
 * two, never shorter than heartbeat_ms; 5 intervals within 32 bits.
 * Negative controls: the smaller of the two, and a rule that ignores the
 * stake, must fail.
 *
 * When the heartbeat work runs next (rds_ib_hb_next()): over a grid of
 * edge values (the silence below, at and past the asking interval, a
 * frame read after the clock, no request or one of this silence or of an
 * earlier one, the verdict's 4 and 5 intervals a jiffy above 4 and 5
 * asking intervals as msecs_to_jiffies() rounds, a give-back ahead, due
 * or past, the bound), each at 5 places of the clock (0, low, below the
 * wrap, at it, at the sign change of long): the delay is the first jiffy
 * at which something is due, found by a scan of the jiffies one by one
 * (the silence reaches the interval; a first request due at once; while
 * asking, a request at tick or the verdict reached; the give-back's time,
 * or tick when it waits; the bound), never 0 and never past the bound;
 * the defaults in real jiffies (HZ 250): 30 s idle, 2 s at stake, the
 * verdict's 4 and 5 intervals.  Negative controls: the old schedule
 * (every tick), one blind to the verdict, to the give-back, to the
 * silence already passed, one that answers 0 for a request due now and
 * one that compares the clock without the wrap must fail the grid.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "../../../net/ib/limit.h"

static void test_overdue(void)
{
	static const unsigned long starts[] = { 0, 1000, ULONG_MAX - 5,
						ULONG_MAX };
	const unsigned long t = 15 * 250;
	int before = failures;
	unsigned int i;
	long d;

	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		unsigned long s = starts[i];

		for (d = -3; d <= 3; d++) {
			unsigned long now = s + t + d;
			enum rds_ib_overdue want_a = d >= 0 ?
				RDS_IB_OVERDUE_ACTIVE : RDS_IB_OVERDUE_NO;
			enum rds_ib_overdue want_p = d >= 0 ?
				RDS_IB_OVERDUE_PASSIVE : RDS_IB_OVERDUE_NO;

			EXPECT(rds_ib_attempt_overdue(true, false, s, now, t) ==
			       want_a, "active, start %lu, %+ld", s, d);
			EXPECT(rds_ib_attempt_overdue(false, false, s, now, t) ==
			       want_p, "passive, start %lu, %+ld", s, d);
			EXPECT(rds_ib_attempt_overdue(true, true, s, now, t) ==
			       RDS_IB_OVERDUE_NO, "up (active), %+ld", d);
			EXPECT(rds_ib_attempt_overdue(false, true, s, now, t) ==
			       RDS_IB_OVERDUE_NO, "up (passive), %+ld", d);
		}
		/* just started, and a clock read before the start (another
		 * CPU): not due
		 */
		EXPECT(rds_ib_attempt_overdue(false, false, s, s, t) ==
		       RDS_IB_OVERDUE_NO, "passive at its start %lu", s);
		EXPECT(rds_ib_attempt_overdue(false, false, s, s - 1, t) ==
		       RDS_IB_OVERDUE_NO, "passive, now before start %lu", s);
	}
	report("attempt timeout: ended exactly when due and not up, across the wrap",
	       before);
}

typedef bool (*admit_fn)(unsigned int conns, unsigned int max);

static bool admit_one_more(unsigned int conns, unsigned int max)
{
	return !max || conns <= max;
}

static bool admit_one_less(unsigned int conns, unsigned int max)
{
	return !max || conns + 1 < max;
}

/* about half of them hold an attempt at a time: above every bound tried */
#define NCONN	600

/* Replay a peer's connections under admit; the rule violations seen. */
static unsigned int walk(admit_fn admit, unsigned int max, unsigned int steps)
{
	bool held[NCONN] = { false };
	unsigned int count = 0, bad = 0, i, c;

	for (i = 0; i < steps; i++) {
		c = rnd() % NCONN;
		switch (rnd() % 3) {
		case 0:	/* a request of the peer for a connection */
			if (held[c])
				break;	/* a replacement: below */
			if (admit(count, max)) {
				held[c] = true;
				count++;
				if (max && count > max)
					bad++;	/* a request passed the bound */
			} else if (!max || count < max) {
				bad++;		/* refused below the bound */
			}
			break;
		case 1:	/* a replacement, or an attempt of ours: taken */
			if (!held[c] && rnd() % 4096 == 0) {
				held[c] = true;	/* ours (seldom: few of
						 * them stay)
						 */
				count++;
			}
			break;
		default:	/* an attempt ends */
			if (held[c]) {
				held[c] = false;
				count--;
			}
			break;
		}
	}
	return bad;
}

static void test_admit(void)
{
	static const unsigned int maxes[] = { 0, 1, 2, 4, 16, 128, 256 };
	unsigned int i, bad;
	int before = failures;

	EXPECT(rds_ib_peer_admit(0, 0) && rds_ib_peer_admit(UINT_MAX, 0),
	       "0: no bound");
	EXPECT(rds_ib_peer_admit(0, 1) && !rds_ib_peer_admit(1, 1),
	       "bound 1");
	EXPECT(rds_ib_peer_admit(127, 128) && !rds_ib_peer_admit(128, 128) &&
	       !rds_ib_peer_admit(129, 128), "bound 128, and above it");
	for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		bad = walk(rds_ib_peer_admit, maxes[i], 200000);
		EXPECT(!bad, "bound %u: %u violations", maxes[i], bad);
	}
	report("peer bound: never passed by a request, never refused below it",
	       before);

	/* Negative controls: the walk sees a rule off by one. */
	before = failures;
	for (i = 1; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		EXPECT(walk(admit_one_more, maxes[i], 200000),
		       "one too many at bound %u not caught", maxes[i]);
		EXPECT(walk(admit_one_less, maxes[i], 200000),
		       "one too early at bound %u not caught", maxes[i]);
	}
	report("negative controls: rules off by one fail the walk", before);
}

typedef enum rds_ib_accept_verdict (*verdict_fn)(bool holds,
						 unsigned int in_flight,
						 unsigned int max);

static enum rds_ib_accept_verdict verdict_one_more(bool holds,
						   unsigned int in_flight,
						   unsigned int max)
{
	if (holds)
		return RDS_IB_ACCEPT_KEEP;
	return max && in_flight > max ? RDS_IB_ACCEPT_REFUSE :
					RDS_IB_ACCEPT_TAKE;
}

static enum rds_ib_accept_verdict verdict_one_less(bool holds,
						   unsigned int in_flight,
						   unsigned int max)
{
	if (holds)
		return RDS_IB_ACCEPT_KEEP;
	return max && in_flight + 1 >= max ? RDS_IB_ACCEPT_REFUSE :
					     RDS_IB_ACCEPT_TAKE;
}

static enum rds_ib_accept_verdict verdict_no_keep(bool holds,
						  unsigned int in_flight,
						  unsigned int max)
{
	(void)holds;
	return rds_ib_accept_verdict(false, in_flight, max);
}

static enum rds_ib_accept_verdict verdict_keep_any(bool holds,
						   unsigned int in_flight,
						   unsigned int max)
{
	if (!max || in_flight < max)
		return RDS_IB_ACCEPT_KEEP;
	return rds_ib_accept_verdict(holds, in_flight, max);
}

/* The attempt of one connection, as the bound sees it. */
enum acc_state {
	ACC_NONE,	/* no attempt */
	ACC_PASSIVE,	/* accepted, not up: must hold a place */
	ACC_ACTIVE,	/* ours, not up: holds none */
	ACC_UP,		/* up: holds none */
};

/* a third of them passive at a time: above every bound tried */
#define ACC_NCONN	1024

/* the refusals of the last acc_walk(): the bound was reached */
static unsigned int acc_refusals;

/* Replay the connections of a device under verdict; the violations seen. */
static unsigned int acc_walk(verdict_fn verdict, unsigned int max,
			     unsigned int steps)
{
	enum acc_state st[ACC_NCONN] = { ACC_NONE };
	bool placed[ACC_NCONN] = { false };
	unsigned int count = 0, bad = 0, passive = 0, held, i, c;
	bool holds;

	acc_refusals = 0;
	for (i = 0; i < steps; i++) {
		c = rnd() % ACC_NCONN;
		switch ((rnd() >> 32) % 4) {
		case 0:	/* a request of the peer, new or a replacement */
			holds = placed[c];
			switch (verdict(holds, count, max)) {
			case RDS_IB_ACCEPT_KEEP:
				/* the replaced attempt's place, if any */
				break;
			case RDS_IB_ACCEPT_TAKE:
				count++;
				if (!holds && max && count > max)
					bad++;	/* passed the bound */
				if (holds)
					count--;	/* the replaced one's end */
				placed[c] = true;
				break;
			default:
				if (holds || !max || count < max)
					bad++;	/* refused for nothing */
				acc_refusals++;
				continue;	/* the current one stays */
			}
			if (st[c] == ACC_PASSIVE)
				passive--;
			st[c] = ACC_PASSIVE;
			passive++;
			break;
		case 1:	/* an attempt of ours (seldom: few of them stay) */
			if (st[c] == ACC_NONE && rnd() % 64 == 0)
				st[c] = ACC_ACTIVE;
			break;
		case 2:	/* the attempt comes up */
			if (st[c] == ACC_ACTIVE || st[c] == ACC_PASSIVE) {
				if (placed[c])
					count--;
				if (st[c] == ACC_PASSIVE)
					passive--;
				placed[c] = false;
				st[c] = ACC_UP;
			}
			break;
		default:	/* the attempt ends (any way) */
			if (placed[c])
				count--;
			if (st[c] == ACC_PASSIVE)
				passive--;
			placed[c] = false;
			st[c] = ACC_NONE;
			break;
		}
		/* exact: the places are the passive attempts in flight
		 * (each one looked at every 16 steps, and at the last)
		 */
		if (count != passive)
			bad++;
		if (i % 16 && i != steps - 1)
			continue;
		held = 0;
		for (c = 0; c < ACC_NCONN; c++) {
			if (placed[c] != (st[c] == ACC_PASSIVE))
				bad++;
			held += placed[c];
		}
		if (count != held)
			bad++;
	}
	return bad;
}

static void test_accept(void)
{
	static const unsigned int maxes[] = { 0, 1, 2, 4, 16, 64, 256 };
	unsigned int i, bad;
	int before = failures;

	EXPECT(rds_ib_accept_verdict(false, 0, 0) == RDS_IB_ACCEPT_TAKE &&
	       rds_ib_accept_verdict(false, UINT_MAX, 0) == RDS_IB_ACCEPT_TAKE,
	       "0: no bound");
	EXPECT(rds_ib_accept_verdict(false, 0, 1) == RDS_IB_ACCEPT_TAKE &&
	       rds_ib_accept_verdict(false, 1, 1) == RDS_IB_ACCEPT_REFUSE,
	       "bound 1");
	EXPECT(rds_ib_accept_verdict(false, 255, 256) == RDS_IB_ACCEPT_TAKE &&
	       rds_ib_accept_verdict(false, 256, 256) == RDS_IB_ACCEPT_REFUSE &&
	       rds_ib_accept_verdict(false, 257, 256) == RDS_IB_ACCEPT_REFUSE,
	       "bound 256, and above it");
	EXPECT(rds_ib_accept_verdict(true, 256, 256) == RDS_IB_ACCEPT_KEEP &&
	       rds_ib_accept_verdict(true, 0, 256) == RDS_IB_ACCEPT_KEEP &&
	       rds_ib_accept_verdict(true, 5, 0) == RDS_IB_ACCEPT_KEEP,
	       "a replacement keeps its place, at the bound too");
	for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		bad = acc_walk(rds_ib_accept_verdict, maxes[i], 40000);
		EXPECT(!bad, "bound %u: %u violations", maxes[i], bad);
		/* the walk reached the bound (none with 0) */
		EXPECT(!maxes[i] == !acc_refusals, "bound %u: %u refusals",
		       maxes[i], acc_refusals);
	}
	report("accept bound: count exact, never passed, never refused below it or for a replacement",
	       before);

	/* Negative controls: the walk sees each wrong rule. */
	before = failures;
	for (i = 1; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		EXPECT(acc_walk(verdict_one_more, maxes[i], 40000),
		       "one too many at bound %u not caught", maxes[i]);
		EXPECT(acc_walk(verdict_one_less, maxes[i], 40000),
		       "one too early at bound %u not caught", maxes[i]);
		EXPECT(acc_walk(verdict_no_keep, maxes[i], 40000),
		       "a replacement refused at bound %u not caught",
		       maxes[i]);
		EXPECT(acc_walk(verdict_keep_any, maxes[i], 40000),
		       "a place kept but not held at bound %u not caught",
		       maxes[i]);
	}
	report("negative controls: wrong accept rules fail the walk", before);
}

typedef unsigned int (*ask_fn)(bool stake, unsigned int ms,
			       unsigned int idle);

/* the idle interval even when shorter than the heartbeat's */
static unsigned int ask_min(bool stake, unsigned int ms, unsigned int idle)
{
	unsigned int a = rds_ib_hb_ask(stake, ms, idle);

	return !stake && idle && a > idle ? idle : a;
}

static unsigned int ask_no_stake(bool stake, unsigned int ms,
				 unsigned int idle)
{
	(void)stake;
	return rds_ib_hb_ask(false, ms, idle);
}

/* Violations of the asking rule by f over the grid. */
static unsigned int ask_check(ask_fn f)
{
	static const unsigned int v[] = {
		0, 1, 199, 200, 500, 1999, 2000, 2001, 29999, 30000, 30001,
		3599999, 3600000,
	};
	unsigned int n = sizeof(v) / sizeof(v[0]), i, j, s, bad = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			for (s = 0; s < 2; s++) {
				unsigned int ms = v[i], idle = v[j];
				unsigned int a = f(s, ms, idle), want;

				if (!ms)
					want = 0;
				else if (s)
					want = ms;
				else if (!idle)
					want = 0;
				else
					want = idle > ms ? idle : ms;
				if (a != want || (ms && a && a < ms) ||
				    (uint64_t)a * 5 > UINT32_MAX)
					bad++;
			}
	return bad;
}

static void test_hb_ask(void)
{
	unsigned int bad;
	int before = failures;

	bad = ask_check(rds_ib_hb_ask);
	EXPECT(!bad, "%u violations", bad);
	EXPECT(rds_ib_hb_ask(false, 2000, 30000) == 30000 &&
	       rds_ib_hb_ask(true, 2000, 30000) == 2000,
	       "the defaults: 30 s idle, 2 s at stake");
	report("heartbeat: its interval at stake, the idle one (never shorter) without, 0 when off",
	       before);
	before = failures;
	EXPECT(ask_check(ask_min), "the smaller of the two not caught");
	EXPECT(ask_check(ask_no_stake), "a rule blind to the stake not caught");
	report("negative controls: wrong asking rules fail the grid", before);
}

/* A scan of the jiffies after d->now, one by one, with exact (64-bit,
 * unwrapped) arithmetic: times are offsets from now.  What is due at
 * now + k, nothing changing but the clock: the first k is the delay.
 */
struct hb_case {
	long long last, asked_at, gb_at;	/* offsets from now */
	unsigned long ask, ask4, ask5, tick, max;
	bool asking, gb;
};

static bool hb_due(const struct hb_case *c, unsigned long k)
{
	long long q0 = c->last > 0 ? 0 : -c->last;
	long long qk = (long long)k - c->last < 0 ? 0 : (long long)k - c->last;
	bool stale = c->asked_at < c->last;

	if (k >= c->max)
		return true;
	if (c->gb && (c->gb_at > 0 ? (long long)k >= c->gb_at : k >= c->tick))
		return true;
	if (!c->ask)
		return false;
	if (q0 < (long long)c->ask)	/* the silence reaches the interval */
		return qk >= (long long)c->ask;
	if (!c->asking || stale)	/* the first request: at once */
		return true;
	/* asking: the next request, or the verdict reached */
	return k >= c->tick ||
	       ((long long)k - c->asked_at >= (long long)c->ask4 &&
		qk >= (long long)c->ask5);
}

static unsigned long hb_scan(const struct hb_case *c)
{
	unsigned long k;

	for (k = 1; !hb_due(c, k); k++)
		;
	return k;
}

typedef unsigned long (*next_fn)(const struct rds_ib_hb_due *d);

static struct rds_ib_hb_due hb_at(const struct hb_case *c, unsigned long now)
{
	struct rds_ib_hb_due d = {
		.now = now,
		.last_rx = now + (unsigned long)c->last,
		.ask = c->ask, .ask4 = c->ask4, .ask5 = c->ask5,
		.asking = c->asking,
		.asked_at = now + (unsigned long)c->asked_at,
		.tick = c->tick,
		.gb = c->gb,
		.gb_at = now + (unsigned long)c->gb_at,
		.max = c->max,
	};

	return d;
}

/* the old schedule: every heartbeat interval */
static unsigned long next_tick(const struct rds_ib_hb_due *d)
{
	return d->tick < d->max ? d->tick : d->max;
}

static unsigned long next_no_verdict(const struct rds_ib_hb_due *d)
{
	struct rds_ib_hb_due e = *d;

	e.ask4 = ULONG_MAX;
	e.ask5 = ULONG_MAX;
	return rds_ib_hb_next(&e);
}

static unsigned long next_no_gb(const struct rds_ib_hb_due *d)
{
	struct rds_ib_hb_due e = *d;

	e.gb = false;
	return rds_ib_hb_next(&e);
}

/* the whole interval again, whatever silence has passed */
static unsigned long next_whole(const struct rds_ib_hb_due *d)
{
	struct rds_ib_hb_due e = *d;

	if ((long)(d->now - d->last_rx) > 0 && d->now - d->last_rx < d->ask)
		e.last_rx = d->now;
	return rds_ib_hb_next(&e);
}

/* 0 for a request due now */
static unsigned long next_zero(const struct rds_ib_hb_due *d)
{
	unsigned long n = rds_ib_hb_next(d);

	return n == 1 && d->ask && !d->asking && d->now - d->last_rx >= d->ask ?
	       0 : n;
}

/* a frame numerically above the clock taken as one after it */
static unsigned long next_nowrap(const struct rds_ib_hb_due *d)
{
	struct rds_ib_hb_due e = *d;

	if (d->last_rx > d->now)
		e.last_rx = d->now;
	return rds_ib_hb_next(&e);
}

/* Cases of the grid where f differs from the scan (or answers 0, or
 * passes the bound); *cases counts them all.
 */
static unsigned long hb_check(next_fn f, unsigned long *cases, bool print)
{
	static const unsigned long nows[] = {
		0, 1000, ULONG_MAX - 20, ULONG_MAX, LONG_MAX - 3,
	};
	static const unsigned long asks[] = { 0, 1, 2, 3, 5, 8 };
	static const unsigned long ticks[] = { 1, 2, 3, 5 };
	static const unsigned long maxes[] = { 1, 6, 50 };
	static const long long gbs[] = { -3, 0, 1, 2, 7, 49 };
	static const long long asked_rel[] = { -1, 0, 1, 9 };
	unsigned long bad = 0, n = 0;
	unsigned int a, e, t, m, g, r, w, s;
	long long l;
	struct hb_case c;

	for (a = 0; a < sizeof(asks) / sizeof(asks[0]); a++)
	for (e = 0; e < 4; e++)
	for (t = 0; t < sizeof(ticks) / sizeof(ticks[0]); t++)
	for (m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++)
	for (l = -45; l <= 2; l++)
	for (s = 0; s < 2; s++)
	for (r = 0; r < sizeof(asked_rel) / sizeof(asked_rel[0]); r++)
	for (g = 0; g <= sizeof(gbs) / sizeof(gbs[0]); g++) {
		unsigned long want, got;

		memset(&c, 0, sizeof(c));
		c.ask = asks[a];
		/* msecs_to_jiffies() of 4 and 5 intervals: at or a jiffy
		 * above 4 and 5 of the interval's
		 */
		c.ask4 = 4 * c.ask + (e & 1);
		c.ask5 = 5 * c.ask + (e >> 1);
		c.tick = ticks[t];
		c.max = maxes[m];
		c.last = l;
		c.asking = s;
		/* the request: just before the last frame (an earlier
		 * silence), with it, after it, later
		 */
		c.asked_at = l + asked_rel[r];
		if (c.asked_at > 0)
			continue;	/* made before now */
		c.gb = g < sizeof(gbs) / sizeof(gbs[0]);
		c.gb_at = c.gb ? gbs[g] : 0;
		want = hb_scan(&c);
		for (w = 0; w < sizeof(nows) / sizeof(nows[0]); w++) {
			struct rds_ib_hb_due d = hb_at(&c, nows[w]);

			got = f(&d);
			n++;
			if (got == want && got >= 1 && got <= c.max)
				continue;
			if (!bad++ && print)
				printf("# now %lu, last %+lld, ask %lu (%lu %lu), tick %lu, asking %d at %+lld, gb %d at %+lld, max %lu: %lu, want %lu\n",
				       nows[w], c.last, c.ask, c.ask4, c.ask5,
				       c.tick, c.asking, c.asked_at, c.gb,
				       c.gb_at, c.max, got, want);
		}
	}
	if (cases)
		*cases = n;
	return bad;
}

static void test_hb_next(void)
{
	/* HZ 250: 2 s, 30 s, an hour */
	const unsigned long ms2 = 500, s30 = 7500, hour = 900000;
	struct hb_case c = {
		.ask = s30, .ask4 = 4 * s30, .ask5 = 5 * s30, .tick = ms2,
		.max = hour,
	};
	static const struct {
		const char *name;
		next_fn f;
	} neg[] = {
		{ "the old schedule (every tick)", next_tick },
		{ "one blind to the verdict", next_no_verdict },
		{ "one blind to the give-back", next_no_gb },
		{ "one blind to the silence passed", next_whole },
		{ "0 for a request due now", next_zero },
		{ "the clock compared without the wrap", next_nowrap },
	};
	unsigned long bad, cases;
	int before = failures;
	unsigned int i;

	bad = hb_check(rds_ib_hb_next, &cases, true);
	EXPECT(!bad, "%lu of %lu cases differ from the scan", bad, cases);
	EXPECT(cases > 100000, "only %lu cases", cases);
	/* the defaults, in real jiffies: an idle connection heard from
	 * 10 s ago runs in 20 s; at stake in 0.5 s (1.5 s of silence)
	 */
	c.last = -2500;
	{
		struct rds_ib_hb_due d = hb_at(&c, ULONG_MAX - 100);

		EXPECT(rds_ib_hb_next(&d) == 5000 && hb_scan(&c) == 5000,
		       "idle: %lu", rds_ib_hb_next(&d));
	}
	c.ask = ms2;
	c.ask4 = 4 * ms2;
	c.ask5 = 5 * ms2;
	c.last = -375;
	{
		struct rds_ib_hb_due d = hb_at(&c, 7);

		EXPECT(rds_ib_hb_next(&d) == 125 && hb_scan(&c) == 125,
		       "at stake: %lu", rds_ib_hb_next(&d));
	}
	/* asking at stake, 2 s into the silence, the request 1.9 s ago:
	 * the verdict waits for 4 intervals after it (8 s), the next
	 * request comes first, at tick
	 */
	c.last = -500;
	c.asking = true;
	c.asked_at = -475;
	{
		struct rds_ib_hb_due d = hb_at(&c, LONG_MAX);

		EXPECT(rds_ib_hb_next(&d) == ms2 && hb_scan(&c) == ms2,
		       "asking: %lu", rds_ib_hb_next(&d));
	}
	/* 9.9 s of silence, asked 7.9 s ago: the verdict in 0.1 s */
	c.last = -2475;
	c.asked_at = -1975;
	{
		struct rds_ib_hb_due d = hb_at(&c, 0);

		EXPECT(rds_ib_hb_next(&d) == 25 && hb_scan(&c) == 25,
		       "verdict: %lu", rds_ib_hb_next(&d));
	}
	report("heartbeat: the work runs at the first jiffy something is due, never 0, never past the bound, across the wrap",
	       before);
	before = failures;
	quiet = true;
	for (i = 0; i < sizeof(neg) / sizeof(neg[0]); i++) {
		bad = hb_check(neg[i].f, NULL, false);
		printf("# negative control \"%s\": %lu of %lu cases differ\n",
		       neg[i].name, bad, cases);
		EXPECT(bad, "%s not caught", neg[i].name);
	}
	quiet = false;
	report("negative controls: wrong schedules of the heartbeat work fail the grid",
	       before);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) :
				   (uint64_t)time(NULL);

	rng = seed ? seed : 1;
	printf("TAP version 13\n# seed %llu (rerun: %s %llu)\n",
	       (unsigned long long)seed, argv[0], (unsigned long long)seed);
	test_overdue();
	test_admit();
	test_accept();
	test_hb_ask();
	test_hb_next();
	printf("1..%d\n", tap_n);
	return failures ? 1 : 0;
}
