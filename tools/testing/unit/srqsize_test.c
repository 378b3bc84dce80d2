// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/ib/srqsize.c: when the shared receive queue grows and
 * shrinks.
 *
 * Every state of small pools (min 1..12 buffers, max min..4 min + 2, the
 * pool min..max buffers, its free count from a debt larger than the pool
 * to all of it, the idle count 0..RDS_IB_SRQ_IDLE_TICKS, starved or not),
 * one tick each:
 *   - the pool stays within min..max;
 *   - it grows only when short (in debt or starved), by a step at most,
 *     and short below max it grows at once (by a step, or up to max);
 *   - it shrinks only with two steps free and not starved after
 *     RDS_IB_SRQ_IDLE_TICKS ticks in a row of that, by a step at most,
 *     and leaves a step free (never into debt); once that long idle above
 *     min it does shrink;
 *   - the idle count is the ticks in a row with two steps free above min,
 *     not starved.
 * Then, from min, under a fixed demand D (0..4 max + 2 buffers), in two
 * models of the connections: they hold D whatever the pool (a debt when
 * D is above it), or they hold what the pool has up to D and are starved
 * while D is above it (busy connections pay a debt back at once and
 * earn what is free).  In both the pool never grows after it shrank,
 * settles within (max + 4) x (RDS_IB_SRQ_IDLE_TICKS + 1) ticks, and where
 * it settles it is out of debt, not starved, and either at min or with
 * less than two steps free (or, for D above max, at max).  Then random
 * walks of a changing demand on pools of up to 4096 buffers, checked at
 * every tick.
 * Negative controls: the same checks must fail with a rule that grows
 * past max, one that never grows, one that shrinks without waiting and
 * one that shrinks without leaving a step free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "../../../net/ib/srqsize.h"

#define T	RDS_IB_SRQ_IDLE_TICKS

/* The rule under test, or a broken one (negative controls). */
static int (*resize)(struct rds_ib_srq_sizing *s, int free, u32 pool,
		     bool starved) = rds_ib_srq_resize;

static int grow_past_max(struct rds_ib_srq_sizing *s, int free, u32 pool,
			 bool starved)
{
	int r = rds_ib_srq_resize(s, free, pool, starved);

	return (free < 0 || starved) && !r ? (int)rds_ib_srq_step(s) : r;
}

static int grow_never(struct rds_ib_srq_sizing *s, int free, u32 pool,
		      bool starved)
{
	int r = rds_ib_srq_resize(s, free, pool, starved);

	return r > 0 ? 0 : r;
}

/* Grows in debt only: a starved pool out of debt stays as it is. */
static int grow_in_debt_only(struct rds_ib_srq_sizing *s, int free,
			     u32 pool, bool starved)
{
	return rds_ib_srq_resize(s, free, pool, starved && free < 0);
}

static int shrink_at_once(struct rds_ib_srq_sizing *s, int free, u32 pool,
			  bool starved)
{
	if (s->idle < T - 1)
		s->idle = T - 1;
	return rds_ib_srq_resize(s, free, pool, starved);
}

/* Shrinks with any buffer free, down to none free. */
static int shrink_to_none_free(struct rds_ib_srq_sizing *s, int free,
			       u32 pool, bool starved)
{
	u32 step = rds_ib_srq_step(s), n;

	if (free < 0 || starved)
		return rds_ib_srq_resize(s, free, pool, starved);
	if (pool <= s->min || !free) {
		s->idle = 0;
		return 0;
	}
	if (s->idle < T)
		s->idle++;
	if (s->idle < T)
		return 0;
	n = pool - s->min;
	if (n > step)
		n = step;
	if (n > (u32)free)
		n = free;
	return -(int)n;
}

/* One tick of the rule from (free, pool, *idle, starved), checked: the
 * change.
 */
static int tick(u32 min, u32 max, u32 *idle, int free, u32 pool,
		bool starved)
{
	struct rds_ib_srq_sizing s = { .min = min, .max = max, .idle = *idle };
	u32 step = rds_ib_srq_step(&s);
	bool spare = pool > min && free >= (int)(2 * step) && !starved;
	bool short_ = free < 0 || starved;
	u32 want_idle = spare ? (*idle + 1 < T ? *idle + 1 : T) : 0;
	long np;
	int r;

	r = resize(&s, free, pool, starved);
	np = (long)pool + r;
	EXPECT(np >= min && np <= max,
	       "min %u max %u pool %u free %d: %d leaves %ld", min, max, pool,
	       free, r, np);
	if (r > 0)
		EXPECT(short_ && (u32)r <= step,
		       "min %u max %u pool %u free %d starved %d: grew %d", min,
		       max, pool, free, starved, r);
	if (short_ && pool < max)
		EXPECT((u32)r == (max - pool < step ? max - pool : step),
		       "min %u max %u pool %u free %d starved %d: short, %d",
		       min, max, pool, free, starved, r);
	if (r < 0)
		EXPECT(spare && *idle + 1 >= T && (u32)-r <= step &&
		       free + r >= (int)step,
		       "min %u max %u pool %u free %d idle %u: shrank %d", min,
		       max, pool, free, *idle, r);
	if (spare && *idle + 1 >= T)
		EXPECT(r < 0, "min %u max %u pool %u free %d idle %u: kept",
		       min, max, pool, free, *idle);
	EXPECT(s.idle == want_idle,
	       "min %u max %u pool %u free %d idle %u: idle %u, want %u", min,
	       max, pool, free, *idle, s.idle, want_idle);
	*idle = s.idle;
	return r;
}

