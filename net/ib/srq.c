// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving through a shared receive queue (SRQ): one queue of receive
 * buffers per device, shared by every connection on it, so that receive
 * memory does not grow with the number of peers.  A buffer takes one
 * frame: the RDS header in a small DMA-mapped slot and the data in an
 * order-1 page (RDS_IB_RX_BYTES), as two scatter/gather entries.
 *
 * Completions come on the device's shared receive CQ; a buffer goes back
 * on the SRQ as soon as its fragment has been taken (refill from the
 * completion path).
 *
 * The SRQ is created for ib_srq_max buffers and starts with ib_srq_size
 * of them; a device work item adds buffers while the pool is short (in
 * debt, or busy connections found none free) and retires them when it
 * has had buffers to spare for a while (the rule: srqsize.h).  A retired
 * buffer stays posted until a frame lands in it: its completion then
 * frees it instead of posting it again.  No verb takes a posted receive
 * back from an SRQ, so on a device that goes quiet retired buffers stay
 * posted: after RDS_IB_SRQ_STRAND_TICKS ticks with none freed they are
 * counted and shown as stranded (held, not wanted), and the work stops
 * looking (Documentation/ib-transport.md, "Growing and shrinking the
 * SRQ").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "../fault.h"
#include "../neg.h"
#include "../wire.h"
#include "ib.h"

/* Receive pages held by all devices: memory accounting, leak tests. */
atomic_t rds_ib_rx_pages = ATOMIC_INIT(0);

static int rds_ib_rx_pages_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&rds_ib_rx_pages));
}

static const struct kernel_param_ops rds_ib_rx_pages_ops = {
	.get	= rds_ib_rx_pages_get,
};
module_param_cb(ib_rx_pages, &rds_ib_rx_pages_ops, NULL, 0444);
MODULE_PARM_DESC(ib_rx_pages, "Receive buffer pages held by all devices (read only)");

/* Bytes of the RDS header that precedes every fragment on the wire. */
#define RDS_IB_HDR_BYTES	sizeof(struct rds_header)

/* Header slots come in pages, each mapped for the device: a single
 * array for thousands of buffers would take a high-order allocation.
 */
struct rds_ib_hdr_page {
	void	*addr;
	u64	dma;
};

#define RDS_IB_HDRS_PER_PAGE	(PAGE_SIZE / RDS_IB_HDR_BYTES)

/* How often the resize work looks at a pool that is short or above its
 * initial size (a tick of srqsize.h).
 */
#define RDS_IB_SRQ_TICK		HZ

/* Buffers the SRQ of dev starts with and may grow to.  Each posted one
 * may complete at once: the shared receive CQ (device.c) has room for
 * max of them and the drain QP's marker, so the device's largest CQ caps
 * both, as its largest SRQ does.
 */
void rds_ib_srq_sizes(const struct ib_device *dev, unsigned int *min,
		      unsigned int *max)
{
	u32 lim = min_t(u32, dev->attrs.max_srq_wr, dev->attrs.max_cqe);
	u64 want = READ_ONCE(rds_ib_srq_max) ?:
		   4ULL * READ_ONCE(rds_ib_srq_size);

	lim = lim > 1 ? lim - 1 : 1;
	*min = min_t(u32, READ_ONCE(rds_ib_srq_size), lim);
	*max = clamp_t(u64, want, *min, lim);
}

/* The receive work request of a buffer: header slot, then the page. */
void rds_ib_rx_buf_wr(struct rds_ib_rx_buf *buf, struct ib_recv_wr *wr,
		      struct ib_sge *sge)
{
	u32 lkey = buf->rb_dev->rd_pd->local_dma_lkey;

	sge[0].addr = buf->rb_hdr_dma;
	sge[0].length = RDS_IB_HDR_BYTES;
	sge[0].lkey = lkey;
	sge[1].addr = buf->rb_dma;
	sge[1].length = RDS_IB_RX_BYTES;
	sge[1].lkey = lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_cqe = &buf->rb_cqe;
	wr->sg_list = sge;
	wr->num_sge = 2;
}

/* The data page of a buffer: compound, so that the messages it is handed
 * to (rds_ib_rx_buf_take_page()) can hold it by any of its bytes.
 */
