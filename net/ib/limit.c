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
