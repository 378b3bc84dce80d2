// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions over IB: fast registration (FRWR) from a bounded pool per
 * device.  A region is an ib_mr of the device's PD mapping exactly the
 * registered bytes, at addresses that count from the start of their first
 * page (the cookie carries the first byte's offset in it); its key becomes
 * valid when a REG_MR work request runs
 * on a queue pair of the device.  That request is posted on the
 * connection of the first message the socket sends after registering,
 * before the message's first frame (send.c), so the peer cannot learn the
 * cookie before the key works.
 *
 * States (rds_ib_mr_lock): FREE (not registered with the device: a REG is
 * to be posted), BUSY (a REG or LOCAL_INV is in flight), VALID, DEAD
 * (invalidated).  The key stops working when the region is killed
 * (ib_dereg_mr: RDS_FREE_MR, close, the last put, device removal), or
 * earlier when a USE_ONCE key was used (a LOCAL_INV posted on the
 * connection the using message came on, before anything that could
 * acknowledge that message).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include "../fault.h"
#include "ib.h"

enum {
	RDS_IB_MR_FREE,
	RDS_IB_MR_BUSY,
	RDS_IB_MR_VALID,
	RDS_IB_MR_DEAD,
};

/* The IB side of a region (rds_mr.r_trans_data). */
struct rds_ib_mr {
	struct rds_mr		*m_rmr;
	/* the fields below, and every device's rd_mrs, under rds_ib_mr_lock */
	struct rds_ib_device	*m_rdev;	/* reference; NULL once killed */
	struct ib_mr		*m_mr;
	struct list_head	m_item;		/* m_rdev->rd_mrs */
	u8			m_state;
	u8			m_after;	/* state once the BUSY WR is done */
	struct rds_ib_conn	*m_ic;		/* where the BUSY WR went */
	struct scatterlist	*m_sg;
	int			m_nents;	/* mapped entries of m_sg */
	struct ib_cqe		m_cqe;		/* REG_MR and LOCAL_INV completions */
	/* a REG_MR was posted before: it may have run even if its
	 * completion was a flush, so the next one is preceded by a
	 * LOCAL_INV (m_inv_cqe, on m_inv_ic)
	 */
	bool			m_tried;
	struct ib_cqe		m_inv_cqe;
	struct rds_ib_conn	*m_inv_ic;
};

unsigned int rds_ib_mr_max = 1024;
module_param_named(ib_mr_max, rds_ib_mr_max, uint, 0644);
MODULE_PARM_DESC(ib_mr_max,
		 "Memory regions each device may have registered (default 1024)");

/* protects every rds_ib_mr's m_rdev, m_mr, m_item, m_state, m_after and
 * m_ic, every device's rd_mrs, rd_mr_regs and rd_mr_dying, and the giving
 * back of places in rd_mr_used; nests inside a connection's i_lock
 */
static DEFINE_SPINLOCK(rds_ib_mr_lock);

/* Woken when a region's WR completes (rds_ib_mr_kill waits for that), and
 * when a registration ends or a place is given back (the flush of a
 * device being removed waits for those).
 */
static DECLARE_WAIT_QUEUE_HEAD(rds_ib_mr_idle);

/* A place in the device's pool, if one is free (the limit may have been
 * lowered below what is in use: then none is until enough are freed).
 */
static bool rds_ib_mr_slot_take(atomic_t *used)
{
	int cur = atomic_read(used);

	while (cur < (int)READ_ONCE(rds_ib_mr_max))
		if (atomic_try_cmpxchg(used, &cur, cur + 1))
			return true;
	return false;
}

/* The wait for a place ends: one was taken (*got), or rdev is going. */
static bool rds_ib_mr_slot_or_dying(struct rds_ib_device *rdev, bool *got)
{
	if (READ_ONCE(rdev->rd_mr_dying))
		return true;
	*got = rds_ib_mr_slot_take(&rdev->rd_mr_used);
	return *got;
}

/* Take a place in rdev's pool, waiting up to *timeo unless nonblock;
 * -ENODEV if rdev is being removed meanwhile.
 */
static int rds_ib_mr_slot(struct rds_ib_device *rdev, bool nonblock,
			  long *timeo)
{
	bool got = false;
	long left;

	if (rds_ib_mr_slot_take(&rdev->rd_mr_used))
		return 0;
	rds_ib_count(RDS_IB_C_MR_EXHAUSTED);
	if (nonblock || *timeo <= 0)
		return -EAGAIN;
	rds_ib_count(RDS_IB_C_MR_WAITS);
	left = wait_event_interruptible_timeout(rdev->rd_mr_wait,
						rds_ib_mr_slot_or_dying(rdev, &got),
						*timeo);
	if (left < 0)
		return -EINTR;
	if (!left) {
		*timeo = 0;
		return -EAGAIN;
	}
	*timeo = left;
	return got ? 0 : -ENODEV;
}

/* A registration (slot: and its place) or a region of rdev is done with
 * it, after its device reference was put: the flush of a device being
 * removed returns (and removal drops the last reference) only once every
 * one of them is, so that reference was not the last.  rdev is not
 * touched after the lock is released.
 */
static void rds_ib_mr_release_dev(struct rds_ib_device *rdev, bool reg,
				  bool slot)
{
	spin_lock_bh(&rds_ib_mr_lock);
	if (slot) {
		atomic_dec(&rdev->rd_mr_used);
		wake_up(&rdev->rd_mr_wait);
	}
	if (reg)
		rdev->rd_mr_regs--;
	wake_up(&rds_ib_mr_idle);
	spin_unlock_bh(&rds_ib_mr_lock);
}

static void rds_ib_mr_done(struct ib_cq *cq, struct ib_wc *wc);
static void rds_ib_mr_inv_done(struct ib_cq *cq, struct ib_wc *wc);

int rds_ib_mr_register(struct rds_sock *rs, struct rds_mr *rmr, bool nonblock,
		       long *timeo)
{
	struct rds_ib_device *rdev;
	struct ib_device *dev;
	unsigned int i, sg_off;
	struct rds_ib_mr *imr;
	int ret = 0, n;

	rdev = rds_ib_device_of_addr(&rs->rs_bound_addr,
				     rs->rs_bound_scope_id);
	if (!rdev)
		return -ENODEV;
	/* Counted as a registration in progress (the flush of the device
	 * waits for it) unless the device is being removed already.
	 */
	spin_lock_bh(&rds_ib_mr_lock);
	if (!rdev->rd_mr_dying)
		rdev->rd_mr_regs++;
	else
		ret = -ENODEV;
	spin_unlock_bh(&rds_ib_mr_lock);
	if (ret) {
		rds_ib_device_put(rdev);
		return ret;
	}
	dev = rdev->rd_dev;
	ret = rds_ib_mr_slot(rdev, nonblock, timeo);
	if (ret)
		goto err_put;

	ret = -ENOMEM;
	imr = rds_fault() ? NULL : kzalloc(sizeof(*imr), GFP_KERNEL);
	if (!imr)
		goto err_unslot;
	imr->m_rmr = rmr;
	imr->m_cqe.done = rds_ib_mr_done;
	imr->m_inv_cqe.done = rds_ib_mr_inv_done;
	INIT_LIST_HEAD(&imr->m_item);
	imr->m_sg = rds_fault() ? NULL :
		    kvcalloc(rmr->r_npages, sizeof(*imr->m_sg), GFP_KERNEL);
	if (!imr->m_sg)
		goto err_free;
	sg_init_table(imr->m_sg, rmr->r_npages);
	for (i = 0; i < rmr->r_npages; i++)
		sg_set_page(&imr->m_sg[i], rmr->r_pages[i], PAGE_SIZE, 0);
	/* Exactly the bytes registered: the last page ends with them, the
	 * first begins at r_offset (sg_offset below).
	 */
	imr->m_sg[rmr->r_npages - 1].length =
		(rmr->r_offset + rmr->r_bytes - 1) % PAGE_SIZE + 1;
	imr->m_nents = rds_fault() ? 0 :
		       ib_dma_map_sg(dev, imr->m_sg, rmr->r_npages,
				     DMA_BIDIRECTIONAL);
	if (!imr->m_nents)
		goto err_free;
	imr->m_mr = rds_fault() ? ERR_PTR(-ENOMEM) :
		    ib_alloc_mr(rdev->rd_pd, IB_MR_TYPE_MEM_REG, rmr->r_npages);
	if (IS_ERR(imr->m_mr)) {
		ret = PTR_ERR(imr->m_mr);
		goto err_unmap;
	}
	sg_off = rmr->r_offset;
	n = ib_map_mr_sg(imr->m_mr, imr->m_sg, imr->m_nents, &sg_off,
			 PAGE_SIZE);
	if (n != imr->m_nents || imr->m_mr->length != rmr->r_bytes) {
		ret = n < 0 ? n : -EINVAL;
		goto err_dereg;
	}
	/* Addresses count from the start of the first page (the cookie
	 * carries r_offset): the first byte is at r_offset.
	 */
	imr->m_mr->iova = rmr->r_offset;
	/* The key stays the one the device gave the new MR (a fresh index
	 * and key byte): a LOCAL_INV with it is valid whether or not a
	 * REG_MR ran.
	 */
	imr->m_state = RDS_IB_MR_FREE;
	imr->m_rdev = rdev;	/* our reference */
	rmr->r_key = imr->m_mr->rkey;
	rmr->r_trans_data = imr;

	/* Listed only while the device is not being removed: its flush
	 * kills every listed region, after this registration ended.
	 */
	spin_lock_bh(&rds_ib_mr_lock);
	if (!rdev->rd_mr_dying) {
		list_add_tail(&imr->m_item, &rdev->rd_mrs);
		rdev->rd_mr_regs--;	/* the region keeps the place */
		wake_up(&rds_ib_mr_idle);
		ret = 0;
	} else {
		ret = -ENODEV;
	}
	spin_unlock_bh(&rds_ib_mr_lock);
	if (!ret) {
		rds_ib_count(RDS_IB_C_MR_IN_USE);
		return 0;
	}
	rmr->r_trans_data = NULL;

err_dereg:
	ib_dereg_mr(imr->m_mr);
err_unmap:
	ib_dma_unmap_sg(dev, imr->m_sg, rmr->r_npages, DMA_BIDIRECTIONAL);
err_free:
	kvfree(imr->m_sg);
	kfree(imr);
err_unslot:
	rds_ib_device_put(rdev);
	rds_ib_mr_release_dev(rdev, true, true);
	return ret;
err_put:
	rds_ib_device_put(rdev);
	rds_ib_mr_release_dev(rdev, true, false);
	return ret;
}

/* Take imr's ib_mr away for good, once no WR of it is in flight: false
 * (nothing taken) while one is.
 */
static bool rds_ib_mr_take(struct rds_ib_mr *imr, struct ib_mr **mr,
			   struct rds_ib_device **rdev)
{
	bool ok = true;

	spin_lock_bh(&rds_ib_mr_lock);
	if (imr->m_state == RDS_IB_MR_BUSY) {
		ok = false;
	} else {
		*mr = imr->m_mr;
		*rdev = imr->m_rdev;
		imr->m_mr = NULL;
		imr->m_rdev = NULL;
		imr->m_state = RDS_IB_MR_DEAD;
		list_del_init(&imr->m_item);
	}
	spin_unlock_bh(&rds_ib_mr_lock);
	return ok;
}

/* The key stops working: deregister.  Process context; idempotent.  The
 * caller holds a reference to imr's region (or is its last put).
 */
static void rds_ib_mr_kill(struct rds_ib_mr *imr)
{
	struct rds_ib_device *rdev = NULL;
	struct ib_mr *mr = NULL;

	wait_event(rds_ib_mr_idle, rds_ib_mr_take(imr, &mr, &rdev));
	if (!mr)
		return;
	ib_dereg_mr(mr);
	ib_dma_unmap_sg(rdev->rd_dev, imr->m_sg, imr->m_rmr->r_npages,
			DMA_BIDIRECTIONAL);
	atomic64_dec(&rds_ib_counters[RDS_IB_C_MR_IN_USE]);
	rds_ib_count(RDS_IB_C_MR_FREES);
	rds_ib_device_put(rdev);
	rds_ib_mr_release_dev(rdev, false, true);
}

void rds_ib_mr_invalidate(struct rds_mr *rmr)
{
	rds_ib_mr_kill(rmr->r_trans_data);
}

void rds_ib_mr_free(struct rds_mr *rmr)
{
	struct rds_ib_mr *imr = rmr->r_trans_data;

	kvfree(imr->m_sg);
	kfree(imr);
	rmr->r_trans_data = NULL;
}

/* The flush of rdev: a listed region to kill, with a reference to it
 * (true, *imrp set), or nothing of rdev is left (true, *imrp NULL): no
 * region, no place taken, no registration in progress.  False: wait for
 * the others (regions whose last put is releasing them, registrations,
 * kills of other threads) to end.
 */
static bool rds_ib_mr_flush_next(struct rds_ib_device *rdev,
				 struct rds_ib_mr **imrp)
{
	struct rds_ib_mr *imr;
	bool done;

	*imrp = NULL;
	spin_lock_bh(&rds_ib_mr_lock);
	list_for_each_entry(imr, &rdev->rd_mrs, m_item) {
		if (refcount_inc_not_zero(&imr->m_rmr->r_refcount)) {
			*imrp = imr;
			break;
		}
	}
	done = *imrp || (!rdev->rd_mr_regs && !atomic_read(&rdev->rd_mr_used));
	spin_unlock_bh(&rds_ib_mr_lock);
	return done;
}

/* Device removal: every region of rdev dies (its owners keep the pages
 * until they free them), and no registration may add one afterwards:
 * returns once nothing of the pool holds rdev any more.
 */
void rds_ib_mr_flush_dev(struct rds_ib_device *rdev)
{
	struct rds_ib_mr *imr;
	struct rds_mr *rmr;

	spin_lock_bh(&rds_ib_mr_lock);
	rdev->rd_mr_dying = true;
	spin_unlock_bh(&rds_ib_mr_lock);
	/* Registrations asleep for a place give up (-ENODEV). */
	wake_up_all(&rdev->rd_mr_wait);

	for (;;) {
		wait_event(rds_ib_mr_idle, rds_ib_mr_flush_next(rdev, &imr));
		if (!imr)
			return;
		/* Unlisted by the kill, which waits out a WR in flight; our
		 * reference keeps the region (and imr) until it is done.
		 */
		rmr = imr->m_rmr;
		rds_ib_mr_kill(imr);
		rds_mr_put(rmr);
	}
}

/* Runs in softirq context from the connection's send CQ: a REG_MR or
 * LOCAL_INV of a region completed.
 */
static void rds_ib_mr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_mr *imr = container_of(wc->wr_cqe, struct rds_ib_mr,
					     m_cqe);
	struct rds_ib_conn *ic = imr->m_ic;
	struct rds_mr *rmr = imr->m_rmr;

	spin_lock_bh(&rds_ib_mr_lock);
	/* Not done (flushed, failed): a REG is to be posted again, an
	 * invalidation is left to the kill.
	 */
	if (wc->status == IB_WC_SUCCESS)
		imr->m_state = imr->m_after;
	else
		imr->m_state = imr->m_after == RDS_IB_MR_VALID ?
			       RDS_IB_MR_FREE : RDS_IB_MR_VALID;
	imr->m_ic = NULL;
	spin_unlock_bh(&rds_ib_mr_lock);
	wake_up(&rds_ib_mr_idle);

	rds_ib_extra_done(ic, wc);
	rds_mr_put(rmr);	/* the WR's reference */
}