static struct page *rds_ib_rx_page_alloc(gfp_t gfp)
{
	return alloc_pages(gfp | __GFP_COMP, RDS_IB_RX_ORDER);
}

/* Give a buffer its page (allocated with gfp), mapped for the device. */
static int rds_ib_rx_buf_get(struct rds_ib_rx_buf *buf, bool may_fail,
			     gfp_t gfp)
{
	struct ib_device *dev = buf->rb_dev->rd_dev;

	buf->rb_page = may_fail && rds_fault() ? NULL :
		       rds_ib_rx_page_alloc(gfp);
	if (!buf->rb_page)
		return -ENOMEM;
	buf->rb_dma = ib_dma_map_page(dev, buf->rb_page, 0, RDS_IB_RX_BYTES,
				      DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, buf->rb_dma)) {
		put_page(buf->rb_page);
		return -ENOMEM;
	}
	atomic_add(1 << RDS_IB_RX_ORDER, &rds_ib_rx_pages);
	return 0;
}

int rds_ib_rx_buf_alloc(struct rds_ib_rx_buf *buf, bool may_fail)
{
	return rds_ib_rx_buf_get(buf, may_fail, GFP_KERNEL);
}

void rds_ib_rx_buf_free(struct rds_ib_rx_buf *buf)
{
	ib_dma_unmap_page(buf->rb_dev->rd_dev, buf->rb_dma, RDS_IB_RX_BYTES,
			  DMA_FROM_DEVICE);
	put_page(buf->rb_page);
	atomic_sub(1 << RDS_IB_RX_ORDER, &rds_ib_rx_pages);
}

/* Take the page of a filled buffer, whose data then goes to messages as
 * it is, and give the buffer a fresh one (receive completions).  NULL if
 * none can be had now: the caller copies the data out instead.
 */
struct page *rds_ib_rx_buf_take_page(struct rds_ib_rx_buf *buf)
{
	struct ib_device *dev = buf->rb_dev->rd_dev;
	struct page *page, *old = buf->rb_page;
	u64 dma;

	page = rds_fault() ? NULL :
	       rds_ib_rx_page_alloc(GFP_ATOMIC | __GFP_NOWARN);
	if (!page)
		goto copy;
	dma = ib_dma_map_page(dev, page, 0, RDS_IB_RX_BYTES, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, dma)) {
		put_page(page);
		goto copy;
	}
	ib_dma_unmap_page(dev, buf->rb_dma, RDS_IB_RX_BYTES, DMA_FROM_DEVICE);
	buf->rb_page = page;
	buf->rb_dma = dma;
	return old;
copy:
	rds_ib_count(RDS_IB_C_RX_COPIES);
	return NULL;
}

/* Sync a buffer's header and page for the CPU (to_cpu) or back. */
void rds_ib_rx_buf_sync(struct rds_ib_rx_buf *buf, bool to_cpu)
{
	struct ib_device *dev = buf->rb_dev->rd_dev;

	if (to_cpu) {
		ib_dma_sync_single_for_cpu(dev, buf->rb_hdr_dma,
					   RDS_IB_HDR_BYTES, DMA_FROM_DEVICE);
		ib_dma_sync_single_for_cpu(dev, buf->rb_dma, RDS_IB_RX_BYTES,
					   DMA_FROM_DEVICE);
	} else {
		ib_dma_sync_single_for_device(dev, buf->rb_hdr_dma,
					      RDS_IB_HDR_BYTES,
					      DMA_FROM_DEVICE);
		ib_dma_sync_single_for_device(dev, buf->rb_dma,
					      RDS_IB_RX_BYTES,
					      DMA_FROM_DEVICE);
	}
}

int rds_ib_srq_post(struct rds_ib_device *rdev, struct rds_ib_rx_buf *buf)
{
	struct ib_recv_wr wr;
	struct ib_sge sge[2];
	int ret;

	if (READ_ONCE(rdev->rd_rx_dying))
		return -ESHUTDOWN;
	rds_ib_rx_buf_wr(buf, &wr, sge);
	ret = ib_post_srq_recv(rdev->rd_srq, &wr, NULL);
	if (!ret)
		atomic_inc(&rdev->rd_rx_posted);
	return ret;
}

/* A buffer whose frame was taken (receive completion): freed rather than
 * posted again while the pool has buffers to retire (rds_ib_srq_shrink()).
 * Unmapping and freeing a page is fine in softirq context.
 */
