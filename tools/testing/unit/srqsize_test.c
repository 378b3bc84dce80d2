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
 *     not starved;
 *   - a shrink, and nothing else, starts the watch over retiring buffers
 *     again (its quiet count 0).
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
 * past max, one that never grows, one that grows in debt only, one that
 * shrinks without waiting, one that shrinks without leaving a step free
 * and one that shrinks without starting the watch over retiring buffers
 * again.
 *
 * Retiring buffers (a posted receive cannot be taken back: they go as
 * frames land in them).  Every state of the watch (0..40 retiring, 0..40
 * stranded, the quiet count 0..RDS_IB_SRQ_STRAND_TICKS, retired or not),
 * one tick: nothing is stranded while a buffer was freed or none retires,
 * all of them are once RDS_IB_SRQ_STRAND_TICKS ticks in a row were quiet,
 * none before; the work looks again exactly while the pool is in debt,
 * above min or has retiring buffers not counted as stranded.  Then runs
 * of the work after a shrink on a device whose frames stop at a random
 * tick (or never, or at once), with the pool, its debt and frames landing
 * in retiring buffers modelled: while frames land nothing is stranded;
 * once they stop, within RDS_IB_SRQ_STRAND_TICKS + 1 ticks every retiring
 * buffer is counted stranded and the work stops looking (a quiet device
 * costs a bounded number of ticks); it never stops while a retiring
 * buffer is neither freed nor counted.  Negative controls: a watch that
 * never strands (the work ticks for ever), one that strands at once (while
 * frames land), one that strands half of them, and a work that stops
 * looking with buffers retiring must each be caught.
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

/* Shrinks without starting the watch over retiring buffers again. */
static int shrink_keeps_quiet(struct rds_ib_srq_sizing *s, int free,
			      u32 pool, bool starved)
{
	u32 q = s->quiet;
	int r = rds_ib_srq_resize(s, free, pool, starved);

	s->quiet = q;
	return r;
}

/* One tick of the rule from (free, pool, *idle, starved), checked: the
 * change.
 */