/* Runs in softirq context from the connection's send CQ: the LOCAL_INV
 * that precedes a REG_MR posted again completed (the REG_MR's completion
 * follows it and decides the state).
 */
static void rds_ib_mr_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_mr *imr = container_of(wc->wr_cqe, struct rds_ib_mr,
					     m_inv_cqe);

	rds_ib_extra_done(imr->m_inv_ic, wc);
	rds_mr_put(imr->m_rmr);	/* the WR's reference */
}

/* Post a work request for imr on ic (BUSY until it completes). */
static int rds_ib_mr_post(struct rds_ib_conn *ic, struct rds_ib_mr *imr,
			  struct ib_send_wr *wr, u8 after)
{
	const struct ib_send_wr *bad;

	lockdep_assert_held(&ic->i_lock);
	lockdep_assert_held(&rds_ib_mr_lock);
	wr->wr_cqe = &imr->m_cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	if (ib_post_send(ic->i_qp, wr, &bad))
		return -ENOTCONN;
	refcount_inc(&imr->m_rmr->r_refcount);
	imr->m_state = RDS_IB_MR_BUSY;
	imr->m_after = after;
	imr->m_ic = ic;
	ic->i_extra++;
	return 0;
}

/* Post the REG_MR of rmr on ic if it is to be registered there (preceded
 * by a LOCAL_INV if a REG_MR was posted before).  -EAGAIN: no room in the
 * send queue now.
 */