static bool rds_ib_srq_retire(struct rds_ib_device *rdev,
			      struct rds_ib_rx_buf *buf)
{
	if (likely(!atomic_read(&rdev->rd_rx_retire)) ||
	    atomic_dec_if_positive(&rdev->rd_rx_retire) < 0)
		return false;
	rds_ib_rx_buf_free(buf);
	atomic_dec(&rdev->rd_rx_live);
	rds_ib_count(RDS_IB_C_SRQ_RETIRED);
	atomic_inc(&rdev->rd_rx_retired);
	/* done with the slot: the resize work may fill it again */
	clear_bit_unlock(buf - rdev->rd_rx_bufs, rdev->rd_rx_used);
	return true;
}

/* Runs in softirq context from the shared receive CQ (a workqueue with
 * the test-only ib_rx_poll_wq, rx_hook.c).  The buffer goes back on the
 * SRQ as soon as its frame has been taken (copied out).
 */
static void rds_ib_srq_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_rx_buf *buf =
		container_of(wc->wr_cqe, struct rds_ib_rx_buf, rb_cqe);
	struct rds_ib_device *rdev = buf->rb_dev;
	struct ib_device *dev = rdev->rd_dev;

	atomic_dec(&rdev->rd_rx_posted);
	/* The SRQ is going away: teardown frees the buffer. */
	if (READ_ONCE(rdev->rd_rx_dying))
		return;

	rds_ib_rx_buf_sync(buf, true);
	if (wc->status == IB_WC_SUCCESS) {
		rds_ib_test_rx_hook(wc);
		rds_ib_recv_frame(wc->qp->qp_context, buf, wc);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR) {
		pr_warn_ratelimited("%s: receive failed: %s\n", dev_name(&dev->dev),
				    ib_wc_status_msg(wc->status));
		rds_ib_conn_error(wc->qp->qp_context, "receive error");
	}
	rds_ib_rx_buf_sync(buf, false);
	if (rds_ib_srq_retire(rdev, buf))
		return;
	if (rds_ib_srq_post(rdev, buf))
		pr_warn_ratelimited("%s: cannot repost a receive buffer\n",
				    dev_name(&dev->dev));
}

/* Frees every buffer that has a page, whatever its state (posted,
 * retiring, never given back by a completion), and the slots.
 */
static void rds_ib_srq_free_mem(struct rds_ib_device *rdev)
{
	struct ib_device *dev = rdev->rd_dev;
	unsigned int i, n = 0;

	if (rdev->rd_rx_used) {
		for_each_set_bit(i, rdev->rd_rx_used, rdev->rd_rx_max) {
			rds_ib_rx_buf_free(&rdev->rd_rx_bufs[i]);
			n++;
		}
		bitmap_free(rdev->rd_rx_used);
		rdev->rd_rx_used = NULL;
	}
	/* every buffer with a page was counted, and no other */
	WARN_ON_ONCE(n != atomic_read(&rdev->rd_rx_live));
	atomic_set(&rdev->rd_rx_live, 0);
	kvfree(rdev->rd_rx_bufs);
	rdev->rd_rx_bufs = NULL;
	for (i = 0; i < rdev->rd_hdr_npages; i++) {
		struct rds_ib_hdr_page *hp = &rdev->rd_hdr_pages[i];

		ib_dma_unmap_single(dev, hp->dma, PAGE_SIZE, DMA_FROM_DEVICE);
		free_page((unsigned long)hp->addr);
	}
	rdev->rd_hdr_npages = 0;
	kfree(rdev->rd_hdr_pages);
	rdev->rd_hdr_pages = NULL;
}

