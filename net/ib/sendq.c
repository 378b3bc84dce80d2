// SPDX-License-Identifier: GPL-2.0
/*
 * The sizes of a connection's send queue: see sendq.h.  Pure code: no
 * locks, no allocation, no verbs.
 */
#include "sendq.h"

/* The work requests of a send queue of data slots, as sendq.h counts
 * them: the data slots, the control slot, the extra ones, the drain's.
 */
static u32 rds_ib_sendq_wrs(u32 data)
{
	return data + 1 + RDS_IB_EXTRA_WRS + 1;
}

static bool rds_ib_sendq_fits(u32 wrs, u32 max_qp_wr, u32 max_cqe)
{
	return (!max_qp_wr || wrs <= max_qp_wr) && (!max_cqe || wrs <= max_cqe);
}

bool rds_ib_sendq_size(u32 want, u32 max_qp_wr, u32 max_cqe, u32 max_sge,
		       struct rds_ib_sendq_sizes *sz)
{
	u32 data = RDS_IB_SEND_RING_MIN;
	bool ok;

	if (want > RDS_IB_SEND_RING_MAX)
		want = RDS_IB_SEND_RING_MAX;
	/* the largest power of two not above want, RDS_IB_SEND_RING_MIN
	 * at least
	 */
	while (data <= want / 2)
		data *= 2;
	while (data > RDS_IB_SEND_RING_MIN &&
	       !rds_ib_sendq_fits(rds_ib_sendq_wrs(data), max_qp_wr, max_cqe))
		data /= 2;
	ok = rds_ib_sendq_fits(rds_ib_sendq_wrs(data), max_qp_wr, max_cqe) &&
	     max_sge >= RDS_IB_SEND_SGE_MIN;
	sz->data = data;
	sz->extra = RDS_IB_EXTRA_WRS;
	sz->qp_wr = rds_ib_sendq_wrs(data);
	sz->cqe = sz->qp_wr;
	sz->sge = max_sge < RDS_IB_SEND_SGE ? max_sge : RDS_IB_SEND_SGE;
	if (sz->sge < RDS_IB_SEND_SGE_MIN)
		sz->sge = RDS_IB_SEND_SGE_MIN;
	return ok;
}

u32 rds_ib_sendq_signal_every(u32 max_unsignaled, u32 data)
{
	u32 half = data / 2;

	if (max_unsignaled > half)
		max_unsignaled = half;
	return max_unsignaled ? max_unsignaled : 1;
}
