// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of rds_ib_hs_acked() (net/ib/mlhs.c): what the acknowledgment
 * a handshake carries (ours: rx_next - 1; the kernel's RDS: ack_seq) frees
 * of our messages (Documentation/interop.md, "Acknowledgments in a
 * handshake").
 *
 * - the table: every kind, both knows_us, edge and random sequence
 *   numbers against a reference written here;
 * - scenarios: we posted n messages, the real peer took the first r and
 *   the connection broke; then a handshake comes, from the real peer
 *   (ours, or the kernel's RDS, which sends 0), or forged by anyone (the
 *   kernel's layout, or ours without our generation), for a peer that
 *   was ours or was the kernel's RDS.  What
 *   it leaves held is sent again, flagged RETRANSMITTED, to the real
 *   peer, which drops what it had by sequence.  Every message must be
 *   delivered exactly once, and our own peer's rx_next must free what it
 *   took (nothing sent twice);
 * - negative controls: the rule before (the kernel's ack_seq applied up
 *   to what was posted), that rule for a peer known as the kernel's RDS
 *   only, a rule that ignores our own peer, one that trusts a handshake
 *   of ours for another generation: each fails the scenarios.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "../../../net/ib/hs.h"
#include "../../../net/ib/mlhs.h"

/* The reference, from mlhs.h's comment. */
static enum rds_ib_hs_ack ref_acked(unsigned int kind, bool knows_us, u64 ack,
				    u64 posted)
{
	if (kind != RDS_IB_PD_OURS || !knows_us)
		return RDS_IB_HS_ACK_NONE;
	/* past posted: ack - posted in 1..2^63 (2^63 is both ways) */
	if (ack - posted - 1 < 1ULL << 63)
		return RDS_IB_HS_ACK_BAD;
	return RDS_IB_HS_ACK_FREE;
}

static const u64 edges[] = {
	0, 1, 2, 3, 5, 100, 0x7ffffffffffffffeULL, 0x7fffffffffffffffULL,
	0x8000000000000000ULL, 0x8000000000000001ULL, ~0ULL - 1, ~0ULL,
};

#define NEDGES (sizeof(edges) / sizeof(edges[0]))

/* A rule as the scenarios see it; known_ml: the peer was the kernel's RDS
 * on its last connection (what the module remembers of it).
 */
typedef enum rds_ib_hs_ack (*ack_rule)(enum rds_ib_pd_kind kind,
				       bool knows_us, bool known_ml, u64 ack,
				       u64 posted);

static enum rds_ib_hs_ack module_rule(enum rds_ib_pd_kind kind, bool knows_us,
				      bool known_ml, u64 ack, u64 posted)
{
	(void)known_ml;
	return rds_ib_hs_acked(kind, knows_us, ack, posted);
}

/* Who sends the handshake after the break. */
enum sender {
	S_OURS,		/* the real peer, ours: its rx_next - 1 */
	S_ML,		/* the real peer, the kernel's RDS: ack_seq 0 */
	S_FORGED_ML,	/* anyone: the kernel's layout, any ack_seq */
	S_FORGED_OURS,	/* anyone: ours, without our generation */
	S_MAX,
};

#define MAXN 6

/* One scenario; returns false (and says why when verbose) if a message is
 * lost or delivered twice, or our own peer's ACK freed less than it took.
 */
static bool scenario(ack_rule rule, u64 first, unsigned int n, unsigned int r,
		     enum sender s, bool known_ml, u64 ack, bool verbose)
{
	unsigned int delivered[MAXN] = { 0 }, i, resent = 0;
	u64 posted = first + n - 1, next_rx = first + r;
	enum rds_ib_pd_kind kind;
	enum rds_ib_hs_ack v;
	bool freed[MAXN] = { false };
	bool knows_us = false, ok = true;

	/* before the break: the peer delivered the first r */
	for (i = 0; i < r; i++)
		delivered[i]++;
	switch (s) {
	case S_OURS:
		kind = RDS_IB_PD_OURS;
		knows_us = true;
		ack = first + r - 1;
		break;
	case S_FORGED_OURS:
		kind = RDS_IB_PD_OURS;
		break;
	case S_ML:
		kind = RDS_IB_PD_MAINLINE;
		ack = 0;
		break;
	default:
		kind = RDS_IB_PD_MAINLINE;
		break;
	}
	v = rule(kind, knows_us, known_ml, ack, posted);
	if (v == RDS_IB_HS_ACK_FREE)
		for (i = 0; i < n; i++)
			freed[i] = !rds_seq_after(first + i, ack);
	/* A BAD one ends the attempt: nothing freed, the next one resends.
	 * The real peer takes what is held again, in order, flagged
	 * RETRANSMITTED, and drops a sequence number it had.
	 */
	for (i = 0; i < n; i++) {
		if (freed[i])
			continue;
		resent++;
		if (rds_seq_after(next_rx, first + i))
			continue;
		delivered[i]++;
		next_rx = first + i + 1;
	}
	for (i = 0; i < n; i++)
		if (delivered[i] != 1)
			ok = false;
	/* our own peer: what it took is freed, not sent again */
	if (s == S_OURS && resent != n - r)
		ok = false;
	if (!ok && verbose) {
		printf("# first %llx n %u r %u sender %u known_ml %u ack %llx: verdict %u, resent %u, delivered",
		       (unsigned long long)first, n, r, s, known_ml,
		       (unsigned long long)ack, v, resent);
		for (i = 0; i < n; i++)
			printf(" %u", delivered[i]);
		printf("\n");
	}
	return ok;
}

/* Every scenario: failures counted. */
static unsigned int runs;

static unsigned int scenarios(ack_rule rule, bool verbose)
{
	static const u64 firsts[] = { 1, 2, 1000, ~0ULL - 2, 1ULL << 63 };
	unsigned int bad = 0, f, n, r, s, k, a, shown = 0;

	runs = 0;

	for (f = 0; f < sizeof(firsts) / sizeof(firsts[0]); f++) {
		u64 first = firsts[f];

		for (n = 0; n <= MAXN; n++) {
			for (r = 0; r <= n; r++) {
				u64 acks[] = {
					0, first - 1, first, first + r - 1,
					first + r, first + n - 1, first + n,
					first + n + 1, ~0ULL, rnd(),
				};

				for (s = 0; s < S_MAX; s++)
					for (k = 0; k < 2; k++)
						for (a = 0; a < sizeof(acks) / sizeof(acks[0]); a++) {
							runs++;
							if (scenario(rule, first, n, r, s, k, acks[a],
								     verbose && shown < 10))
								continue;
							bad++;
							shown++;
						}
			}
		}
	}
	return bad;
}

/* Negative controls: rules that look right and are not. */
static enum rds_ib_hs_ack before(enum rds_ib_pd_kind kind, bool knows_us,
				 bool known_ml, u64 ack, u64 posted)
{
	/* the rule before: a non-zero ack_seq of the kernel's layout
	 * frees up to it, unless past what was posted
	 */
	(void)known_ml;
	if (kind == RDS_IB_PD_MAINLINE) {
		if (!ack)
			return RDS_IB_HS_ACK_NONE;
		return rds_seq_after(ack, posted) ? RDS_IB_HS_ACK_BAD :
						    RDS_IB_HS_ACK_FREE;
	}
	return rds_ib_hs_acked(kind, knows_us, ack, posted);
}

static enum rds_ib_hs_ack known_only(enum rds_ib_pd_kind kind, bool knows_us,
				     bool known_ml, u64 ack, u64 posted)
{
	/* the same, for a peer known as the kernel's RDS only */
	if (kind == RDS_IB_PD_MAINLINE && !known_ml)
		return RDS_IB_HS_ACK_NONE;
	return before(kind, knows_us, known_ml, ack, posted);
}

static enum rds_ib_hs_ack deaf(enum rds_ib_pd_kind kind, bool knows_us,
			       bool known_ml, u64 ack, u64 posted)
{
	/* never frees: loses nothing, sends our own peer everything again */
	(void)kind;
	(void)knows_us;
	(void)known_ml;
	(void)ack;
	(void)posted;
	return RDS_IB_HS_ACK_NONE;
}

static enum rds_ib_hs_ack any_gen(enum rds_ib_pd_kind kind, bool knows_us,
				  bool known_ml, u64 ack, u64 posted)
{
	/* ours taken whatever generation of us it names */
	(void)knows_us;
	return module_rule(kind, kind == RDS_IB_PD_OURS, known_ml, ack,
			   posted);
}

static const struct {
	const char	*name;
	ack_rule	rule;
} controls[] = {
	{ "the rule before: the kernel's ack_seq applied", before },
	{ "the kernel's ack_seq applied for a peer known as it", known_only },
	{ "nothing freed, our own peer's rx_next too", deaf },
	{ "ours taken for any generation of us", any_gen },
};

int main(int argc, char **argv)
{
	u64 seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (u64)time(NULL);
	unsigned int kind, k, i, j;
	int f;

	rng = seed | 1;
	printf("TAP version 13\n1..3\n# seed 0x%llx (rerun: %s 0x%llx)\n",
	       (unsigned long long)seed, argv[0], (unsigned long long)seed);

	f = failures;
	for (kind = 0; kind < 3; kind++)
		for (k = 0; k < 2; k++) {
			for (i = 0; i < NEDGES; i++)
				for (j = 0; j < NEDGES; j++)
					EXPECT(rds_ib_hs_acked(kind, k, edges[i], edges[j]) ==
					       ref_acked(kind, k, edges[i], edges[j]),
					       "kind %u knows %u ack %llx posted %llx",
					       kind, k, (unsigned long long)edges[i],
					       (unsigned long long)edges[j]);
			for (i = 0; i < 100000; i++) {
				u64 posted = rnd(), ack;

				/* near posted half the time */
				ack = (i & 1) ? rnd() : posted + (rnd() % 9) - 4;
				EXPECT(rds_ib_hs_acked(kind, k, ack, posted) ==
				       ref_acked(kind, k, ack, posted),
				       "kind %u knows %u ack %llx posted %llx",
				       kind, k, (unsigned long long)ack,
				       (unsigned long long)posted);
			}
		}
	/* the kernel's layout frees nothing, whatever it says */
	for (i = 0; i < NEDGES; i++)
		for (j = 0; j < NEDGES; j++)
			for (k = 0; k < 2; k++)
				EXPECT(rds_ib_hs_acked(RDS_IB_PD_MAINLINE, k, edges[i],
						       edges[j]) == RDS_IB_HS_ACK_NONE,
				       "the kernel's ack_seq %llx",
				       (unsigned long long)edges[i]);
	report("the table: every kind, both knows_us, edge and 600000 random sequence numbers",
	       f);

	f = failures;
	EXPECT(scenarios(module_rule, true) == 0, "the module's rule");
	printf("# %u scenarios\n", runs);
	report("scenarios: after a break, every handshake (ours, the kernel's, forged) leaves each message delivered once; ours frees what it took",
	       f);

	f = failures;
	for (i = 0; i < sizeof(controls) / sizeof(controls[0]); i++) {
		unsigned int bad = scenarios(controls[i].rule, false);

		printf("# negative control \"%s\": %u of %u scenarios fail\n",
		       controls[i].name, bad, runs);
		EXPECT(bad > 0, "%s", controls[i].name);
	}
	report("negative controls: the rule before and three others fail the scenarios",
	       f);
	return failures ? 1 : 0;
}
