// SPDX-License-Identifier: GPL-2.0
/*
 * The rules of the per-peer limits: see limit.h.  Pure code.
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
