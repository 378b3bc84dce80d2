// SPDX-License-Identifier: GPL-2.0
/*
 * Credit-based flow control: see credit.h.  Pure code.
 */
#include "credit.h"

void rds_ib_credit_init(struct rds_ib_credit *c, u32 granted_to_us,
			u32 granted_to_peer)
{
	c->avail = granted_to_us;
	c->used = 0;
	c->unadv = 0;
	c->peer_avail = granted_to_peer;
	c->ctrl_busy = false;
}

static u8 rds_ib_credit_grant(struct rds_ib_credit *c)
{
	u32 g = c->unadv < RDS_IB_CREDIT_MAX_GRANT ? c->unadv :
						     RDS_IB_CREDIT_MAX_GRANT;

	c->unadv -= g;
	c->peer_avail += g;
	return g;
}

bool rds_ib_credit_take(struct rds_ib_credit *c, u8 *grant)
{
	if (!c->avail)
		return false;
	c->avail--;
	c->used++;
	*grant = rds_ib_credit_grant(c);
	return true;
}

bool rds_ib_credit_want_update(const struct rds_ib_credit *c, u32 threshold)
{
	if (c->ctrl_busy || !c->unadv)
		return false;
	return !c->peer_avail || c->unadv >= threshold;
}

void rds_ib_credit_take_ctrl(struct rds_ib_credit *c, u8 *grant)
{
	c->ctrl_busy = true;
	*grant = rds_ib_credit_grant(c);
}

void rds_ib_credit_ctrl_done(struct rds_ib_credit *c)
{
	c->ctrl_busy = false;
}

bool rds_ib_credit_recv(struct rds_ib_credit *c, bool data, u8 grant,
			u32 max_avail)
{
	if (data && !c->peer_avail)
		return false;
	if (grant > max_avail || c->avail > max_avail - grant)
		return false;
	if (data)
		c->peer_avail--;
	c->avail += grant;
	c->used -= c->used < grant ? c->used : grant;
	return true;
}

void rds_ib_credit_refilled(struct rds_ib_credit *c, u32 n)
{
	c->unadv += n;
}

bool rds_ib_credit_corked(const struct rds_ib_credit *c, u32 grant)
{
	u32 eighth = grant / 8;

	return c->used >= (eighth ? eighth : 1);
}

u32 rds_ib_credit_give_back(struct rds_ib_credit *c, u32 keep, u32 max)
{
	u32 n;

	if (c->ctrl_busy || c->avail <= keep)
		return 0;
	n = c->avail - keep;
	if (n > max)
		n = max;
	c->avail -= n;
	return n;
}

bool rds_ib_credit_returned(struct rds_ib_credit *c, bool asked, bool data,
			    u32 n, u32 keep)
{
	if (!asked || data || !n || n > c->peer_avail ||
	    c->peer_avail - n < keep)
		return false;
	c->peer_avail -= n;
	return true;
}

int rds_ib_pool_take(int free, int want, int min)
{
	int least = want < min ? want : min;

	if (free >= want)
		return want;
	return free > least ? free : least;
}

bool rds_ib_pool_keep_back(int free, u32 reserved, u32 min)
{
	return free < 0 && reserved > min;
}

bool rds_ib_pool_earn(int free, u32 reserved, u32 cap)
{
	return free > 0 && reserved < cap;
}

u32 rds_ib_pool_release(u32 reserved, u32 n, u32 min)
{
	if (reserved <= min)
		return 0;
	return n < reserved - min ? n : reserved - min;
}