/* The header slots of rd_rx_max buffers, and the slots themselves. */
static int rds_ib_srq_alloc_slots(struct rds_ib_device *rdev)
{
	unsigned int n = DIV_ROUND_UP(rdev->rd_rx_max, RDS_IB_HDRS_PER_PAGE);
	struct ib_device *dev = rdev->rd_dev;
	unsigned int i;

	rdev->rd_hdr_pages = rds_fault() ? NULL :
			     kcalloc(n, sizeof(*rdev->rd_hdr_pages),
				     GFP_KERNEL);
	if (!rdev->rd_hdr_pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct rds_ib_hdr_page *hp = &rdev->rd_hdr_pages[i];

		hp->addr = i == 0 && rds_fault() ? NULL :
			   (void *)get_zeroed_page(GFP_KERNEL);
		if (!hp->addr)
			return -ENOMEM;
		hp->dma = ib_dma_map_single(dev, hp->addr, PAGE_SIZE,
					    DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(dev, hp->dma)) {
			free_page((unsigned long)hp->addr);
			return -ENOMEM;
		}
		rdev->rd_hdr_npages++;
	}

	rdev->rd_rx_bufs = rds_fault() ? NULL :
			   kvcalloc(rdev->rd_rx_max, sizeof(*rdev->rd_rx_bufs),
				    GFP_KERNEL);
	rdev->rd_rx_used = bitmap_zalloc(rdev->rd_rx_max, GFP_KERNEL);
	if (!rdev->rd_rx_bufs || !rdev->rd_rx_used)
		return -ENOMEM;
	for (i = 0; i < rdev->rd_rx_max; i++) {
		struct rds_ib_rx_buf *buf = &rdev->rd_rx_bufs[i];
		struct rds_ib_hdr_page *hp =
			&rdev->rd_hdr_pages[i / RDS_IB_HDRS_PER_PAGE];
		unsigned int off = i % RDS_IB_HDRS_PER_PAGE * RDS_IB_HDR_BYTES;

		buf->rb_dev = rdev;
		buf->rb_cqe.done = rds_ib_srq_recv_done;
		buf->rb_hdr = hp->addr + off;
		buf->rb_hdr_dma = hp->dma + off;
	}
	return 0;
}

/* Give slot i a page (the first free slot, from setup or the resize work
 * only): false if none could be had.
 */
static bool rds_ib_srq_fill(struct rds_ib_device *rdev, unsigned int i,
			    bool may_fail, gfp_t gfp)
{
	if (test_and_set_bit_lock(i, rdev->rd_rx_used))
		return false;
	if (rds_ib_rx_buf_get(&rdev->rd_rx_bufs[i], may_fail, gfp)) {
		clear_bit_unlock(i, rdev->rd_rx_used);
		return false;
	}
	atomic_inc(&rdev->rd_rx_live);
	return true;
}

static void rds_ib_srq_unfill(struct rds_ib_device *rdev, unsigned int i)
{
	rds_ib_rx_buf_free(&rdev->rd_rx_bufs[i]);
	atomic_dec(&rdev->rd_rx_live);
	clear_bit_unlock(i, rdev->rd_rx_used);
}

/* A grow's pages are wanted, not needed: an order-1 GFP_KERNEL allocation
 * does not fail, it reclaims for as long as it takes and may call the OOM
 * killer.  These give up after one attempt at reclaim instead, silently
 * (srq_grow_fail counts them).
 */
#define RDS_IB_SRQ_GROW_GFP	(GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN)

/* Add n buffers to the pool (the resize work): the ones still posted that
 * were to be retired come back first, then new ones are allocated and
 * posted.  Each is free: it pays the pool's debt first.  A buffer that
 * cannot be had is counted and ends the step (the next tick tries again).
 */
static void rds_ib_srq_grow(struct rds_ib_device *rdev, unsigned int n)
{
	unsigned int i, added = 0;
	int r, back;

	do {
		r = atomic_read(&rdev->rd_rx_retire);
		back = min_t(int, r, n);
	} while (back > 0 &&
		 atomic_cmpxchg(&rdev->rd_rx_retire, r, r - back) != r);
	if (back > 0)
		added = back;
	while (added < n) {
		/* none while retired ones are still being freed */
		i = find_first_zero_bit(rdev->rd_rx_used, rdev->rd_rx_max);
		if (i >= rdev->rd_rx_max)
			break;
		if (!rds_ib_srq_fill(rdev, i, true, RDS_IB_SRQ_GROW_GFP)) {
			rds_ib_count(RDS_IB_C_SRQ_GROW_FAIL);
			break;
		}
		if (rds_ib_srq_post(rdev, &rdev->rd_rx_bufs[i])) {
			rds_ib_srq_unfill(rdev, i);
			rds_ib_count(RDS_IB_C_SRQ_GROW_FAIL);
			break;
		}
		added++;
	}
	rdev->rd_rx_pool += added;
	atomic_add(added, &rdev->rd_rx_free);
	atomic64_add(added, &rds_ib_counters[RDS_IB_C_SRQ_GROWN]);
}

