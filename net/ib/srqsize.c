// SPDX-License-Identifier: GPL-2.0
/*
 * The size of a device's shared receive queue: see srqsize.h.  Pure code.
 */
#include "srqsize.h"

u32 rds_ib_srq_step(const struct rds_ib_srq_sizing *s)
{
	return s->min / 4 ? s->min / 4 : 1;
}

int rds_ib_srq_resize(struct rds_ib_srq_sizing *s, int free, u32 pool,
		      bool starved)
{
	u32 step = rds_ib_srq_step(s);
	u32 n;

	if (free < 0 || starved) {
		s->idle = 0;
		if (pool >= s->max)
			return 0;
		n = s->max - pool;
		return n < step ? n : step;
	}
	if (pool <= s->min || (u32)free < 2 * step) {
		s->idle = 0;
		return 0;
	}
	if (s->idle < RDS_IB_SRQ_IDLE_TICKS)
		s->idle++;
	if (s->idle < RDS_IB_SRQ_IDLE_TICKS)
		return 0;
	/* with two steps free, a step retired leaves one; the watch over
	 * retiring buffers starts again with them
	 */
	s->quiet = 0;
	n = pool - s->min;
	return -(int)(n < step ? n : step);
}

u32 rds_ib_srq_strand(struct rds_ib_srq_sizing *s, u32 retiring,
		      bool retired)
{
	if (!retiring || retired) {
		s->quiet = 0;
		return 0;
	}
	if (s->quiet < RDS_IB_SRQ_STRAND_TICKS)
		s->quiet++;
	return s->quiet < RDS_IB_SRQ_STRAND_TICKS ? 0 : retiring;
}

bool rds_ib_srq_watching(const struct rds_ib_srq_sizing *s, int free,
			 u32 pool, u32 retiring, u32 stranded)
{
	return free < 0 || pool > s->min || retiring > stranded;
}