static int tick(u32 min, u32 max, u32 *idle, int free, u32 pool,
		bool starved)
{
	struct rds_ib_srq_sizing s = { .min = min, .max = max, .idle = *idle,
				       .quiet = 5 };
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
	EXPECT(s.quiet == (r < 0 ? 0 : 5),
	       "min %u max %u pool %u free %d: %d, the watch's quiet %u",
	       min, max, pool, free, r, s.quiet);
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

/* The watch under test, or a broken one (negative controls). */
static u32 (*strand)(struct rds_ib_srq_sizing *s, u32 retiring,
		     bool retired) = rds_ib_srq_strand;
static bool (*watching)(const struct rds_ib_srq_sizing *s, int free,
			u32 pool, u32 retiring, u32 stranded) =
	rds_ib_srq_watching;

static u32 strand_never(struct rds_ib_srq_sizing *s, u32 retiring,
			bool retired)
{
	rds_ib_srq_strand(s, retiring, retired);
	return 0;
}

static u32 strand_at_once(struct rds_ib_srq_sizing *s, u32 retiring,
			  bool retired)
{
	rds_ib_srq_strand(s, retiring, retired);
	return retiring;
}

static u32 strand_half(struct rds_ib_srq_sizing *s, u32 retiring,
		       bool retired)
{
	return rds_ib_srq_strand(s, retiring, retired) / 2;
}

static bool watch_not_retiring(const struct rds_ib_srq_sizing *s, int free,
			       u32 pool, u32 retiring, u32 stranded)
{
	/* as if every retiring buffer were stranded already */
	return rds_ib_srq_watching(s, free, pool, retiring,
				   retiring > stranded ? retiring : stranded);
}

#define TS	RDS_IB_SRQ_STRAND_TICKS

/* Every state of the watch, one tick each. */
static unsigned long strand_states(void)
{
	struct rds_ib_srq_sizing s = { .min = 8, .max = 32 };
	u32 r, q, st, got, want_q;
	unsigned long n = 0;
	int free, pool;
	bool ret, w;

	for (r = 0; r <= 40; r++)
		for (q = 0; q <= TS; q++)
			for (ret = false; ; ret = true) {
				s.quiet = q;
				want_q = !r || ret ? 0 : (q + 1 < TS ? q + 1 : TS);
				got = strand(&s, r, ret);
				EXPECT(s.quiet == want_q,
				       "retiring %u quiet %u retired %d: quiet %u, want %u",
				       r, q, ret, s.quiet, want_q);
				EXPECT(got == (want_q >= TS ? r : 0),
				       "retiring %u quiet %u retired %d: %u stranded",
				       r, q, ret, got);
				n++;
				if (ret)
					break;
			}
	for (pool = 8; pool <= 32; pool++)
		for (free = -3; free <= pool; free++)
			for (r = 0; r <= 40; r++)
				for (st = 0; st <= r; st++) {
					w = watching(&s, free, pool, r, st);
					EXPECT(w == (free < 0 || pool > 8 || r > st),
					       "pool %d free %d retiring %u stranded %u: watching %d",
					       pool, free, r, st, w);
					n++;
				}
	return n;
}

/* After a shrink of k buffers, frames land in the SRQ until tick stop
 * (at a random tick, at least one in RDS_IB_SRQ_STRAND_TICKS - 1: each
 * frees a retiring buffer), then none: the work's ticks, checked.
 */
static void strand_run(u32 k, u32 stop)
{
	struct rds_ib_srq_sizing s = { .min = 8, .max = 32 };
	u32 retiring = k, stranded = 0, t, gap = 0;
	bool retired, looking = true;

	for (t = 0; t < stop + 3 * TS + 4 && looking; t++) {
		retired = false;
		if (t < stop && retiring && (rnd() & 1 || ++gap >= TS - 1)) {
			retiring--;
			retired = true;
			gap = 0;
		}
		if (stranded > retiring)
			stranded = retiring;
		stranded = strand(&s, retiring, retired) ?: stranded;
		EXPECT(stranded <= retiring,
		       "k %u stop %u tick %u: %u stranded of %u", k, stop, t,
		       stranded, retiring);
		if (t < stop)
			EXPECT(!stranded,
			       "k %u stop %u tick %u: %u stranded while frames land",
			       k, stop, t, stranded);
		looking = watching(&s, 0, 8, retiring, stranded);
		if (!looking)
			EXPECT(retiring == stranded,
			       "k %u stop %u tick %u: stopped looking with %u retiring, %u stranded",
			       k, stop, t, retiring, stranded);
	}
	EXPECT(!looking && (!retiring || t <= stop + TS + 1),
	       "k %u stop %u: still looking at tick %u (%u retiring, %u stranded)",
	       k, stop, t, retiring, stranded);
}

static void strand_runs(void)
{
	u32 k, stop, i;

	for (k = 0; k <= 24; k++)
		for (stop = 0; stop <= 3 * TS; stop++)
			for (i = 0; i < 20; i++)
				strand_run(k, stop);
}

static void run_strand(void)
{
	strand_states();
	strand_runs();
}

/* A negative control: run with a broken rule must fail. */
static void control(const char *name, void (*run)(void))
{
	int f = failures;
	bool caught;

	quiet = true;
	run();
	quiet = false;
	/* the control's failures are its pass, none its failure */
	caught = failures > f;
	failures = f + !caught;
	report(name, f);
}

int main(void)
{
	static int (*const broken[])(struct rds_ib_srq_sizing *, int, u32,
				     bool) = {
		grow_past_max, grow_never, grow_in_debt_only, shrink_at_once,
		shrink_to_none_free, shrink_keeps_quiet,
	};
	static const char *const what[] = {
		"grows past max", "never grows",
		"grows in debt only (not when starved)",
		"shrinks without waiting", "shrinks without leaving a step free",
		"shrinks without starting the watch over retiring buffers again",
	};
	static u32 (*const bad_strand[])(struct rds_ib_srq_sizing *, u32,
					 bool) = {
		strand_never, strand_at_once, strand_half, NULL,
	};
	static const char *const bad_what[] = {
		"never counts retiring buffers stranded",
		"counts them stranded at once",
		"counts half of them stranded",
		"stops looking with buffers retiring",
	};
	char name[200];
	unsigned long n;
	unsigned int k, w;
	int f;

	rng = (uint64_t)time(NULL) | 1;
	printf("TAP version 13\n1..%zu\n", 5 + sizeof(broken) / sizeof(broken[0]) +
	       sizeof(bad_strand) / sizeof(bad_strand[0]));
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
		resize = broken[k];
		snprintf(name, sizeof(name),
			 "negative control: a rule that %s is caught", what[k]);
		control(name, run_all);
		resize = rds_ib_srq_resize;
	}

	f = failures;
	n = strand_states();
	snprintf(name, sizeof(name),
		 "every state of the watch over retiring buffers: %lu: stranded all at once after %d quiet ticks, none before nor while freed; looks again while in debt, above min or some not stranded",
		 n, TS);
	report(name, f);

	f = failures;
	strand_runs();
	report("frames stop after a shrink (0..24 retiring, at tick 0..30): none stranded while they land, all within the bound after, then the work stops, never with one neither freed nor stranded",
	       f);

	for (k = 0; k < sizeof(bad_strand) / sizeof(bad_strand[0]); k++) {
		if (bad_strand[k])
			strand = bad_strand[k];
		else
			watching = watch_not_retiring;
		snprintf(name, sizeof(name),
			 "negative control: a watch that %s is caught",
			 bad_what[k]);
		control(name, run_strand);
		strand = rds_ib_srq_strand;
		watching = rds_ib_srq_watching;
	}
	return failures ? 1 : 0;
}
