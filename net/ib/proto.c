// SPDX-License-Identifier: GPL-2.0
/*
 * The two wire protocols of an IB connection (struct rds_ib_proto, ib.h)
 * and the receive entry point, which calls through the one the
 * connection's current attempt speaks.
 *
 * The receive entry reads it under i_lock and counts the frames an
 * attempt's queue pair brought in it, so that an attempt whose protocol
 * was guessed wrong (rds_ib_ml_use()) is known to have taken none, or
 * is ended.
 */
#include "ib.h"
#include "ml.h"
#include "path.h"

const struct rds_ib_proto rds_ib_proto_ours = {
	.name		= "rds-ib",
	.slot_take	= rds_ib_slot_take,
	.frame_hdr	= rds_ib_frame_hdr,
	.recv_frame	= rds_ib_ours_recv_frame,
	.ctrl_flags	= RDS_IB_FLAG_CTRL,
	.rnr_retry	= RDS_IB_RNR_RETRY,
	.heartbeat	= true,
	.idle_close	= true,
};

const struct rds_ib_proto rds_ib_proto_ml = {
	.name			= "the kernel's RDS",
	.slot_take		= rds_ib_ml_slot_take,
	.frame_hdr		= rds_ib_ml_frame_hdr,
	.recv_frame		= rds_ib_ml_recv_frame,
	.ctrl_flags		= 0,
	.solicit_last		= IB_SEND_SOLICITED,
	.rnr_retry		= RDS_IB_ML_RNR_RETRY,
	.map_every_connect	= true,
	.maps_unacked		= true,
};

void rds_ib_recv_frame(struct rds_ib_conn *ic, struct rds_ib_rx_buf *buf,
		       struct ib_wc *wc)
{
	const struct rds_ib_proto *p;

	spin_lock_bh(&ic->i_lock);
	p = ic->i_proto;
	if (wc->qp == READ_ONCE(ic->i_qp))
		ic->i_rx_frames++;
	spin_unlock_bh(&ic->i_lock);
	p->recv_frame(ic, buf, wc);
}
