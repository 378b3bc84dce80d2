// SPDX-License-Identifier: GPL-2.0
/*
 * The heartbeat of an IB connection, and the give-back of idle credits
 * it carries out: one delayed work per connection (i_hb_work), armed
 * for the next moment something can be due (rds_ib_hb_next(), limit.c)
 * and brought forward by what makes something due sooner: a message
 * queued with nothing at stake (the transport hook stake), credits that
 * can go back, a sysctl's write.  Documentation/ib-transport.md,
 * "Heartbeat".
 *
 * The work runs in process context (rds_ib_wq) under the connection's
 * i_cm_mutex; the hooks run on the data path under c_lock or i_lock and
 * take only i_hb_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/ratelimit.h>

#include "../neg.h"
#include "ib.h"
#include "../trace/rds.h"
#include "limit.h"

/* Give-back (credit.h): an idle connection hands the credits it does not
 * use back to a peer that asked for them, this long after its last data
 * frame (the heartbeat work runs then: rds_ib_hb_next()).  0: never, and
 * our handshakes ask for none.  A write re-arms every connection's
 * heartbeat work, as the sysctl's does.
 */
unsigned int rds_ib_credit_return_ms = 2000;

static int rds_ib_credit_return_set(const char *val,
				    const struct kernel_param *kp)
{
	int ret = param_set_uint(val, kp);

	if (!ret)
		rds_ib_hb_rearm_all();
	return ret;
}

static const struct kernel_param_ops rds_ib_credit_return_ops = {
	.set	= rds_ib_credit_return_set,
	.get	= param_get_uint,
};
module_param_cb(ib_credit_return_ms, &rds_ib_credit_return_ops,
		&rds_ib_credit_return_ms, 0644);
MODULE_PARM_DESC(ib_credit_return_ms,
		 "Give unused credits back to the peer after this many ms without sending (0: never, and ask for none; default 2000)");

/* The longest the heartbeat work waits (rds_ib_hb_next()), the sysctls'
 * bound: whatever comes due sooner brings it forward.
 */
#define RDS_IB_HB_MAX_MS	(3600 * MSEC_PER_SEC)

/* Arm the heartbeat work delay jiffies ahead, under i_cm_mutex (by the
 * work itself, as the attempt comes up).  Something that came due sooner
 * while it was not armed (rds_ib_hb_sooner()) makes it run again at
 * once.
 */
static void rds_ib_hb_arm(struct rds_ib_conn *ic, unsigned long delay)
{
	struct timer_list *t = &ic->i_hb_work.timer;

	lockdep_assert_held(&ic->i_cm_mutex);
	if (ic->i_dying || !ic->i_proto->heartbeat)
		return;
	if (rds_neg_hbtick())
		delay = msecs_to_jiffies(READ_ONCE(rds_ib_heartbeat_ms) ?: 1000);
	spin_lock_bh(&ic->i_hb_lock);
	if (ic->i_hb_poke) {
		WRITE_ONCE(ic->i_hb_poke, false);
		delay = 1;
	}
	/* Never later than armed already: a timer left from the last up
	 * period, or brought forward while this deadline was worked out,
	 * stays (at worst one run more).
	 */
	if (!ic->i_hb_off &&
	    !(timer_pending(t) && !time_after(t->expires, jiffies + delay)))
		mod_delayed_work(rds_ib_wq, &ic->i_hb_work, delay);
	spin_unlock_bh(&ic->i_hb_lock);
}

/* Something can come due at jiffies at (a message at stake, credits to
 * give back, a sysctl changed): the heartbeat work, armed for later, is
 * brought forward; not armed (queued, running, or the connection not
 * up), it is told to run again once armed (i_hb_poke).  Any context, BH
 * off or not, under c_lock or i_lock: never sleeps.
 */
static void __rds_ib_hb_sooner(struct rds_ib_conn *ic, unsigned long at)
{
	struct timer_list *t = &ic->i_hb_work.timer;
	unsigned long now;

	spin_lock_bh(&ic->i_hb_lock);
	if (ic->i_hb_off)
		goto out;
	if (!timer_pending(t)) {
		WRITE_ONCE(ic->i_hb_poke, true);
		goto out;
	}
	now = jiffies;
	if (time_after(t->expires, at))
		mod_delayed_work(rds_ib_wq, &ic->i_hb_work,
				 time_after(at, now) ? at - now : 0);
out:
	spin_unlock_bh(&ic->i_hb_lock);
}

/* The same, cheap when nothing changes (the work armed for no later, or
 * told already): no lock.  For the data path's hooks only, which c_lock
 * or i_lock orders with what the work reads; a sysctl's write takes the
 * lock (rds_ib_hb_rearm_visit()).
 */
static void rds_ib_hb_sooner(struct rds_ib_conn *ic, unsigned long at)
{
	struct timer_list *t = &ic->i_hb_work.timer;

	if (READ_ONCE(ic->i_hb_poke) ||
	    (timer_pending(t) && !time_after(READ_ONCE(t->expires), at)))
		return;
	__rds_ib_hb_sooner(ic, at);
}

