// SPDX-License-Identifier: GPL-2.0
/*
 * Test only (RDS_TEST_HOOKS=1, see Kbuild): an attempt ends while receive
 * completions of its queue pair wait in the device's shared receive CQ,
 * the window of issue 15, lead 3 (a QP destroyed before its completions
 * were handled: the CQ's handler then read the freed QP), held open for
 * as long as a test likes (ib_rx_stale.sh).
 *
 * ib_rx_poll_wq (at load): the shared receive CQ is polled from a
 * workqueue, not from softirq, so that its handler may sleep.
 * ib_rx_fail_ms = N: the handler of the next receive completion delivers
 * a fatal event of its QP (the attempt ends: i_down_work) and then sleeps
 * N ms before that completion, and every one queued behind it, is
 * handled; meanwhile the peer's frames go on landing in the CQ.  Reads
 * back 0 once it fired.
 * ib_rx_late_fail_ms = N: the other order, for issue 15, lead 5: the
 * handler of the next receive completion sleeps N ms first and then
 * delivers the fatal event, which queues i_down_work again if an
 * attempt's end (rds_ib_conn_free() at unload, say) began meanwhile and
 * waits for this CQ.  Reads back 0 once the sleep began.
 */
#include <linux/delay.h>
#include <linux/moduleparam.h>

#include "ib.h"

static bool rds_ib_rx_poll_wq;
module_param_named(ib_rx_poll_wq, rds_ib_rx_poll_wq, bool, 0444);
MODULE_PARM_DESC(ib_rx_poll_wq,
		 "Test only: poll the shared receive CQ from a workqueue (its handler may sleep)");

#define RDS_IB_RX_FAIL_MAX_MS	10000

static unsigned int rds_ib_rx_fail_ms;

/* Either switch: kp->arg is its value. */
static int rds_ib_rx_fail_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint(val, 0, &ms);
	if (ret)
		return ret;
	if (ms > RDS_IB_RX_FAIL_MAX_MS)
		return -ERANGE;
	WRITE_ONCE(*(unsigned int *)kp->arg, ms);
	return 0;
}

static const struct kernel_param_ops rds_ib_rx_fail_ops = {
	.set	= rds_ib_rx_fail_set,
	.get	= param_get_uint,
};
module_param_cb(ib_rx_fail_ms, &rds_ib_rx_fail_ops, &rds_ib_rx_fail_ms, 0600);
MODULE_PARM_DESC(ib_rx_fail_ms,
		 "Test only: the next receive fails its QP, then its handler waits this many ms (at most 10000)");

static unsigned int rds_ib_rx_late_fail_ms;
module_param_cb(ib_rx_late_fail_ms, &rds_ib_rx_fail_ops,
		&rds_ib_rx_late_fail_ms, 0600);
MODULE_PARM_DESC(ib_rx_late_fail_ms,
		 "Test only: the next receive's handler waits this many ms (at most 10000), then fails its QP");

enum ib_poll_context rds_ib_test_rx_poll_ctx(void)
{
	return rds_ib_rx_poll_wq ? IB_POLL_UNBOUND_WORKQUEUE : IB_POLL_SOFTIRQ;
}

/* In softirq the wait is a spin of 20 ms at most. */
static void rds_ib_rx_hook_wait(unsigned int ms)
{
	if (in_task())
		msleep(ms);
	else
		mdelay(min(ms, 20U));
}

/* The shared receive CQ's handler, before it takes a successful
 * completion of a connection's QP (softirq or, with ib_rx_poll_wq, a
 * workqueue).
 */
void rds_ib_test_rx_hook(struct ib_wc *wc)
{
	struct ib_event ev = {
		.device		= wc->qp->device,
		.element.qp	= wc->qp,
		.event		= IB_EVENT_QP_FATAL,
	};
	unsigned int ms;

	if (likely(!READ_ONCE(rds_ib_rx_fail_ms) &&
		   !READ_ONCE(rds_ib_rx_late_fail_ms)))
		return;
	ms = xchg(&rds_ib_rx_fail_ms, 0);
	if (ms) {
		rds_ib_qp_event(&ev, wc->qp->qp_context);
		rds_ib_rx_hook_wait(ms);
	}
	ms = xchg(&rds_ib_rx_late_fail_ms, 0);
	if (ms) {
		rds_ib_rx_hook_wait(ms);
		rds_ib_qp_event(&ev, wc->qp->qp_context);
	}
}
