/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How many receive buffers a device's shared receive queue holds: the
 * rule, as pure code (no locks, no allocation), compiled into the module
 * and into the user-space unit test tools/testing/unit/srqsize_test.
 *
 * The SRQ is created for max buffers and starts with min of them posted
 * (ib_srq_size).  A device work item looks at the pool once a tick
 * (srq.c) and asks rds_ib_srq_resize() what to do:
 *   - grow: the pool is short and below max: add one step of buffers, or
 *     what is left up to max.  Short: in debt now (its grants promise
 *     more buffers than it has, credit.h), or since the last tick a busy
 *     connection found no buffer free (a data frame's buffer was kept
 *     back to pay a debt, or one below its first grant could not earn
 *     one back: rds_ib_pool_keep_back(), rds_ib_pool_earn()).  Busy
 *     connections pay a debt back within a few frames, so the debt alone
 *     is seldom seen at a tick.  Each buffer added is free: it pays the
 *     debt first, then the busy connections earn it;
 *   - shrink: the pool is above min and has had twice a step of buffers
 *     that no connection was promised for RDS_IB_SRQ_IDLE_TICKS ticks in
 *     a row: retire one step, never more than would leave a step free
 *     nor take it below min; then one step a tick for as long as that
 *     lasts;
 *   - otherwise nothing.
 * A step is a quarter of min (at least one buffer).  The hysteresis: a
 * pool grows only when short and shrinks only with two steps free and
 * not short, and a shrink leaves a step free, so that with the same
 * grants it neither grows again nor shrinks into debt: the size never
 * swings back and forth while demand stays put.
 *
 * A retired buffer stays posted until a frame lands in it (a posted SRQ
 * receive cannot be taken back, Documentation/ib-transport.md): on a
 * device that has gone quiet that may be never.  The work keeps looking
 * while buffers are retiring, and once RDS_IB_SRQ_STRAND_TICKS ticks in
 * a row passed with buffers retiring and none of them freed,
 * rds_ib_srq_strand() counts every retiring one as stranded: memory held
 * that the pool does not want, said so (srq.c), and no longer a reason
 * to look again (rds_ib_srq_watching()): a device that stays quiet costs
 * at most that many ticks after its last shrink.
 */
#ifndef _RDS_IB_SRQSIZE_H
#define _RDS_IB_SRQSIZE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kshim.h"
#endif

/* Ticks in a row with buffers to spare before the pool shrinks. */
#define RDS_IB_SRQ_IDLE_TICKS	10

/* Ticks in a row with buffers retiring and none freed before they count
 * as stranded.
 */
#define RDS_IB_SRQ_STRAND_TICKS	10

struct rds_ib_srq_sizing {
	u32	min;		/* buffers posted at setup: the floor */
	u32	max;		/* the SRQ's capacity: the ceiling */
	u32	idle;		/* ticks in a row with buffers to spare */
	u32	quiet;		/* ticks in a row retiring, none freed */
};

/* Buffers added or retired in one tick at most. */
u32 rds_ib_srq_step(const struct rds_ib_srq_sizing *s);

/* One tick: free is the pool's free count now (below zero: debt), pool
 * the buffers in it (min..max), starved whether a busy connection found
 * no buffer free since the last tick.  Returns how many buffers to add
 * (> 0) or retire (< 0), and counts s->idle; a shrink sets s->quiet to 0
 * (the watch over retiring buffers starts again).
 */
int rds_ib_srq_resize(struct rds_ib_srq_sizing *s, int free, u32 pool,
		      bool starved);

/* One tick of the watch over retiring buffers: retiring is how many are
 * still posted, retired whether any was freed since the last tick.
 * Returns how many of them count as stranded (0, or all of retiring once
 * RDS_IB_SRQ_STRAND_TICKS ticks in a row had some retiring and none
 * freed), and counts s->quiet.
 */
u32 rds_ib_srq_strand(struct rds_ib_srq_sizing *s, u32 retiring,
		      bool retired);

/* Whether the work must look again in a tick: the pool is in debt (it
 * may grow), above min (it may shrink) or has retiring buffers not yet
 * counted as stranded (they may be).
 */
bool rds_ib_srq_watching(const struct rds_ib_srq_sizing *s, int free,
			 u32 pool, u32 retiring, u32 stranded);

#endif /* _RDS_IB_SRQSIZE_H */