/* rds_transport.stake: a message was queued on conn with nothing at
 * stake before (under c_lock): it now asks at heartbeat_ms
 * (rds_ib_hb_ask_ms()).  The work looks heartbeat_ms from now, not from
 * the last frame in: on a line quiet for longer, the message's ACK is
 * what answers it; a request now would go out with every sparse message.
 */
void rds_ib_conn_stake(struct rds_connection *conn)
{
	struct rds_ib_conn *ic = conn->c_transport_data;
	unsigned int ms = READ_ONCE(rds_ib_heartbeat_ms);

	lockdep_assert_held(&conn->c_lock);
	if (ms && ic)
		rds_ib_hb_sooner(ic, jiffies + msecs_to_jiffies(ms));
}

/* Credits came (under i_lock): a give-back can come due
 * ib_credit_return_ms after our last data frame (rds_ib_gb_check()).
 * With something waiting to go, none can before it goes: the work looks
 * again a heartbeat interval ahead at the earliest, as it does itself.
 */
void rds_ib_hb_credits(struct rds_ib_conn *ic)
{
	unsigned int ms = READ_ONCE(rds_ib_credit_return_ms);
	unsigned long at, tick;

	lockdep_assert_held(&ic->i_lock);
	if (!ms || !ic->i_gb_peer_asked ||
	    ic->i_credit.avail <= RDS_IB_CREDIT_KEEP)
		return;
	at = ic->i_last_tx + msecs_to_jiffies(ms);
	if (!rds_ib_tx_idle(ic)) {
		tick = jiffies +
		       msecs_to_jiffies(READ_ONCE(rds_ib_heartbeat_ms) ?: 1000);
		if (time_before(at, tick))
			at = tick;
	}
	rds_ib_hb_sooner(ic, at);
}

/* Under rcu_read_lock() (rds_conn_for_each()): the connection and its
 * transport data stay.
 */
static void rds_ib_hb_rearm_visit(struct rds_connection *conn, void *arg)
{
	struct rds_ib_conn *ic = conn->c_transport_data;

	if (conn->c_trans == &rds_ib_transport && ic)
		__rds_ib_hb_sooner(ic, jiffies);
}

/* heartbeat_ms, heartbeat_idle_ms or credit_return_ms changed: the
 * heartbeat work of every connection runs now, and is armed by the new
 * values.
 */
void rds_ib_hb_rearm_all(void)
{
	rds_conn_for_each(NULL, rds_ib_hb_rearm_visit, NULL);
}

/* Give-back (credit.h), when the heartbeat work runs: a connection whose
 * peer asked for returns and that sent no data frame for
 * ib_credit_return_ms, with nothing waiting to go, gives back the credits
 * it holds above RDS_IB_CREDIT_KEEP (rds_ib_send_ctrl() sends the return;
 * a data frame posted first calls it off, and so does anything waiting
 * to go when the control frame is finally free).
 */
static void rds_ib_gb_check(struct rds_ib_conn *ic, unsigned long now)
{
	unsigned int ms = READ_ONCE(rds_ib_credit_return_ms);

	spin_lock_bh(&ic->i_lock);
	if (ms && ic->i_up && ic->i_gb_peer_asked &&
	    ic->i_credit.avail > RDS_IB_CREDIT_KEEP && rds_ib_tx_idle(ic) &&
	    !time_before(now, ic->i_last_tx + msecs_to_jiffies(ms)))
		ic->i_gb_due = true;
	spin_unlock_bh(&ic->i_lock);
}

/* How long a quiet connection waits before it asks the peer for a sign of
 * life, 0 for never: heartbeat_ms while it has something at stake (a
 * message queued, or sent and waiting for the peer's ACK, which a lost
 * peer would hold for ever), heartbeat_idle_ms (never shorter) while it
 * has nothing.  Under i_cm_mutex.
 */
static unsigned int rds_ib_hb_ask_ms(struct rds_ib_conn *ic, unsigned int ms)
{
	struct rds_connection *conn = ic->i_conn;
	unsigned int idle = READ_ONCE(rds_ib_heartbeat_idle_ms);
	bool stake;

	lockdep_assert_held(&ic->i_cm_mutex);
	spin_lock_bh(&conn->c_lock);
	stake = conn->c_send_queue_n || conn->c_retrans_n;
	spin_unlock_bh(&conn->c_lock);
	return rds_ib_hb_ask(stake || rds_neg_hbidle(), ms, idle);
}

/* In how many jiffies the heartbeat work must run next
 * (rds_ib_hb_next()), asking at ask ms (rds_ib_hb_ask_ms()), under
 * i_cm_mutex.  What changes after this look and makes something due
 * sooner brings the work forward (rds_ib_hb_sooner()).
 */
