// SPDX-License-Identifier: GPL-2.0
/*
 * Test only (RDS_TEST_HOOKS=1, see Kbuild): the shared receive CQ's
 * handler made to fail a connection's QP at a chosen moment and to sleep,
 * so that tests can hold open the windows of issue 15, leads 3 and 5.
 *
 * ib_rx_poll_wq (at load): the shared receive CQ is polled from a
 * workqueue, not from softirq, so that its handler may sleep.  The two
 * switches below are refused without it.
 *
 * ib_rx_fail_ms = N (lead 3, ib_rx_stale.sh): the handler of the next
 * receive completion delivers a fatal event of its QP (the attempt ends:
 * i_down_work) and then sleeps N ms before that completion, and every one
 * queued behind it, is handled; meanwhile the peer's frames go on landing
 * in the CQ.  An attempt's end must not destroy the QP before they were
 * handled.  Reads back 0 once it fired.
 *
 * ib_rx_late_fail_ms = N (lead 5, ib_unload_race.sh): the other order.
 * The handler of the next receive completion sleeps until the attempt of
 * its connection begins to end (i_rx_stopped: rds_ib_conn_free() at
 * unload, say), at most N ms, and then delivers the fatal event and a
 * data-path error whose end is due a second later (as a flush while up
 * has, RDS_IB_QP_FAIL_GRACE): the end, which waits for this CQ, has
 * i_down_work queued again, and still pending, when it is over.  Reads
 * back 0 once the handler took it.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>

#include "ib.h"

static bool rds_ib_rx_poll_wq;
module_param_named(ib_rx_poll_wq, rds_ib_rx_poll_wq, bool, 0444);
MODULE_PARM_DESC(ib_rx_poll_wq,
		 "Test only: poll the shared receive CQ from a workqueue (its handler may sleep)");

#define RDS_IB_RX_FAIL_MAX_MS	60000

static unsigned int rds_ib_rx_fail_ms;
static unsigned int rds_ib_rx_late_fail_ms;

/* Either switch (kp->arg): N ms, only where the handler may sleep. */
static int rds_ib_rx_fail_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint(val, 0, &ms);
	if (ret)
		return ret;
	if (ms > RDS_IB_RX_FAIL_MAX_MS)
		return -ERANGE;
	if (ms && !rds_ib_rx_poll_wq)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, ms);
	return 0;
}

static const struct kernel_param_ops rds_ib_rx_fail_ops = {
	.set	= rds_ib_rx_fail_set,
	.get	= param_get_uint,
};
module_param_cb(ib_rx_fail_ms, &rds_ib_rx_fail_ops, &rds_ib_rx_fail_ms, 0600);
MODULE_PARM_DESC(ib_rx_fail_ms,
		 "Test only (ib_rx_poll_wq=1): the next receive fails its QP, then its handler sleeps this many ms");
module_param_cb(ib_rx_late_fail_ms, &rds_ib_rx_fail_ops,
		&rds_ib_rx_late_fail_ms, 0600);
MODULE_PARM_DESC(ib_rx_late_fail_ms,
		 "Test only (ib_rx_poll_wq=1): the next receive's handler waits for its attempt's end (at most this many ms), then fails its QP");

enum ib_poll_context rds_ib_test_rx_poll_ctx(void)
{
	return rds_ib_rx_poll_wq ? IB_POLL_UNBOUND_WORKQUEUE : IB_POLL_SOFTIRQ;
}

static void rds_ib_rx_hook_fail(struct ib_wc *wc)
{
	struct ib_event ev = {
		.device		= wc->qp->device,
		.element.qp	= wc->qp,
		.event		= IB_EVENT_QP_FATAL,
	};

	rds_ib_qp_event(&ev, wc->qp->qp_context);
}

/* The shared receive CQ's handler, before it takes a successful
 * completion of a connection's QP: a workqueue (the switches need
 * ib_rx_poll_wq), or softirq, where they are never set.
 */
void rds_ib_test_rx_hook(struct ib_wc *wc)
{
	struct rds_ib_conn *ic = wc->qp->qp_context;
	unsigned long until;
	unsigned int ms;

	if (likely(!READ_ONCE(rds_ib_rx_fail_ms) &&
		   !READ_ONCE(rds_ib_rx_late_fail_ms)) || !in_task())
		return;
	ms = xchg(&rds_ib_rx_fail_ms, 0);
	if (ms) {
		rds_ib_rx_hook_fail(wc);
		msleep(ms);
	}
	ms = xchg(&rds_ib_rx_late_fail_ms, 0);
	if (ms) {
		until = jiffies + msecs_to_jiffies(ms);
		while (!READ_ONCE(ic->i_rx_stopped) &&
		       time_before(jiffies, until))
			msleep(20);
		rds_ib_rx_hook_fail(wc);
		rds_ib_conn_error_after(ic, "test: late failure", HZ);
	}
}
