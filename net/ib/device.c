// SPDX-License-Identifier: GPL-2.0
/*
 * Which RDMA devices the IB transport uses, and what each one gets:
 * a protection domain, one receive completion queue shared by all of its
 * queue pairs, and a receive method chosen once (a shared receive queue).
 *
 * Devices come and go with the ib_client callbacks (rxe added or deleted,
 * HCA hot-unplug, module unload).  The device list is read under RCU and
 * changed under rds_ib_devices_lock; a user of a device holds a reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>

#include "../fault.h"
#include "ib.h"

unsigned int rds_ib_srq_size = 1024;
module_param_named(ib_srq_size, rds_ib_srq_size, uint, 0444);
MODULE_PARM_DESC(ib_srq_size,
		 "Receive buffers of each device's shared receive queue at first (default 1024)");

/* What the SRQ may grow to under pressure (srqsize.h); 0: 4 x ib_srq_size.
 * A buffer takes 8 KiB and a 48-byte header slot.
 */
unsigned int rds_ib_srq_max;
module_param_named(ib_srq_max, rds_ib_srq_max, uint, 0444);
MODULE_PARM_DESC(ib_srq_max,
		 "Receive buffers each device's shared receive queue may grow to, of 8240 bytes each (default 0: 4 x ib_srq_size)");

static bool rds_ib_no_srq;
module_param_named(ib_no_srq, rds_ib_no_srq, bool, 0444);
MODULE_PARM_DESC(ib_no_srq,
		 "Receive with a ring per connection even where the device has an SRQ (tests)");

/* protects changes of rds_ib_devices; readers use RCU */
static DEFINE_MUTEX(rds_ib_devices_lock);
static LIST_HEAD(rds_ib_devices);

static struct ib_client rds_ib_client;

/* Process context: the last put tears down verbs objects, which may sleep. */
void rds_ib_device_put(struct rds_ib_device *rdev)
{
	might_sleep();
	if (!refcount_dec_and_test(&rdev->rd_refcount))
		return;
	/* every place of accept.c holds a reference */
	WARN_ON_ONCE(atomic_read(&rdev->rd_accepting));
	rdev->rd_rx_ops->teardown(rdev);
	ib_free_cq(rdev->rd_recv_cq);
	rdev->rd_rx_ops->release(rdev);
	ib_dealloc_pd(rdev->rd_pd);
	pr_info("%s: released\n", dev_name(&rdev->rd_dev->dev));
	kfree(rdev);
}

