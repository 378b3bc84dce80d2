/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Negative controls: deliberately broken modules that prove each oracle
 * of the test suite fires (tools/testing/neg-controls.sh).  They exist
 * only in a build made with "make ... RDS_NEG=KIND": Kbuild then defines
 * RDS_NEG_<KIND> and links neg.o.  Without it every hook below is an
 * empty inline and the module is the shipped one.
 *
 *   kasan     a use-after-free at load                  (KASAN)
 *   kmemleak  an object leaked at load                  (kmemleak)
 *   lockdep   two locks taken in both orders at load    (lockdep)
 *   lost      one received message in RDS_NEG_EVERY dropped after its
 *             sequence check, acknowledged all the same (rds-stress's
 *             verifier)
 *   dup       one received message in RDS_NEG_EVERY queued twice to its
 *             socket (rds-stress's verifier)
 *   pageleak  a page leaked per received message, up to
 *             RDS_NEG_PAGES (unload.sh's page check)
 *   stalerx   the shared receive queue's end of an attempt drains the
 *             send queue only and destroys the QP with its receive
 *             completions still in the shared CQ, as before 5a53c40
 *             (issue 15, lead 3): their handler reads the freed QP
 *             (ib_rx_stale: an oops under slub poisoning, KASAN on a
 *             debug kernel)
 *   downwork  rds_ib_conn_free() frees the connection without cancelling
 *             i_down_work again after the attempt's end (neither its own
 *             cancel nor that of rds_ib_conn_stop()'s second call), as
 *             before 5a53c40 (issue 15, lead 5): an error met during that
 *             end's drain leaves the work pending on the freed connection
 *             (ib_unload_race)
 *   hbnow     the heartbeat declares a connection lost on its silence
 *             alone, as before the fix (ib_hb_change: the interval
 *             lowered on an idle connection)
 *   hbidle    the heartbeat asks every connection at heartbeat_ms, with
 *             or without messages at stake, as before heartbeat_idle_ms
 *             (ib_heartbeat: a request in 2 s of silence with nothing at
 *             stake)
 *   hbtick    the heartbeat work of every connection up runs every
 *             heartbeat_ms, as before it was armed for its next
 *             deadline (ib_heartbeat: hb_runs moves by more than 2 in
 *             4 s of an idle connection)
 *   nohold    messages that come while our request's protocol is a
 *             guess are delivered at once, as before the hold
 *             (ib_ml_upgrade: delivered twice after a wrong guess)
 *   halfopen  the attempt timeout ends our own requests only, as before
 *             issue 17: a request we accepted and the peer never
 *             completed keeps its queue pair and receive buffers until
 *             the IB CM gives up (ib_halfopen)
 *   idlecopy  a data frame after which nothing can go is not signalled
 *             for the copies of packed frames before it, as before the
 *             fix: an idle connection keeps up to 15 of them (ib_pack:
 *             pack_copies stays above 0 after the traffic)
 *   congkeep  a peer's handshake with a new generation leaves what we
 *             knew of its congestion as it was, as before the fix: a
 *             port congested before the peer restarted stays congested
 *             here (ib_cong_restart)
 *   congearly a map that comes before our request's handshake is applied
 *             is tagged with the generation the connection knew before,
 *             as before the fix: the handshake then clears it (over
 *             IPv6, ib_cong_v6early)
 */
#ifndef _RDS_NEG_H
#define _RDS_NEG_H

#include <linux/types.h>

struct in6_addr;
struct rds_connection;
struct rds_incoming;

#if defined(RDS_NEG_KASAN) || defined(RDS_NEG_KMEMLEAK) || \
	defined(RDS_NEG_LOCKDEP)
void rds_neg_init(void);
#else
static inline void rds_neg_init(void)
{
}
#endif

#ifdef RDS_NEG_LOST
bool rds_neg_lost(const struct rds_incoming *inc);
#else
static inline bool rds_neg_lost(const struct rds_incoming *inc)
{
	return false;
}
#endif

#ifdef RDS_NEG_DUP
void rds_neg_dup(struct rds_connection *conn, const struct in6_addr *saddr,
		 const struct in6_addr *daddr, struct rds_incoming *inc);
#else
static inline void rds_neg_dup(struct rds_connection *conn,
			       const struct in6_addr *saddr,
			       const struct in6_addr *daddr,
			       struct rds_incoming *inc)
{
}
#endif

#ifdef RDS_NEG_PAGELEAK
void rds_neg_pageleak(void);
#else
static inline void rds_neg_pageleak(void)
{
}
#endif

#ifdef RDS_NEG_STALERX
static inline bool rds_neg_stalerx(void)
{
	return true;
}
#else
static inline bool rds_neg_stalerx(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_DOWNWORK
static inline bool rds_neg_downwork(void)
{
	return true;
}
#else
static inline bool rds_neg_downwork(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_HBNOW
static inline bool rds_neg_hbnow(void)
{
	return true;
}
#else
static inline bool rds_neg_hbnow(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_HBIDLE
static inline bool rds_neg_hbidle(void)
{
	return true;
}
#else
static inline bool rds_neg_hbidle(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_HBTICK
static inline bool rds_neg_hbtick(void)
{
	return true;
}
#else
static inline bool rds_neg_hbtick(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_NOHOLD
static inline bool rds_neg_nohold(void)
{
	return true;
}
#else
static inline bool rds_neg_nohold(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_HALFOPEN
static inline bool rds_neg_halfopen(void)
{
	return true;
}
#else
static inline bool rds_neg_halfopen(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_IDLECOPY
static inline bool rds_neg_idlecopy(void)
{
	return true;
}
#else
static inline bool rds_neg_idlecopy(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_CONGKEEP
static inline bool rds_neg_congkeep(void)
{
	return true;
}
#else
static inline bool rds_neg_congkeep(void)
{
	return false;
}
#endif

#ifdef RDS_NEG_CONGEARLY
static inline bool rds_neg_congearly(void)
{
	return true;
}
#else
static inline bool rds_neg_congearly(void)
{
	return false;
}
#endif

#endif /* _RDS_NEG_H */