/* Take up to n free buffers out of the pool (the resize work), never
 * putting it in debt: they are retired as frames land in them.
 */
static void rds_ib_srq_shrink(struct rds_ib_device *rdev, unsigned int n)
{
	int free, take;

	do {
		free = atomic_read(&rdev->rd_rx_free);
		take = min_t(int, n, max(free, 0));
	} while (take > 0 &&
		 atomic_cmpxchg(&rdev->rd_rx_free, free, free - take) != free);
	if (take <= 0)
		return;
	rdev->rd_rx_pool -= take;
	atomic_add(take, &rdev->rd_rx_retire);
	atomic64_add(take, &rds_ib_counters[RDS_IB_C_SRQ_SHRUNK]);
}

/* Look at the pool again in a tick while it is short (it may grow) or
 * above its initial size (it may shrink).  Never for a pool whose initial
 * size is its maximum (ib_srq_max at most ib_srq_size, or the device's
 * cap): it neither grows nor shrinks, and a debt that lasts (more peers
 * than buffers) would run the work every tick for nothing.
 */
static void rds_ib_srq_watch(struct rds_ib_device *rdev)
{
	if (rdev->rd_rx_max == rdev->rd_rx_min)
		return;
	queue_delayed_work(system_wq, &rdev->rd_rx_resize, RDS_IB_SRQ_TICK);
}

/* A busy connection found no buffer free (receive completion): the pool
 * may have to grow.  Once per tick at most.
 */
static void rds_ib_srq_starved(struct rds_ib_device *rdev)
{
	if (atomic_read(&rdev->rd_rx_starved))
		return;
	atomic_set(&rdev->rd_rx_starved, 1);
	rds_ib_srq_watch(rdev);
}

/* Retiring buffers that no frame freed for RDS_IB_SRQ_STRAND_TICKS ticks
 * (/proc/net/rds/devices): some may have been freed since the work last
 * looked, so never more than are retiring now.
 */
unsigned int rds_ib_srq_stranded(struct rds_ib_device *rdev)
{
	return min_t(unsigned int, READ_ONCE(rdev->rd_rx_stranded),
		     max(atomic_read(&rdev->rd_rx_retire), 0));
}

/* The watch over retiring buffers (srqsize.h), once a tick before the
 * pool's own rule: a posted SRQ receive cannot be taken back, so a
 * retired buffer is freed only by a frame landing in it.  Once none has
 * for RDS_IB_SRQ_STRAND_TICKS ticks, the ones still retiring count as
 * stranded: counted, logged with their bytes, and no longer a reason for
 * the work to look again.
 */
static void rds_ib_srq_watch_retiring(struct rds_ib_device *rdev)
{
	unsigned int retired = atomic_read(&rdev->rd_rx_retired);
	unsigned int before = rds_ib_srq_stranded(rdev);
	unsigned int retiring = max(atomic_read(&rdev->rd_rx_retire), 0);
	unsigned int now;

	now = rds_ib_srq_strand(&rdev->rd_rx_sizing, retiring,
				retired != rdev->rd_rx_retired_seen);
	rdev->rd_rx_retired_seen = retired;
	if (!now)
		return;
	if (now > before) {
		atomic64_add(now - before,
			     &rds_ib_counters[RDS_IB_C_SRQ_STRANDED]);
		pr_info_ratelimited("%s: %u retired receive buffers (%llu bytes) still posted, none freed for %u s: a posted SRQ receive cannot be taken back, each is freed when a frame lands in it\n",
				    dev_name(&rdev->rd_dev->dev), now,
				    (u64)now * rdev->rd_frag_size,
				    (unsigned int)(RDS_IB_SRQ_STRAND_TICKS *
						   RDS_IB_SRQ_TICK / HZ));
	}
	WRITE_ONCE(rdev->rd_rx_stranded, now);
}

/* A tick of srqsize.h.  Runs one at a time (a work item), in process
 * context: buffers are allocated with GFP_KERNEL.  Cancelled before the
 * SRQ goes (rds_ib_srq_teardown()).
 */
