// SPDX-License-Identifier: GPL-2.0
/*
 * Passive attempts in flight per device (limit.h): at most ib_accept_max
 * (net.rds.ib.accept_max) attempts that we accepted and that are not up
 * yet hold a queue pair, a send ring and receive buffers of one device
 * at once.  The bound per peer address (peer.c) does not stop a host
 * with many addresses (aliases, IPv6 privacy addresses), or many hosts,
 * from making us hold one for each request for the 15 s a half-open
 * attempt lasts; this does.
 *
 * A place is taken in rds_ib_cm_accept() (cm.c) before anything is set
 * up for the attempt, and belongs to the attempt (a_acc) until it is up
 * (rds_ib_attempt_up()) or ends (rds_ib_attempt_end(): every end, the
 * timeout, a refusal or error, device removal, module unload).  A
 * request that replaces an attempt holding a place on the same device
 * takes its place over.  Our own attempts take none (the connect gate,
 * gate.c, bounds them).  One exception to the 15 s: an attempt whose
 * port went down keeps its place while the timeout waits for the port
 * (rds_ib_timeout_work() polls it), as it keeps its queue pair; on a
 * device with two ports those can fill the bound for the length of the
 * outage and requests through the other port are refused "retry later"
 * meanwhile (review of stop 38; not changed).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/ratelimit.h>

#include "ib.h"
#include "limit.h"

/* A default of four peers' worth: the connect gate of a peer of ours
 * sends at most ib_connect_max (64) requests at a time, so 1000
 * connections from one host (ib_scale) never come near it, and at most
 * 256 x (about 22 KiB of ours and, expected, 56 KiB of rxe's) = 20 MiB
 * per device is held by attempts that may never complete.  Not their
 * SRQ buffers: each attempt's grant comes out of the device's pool,
 * which grows for grants that put it in debt up to ib_srq_max (srq.c),
 * its own bound: at the default grant (65) some 63 attempts are granted
 * all of it.
 */
unsigned int rds_ib_accept_max = 256;
module_param_named(ib_accept_max, rds_ib_accept_max, uint, 0644);
MODULE_PARM_DESC(ib_accept_max,
		 "Accepted connection attempts not up yet per device (0: no bound; default 256)");

/* Whether rdev may take one more passive attempt (read before anything
 * is allocated for a request); rds_ib_accept_take() decides.
 * in_flight: how many it has.
 */
bool rds_ib_accept_room(struct rds_ib_device *rdev, unsigned int *in_flight)
{
	*in_flight = atomic_read(&rdev->rd_accepting);
	return rds_ib_accept_verdict(false, *in_flight,
				     READ_ONCE(rds_ib_accept_max)) !=
	       RDS_IB_ACCEPT_REFUSE;
}

/* A place for a new passive attempt on rdev, with a reference of rdev
 * (the caller holds one): false, and nothing taken, at the bound.
 * rd_accepting is an atomic, not under a lock: the places are taken by
 * compare and exchange, so two requests on two CPUs never pass the bound
 * together, and given back by rds_ib_accept_give().
 */
bool rds_ib_accept_take(struct rds_ib_device *rdev, unsigned int *in_flight)
{
	unsigned int max = READ_ONCE(rds_ib_accept_max);
	int n = atomic_read(&rdev->rd_accepting);

	do {
		*in_flight = n;
		if (rds_ib_accept_verdict(false, n, max) ==
		    RDS_IB_ACCEPT_REFUSE)
			return false;
	} while (!atomic_try_cmpxchg(&rdev->rd_accepting, &n, n + 1));
	refcount_inc(&rdev->rd_refcount);
	return true;
}

/* Give back a place taken by rds_ib_accept_take(), and its reference
 * (the last one frees the device: process context).
 */
void rds_ib_accept_give(struct rds_ib_device *rdev)
{
	WARN_ON_ONCE(atomic_dec_return(&rdev->rd_accepting) < 0);
	rds_ib_device_put(rdev);
}

/* Peers refused at the bound ask again about once a second each (their
 * backoff's maximum): one line every 10 s, ib_handshakes accept_limit
 * counts every refusal.
 */
static DEFINE_RATELIMIT_STATE(rds_ib_accept_limit_rs, 10 * HZ, 1);

void rds_ib_accept_refused(struct rdma_cm_id *cm_id, u8 tos,
			   struct rds_ib_device *rdev, unsigned int in_flight)
{
	if (__ratelimit(&rds_ib_accept_limit_rs))
		/* the name array, not dev_name(): see proc.c */
		pr_info("refused a connection from %pISc tos %u: %.*s has %u accepted connections not up yet (ib_accept_max %u)\n",
			&cm_id->route.addr.dst_addr, tos, IB_DEVICE_NAME_MAX,
			rdev->rd_dev->name, in_flight,
			READ_ONCE(rds_ib_accept_max));
}
