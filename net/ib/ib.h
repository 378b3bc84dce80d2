/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The InfiniBand/RoCE transport: per-device resources.
 *
 * Layers (bottom up): device.c (ib_client: which devices RDS uses and
 * their protection domain, completion queue and receive ops), srq.c (the
 * shared receive queue and its buffers), then the connection, work-request
 * and data-path files that build on them.
 */
#ifndef _RDS_IB_H
#define _RDS_IB_H

#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

struct rds_ib_device;

/* One receive buffer: a page that takes one fragment (header + data). */
struct rds_ib_rx_buf {
	struct ib_cqe		rb_cqe;		/* completion: rb_cqe.done */
	struct page		*rb_page;
	u64			rb_dma;
	struct rds_ib_device	*rb_dev;
};

/* How a device receives.  Chosen once per device when it is added:
 * devices with a shared receive queue use rds_ib_srq_ops; the data path
 * calls through this table and never tests which kind it has.
 */
struct rds_ib_rx_ops {
	const char	*name;
	int		(*setup)(struct rds_ib_device *rdev);
	void		(*teardown)(struct rds_ib_device *rdev);
};

struct rds_ib_device {
	struct list_head	rd_item;	/* rds_ib_devices, RCU + mutex */
	refcount_t		rd_refcount;
	struct ib_device	*rd_dev;
	struct ib_pd		*rd_pd;
	struct ib_cq		*rd_recv_cq;	/* shared by every QP's receives */
	const struct rds_ib_rx_ops *rd_rx_ops;

	/* Shared receive queue (rds_ib_srq_ops). */
	struct ib_srq		*rd_srq;
	void			*rd_hdrs;	/* rd_rx_nr header slots */
	u64			rd_hdrs_dma;
	struct rds_ib_rx_buf	*rd_rx_bufs;	/* rd_rx_nr buffers */
	unsigned int		rd_rx_nr;
	unsigned int		rd_frag_size;	/* bytes a receive buffer takes */
	atomic_t		rd_rx_posted;	/* buffers on the SRQ */

	struct rcu_head		rd_rcu;
};

extern const struct rds_ib_rx_ops rds_ib_srq_ops;
extern unsigned int rds_ib_srq_size;

/* device.c */
struct rds_ib_device *rds_ib_device_get(struct ib_device *dev);
void rds_ib_device_put(struct rds_ib_device *rdev);
unsigned int rds_ib_device_count(void);
int rds_ib_device_init(void);
void rds_ib_device_exit(void);

/* cm.c */
extern u32 rds_ib_gen;
int rds_ib_cm_init(void);
void rds_ib_cm_exit(void);

/* srq.c */
int rds_ib_srq_post(struct rds_ib_device *rdev, struct rds_ib_rx_buf *buf);

#endif /* _RDS_IB_H */
