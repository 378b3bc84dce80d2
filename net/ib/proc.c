// SPDX-License-Identifier: GPL-2.0
/*
 * The IB transport's part of /proc/net/rds (net/proc.c): the credits and
 * handshake generation of a connection's line, and the devices file.
 * RDMA devices serve the initial namespace only: another namespace's
 * devices file holds the header alone.
 */
#include <linux/seq_file.h>

#include "ib.h"

/* Under rcu_read_lock() (the connection walk): conn and ic stay. */
void rds_ib_conn_proc(struct rds_connection *conn, struct rds_conn_proc *p)
{
	struct rds_ib_conn *ic = conn->c_transport_data;

	if (!ic)
		return;
	spin_lock_bh(&ic->i_lock);
	if (ic->i_up) {
		p->p_credits = true;
		p->p_cr_avail = ic->i_credit.avail;
		p->p_cr_granted = ic->i_peer_grant;
	}
	spin_unlock_bh(&ic->i_lock);
	p->p_gen = READ_ONCE(ic->i_peer_gen);
}

struct rds_ib_proc_dev {
	struct seq_file		*m;
	struct rds_ib_device	*rdev;
	unsigned int		conns;
	u64			grants;
};

/* Connections up on the device, and the grants they hold of ours. */
static void rds_ib_proc_dev_conn(struct rds_connection *conn, void *arg)
{
	struct rds_ib_proc_dev *d = arg;
	struct rds_ib_conn *ic = conn->c_transport_data;

	if (conn->c_trans != &rds_ib_transport || !ic)
		return;
	/* i_rdev stays while i_up: the attempt's end clears i_up first */
	spin_lock_bh(&ic->i_lock);
	if (ic->i_up && ic->i_rdev == d->rdev) {
		d->conns++;
		d->grants += ic->i_credit.peer_avail;
	}
	spin_unlock_bh(&ic->i_lock);
}

/* Under rcu_read_lock() (rds_ib_device_for_each()): rdev stays. */
static void rds_ib_proc_dev(struct rds_ib_device *rdev, void *arg)
{
	struct rds_ib_proc_dev *d = arg;
	struct seq_file *m = d->m;

	d->rdev = rdev;
	d->conns = 0;
	d->grants = 0;
	rds_conn_for_each(&init_net, rds_ib_proc_dev_conn, d);

	/* The name array, not dev_name(): a rename frees the old string. */
	seq_printf(m, "%.*s %s ", IB_DEVICE_NAME_MAX, rdev->rd_dev->name,
		   rdev->rd_rx_ops->name);
	if (rdev->rd_rx_ops == &rds_ib_srq_ops)
		seq_printf(m, "%d %d %d %d %u %u ",
			   atomic_read(&rdev->rd_rx_live),
			   atomic_read(&rdev->rd_rx_posted),
			   atomic_read(&rdev->rd_rx_free),
			   atomic_read(&rdev->rd_rx_retire), rdev->rd_rx_max,
			   rds_ib_srq_stranded(rdev));
	else
		seq_puts(m, "- - - - - - ");
	seq_printf(m, "%llu %d %u %u %d\n", d->grants,
		   atomic_read(&rdev->rd_mr_used), READ_ONCE(rds_ib_mr_max),
		   d->conns, atomic_read(&rdev->rd_accepting));
}

void rds_ib_devices_proc(struct seq_file *m, struct net *net)
{
	struct rds_ib_proc_dev d = { .m = m };

	seq_puts(m, "device receive srq_buffers srq_posted srq_free srq_retiring srq_max srq_stranded grants mr_used mr_max connections accepting\n");
	if (!net_eq(net, &init_net))
		return;
	rds_ib_device_for_each(rds_ib_proc_dev, &d);
}
