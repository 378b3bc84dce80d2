// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving without a shared receive queue: each connection posts its
 * own ring of receive buffers (one per credit it grants, plus the control
 * reserve) on its queue pair and polls its own receive CQ.  For devices
 * that have no SRQ, or all devices with the test parameter ib_no_srq.
 * Receive memory then grows with the number of peers (a page per
 * buffer), which is why the SRQ is preferred.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>

#include "../fault.h"
#include "ib.h"

#define RDS_IB_HDR_BYTES	sizeof(struct rds_header)

/* Runs in softirq context from the connection's own receive CQ. */
static void rds_ib_ring_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_rx_buf *buf =
		container_of(wc->wr_cqe, struct rds_ib_rx_buf, rb_cqe);
	struct rds_ib_conn *ic = buf->rb_ic;
	struct ib_recv_wr wr;
	struct ib_sge sge[2];

	/* The queue pair is going away: conn_stop frees the buffer. */
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		return;

	if (wc->status != IB_WC_SUCCESS) {
		pr_warn_ratelimited("%s: receive failed: %s\n",
				    dev_name(&buf->rb_dev->rd_dev->dev),
				    ib_wc_status_msg(wc->status));
		rds_ib_conn_error(ic, "receive error");
		return;
	}
	rds_ib_rx_buf_sync(buf, true);
	rds_ib_recv_frame(ic, buf, wc);
	rds_ib_rx_buf_sync(buf, false);
	rds_ib_rx_buf_wr(buf, &wr, sge);
	if (ib_post_recv(wc->qp, &wr, NULL))
		rds_ib_conn_error(ic, "cannot repost a receive");
}

static void rds_ib_ring_free_bufs(struct rds_ib_conn *ic, unsigned int n)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	unsigned int i;

	for (i = 0; i < n; i++)
		rds_ib_rx_buf_free(&ic->i_rx_bufs[i]);
	kvfree(ic->i_rx_bufs);
	ic->i_rx_bufs = NULL;
	if (ic->i_rx_hdrs) {
		ib_dma_unmap_single(dev, ic->i_rx_hdrs_dma,
				    ic->i_rx_nr * RDS_IB_HDR_BYTES,
				    DMA_FROM_DEVICE);
		kfree(ic->i_rx_hdrs);
		ic->i_rx_hdrs = NULL;
	}
}

/* The full grant, one buffer per credit plus the control reserve, in a
 * receive CQ of the connection's own.
 */
static int rds_ib_ring_conn_prepare(struct rds_ib_conn *ic,
				    struct ib_qp_init_attr *attr)
{
	struct ib_device *dev = ic->i_rdev->rd_dev;
	unsigned int n, i;

	ic->i_grant = min_t(u32, READ_ONCE(rds_ib_credits) ?: 1, RDS_IB_CREDITS_MAX);
	n = ic->i_grant + 1;
	ic->i_rx_nr = n;

	ic->i_recv_cq = rds_fault() ? ERR_PTR(-ENOMEM) :
			ib_alloc_cq_any(dev, ic, rds_ib_recvq_cqe(n),
					IB_POLL_SOFTIRQ);
	if (IS_ERR(ic->i_recv_cq)) {
		int ret = PTR_ERR(ic->i_recv_cq);

		ic->i_recv_cq = NULL;
		return ret;
	}
	ic->i_rx_hdrs = rds_fault() ? NULL :
			kcalloc(n, RDS_IB_HDR_BYTES, GFP_KERNEL);
	if (!ic->i_rx_hdrs)
		goto err;
	ic->i_rx_hdrs_dma = ib_dma_map_single(dev, ic->i_rx_hdrs,
					      n * RDS_IB_HDR_BYTES,
					      DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, ic->i_rx_hdrs_dma)) {
		kfree(ic->i_rx_hdrs);
		ic->i_rx_hdrs = NULL;
		goto err;
	}
	ic->i_rx_bufs = rds_fault() ? NULL :
			kvcalloc(n, sizeof(*ic->i_rx_bufs), GFP_KERNEL);
	if (!ic->i_rx_bufs)
		goto err;
	for (i = 0; i < n; i++) {
		struct rds_ib_rx_buf *buf = &ic->i_rx_bufs[i];

		buf->rb_dev = ic->i_rdev;
		buf->rb_ic = ic;
		buf->rb_cqe.done = rds_ib_ring_recv_done;
		buf->rb_hdr = ic->i_rx_hdrs + i * RDS_IB_HDR_BYTES;
		buf->rb_hdr_dma = ic->i_rx_hdrs_dma + i * RDS_IB_HDR_BYTES;
		if (rds_ib_rx_buf_alloc(buf, false))
			goto err_bufs;
	}
	attr->recv_cq = ic->i_recv_cq;
	/* and the receive ib_drain_qp() posts (sendq.h) */
	attr->cap.max_recv_wr = rds_ib_recvq_wr(n);
	attr->cap.max_recv_sge = 2;
	return 0;

err_bufs:
	rds_ib_ring_free_bufs(ic, i);
err:
	rds_ib_ring_free_bufs(ic, 0);
	ib_free_cq(ic->i_recv_cq);
	ic->i_recv_cq = NULL;
	return -ENOMEM;
}

static int rds_ib_ring_conn_start(struct rds_ib_conn *ic)
{
	unsigned int i;

	for (i = 0; i < ic->i_rx_nr; i++) {
		struct ib_recv_wr wr;
		struct ib_sge sge[2];
		int ret;

		rds_ib_rx_buf_wr(&ic->i_rx_bufs[i], &wr, sge);
		ret = ib_post_recv(ic->i_qp, &wr, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

/* The QP has its own receive queue: drain both queues. */
static void rds_ib_ring_conn_drain(struct rds_ib_conn *ic)
{
	ib_drain_qp(ic->i_qp);
}

/* A data frame's buffer was reposted: always granted again (the ring's
 * buffers are the connection's own).
 */
static u32 rds_ib_ring_conn_refill(struct rds_ib_conn *ic)
{
	return 1;
}

static void rds_ib_ring_conn_stop(struct rds_ib_conn *ic)
{
	rds_ib_ring_free_bufs(ic, ic->i_rx_nr);
	ib_free_cq(ic->i_recv_cq);
	ic->i_recv_cq = NULL;
}

/* Nothing per device: every connection brings its own buffers. */
static int rds_ib_ring_setup(struct rds_ib_device *rdev)
{
	rdev->rd_frag_size = RDS_IB_HDR_BYTES + RDS_IB_RX_BYTES;
	return 0;
}

static void rds_ib_ring_teardown(struct rds_ib_device *rdev)
{
}

static void rds_ib_ring_release(struct rds_ib_device *rdev)
{
}

const struct rds_ib_rx_ops rds_ib_ring_ops = {
	.name		= "per-connection-ring",
	.setup		= rds_ib_ring_setup,
	.teardown	= rds_ib_ring_teardown,
	.release	= rds_ib_ring_release,
	.conn_prepare	= rds_ib_ring_conn_prepare,
	.conn_start	= rds_ib_ring_conn_start,
	.conn_refill	= rds_ib_ring_conn_refill,
	.conn_drain	= rds_ib_ring_conn_drain,
	.conn_stop	= rds_ib_ring_conn_stop,
};