/* The RDS state of an ib_device, with a reference, or NULL if unused. */
struct rds_ib_device *rds_ib_device_get(struct ib_device *dev)
{
	struct rds_ib_device *rdev, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(rdev, &rds_ib_devices, rd_item) {
		if (rdev->rd_dev == dev &&
		    refcount_inc_not_zero(&rdev->rd_refcount)) {
			found = rdev;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

unsigned int rds_ib_device_count(void)
{
	struct rds_ib_device *rdev;
	unsigned int n = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(rdev, &rds_ib_devices, rd_item)
		n++;
	rcu_read_unlock();
	return n;
}

/* Call visit on every device RDS uses, under RCU: visit must not sleep. */
void rds_ib_device_for_each(rds_ib_device_visit_t visit, void *arg)
{
	struct rds_ib_device *rdev;

	rcu_read_lock();
	list_for_each_entry_rcu(rdev, &rds_ib_devices, rd_item)
		visit(rdev, arg);
	rcu_read_unlock();
}

/* RDS runs over InfiniBand and RoCE (IB transport), not iWARP. */
static bool rds_ib_device_usable(struct ib_device *dev)
{
	return dev->node_type == RDMA_NODE_IB_CA;
}

static int rds_ib_add_one(struct ib_device *dev)
{
	struct rds_ib_device *rdev;
	unsigned int min, max;
	int ret;

	if (!rds_ib_device_usable(dev))
		return -EOPNOTSUPP;

	rdev = rds_fault() ? NULL : kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev) {
		pr_warn("%s: cannot set up: %d\n", dev_name(&dev->dev), -ENOMEM);
		return -ENOMEM;
	}
	rdev->rd_dev = dev;
	refcount_set(&rdev->rd_refcount, 1);
	init_waitqueue_head(&rdev->rd_mr_wait);
	INIT_LIST_HEAD(&rdev->rd_mrs);
	/* Chosen once: the data path never asks which it has. */
	if (dev->attrs.max_srq && dev->attrs.max_srq_wr >= 2 && !rds_ib_no_srq)
		rdev->rd_rx_ops = &rds_ib_srq_ops;
	else
		rdev->rd_rx_ops = &rds_ib_ring_ops;

	rdev->rd_pd = rds_fault() ? ERR_PTR(-ENOMEM) : ib_alloc_pd(dev, 0);
	if (IS_ERR(rdev->rd_pd)) {
		ret = PTR_ERR(rdev->rd_pd);
		goto err_free;
	}
	/* Room for every receive that can complete at once, plus one (the
	 * drain QP's marker); a ring's connections have CQs of their own.
	 */
	rds_ib_srq_sizes(dev, &min, &max);
	if (rdev->rd_rx_ops != &rds_ib_srq_ops)
		max = 0;
	rdev->rd_recv_cq = rds_fault() ? ERR_PTR(-ENOMEM) :
			   ib_alloc_cq_any(dev, rdev, max + 1,
					   rds_ib_test_rx_poll_ctx());
	if (IS_ERR(rdev->rd_recv_cq)) {
		ret = PTR_ERR(rdev->rd_recv_cq);
		goto err_pd;
	}
	ret = rdev->rd_rx_ops->setup(rdev);
	if (ret)
		goto err_cq;

	mutex_lock(&rds_ib_devices_lock);
	list_add_tail_rcu(&rdev->rd_item, &rds_ib_devices);
	mutex_unlock(&rds_ib_devices_lock);
	ib_set_client_data(dev, &rds_ib_client, rdev);

	pr_info("%s: added: %s receive, %u buffers of %u bytes (%llu bytes), up to %u (%llu bytes)\n",
		dev_name(&dev->dev), rdev->rd_rx_ops->name, rdev->rd_rx_min,
		rdev->rd_frag_size, (u64)rdev->rd_rx_min * rdev->rd_frag_size,
		rdev->rd_rx_max, (u64)rdev->rd_rx_max * rdev->rd_frag_size);
	return 0;

err_cq:
	ib_free_cq(rdev->rd_recv_cq);
err_pd:
	ib_dealloc_pd(rdev->rd_pd);
err_free:
	pr_warn("%s: cannot set up: %d\n", dev_name(&dev->dev), ret);
	kfree(rdev);
	return ret;
}

static void rds_ib_remove_one(struct ib_device *dev, void *client_data)
{
	struct rds_ib_device *rdev = client_data;

	if (!rdev)
		return;
	mutex_lock(&rds_ib_devices_lock);
	list_del_rcu(&rdev->rd_item);
	mutex_unlock(&rds_ib_devices_lock);
	/* No new reference can be taken after this. */
	synchronize_rcu();
	/* Regions hold references for as long as their owners keep them:
	 * their keys die now.
	 */
	rds_ib_mr_flush_dev(rdev);
	pr_info("%s: removed\n", dev_name(&dev->dev));
	rds_ib_device_put(rdev);
}

static struct ib_client rds_ib_client = {
	.name	= "rds",
	.add	= rds_ib_add_one,
	.remove	= rds_ib_remove_one,
};

int rds_ib_device_init(void)
{
	if (!rds_ib_srq_size)
		rds_ib_srq_size = 1;
	return ib_register_client(&rds_ib_client);
}

/* Calls rds_ib_remove_one() for every device still in use. */
void rds_ib_device_exit(void)
{
	ib_unregister_client(&rds_ib_client);
	WARN_ON(!list_empty(&rds_ib_devices));
}