static void rds_ib_srq_resize_work(struct work_struct *work)
{
	struct rds_ib_device *rdev = container_of(to_delayed_work(work),
						  struct rds_ib_device,
						  rd_rx_resize);
	unsigned int stranded;
	int d;

	rds_ib_srq_watch_retiring(rdev);
	d = rds_ib_srq_resize(&rdev->rd_rx_sizing,
			      atomic_read(&rdev->rd_rx_free), rdev->rd_rx_pool,
			      atomic_xchg(&rdev->rd_rx_starved, 0));
	if (d > 0)
		rds_ib_srq_grow(rdev, d);
	else if (d < 0)
		rds_ib_srq_shrink(rdev, -d);
	/* a grow takes retiring buffers back first, stranded ones too */
	stranded = rds_ib_srq_stranded(rdev);
	WRITE_ONCE(rdev->rd_rx_stranded, stranded);
	if (rds_ib_srq_watching(&rdev->rd_rx_sizing,
				atomic_read(&rdev->rd_rx_free),
				rdev->rd_rx_pool,
				max(atomic_read(&rdev->rd_rx_retire), 0),
				stranded))
		rds_ib_srq_watch(rdev);
}

static void rds_ib_srq_teardown(struct rds_ib_device *rdev);
static void rds_ib_srq_release(struct rds_ib_device *rdev);

/* The drain QP: an RC QP that is never connected, with a receive queue
 * of its own (one entry) and its receives completing on rd_recv_cq.
 */
