/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Limits on what peers can make this host hold: the rules, as pure
 * code (no locks, no allocation), compiled into the module and into the
 * user-space unit test tools/testing/unit/limit_test.
 *
 * The attempt timeout (cm.c): an attempt that is not up
 * ib_attempt_timeout_ms (15 s) after it started is ended, whichever side
 * started it.  Our own request is tried again later; a request we
 * accepted whose peer never completes it (no RTU: a half-open attempt)
 * gives back its queue pair and its receive buffers, which the IB CM
 * would otherwise keep through all its retries of our reply (a minute
 * or more).
 *
 * Connections per peer (peer.c): at most ib_peer_conn_max connections
 * with one peer address that the peer adds hold an attempt (a queue
 * pair) at once (ours, and a replacement racing with a request, may
 * take the count above it).  A request of the peer that would add one
 * beyond it is refused
 * (RDS_IB_HS_R_PEER_LIMIT); a request that replaces the attempt of a
 * connection that has one adds nothing and is never refused for it; our
 * own attempts are counted and never refused.
 *
 * Passive attempts in flight per device (accept.c): at most
 * ib_accept_max attempts that we accepted and that are not up yet hold
 * a queue pair, a send ring and receive buffers of one device at once,
 * whatever addresses their peers use.  A request that would add one
 * beyond it is refused (RDS_IB_HS_R_ACCEPT_LIMIT: retry later); a
 * request that replaces an attempt holding a place on the same device
 * takes that place over and is never refused for it.
 */
#ifndef _RDS_IB_LIMIT_H
#define _RDS_IB_LIMIT_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kshim.h"
#endif

/* What the attempt timeout does with the current attempt. */
enum rds_ib_overdue {
	RDS_IB_OVERDUE_NO = 0,		/* up, or not yet due */
	RDS_IB_OVERDUE_ACTIVE,		/* our request: end, try again */
	RDS_IB_OVERDUE_PASSIVE,		/* the peer's, never completed: end */
};

/* An attempt (active: our request) started at jiffies started, now is
 * now: whether the timeout (in jiffies) ends it, and why.  Jiffies wrap:
 * the interval is taken modulo the word, as time_after_eq() does.
 */
enum rds_ib_overdue rds_ib_attempt_overdue(bool active, bool up,
					   unsigned long started,
					   unsigned long now,
					   unsigned long timeout);

/* Whether a peer with conns connections holding an attempt may have one
 * more under max (0: no bound).
 */
bool rds_ib_peer_admit(unsigned int conns, unsigned int max);

/* What a request of the peer does with its device's count of passive
 * attempts in flight.
 */
enum rds_ib_accept_verdict {
	RDS_IB_ACCEPT_KEEP,	/* the attempt it replaces holds a place on
				 * the device: the place passes to it
				 */
	RDS_IB_ACCEPT_TAKE,	/* a new place: the count goes up by one */
	RDS_IB_ACCEPT_REFUSE,	/* none left: refused, nothing allocated */
};

/* The verdict for a request on a device with in_flight passive attempts
 * under max (0: no bound); holds: the connection's current attempt holds
 * a place on that device.
 */
enum rds_ib_accept_verdict rds_ib_accept_verdict(bool holds,
						 unsigned int in_flight,
						 unsigned int max);

/* The heartbeat (cm.c): how long a quiet connection waits before it
 * asks its peer for a sign of life, in ms (0: it never asks), from
 * net.rds.ib.heartbeat_ms (ms, 0: no heartbeat) and heartbeat_idle_ms
 * (idle, 0: never while idle): ms while it has messages at stake (queued,
 * or sent and waiting for the peer's ACK), idle and never less than ms
 * while it has none.  The result is at most the larger of the two, so
 * that 5 intervals of the sysctls' maximum (an hour) fit in 32 bits.
 */
unsigned int rds_ib_hb_ask(bool stake, unsigned int ms, unsigned int idle);

/* The heartbeat's verdict (cm.c): a connection asking at an interval of
 * ask ms (0: it never asks) is lost once the first request of the
 * current silence was made asked jiffies ago and the silence is quiet
 * jiffies long, with ask4 and ask5 the jiffies of 4 and 5 intervals:
 * asked >= ask4 and quiet >= ask5.
 */
static inline bool rds_ib_hb_lost(unsigned int ask, unsigned long asked,
				  unsigned long quiet, unsigned long ask4,
				  unsigned long ask5)
{
	return ask && asked >= ask4 && quiet >= ask5;
}

/* What the heartbeat work of a connection knows at the end of a run, all
 * times in jiffies: its clock now, the last frame in (last_rx; one read
 * after now counts as now), the asking interval (ask; 0: it never asks)
 * and the verdict's 4 and 5 intervals (rds_ib_hb_lost()), whether the
 * first request of the current silence was made and when (asking,
 * asked_at: the silence it belongs to is over when a frame came after
 * it), the interval at which requests go again while the peer is silent
 * (tick, heartbeat_ms's), whether a give-back can come due (gb) and when
 * (gb_at; passed: it waits for something to go first, tried again at
 * tick), and the longest wait (max).  tick and max are at least 1.
 */
struct rds_ib_hb_due {
	unsigned long	now;
	unsigned long	last_rx;
	unsigned long	ask;
	unsigned long	ask4;
	unsigned long	ask5;
	bool		asking;
	unsigned long	asked_at;
	unsigned long	tick;
	bool		gb;
	unsigned long	gb_at;
	unsigned long	max;
};

/* In how many jiffies (1 to max) the heartbeat work must run next: the
 * earliest of the moment the silence reaches ask (the first request),
 * while asking the next request (tick) or the moment the verdict can be
 * reached, whichever comes first, the give-back's time, and max.  A
 * first request that is due already, or a verdict, makes it 1: never 0.
 * Jiffies wrap: times are compared as time_after() does.
 */
unsigned long rds_ib_hb_next(const struct rds_ib_hb_due *d);

#endif /* _RDS_IB_LIMIT_H */