static int rds_ib_mr_post_reg(struct rds_ib_conn *ic, struct rds_mr *rmr)
{
	struct rds_ib_mr *imr = rmr->r_trans_data;
	struct ib_reg_wr wr = { };
	int ret;

	lockdep_assert_held(&ic->i_lock);
	lockdep_assert_held(&rds_ib_mr_lock);
	/* A region of another device (re-added since) stays dead: the
	 * peer's op on it fails, as a stale key's should.
	 */
	if (imr->m_state != RDS_IB_MR_FREE || imr->m_rdev != ic->i_rdev)
		return 0;
	if (!rds_ib_sendq_extra_room(ic->i_extra, 2, ic->i_sq.extra)) {
		ic->i_xmit_stalled = true;
		return -EAGAIN;
	}
	if (imr->m_tried) {
		struct ib_send_wr inv = {
			.opcode = IB_WR_LOCAL_INV,
			.wr_cqe = &imr->m_inv_cqe,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = imr->m_mr->rkey,
		};
		const struct ib_send_wr *bad;

		if (ib_post_send(ic->i_qp, &inv, &bad))
			return -ENOTCONN;
		refcount_inc(&rmr->r_refcount);
		imr->m_inv_ic = ic;
		ic->i_extra++;
	}
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = imr->m_mr;
	wr.key = imr->m_mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		    IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	ret = rds_ib_mr_post(ic, imr, &wr.wr, RDS_IB_MR_VALID);
	if (ret)
		return ret;
	imr->m_tried = true;
	rds_ib_count(RDS_IB_C_MR_REGS);
	return 0;
}

