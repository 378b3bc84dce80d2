// SPDX-License-Identifier: GPL-2.0
/*
 * The connect gate: at most ib_connect_max active connection attempts of
 * this host in flight at a time; the others wait their turn, in order.
 *
 * Why (issue 17): a thousand connections started at once sent a thousand
 * requests to the peer, whose rdma_cm handles its events one at a time
 * (ib_cm's work queue); each request there sets up a queue pair (tens of
 * ms under emulation), so the last requests and, behind them, the RTUs
 * that finish the first connections on the peer's side waited 30 s.  Our
 * side, up since the REP, heard nothing from the peer meanwhile and its
 * heartbeat declared 550 of 1000 connections lost (ib_scale, 6.12, TCG).
 * With a bound the peer's queue stays short (64 requests: 1-2 s there
 * under emulation, against the heartbeat's 10 s).  16 cost setup time on
 * 6.1 (900 connections in 17.1 s, 12.0 s with no bound, where the peer
 * kept up): too few attempts in flight to keep the peer busy.
 *
 * A slot is taken in rds_ib_connect_work() before the attempt's id is
 * created, and given back when the attempt is up or ends; a connection
 * that waits is queued and its connect work queued again, with the slot
 * handed over, when one is given back.  Passive attempts (the peer's
 * requests) take none.  The gate is per host, not per device: the device
 * is known only once the address is resolved, which is part of the
 * attempt.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "../rds.h"
#include "ib.h"

static unsigned int rds_ib_connect_max = 64;
module_param_named(ib_connect_max, rds_ib_connect_max, uint, 0644);
MODULE_PARM_DESC(ib_connect_max,
		 "Active connection attempts in flight at once (0: no bound; default 64)");

/* protects rds_ib_gate_busy, rds_ib_gate_waiters and every ic's
 * i_gate_held and i_gate_item
 */
static DEFINE_SPINLOCK(rds_ib_gate_lock);
static unsigned int rds_ib_gate_busy;		/* slots held */
static LIST_HEAD(rds_ib_gate_waiters);		/* ic->i_gate_item, in order */

/* Take a slot for ic's next active attempt, or queue ic for one.  True:
 * go ahead (the slot is held until rds_ib_gate_leave()); false: ic's
 * connect work runs again when a slot is handed to it.
 */
bool rds_ib_gate_enter(struct rds_ib_conn *ic)
{
	unsigned int max = READ_ONCE(rds_ib_connect_max);
	bool go = true;

	lockdep_assert_held(&ic->i_cm_mutex);
	spin_lock_bh(&rds_ib_gate_lock);
	if (ic->i_gate_held)
		goto out;	/* handed over by rds_ib_gate_leave() */
	if (!max || rds_ib_gate_busy < max) {
		rds_ib_gate_busy++;
		ic->i_gate_held = true;
		goto out;
	}
	go = false;
	if (list_empty(&ic->i_gate_item)) {
		list_add_tail(&ic->i_gate_item, &rds_ib_gate_waiters);
		rds_ib_count(RDS_IB_C_CONNECT_WAITS);
	}
out:
	spin_unlock_bh(&rds_ib_gate_lock);
	return go;
}

/* ic's attempt is up or over: its slot goes to the first waiter (whose
 * connect work is queued at once), or back to the gate.  Also takes ic
 * off the queue.  Harmless when ic holds no slot.
 */
void rds_ib_gate_leave(struct rds_ib_conn *ic)
{
	unsigned int max = READ_ONCE(rds_ib_connect_max);
	struct rds_ib_conn *next;

	spin_lock_bh(&rds_ib_gate_lock);
	list_del_init(&ic->i_gate_item);
	if (!ic->i_gate_held)
		goto out;
	ic->i_gate_held = false;
	rds_ib_gate_busy--;
	/* Under the lock: a waiter leaves the queue (rds_ib_gate_leave()
	 * from rds_ib_conn_stop()) before its connect work is cancelled,
	 * so the work queued here is either cancelled or finds a live ic.
	 */
	while (!list_empty(&rds_ib_gate_waiters) &&
	       (!max || rds_ib_gate_busy < max)) {
		next = list_first_entry(&rds_ib_gate_waiters,
					struct rds_ib_conn, i_gate_item);
		list_del_init(&next->i_gate_item);
		next->i_gate_held = true;
		rds_ib_gate_busy++;
		queue_delayed_work(rds_ib_wq, &next->i_connect_work, 0);
	}
out:
	spin_unlock_bh(&rds_ib_gate_lock);
}

/* Slots held and connections waiting (ib_gate's read-out). */
static int rds_ib_gate_get(char *buf, const struct kernel_param *kp)
{
	struct rds_ib_conn *ic;
	unsigned int waiting = 0;

	spin_lock_bh(&rds_ib_gate_lock);
	list_for_each_entry(ic, &rds_ib_gate_waiters, i_gate_item)
		waiting++;
	spin_unlock_bh(&rds_ib_gate_lock);
	return sysfs_emit(buf, "in_flight=%u waiting=%u\n",
			  READ_ONCE(rds_ib_gate_busy), waiting);
}

static const struct kernel_param_ops rds_ib_gate_ops = {
	.get = rds_ib_gate_get,
};
module_param_cb(ib_gate, &rds_ib_gate_ops, NULL, 0444);
MODULE_PARM_DESC(ib_gate, "Active connection attempts in flight and waiting (read only)");
