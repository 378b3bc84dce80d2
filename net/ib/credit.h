/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Credit-based flow control of an IB/RoCE connection.  Pure code (no
 * locks, no allocation): compiled into the module and into the user-space
 * unit test tools/testing/unit/credit_test, which checks every ordering
 * of sends, deliveries and receive refills for overrun and deadlock.
 *
 * Every data SEND consumes one receive buffer the peer granted ("a
 * credit"); a sender never has more data SENDs in flight than it was
 * granted.  Grants ride on every frame (the header's credit byte, at most
 * 255 at a time) and on the handshake.
 *
 * Credit updates (ACK-only frames) do not use credits: each side keeps a
 * control reserve of one receive buffer per connection, reposted as soon
 * as the frame is taken, and sends at most one control frame at a time
 * (the next waits for the previous one's send completion).  Control frames
 * grant, but consuming one grants nothing back, so updates never
 * ping-pong.  (Counting them as credits instead either deadlocks or
 * exchanges updates forever: the unit test's first version showed both.)
 * An update is sent when the peer has no grant left and we have buffers
 * to grant, or when threshold refilled buffers are ungranted.
 */
#ifndef _RDS_IB_CREDIT_H
#define _RDS_IB_CREDIT_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kshim.h"
#endif

#define RDS_IB_CREDIT_MAX_GRANT	255	/* the header's credit byte */

struct rds_ib_credit {
	u32	avail;		/* data sends the peer granted us, unused */
	u32	used;		/* data sends not granted back, or fewer */
	u32	unadv;		/* receives we refilled, not yet granted */
	u32	peer_avail;	/* our grants the peer has not used yet */
	bool	ctrl_busy;	/* a control frame awaits its send completion */
};

/* At connection setup: what the peer granted us, what we granted it. */
void rds_ib_credit_init(struct rds_ib_credit *c, u32 granted_to_us,
			u32 granted_to_peer);

/* Take a credit for a data frame; false: wait.  *grant: grants it carries. */
bool rds_ib_credit_take(struct rds_ib_credit *c, u8 *grant);

/* Whether to send a credit update now (an ACK-only frame): no control
 * frame in flight, something to grant, and the peer out of grants or
 * threshold buffers ungranted.
 */
bool rds_ib_credit_want_update(const struct rds_ib_credit *c, u32 threshold);

/* Start a control frame (ACK or update); *grant: grants it carries. */
void rds_ib_credit_take_ctrl(struct rds_ib_credit *c, u8 *grant);

/* The control frame's send completion arrived. */
void rds_ib_credit_ctrl_done(struct rds_ib_credit *c);

/* A frame from the peer arrived carrying grant credits; a data frame used
 * one of our grants.  Returns false if the peer sent data without a credit
 * or granted more than it could have (a protocol violation: count, reset).
 */
bool rds_ib_credit_recv(struct rds_ib_credit *c, bool data, u8 grant,
			u32 max_avail);

/* We refilled n receive buffers (used by data frames) for this connection. */
void rds_ib_credit_refilled(struct rds_ib_credit *c, u32 n);

/* The credits in use (used): each data frame adds one, each grant
 * received takes its count off, down to 0.  What it estimates: the data
 * frames sent whose buffers the peer has not granted back yet (on the
 * wire, waiting for their refill or with their grant on its way), and
 * the refills the peer kept back (its pool in debt) until an earn's
 * extra grant takes them off (we cannot tell a kept-back refill from a
 * late one).  Credits given back are not in use.  It is exact until our
 * first give-back (the peer's grant less avail; a correct peer never
 * grants beyond it) and never above those frames, but after a give-back
 * it is only a lower estimate: while the peer earns the credits back it
 * grants two for a frame, and the extra one comes off used although
 * other frames still await their refill.  It is short by at most the
 * extra grants received since nothing was last in flight nor kept back
 * (so by at most the credits given back), and exact again, 0, whenever
 * nothing is: on a connection idle since its give-back, after the ACK
 * that followed its last frame (an ACK carries refills).  It may read 0
 * with frames still in flight.  Simulated with a grant of 64 after a
 * give-back of 60: 31 in use while 53 were in flight, steadily, and 42
 * at a peak of 64.  The cost: a lone small message may go alone where
 * the exact count would cork it (and credits_peak reads low); never a
 * cork that waits for ever (a count that corks has as many frames in
 * flight or kept back, and a cork needs a message not yet acknowledged
 * too, whose ACK is certain: send.c).
 *
 * Whether the credits in use are an eighth of grant (what the peer
 * granted at the handshake) or more, at least one: the corking rule of
 * packed frames (send.c).
 */
bool rds_ib_credit_corked(const struct rds_ib_credit *c, u32 grant);

/* Give-back (protocol minor 2, toward a peer whose handshake asked for
 * it: RDS_IB_HS_F_GIVEBACK, hs.h).  Credits a peer granted us are
 * receive buffers it holds for us out of its device's pool; a connection
 * that sends nothing for a while hands the ones it does not use back, so
 * that the peer's busy connections can have them:
 *   - the sender, idle, gives back all of its credits above keep (the
 *     smallest grant's credits), in one control frame flagged
 *     RDS_IB_FLAG_RETURN (frame.h) that carries the count; its own
 *     count drops by as much when the frame is built;
 *   - the receiver takes the count off the credits it granted and
 *     releases as many buffers to its pool (rds_ib_pool_release());
 *   - a connection that sends again earns its grant back a frame at a
 *     time (rds_ib_pool_earn(), unchanged).
 * A correct sender's return always leaves it keep credits or more, and
 * the receiver's count of its grants is never below the sender's (the
 * frames in flight are counted by both or by neither): a return that
 * came unasked, on a data frame, of 0 credits, or of more than would
 * leave the peer keep of our grants is a protocol violation.
 */
#define RDS_IB_CREDIT_KEEP	4

/* Sender: the credits to give back now (0: none), at most max (what a
 * frame carries), taken off our count.  Only when no control frame is in
 * flight (the return is one): the caller then calls
 * rds_ib_credit_take_ctrl() for it.
 */
u32 rds_ib_credit_give_back(struct rds_ib_credit *c, u32 keep, u32 max);

/* Receiver: a frame (data: a data frame) flagged as a return of n
 * credits arrived, after rds_ib_credit_recv() took its grant; asked: our
 * handshake asked the peer for returns.  False: a protocol violation
 * (above).  True: our grants shrank by n, and n buffers are to be
 * released.
 */
bool rds_ib_credit_returned(struct rds_ib_credit *c, bool asked, bool data,
			    u32 n, u32 keep);

/* The device's pool of shared receive buffers (srq.c), out of which every
 * connection's grant comes: free is what no connection was promised, and
 * may be below zero (debt).  The rules:
 *   - a new connection wanting want buffers (its credits plus the control
 *     buffer) takes want, or what is free, and never less than min(want,
 *     min): it is never refused, and may put the pool in debt;
 *   - while the pool is in debt, a data frame's buffer received on a
 *     connection that holds more than min is kept back (not granted
 *     again): the debt shrinks by one, as do the connection's buffers;
 *   - while the pool has buffers nobody was promised (free > 0), a data
 *     frame's buffer received on a connection that holds less than its
 *     cap (what it took at setup: what its peer was told at the
 *     handshake, which the peer never lets grants exceed) takes one more
 *     buffer: the peer gets two credits back for the one it used;
 *   - a connection that ends gives back what it holds.
 * So free plus what the connections hold is always the pool's size, no
 * connection holds less than min(want, min) nor more than its cap, and
 * the debt falls with every frame a connection above min receives, until
 * the pool is out of debt or every connection holds min.  The fairness
 * rule: the debt is paid by the connections that use their credits, and
 * what they paid they earn back, a frame at a time, once buffers are
 * free again, never taking the pool into debt; idle connections neither
 * pay nor earn.  Out of debt, frames on the connections below their cap
 * bring each back to its cap, or the pool to no free buffer.  With
 * give-back (above) idle connections hand their unused credits back,
 * down to min: a connection's buffers are then those it promised its
 * peer (the control buffer, its grants and its refills not yet granted).
 */

/* Buffers a new connection takes: free is what is free now. */
int rds_ib_pool_take(int free, int want, int min);

/* Whether a connection holding reserved buffers keeps the buffer of a
 * data frame back (true) rather than granting it again, free being what
 * is free now.
 */
bool rds_ib_pool_keep_back(int free, u32 reserved, u32 min);

/* Whether a connection holding reserved buffers, at most cap, takes one
 * more from the pool with the buffer of a data frame (granting both),
 * free being what is free now.  Asked only when it keeps nothing back.
 */
bool rds_ib_pool_earn(int free, u32 reserved, u32 cap);

/* How many buffers a connection holding reserved gives back to the pool
 * when its peer returned n credits: n, never taking it below min (a
 * return rds_ib_credit_returned() took leaves the connection min or
 * more: the control buffer and keep credits).
 */
u32 rds_ib_pool_release(u32 reserved, u32 n, u32 min);

#endif /* _RDS_IB_CREDIT_H */
