// SPDX-License-Identifier: GPL-2.0
/*
 * Test only (RDS_TEST_HOOKS=1, see Kbuild): connection events handled late.
 *
 * ib_est_delay_ms = N makes the next ESTABLISHED event of one of our own
 * requests wait N ms before it is handled, so that the peer's first
 * frames come while our side has not read its accept yet: the attempt's
 * protocol is still a guess (ib.h, i_guess; selftest ib_ml_upgrade).
 * Reads back 0 once it fired.
 * The wait is in rdma_cm's event handler (ib_cm's work queue, one item at
 * a time per CPU): the events queued behind it on that CPU wait with it.
 */
#include <linux/delay.h>
#include <linux/moduleparam.h>

#include "ib.h"

#define RDS_IB_EST_DELAY_MAX_MS	30000

static unsigned int rds_ib_est_delay_ms;
static unsigned int rds_ib_req_delay_ms;

static int rds_ib_est_delay_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint(val, 0, &ms);
	if (ret)
		return ret;
	if (ms > RDS_IB_EST_DELAY_MAX_MS)
		return -ERANGE;
	WRITE_ONCE(*(unsigned int *)kp->arg, ms);
	return 0;
}

static const struct kernel_param_ops rds_ib_est_delay_ops = {
	.set	= rds_ib_est_delay_set,
	.get	= param_get_uint,
};
module_param_cb(ib_est_delay_ms, &rds_ib_est_delay_ops, &rds_ib_est_delay_ms,
		0644);
MODULE_PARM_DESC(ib_est_delay_ms,
		 "Test only: handle the next ESTABLISHED of our own request this many ms late");

/* From the rdma_cm handler (process context, no lock of ours held): an
 * ESTABLISHED event of an active attempt.
 */
void rds_ib_test_est_delay(void)
{
	unsigned int ms = xchg(&rds_ib_est_delay_ms, 0);

	if (ms)
		msleep(ms);
}

/* ib_req_delay_ms = N makes the next connection request from a peer wait
 * N ms before it is handled, so that a request of ours sent meanwhile
 * crosses it on the wire: both hosts armed, both sending their first
 * message within N ms, each meets the other's request with its own
 * attempt in flight (the connect race; selftest stress_fresh).  Reads
 * back 0 once it fired.  The wait is in ib_cm's work queue, under
 * rdma_cm's handler mutexes of the listener and of the new id: every
 * other request to the listener waits with it, and so do the events
 * queued behind it on that CPU.  Keep N below the peer's attempt timeout
 * (ib_attempt_timeout_ms): a request handled after the peer gave it up
 * may end a connection that came up meanwhile ("the peer connected
 * again").
 */
module_param_cb(ib_req_delay_ms, &rds_ib_est_delay_ops, &rds_ib_req_delay_ms,
		0644);
MODULE_PARM_DESC(ib_req_delay_ms,
		 "Test only: handle the next connection request from a peer this many ms late");

/* From the rdma_cm handler (process context, no lock of ours held): a peer's
 * connection request.
 */
void rds_ib_test_req_delay(void)
{
	unsigned int ms = xchg(&rds_ib_req_delay_ms, 0);

	if (ms)
		msleep(ms);
}