/* Before rm's first frame: register the regions it carries that are not
 * registered yet.  -EAGAIN: no room in the send queue now.
 */
int rds_ib_mr_post_regs(struct rds_ib_conn *ic, struct rds_message *rm)
{
	struct rds_mr *rmr;
	int ret = 0;

	lockdep_assert_held(&ic->i_lock);
	if (list_empty(&rm->m_regs))
		return 0;
	spin_lock(&rds_ib_mr_lock);
	list_for_each_entry(rmr, &rm->m_regs, r_reg_item) {
		ret = rds_ib_mr_post_reg(ic, rmr);
		if (ret)
			break;
	}
	spin_unlock(&rds_ib_mr_lock);
	return ret;
}

/* RDS_GET_MR on a socket whose connection is up: register at once there
 * too (the socket's next message still carries the region, in case this
 * one is flushed).  Process context.
 */
void rds_ib_mr_prepost(struct rds_mr *rmr, struct rds_connection *conn)
{
	struct rds_ib_conn *ic = conn->c_transport_data;
	bool lost = false;

	if (conn->c_trans != &rds_ib_transport)
		return;
	spin_lock_bh(&ic->i_lock);
	if (ic->i_up) {
		spin_lock(&rds_ib_mr_lock);
		lost = rds_ib_mr_post_reg(ic, rmr) == -ENOTCONN;
		spin_unlock(&rds_ib_mr_lock);
		if (lost)
			ic->i_up = false;
	}
	spin_unlock_bh(&ic->i_lock);
	if (lost)
		rds_ib_conn_error(ic, "post send failed");
}

