// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/ib/limit.c: the attempt timeout's verdict and the
 * per-peer connection bound.
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
	printf("1..%d\n", tap_n);
	return failures ? 1 : 0;
}
