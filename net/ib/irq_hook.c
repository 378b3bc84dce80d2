// SPDX-License-Identifier: GPL-2.0
/*
 * Test only (RDS_TEST_HOOKS=1, see Kbuild): queue pair events from hard
 * interrupt context.  Hardware drivers may call a QP's event handler
 * from their interrupt handler; rxe never does, so without this hook no
 * test could see what the handler does there (issue 15, lead 8: it once
 * took a BH lock).  Writing 1 to ib_qp_event_irq delivers a fatal event
 * of its current queue pair to every IB connection that has one, from an
 * irq_work (a self-interrupt on x86); reading gives how many of the last
 * write's events ran in hard interrupt context.
 */
#include <linux/irq_work.h>
#include <linux/moduleparam.h>

#include "ib.h"

struct rds_ib_irq_event {
	struct irq_work		work;
	struct rds_ib_conn	*ic;
	struct ib_qp		*qp;	/* compared, never dereferenced */
	bool			hardirq;
};

static unsigned int rds_ib_irq_events;

/* Hard interrupt context (irq_work). */
static void rds_ib_irq_event_fn(struct irq_work *work)
{
	struct rds_ib_irq_event *e =
		container_of(work, struct rds_ib_irq_event, work);
	struct ib_event ev = {
		.element.qp	= e->qp,
		.event		= IB_EVENT_QP_FATAL,
	};

	e->hardirq = in_hardirq();
	rds_ib_qp_event(&ev, e->ic);
}

/* Under rcu_read_lock() (rds_conn_for_each): the connection and its
 * transport data stay; the event is waited for before it goes out of
 * scope.
 */
static void rds_ib_irq_event_visit(struct rds_connection *conn, void *arg)
{
	struct rds_ib_conn *ic = conn->c_transport_data;
	struct rds_ib_irq_event e = { .ic = ic };
	unsigned int *n = arg;

	if (conn->c_trans != &rds_ib_transport || !ic)
		return;
	e.qp = READ_ONCE(ic->i_qp);
	if (!e.qp)
		return;
	init_irq_work(&e.work, rds_ib_irq_event_fn);
	if (!irq_work_queue(&e.work))
		return;
	while (irq_work_is_busy(&e.work))
		cpu_relax();
	if (e.hardirq)
		(*n)++;
}

static int rds_ib_irq_events_set(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int n = 0;
	bool fire;
	int ret;

	ret = kstrtobool(val, &fire);
	if (ret)
		return ret;
	if (fire)
		rds_conn_for_each(NULL, rds_ib_irq_event_visit, &n);
	WRITE_ONCE(rds_ib_irq_events, n);
	return fire && !n ? -ENOTCONN : 0;
}

static const struct kernel_param_ops rds_ib_irq_events_ops = {
	.set	= rds_ib_irq_events_set,
	.get	= param_get_uint,
};
module_param_cb(ib_qp_event_irq, &rds_ib_irq_events_ops, &rds_ib_irq_events,
		0600);
MODULE_PARM_DESC(ib_qp_event_irq,
		 "Test only: 1 delivers a fatal QP event to every IB connection from hard IRQ context");