/* The peer used a USE_ONCE key in a message that came on conn: invalidate
 * it on that connection, ahead of the frame that will acknowledge the
 * message.  If that cannot be done now, the kill that follows the last
 * put does it.  Any context.
 */
void rds_ib_mr_used(struct rds_mr *rmr, struct rds_connection *conn)
{
	struct rds_ib_conn *ic = conn->c_transport_data;
	struct rds_ib_mr *imr = rmr->r_trans_data;
	struct ib_send_wr wr = { };

	if (conn->c_trans != &rds_ib_transport)
		return;
	spin_lock_bh(&ic->i_lock);
	spin_lock(&rds_ib_mr_lock);
	if (ic->i_up && imr->m_state == RDS_IB_MR_VALID &&
	    imr->m_rdev == ic->i_rdev && rds_ib_sendq_extra_room(ic->i_extra, 1, ic->i_sq.extra)) {
		wr.opcode = IB_WR_LOCAL_INV;
		wr.ex.invalidate_rkey = imr->m_mr->rkey;
		rds_ib_mr_post(ic, imr, &wr, RDS_IB_MR_DEAD);
	}
	spin_unlock(&rds_ib_mr_lock);
	spin_unlock_bh(&ic->i_lock);
}

int rds_ib_atomic_check(struct rds_sock *rs, enum ib_wr_opcode op)
{
	struct rds_ib_device *rdev;
	bool ok;

	bool masked = op == IB_WR_MASKED_ATOMIC_CMP_AND_SWP ||
		      op == IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;

	rdev = rds_ib_device_of_addr(&rs->rs_bound_addr,
				     rs->rs_bound_scope_id);
	/* No device now (removed, not back yet): the message waits for
	 * one like any other; a masked op, which few devices have, is to
	 * be tried again once one is there.
	 */
	if (!rdev)
		return masked ? -EAGAIN : 0;
	if (masked)
		ok = rdev->rd_dev->attrs.masked_atomic_cap != IB_ATOMIC_NONE;
	else
		ok = rdev->rd_dev->attrs.atomic_cap != IB_ATOMIC_NONE;
	rds_ib_device_put(rdev);
	return ok ? 0 : -EOPNOTSUPP;
}