static unsigned long exhaustive(void)
{
	unsigned long n = 0;
	u32 min, max, pool, idle, i, st;
	int free;

	for (min = 1; min <= 12; min++)
		for (max = min; max <= 4 * min + 2; max++)
			for (pool = min; pool <= max; pool++)
				for (free = -(int)pool - 2; free <= (int)pool;
				     free++)
					for (idle = 0; idle <= T; idle++)
						for (st = 0; st < 2; st++) {
							i = idle;
							tick(min, max, &i, free,
							     pool, st);
							n++;
						}
	return n;
}

/* What the connections hold under demand d, and whether they starve:
 * all of d (a debt if the pool is smaller), or (earn) what the pool has
 * up to d, starved while d is above it.
 */
static u32 held_of(u32 d, u32 pool, bool earn, bool *starved)
{
	*starved = earn && d > pool;
	return earn && d > pool ? pool : d;
}

/* From min under a fixed demand d: no swing, settles, settles well. */
static void settle(u32 min, u32 max, u32 d, bool earn)
{
	u32 pool = min, idle = 0, step = (min / 4 ? min / 4 : 1), t, last = 0;
	u32 limit = (max + 4) * (T + 1), held;
	bool shrank = false, starved;
	int r, free;

	for (t = 0; t < limit + T + 2; t++) {
		held = held_of(d, pool, earn, &starved);
		free = (int)pool - (int)held;
		r = tick(min, max, &idle, free, pool, starved);
		if (r > 0)
			EXPECT(!shrank, "min %u max %u demand %u earn %d: grew after a shrink",
			       min, max, d, earn);
		if (r < 0)
			shrank = true;
		if (r)
			last = t;
		pool += r;
	}
	EXPECT(last < limit, "min %u max %u demand %u earn %d: still moving at %u",
	       min, max, d, earn, last);
	held = held_of(d, pool, earn, &starved);
	free = (int)pool - (int)held;
	if (d > max) {
		EXPECT(pool == max, "min %u max %u demand %u earn %d: settled at %u",
		       min, max, d, earn, pool);
	} else {
		EXPECT(free >= 0 && !starved &&
		       (pool == min || free < (int)(2 * step)),
		       "min %u max %u demand %u earn %d: settled at %u", min,
		       max, d, earn, pool);
	}
}

static void settle_all(void)
{
	u32 min, max, d;

	for (min = 1; min <= 12; min++)
		for (max = min; max <= 4 * min + 2; max++)
			for (d = 0; d <= 4 * max + 2; d++) {
				settle(min, max, d, false);
				settle(min, max, d, true);
			}
}

/* A demand that changes at random on a large pool, checked each tick. */
static void walk(void)
{
	u32 min = 1 + rnd() % 4096, max = min + rnd() % (3 * min + 1);
	u32 pool = min, idle = 0, d = rnd() % (2 * max), held, t;
	bool earn = rnd() & 1, starved;

	for (t = 0; t < 3000; t++) {
		switch (rnd() % 8) {
		case 0:
			d += rnd() % (max / 4 + 1);
			break;
		case 1:
			d -= rnd() % (d + 1);
			break;
		default:
			break;
		}
		held = held_of(d, pool, earn, &starved);
		pool += tick(min, max, &idle, (int)pool - (int)held, pool,
			     starved);
	}
}

static void run_all(void)
{
	settle_all();
	exhaustive();
}

int main(void)
{
	static int (*const broken[])(struct rds_ib_srq_sizing *, int, u32,
				     bool) = {
		grow_past_max, grow_never, grow_in_debt_only, shrink_at_once,
		shrink_to_none_free,
	};
	static const char *const what[] = {
		"grows past max", "never grows",
		"grows in debt only (not when starved)",
		"shrinks without waiting", "shrinks without leaving a step free",
	};
	char name[200];
	unsigned long n;
	unsigned int k, w;
	int f;

	rng = (uint64_t)time(NULL) | 1;
	printf("TAP version 13\n1..%zu\n", 3 + sizeof(broken) / sizeof(broken[0]));
	printf("# seed %llu\n", (unsigned long long)rng);

	f = failures;
	n = exhaustive();
	snprintf(name, sizeof(name),
		 "every state of pools of min 1..12, max min..4min+2: %lu ticks: within min..max, grows only and at once when short, shrinks only after %d idle ticks, by a step, leaving a step free",
		 n, T);
	report(name, f);

	f = failures;
	settle_all();
	report("fixed demand 0..4max+2 from min, held or earned: never grows after a shrink, settles out of debt, not starved, at min or with under two steps free (or at max)",
	       f);

	f = failures;
	for (w = 0; w < 500 && failures == f; w++)
		walk();
	report("500 random walks of 3000 ticks, pools of up to 4096 buffers",
	       f);

	for (k = 0; k < sizeof(broken) / sizeof(broken[0]); k++) {
		f = failures;
		resize = broken[k];
		quiet = true;
		run_all();
		quiet = false;
		resize = rds_ib_srq_resize;
		snprintf(name, sizeof(name),
			 "negative control: a rule that %s is caught", what[k]);
		/* the control's failures are its pass, none its failure */
		w = failures > f;
		failures = f + !w;
		report(name, f);
	}
	return failures ? 1 : 0;
}