static unsigned long rds_ib_hb_delay(struct rds_ib_conn *ic,
				     unsigned int ms, unsigned int ask)
{
	unsigned int gb = READ_ONCE(rds_ib_credit_return_ms);
	struct rds_ib_hb_due d = {
		.ask		= ask ? msecs_to_jiffies(ask) : 0,
		.ask4		= msecs_to_jiffies(4 * ask),
		.ask5		= msecs_to_jiffies(5 * ask),
		.asking		= ic->i_hb_asking,
		.asked_at	= ic->i_hb_asked_at,
		.tick		= msecs_to_jiffies(ms ?: 1000),
		.max		= msecs_to_jiffies(RDS_IB_HB_MAX_MS),
	};

	lockdep_assert_held(&ic->i_cm_mutex);
	spin_lock_bh(&ic->i_lock);
	d.gb = gb && ic->i_up && ic->i_gb_peer_asked &&
	       ic->i_credit.avail > RDS_IB_CREDIT_KEEP;
	d.gb_at = ic->i_last_tx + msecs_to_jiffies(gb);
	spin_unlock_bh(&ic->i_lock);
	d.now = jiffies;
	d.last_rx = READ_ONCE(ic->i_last_rx);
	return rds_ib_hb_next(&d);
}

/* Runs while the connection is up, when something can be due
 * (rds_ib_hb_delay(); brought forward by a message queued with nothing
 * at stake before, by credits that can go back, by a sysctl).  A peer
 * that sent nothing for the asking interval (rds_ib_hb_ask_ms():
 * heartbeat_ms with messages at stake, heartbeat_idle_ms without) is
 * asked for a sign of life (a control frame it must answer), again every
 * heartbeat_ms while it stays silent; one that stays silent for 4 asking
 * intervals after the first request of the silence (5 in all) is
 * declared lost, so that a link that died without an error on our side
 * (nothing in flight to time out) is noticed and the connection
 * re-formed.  The verdict counts from
 * the request, not from the last frame alone: a silence longer than 5
 * intervals is normal when the interval was just lowered (the requests
 * came at the old interval), and the peer must have had the chance to
 * answer.  The verdict is reached under i_cm_mutex, where no attempt ends
 * or begins: it falls on the attempt whose silence it measured
 * (rds_ib_conn_error() marks the current queue pair as the failed one),
 * never on the next one.
 */
void rds_ib_hb_work(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(to_delayed_work(work),
					      struct rds_ib_conn, i_hb_work);
	unsigned long now, last, quiet, asked = 0;
	unsigned int ms, ask;
	bool up;

	mutex_lock(&ic->i_cm_mutex);
	rds_ib_count(RDS_IB_C_HB_RUNS);
	/* What comes due from here on is seen below, or pokes again: the
	 * sysctls are read after the poke is cleared (a write since pokes).
	 */
	spin_lock_bh(&ic->i_hb_lock);
	WRITE_ONCE(ic->i_hb_poke, false);
	spin_unlock_bh(&ic->i_hb_lock);
	ms = READ_ONCE(rds_ib_heartbeat_ms);
	ask = rds_ib_hb_ask_ms(ic, ms);
	now = jiffies;
	last = READ_ONCE(ic->i_last_rx);
	/* a frame may have come in on another CPU since now was read */
	quiet = time_after(last, now) ? 0 : now - last;
	spin_lock_bh(&ic->i_lock);
	/* A peer that does not answer heartbeats is never asked. */
	up = ic->i_up && ic->i_proto->heartbeat;
	if (up && ask && quiet >= msecs_to_jiffies(ask))
		ic->i_hb_ask = true;
	spin_unlock_bh(&ic->i_lock);
	if (!up)
		goto unlock;
	if (!ask || quiet < msecs_to_jiffies(ask)) {
		ic->i_hb_asking = false;
	} else if (!ic->i_hb_asking || time_before(ic->i_hb_asked_at, last)) {
		/* the first request of this silence */
		ic->i_hb_asking = true;
		ic->i_hb_asked_at = now;
	} else {
		asked = now - ic->i_hb_asked_at;
	}
	if (rds_neg_hbnow() && ask && quiet >= msecs_to_jiffies(5 * ask))
		asked = quiet;
	if (rds_ib_hb_lost(ask, asked, quiet, msecs_to_jiffies(4 * ask),
			   msecs_to_jiffies(5 * ask))) {
		rds_ib_count(RDS_IB_C_HB_TIMEOUTS);
		trace_rds_ib_heartbeat_loss(ic->i_conn,
					    jiffies_to_msecs(quiet));
		pr_info_ratelimited("%pI6c: silent for %u ms (asking every %u ms): connection lost\n",
				    &ic->i_conn->c_faddr, jiffies_to_msecs(quiet),
				    ask);
		rds_ib_conn_error(ic, "heartbeat");
		goto unlock;
	}
	rds_ib_gb_check(ic, now);
	rds_ib_send_ctrl(ic);
	rds_ib_hb_arm(ic, rds_ib_hb_delay(ic, ms, ask));
unlock:
	mutex_unlock(&ic->i_cm_mutex);
}

/* The attempt came up (rds_ib_attempt_up(), under i_cm_mutex): the work
 * is armed for what can come due first.
 */
void rds_ib_hb_start(struct rds_ib_conn *ic)
{
	unsigned int ms = READ_ONCE(rds_ib_heartbeat_ms);

	lockdep_assert_held(&ic->i_cm_mutex);
	rds_ib_hb_arm(ic, rds_ib_hb_delay(ic, ms, rds_ib_hb_ask_ms(ic, ms)));
}
