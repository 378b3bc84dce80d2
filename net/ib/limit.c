// SPDX-License-Identifier: GPL-2.0
/*
 * The rules of the per-peer and per-device limits: see limit.h.  Pure code.
 */
#include "limit.h"

enum rds_ib_overdue rds_ib_attempt_overdue(bool active, bool up,
					   unsigned long started,
					   unsigned long now,
					   unsigned long timeout)
{
	if (up || (long)(now - started - timeout) < 0)
		return RDS_IB_OVERDUE_NO;
	return active ? RDS_IB_OVERDUE_ACTIVE : RDS_IB_OVERDUE_PASSIVE;
}

bool rds_ib_peer_admit(unsigned int conns, unsigned int max)
{
	return !max || conns < max;
}

enum rds_ib_accept_verdict rds_ib_accept_verdict(bool holds,
						 unsigned int in_flight,
						 unsigned int max)
{
	if (holds)
		return RDS_IB_ACCEPT_KEEP;
	if (max && in_flight >= max)
		return RDS_IB_ACCEPT_REFUSE;
	return RDS_IB_ACCEPT_TAKE;
}

unsigned int rds_ib_hb_ask(bool stake, unsigned int ms, unsigned int idle)
{
	if (!ms)
		return 0;
	if (stake)
		return ms;
	if (!idle)
		return 0;
	return idle > ms ? idle : ms;
}

/* a - b, or 0 when b is at least a */
static unsigned long rds_ib_hb_left(unsigned long a, unsigned long b)
{
	return a > b ? a - b : 0;
}

static unsigned long rds_ib_hb_min(unsigned long a, unsigned long b)
{
	return a < b ? a : b;
}

static unsigned long rds_ib_hb_max(unsigned long a, unsigned long b)
{
	return a > b ? a : b;
}

/* The heartbeat's own part of rds_ib_hb_next(), at most n. */
static unsigned long rds_ib_hb_ask_next(const struct rds_ib_hb_due *d,
					unsigned long n)
{
	unsigned long quiet, asked;

	/* time_after(last_rx, now): a frame read after the clock, the
	 * silence starts with it
	 */
	if ((long)(d->now - d->last_rx) < 0)
		return rds_ib_hb_min(n, d->last_rx - d->now + d->ask);
	quiet = d->now - d->last_rx;
	if (quiet < d->ask)
		return rds_ib_hb_min(n, d->ask - quiet);
	/* time_before(asked_at, last_rx): a request of an earlier silence */
	if (!d->asking || (long)(d->asked_at - d->last_rx) < 0)
		return 1;	/* the first request of this one, due now */
	asked = d->now - d->asked_at;
	if (rds_ib_hb_lost(1, asked, quiet, d->ask4, d->ask5))
		return 1;
	/* the next request, or the verdict if it comes first */
	return rds_ib_hb_min(n, rds_ib_hb_min(d->tick,
			rds_ib_hb_max(rds_ib_hb_left(d->ask4, asked),
				      rds_ib_hb_left(d->ask5, quiet))));
}

unsigned long rds_ib_hb_next(const struct rds_ib_hb_due *d)
{
	unsigned long n = d->max;

	if (d->ask)
		n = rds_ib_hb_ask_next(d, n);
	/* time_after(gb_at, now) */
	if (d->gb)
		n = rds_ib_hb_min(n, (long)(d->now - d->gb_at) < 0 ?
				     d->gb_at - d->now : d->tick);
	return n ? n : 1;
}
