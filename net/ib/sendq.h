/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The send queue of an IB/RoCE connection: how many work requests its
 * queue pair and its send CQ are made for, and which posts fit.  Pure
 * code (no locks, no allocation, no verbs): compiled into the module and
 * into the user-space unit test tools/testing/unit/sendq_test, which
 * drives random posts, completions, failures and drains against a model
 * of the queue pair and CQ and checks that neither ever overflows.
 *
 * What can be in the send queue at once:
 *
 *  - data frames: at most sz->data (the data slots of the send ring).  A
 *    slot is given back only when a signalled completion at or after it
 *    has been handled, so an unsignalled frame is counted until then,
 *    even once the device is done with it (and what it holds stays
 *    held: rds_ib_sendq_signal() signals the frame after which nothing
 *    can go now when a packed frame's copy would stay);
 *  - one control frame (an ACK or credits): the next one waits for its
 *    completion (credit.h, ctrl_busy);
 *  - extra work requests: RDMA, atomic, REG_MR and LOCAL_INV, each
 *    signalled and counted until its completion was handled, at most
 *    sz->extra (rds_ib_sendq_extra_room());
 *  - the drain's: ib_drain_sq() and ib_drain_qp() post one more work
 *    request when an attempt ends, while all of the above may still be
 *    there.  Without its room the post fails ("failed to drain send
 *    queue") and the wait for the flushes is skipped.
 *
 * So the queue pair asks for sz->qp_wr = data + 1 + extra + 1.  Every one
 * of them may complete into the send CQ: the signalled ones, every one
 * flushed (a queue pair in the error state completes unsignalled work
 * requests too) and the drain's; and a completion stays in the CQ until
 * its handler ran, which is when its count is given back.  So the CQ
 * holds sz->cqe = sz->qp_wr entries and can never overflow.
 *
 * A receive queue of the connection's own (ring mode, ring.c) has the
 * same need: ib_drain_qp() posts a receive beyond the n buffers
 * (rds_ib_recvq_wr()); its CQ takes the n buffers' completions and the
 * drain's (rds_ib_recvq_cqe()).
 *
 * SGEs: a frame needs two, its header and its data: one page of a
 * fragment, or the copy of a packed frame's messages (send.c).  RDMA ops
 * take what the queue pair has, RDS_IB_SEND_SGE at most: rxe's send
 * queue entry is 208 bytes plus 16 per SGE, rounded up to a power of two,
 * so three fill 256 bytes and a fourth doubles the queue.
 */
#ifndef _RDS_IB_SENDQ_H
#define _RDS_IB_SENDQ_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kshim.h"
#endif

/* Data send slots of a connection: net.rds.ib.max_send_wr (default
 * RDS_IB_SEND_RING, the default credit bound) rounded down to a power of
 * two (the ring's indexes wrap at 2^32), between RDS_IB_SEND_RING_MIN and
 * RDS_IB_SEND_RING_MAX, and less where the device's queues are smaller.
 */
#define RDS_IB_SEND_RING	64
#define RDS_IB_SEND_RING_MIN	16
#define RDS_IB_SEND_RING_MAX	1024
/* Send queue entries beyond the data slots, the control slot and the
 * drain's: RDMA, atomic, REG_MR and LOCAL_INV work requests (each
 * signalled, each counted in i_extra).  64 + 1 + 61 + 1 = 127: rxe rounds
 * a queue of n entries up to 2^k - 1 >= n, so one more doubles it.
 */
#define RDS_IB_EXTRA_WRS	61
/* SGEs per send work request we ask for at most, and need at least */
#define RDS_IB_SEND_SGE		3
#define RDS_IB_SEND_SGE_MIN	2

struct rds_ib_sendq_sizes {
	u32	data;		/* data slots: a power of two */
	u32	extra;		/* extra work requests in flight at most */
	u32	qp_wr;		/* the queue pair's max_send_wr */
	u32	cqe;		/* the send CQ's entries */
	u32	sge;		/* the queue pair's max_send_sge */
};

/* The send queue of a connection that wants want data slots, on a device
 * whose queue pairs take at most max_qp_wr work requests and max_sge
 * SGEs, and whose CQs take max_cqe entries (0: no bound known).  The
 * data slots are halved until the queue fits, down to
 * RDS_IB_SEND_RING_MIN; false if even that does not fit or the device
 * has fewer than RDS_IB_SEND_SGE_MIN SGEs (*sz is filled anyway: the
 * queue pair's creation then fails).
 */
bool rds_ib_sendq_size(u32 want, u32 max_qp_wr, u32 max_cqe, u32 max_sge,
		       struct rds_ib_sendq_sizes *sz);

/* Data frames at most unsignalled in a row: max_unsignaled_wr, at least
 * 1 and at most half the data slots, so that a full ring always holds a
 * signalled frame whose completion frees slots.
 */
u32 rds_ib_sendq_signal_every(u32 max_unsignaled, u32 data);

/* Is the data frame about to be posted signalled?  since: the data frames
 * posted unsignalled since the last signalled one; every: signal_every;
 * want: its poster wants it (the last frame of a multi-frame message
 * with nothing behind it); copies: it, or one of those unsignalled
 * frames, holds a packed frame's copy (send.c); alone: nothing behind it
 * can go now (nothing queued, or no credit left).  A slot is given back
 * only with a signalled completion at or after it, so without a signal
 * here those copies would stay allocated until the connection's next
 * signalled data frame: on an idle connection, for good.
 */
static inline bool rds_ib_sendq_signal(u32 since, u32 every, bool want,
				       bool copies, bool alone)
{
	return since + 1 >= every || want || (copies && alone);
}

/* May one more data frame be posted, with the slots from tail (the
 * oldest not given back) to head (the next) in use?
 */
static inline bool rds_ib_sendq_data_room(u32 head, u32 tail, u32 data)
{
	return head - tail < data;
}

/* May n more extra work requests be posted, with in_flight of them
 * not completed yet?
 */
static inline bool rds_ib_sendq_extra_room(u32 in_flight, u32 n, u32 extra)
{
	return in_flight <= extra && n <= extra - in_flight;
}

/* Work requests of an RDMA op of nsg mapped entries, per SGEs each. */
static inline u32 rds_ib_sendq_op_wrs(u32 nsg, u32 per)
{
	return per ? (nsg + per - 1) / per : 0;
}

/* A receive queue of n buffers of the connection's own (ring mode): the
 * work requests it asks for (the drain's receive too) and its CQ.
 */
static inline u32 rds_ib_recvq_wr(u32 n)
{
	return n + 1;
}

static inline u32 rds_ib_recvq_cqe(u32 n)
{
	return n + 1;
}

#endif /* _RDS_IB_SENDQ_H */