static int rds_ib_srq_drain_qp_create(struct rds_ib_device *rdev)
{
	struct ib_qp_init_attr attr = {
		.send_cq	= rdev->rd_recv_cq,
		.recv_cq	= rdev->rd_recv_cq,
		.cap		= {
			.max_send_wr	= 1,
			.max_recv_wr	= 1,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
		},
		.sq_sig_type	= IB_SIGNAL_REQ_WR,
		.qp_type	= IB_QPT_RC,
	};
	struct ib_qp_attr init = {
		.qp_state	= IB_QPS_INIT,
		.port_num	= rdma_start_port(rdev->rd_dev),
	};
	struct ib_qp *qp;
	int ret;

	qp = rds_fault() ? ERR_PTR(-ENOMEM) : ib_create_qp(rdev->rd_pd, &attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	/* INIT first: a QP may only go to the error state (ib_drain_rq())
	 * from INIT or later.
	 */
	ret = ib_modify_qp(qp, &init, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret) {
		ib_destroy_qp(qp);
		return ret;
	}
	rdev->rd_drain_qp = qp;
	mutex_init(&rdev->rd_drain_mutex);
	return 0;
}

static int rds_ib_srq_setup(struct rds_ib_device *rdev)
{
	struct ib_device *dev = rdev->rd_dev;
	struct ib_srq_init_attr attr = {
		.srq_context	= rdev,
		.srq_type	= IB_SRQT_BASIC,
	};
	unsigned int n, i;
	int ret;

	rds_ib_srq_sizes(dev, &rdev->rd_rx_min, &rdev->rd_rx_max);
	n = rdev->rd_rx_min;
	rdev->rd_rx_sizing.min = n;
	rdev->rd_rx_sizing.max = rdev->rd_rx_max;
	rdev->rd_rx_pool = n;
	atomic_set(&rdev->rd_rx_free, n);
	rdev->rd_frag_size = RDS_IB_HDR_BYTES + RDS_IB_RX_BYTES;
	INIT_DELAYED_WORK(&rdev->rd_rx_resize, rds_ib_srq_resize_work);

	attr.attr.max_wr = rdev->rd_rx_max;
	attr.attr.max_sge = 2;
	rdev->rd_srq = rds_fault() ? ERR_PTR(-ENOMEM) :
		       ib_create_srq(rdev->rd_pd, &attr);
	if (IS_ERR(rdev->rd_srq))
		return PTR_ERR(rdev->rd_srq);

	ret = rds_ib_srq_alloc_slots(rdev);
	if (ret)
		goto err;
	for (i = 0; i < n; i++) {
		/* Inject at the first and last page only: a thousand sites
		 * would make the fault test walk them all for nothing.
		 */
		if (!rds_ib_srq_fill(rdev, i, i == 0 || i == n - 1,
				     GFP_KERNEL)) {
			ret = -ENOMEM;
			goto err;
		}
	}
	ret = rds_ib_srq_drain_qp_create(rdev);
	if (ret)
		goto err;
	for (i = 0; i < n; i++) {
		ret = rds_ib_srq_post(rdev, &rdev->rd_rx_bufs[i]);
		if (ret) {
			rds_ib_srq_teardown(rdev);
			rds_ib_srq_release(rdev);
			return ret;
		}
	}
	return 0;

err:
	rds_ib_srq_free_mem(rdev);
	ib_destroy_srq(rdev->rd_srq);
	return ret;
}

/* Every queue pair that used the SRQ is gone (they hold a device ref)
 * and was drained: no completion of theirs is left in rd_recv_cq, and
 * nothing queues the resize work any more.
 */
static void rds_ib_srq_teardown(struct rds_ib_device *rdev)
{
	cancel_delayed_work_sync(&rdev->rd_rx_resize);
	WRITE_ONCE(rdev->rd_rx_dying, true);
	ib_destroy_qp(rdev->rd_drain_qp);
	rdev->rd_drain_qp = NULL;
	ib_destroy_srq(rdev->rd_srq);
}

/* rd_recv_cq is freed: no receive completion can run any more. */
static void rds_ib_srq_release(struct rds_ib_device *rdev)
{
	/* no retirement half done: the pool and the retiring ones are all */
	WARN_ON_ONCE(rdev->rd_rx_pool + atomic_read(&rdev->rd_rx_retire) !=
		     atomic_read(&rdev->rd_rx_live));
	rds_ib_srq_free_mem(rdev);
}

/* The smallest grant: 4 credits and the control buffer. */
#define RDS_IB_SRQ_MIN_TAKE	(RDS_IB_CREDIT_KEEP + 1)

/* A connection's credits come out of the device's SRQ by the pool rules
 * of credit.h: ib_credits plus one control buffer, or what is left, and
 * never less than RDS_IB_SRQ_MIN_TAKE: a connection is never refused for
 * buffers.  When fewer than that are left, rd_rx_free goes below zero
 * (the pool is in debt; grants_short counts the short grants): the grants
 * then promise more buffers than are posted, and the busy connections pay
 * the debt back (rds_ib_srq_conn_refill()).  Only a burst that uses more
 * credits at once than there are buffers meets an empty queue (RNR).
 */
static int rds_ib_srq_conn_prepare(struct rds_ib_conn *ic,
				   struct ib_qp_init_attr *attr)
{
	struct rds_ib_device *rdev = ic->i_rdev;
	int want, avail, take;

	want = min_t(u32, READ_ONCE(rds_ib_credits) ?: 1, RDS_IB_CREDITS_MAX) + 1;
	want = max(want, 2);
	do {
		avail = atomic_read(&rdev->rd_rx_free);
		take = rds_ib_pool_take(avail, want, RDS_IB_SRQ_MIN_TAKE);
	} while (atomic_cmpxchg(&rdev->rd_rx_free, avail, avail - take) !=
		 avail);
	if (take < want)
		rds_ib_count(RDS_IB_C_GRANTS_SHORT);
	/* in debt: the SRQ may have to grow */
	if (avail < take)
		rds_ib_srq_watch(rdev);
	ic->i_reserved = take;
	ic->i_grant = take - 1;
	attr->srq = rdev->rd_srq;
	attr->recv_cq = rdev->rd_recv_cq;
	return 0;
}

/* A data frame's buffer was taken and reposted (receive completion,
 * under i_lock): grant it again (1); or, while the pool is in debt and
 * the connection holds more than the smallest grant, keep it back to pay
 * one buffer of the debt (0): the peer's credits shrink by one; or, while
 * buffers are free and the connection holds less than it took at setup
 * (i_grant is what its peer was told, and the peer refuses grants beyond
 * it), take one more (2): the peer's credits grow by one.  A buffer kept
 * back, or one that could not be earned for want of a free one, tells
 * the resize work the pool is short (srqsize.h).
 */
static u32 rds_ib_srq_conn_refill(struct rds_ib_conn *ic)
{
	struct rds_ib_device *rdev = ic->i_rdev;
	int free = atomic_read(&rdev->rd_rx_free);

	lockdep_assert_held(&ic->i_lock);
	if (rds_ib_pool_keep_back(free, ic->i_reserved, RDS_IB_SRQ_MIN_TAKE)) {
		ic->i_reserved--;
		atomic_inc(&rdev->rd_rx_free);
		rds_ib_count(RDS_IB_C_GRANTS_SHRUNK);
		rds_ib_srq_starved(rdev);
		return 0;
	}
	/* The buffer is taken only if one is still free. */
	if (rds_ib_pool_earn(free, ic->i_reserved, ic->i_grant + 1) &&
	    atomic_dec_if_positive(&rdev->rd_rx_free) >= 0) {
		ic->i_reserved++;
		rds_ib_count(RDS_IB_C_GRANTS_EARNED);
		return 2;
	}
	/* below its first grant with nothing free to earn */
	if (ic->i_reserved <= ic->i_grant)
		rds_ib_srq_starved(rdev);
	return 1;
}

/* The peer gave back n of our grants (receive completion, under i_lock):
 * the connection holds n buffers fewer, which the pool's other
 * connections may earn (rds_ib_pool_earn()), or which pay its debt.
 */
static void rds_ib_srq_conn_release(struct rds_ib_conn *ic, u32 n)
{
	lockdep_assert_held(&ic->i_lock);
	n = rds_ib_pool_release(ic->i_reserved, n, RDS_IB_SRQ_MIN_TAKE);
	ic->i_reserved -= n;
	atomic_add(n, &ic->i_rdev->rd_rx_free);
	atomic64_add(n, &rds_ib_counters[RDS_IB_C_CREDITS_RELEASED]);
}

static int rds_ib_srq_conn_start(struct rds_ib_conn *ic)
{
	return 0;
}

/* How long the Last WQE Reached event of a QP in the error state may
 * take.  Some providers never send it (rxe before 6.6): the wait then
 * only gives a receive being handled on another CPU time to complete.
 */
#define RDS_IB_LAST_WQE_WAIT	(HZ / 10)

/* Receives of the QP complete on the device's shared CQ, whose handler
 * reads the QP (wc->qp) of each: before the QP may be destroyed, every
 * completion of it must have been handled.  In the error state no new
 * receive starts; after the Last WQE Reached event none completes any
 * more; then a flushed receive of the drain QP, completing on the same
 * CQ after everything already in it, marks the end (the CQ is handled
 * in order).  Runs in process context, the QP still set in ic->i_qp.
 */
static void rds_ib_srq_conn_drain(struct rds_ib_conn *ic)
{
	struct rds_ib_device *rdev = ic->i_rdev;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int err;

	might_sleep();
	err = ib_modify_qp(ic->i_qp, &attr, IB_QP_STATE);
	if (rds_neg_stalerx()) {
		ib_drain_sq(ic->i_qp);
		return;
	}
	/* Even when the modify fails (the QP already failed), the wait
	 * gives a receive in progress elsewhere its time.
	 */
	if (!wait_for_completion_timeout(&ic->i_last_wqe,
					 RDS_IB_LAST_WQE_WAIT) || err)
		rds_ib_count(RDS_IB_C_LAST_WQE_LATE);
	ib_drain_sq(ic->i_qp);

	mutex_lock(&rdev->rd_drain_mutex);
	ib_drain_rq(rdev->rd_drain_qp);
	mutex_unlock(&rdev->rd_drain_mutex);
	rds_ib_count(RDS_IB_C_RX_DRAINS);
}

static void rds_ib_srq_conn_stop(struct rds_ib_conn *ic)
{
	atomic_add(ic->i_reserved, &ic->i_rdev->rd_rx_free);
	ic->i_reserved = 0;
}

const struct rds_ib_rx_ops rds_ib_srq_ops = {
	.name		= "shared-queue",
	.setup		= rds_ib_srq_setup,
	.teardown	= rds_ib_srq_teardown,
	.release	= rds_ib_srq_release,
	.conn_prepare	= rds_ib_srq_conn_prepare,
	.conn_start	= rds_ib_srq_conn_start,
	.conn_refill	= rds_ib_srq_conn_refill,
	.conn_release	= rds_ib_srq_conn_release,
	.conn_drain	= rds_ib_srq_conn_drain,
	.conn_stop	= rds_ib_srq_conn_stop,
};
