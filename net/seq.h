/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure sequence, acknowledgment and retransmission logic of a connection.
 *
 * Nothing here locks, allocates or touches a list: the functions take and
 * return plain values, and the caller (send.c, recv.c, the transports)
 * applies the decisions under its own locks.  The same file compiles into
 * the module and into the user-space unit test tools/testing/unit/seq_test,
 * which drives it through every interleaving of sends, completions, peer
 * ACKs, connection loss, reconnect and peer restart.
 *
 * The rules (Documentation/reliability.md has the reasoning):
 *  - Sequence numbers are per connection, assigned when a message is queued,
 *    starting at 1, never reused, compared so that wrap-around is harmless.
 *  - A message is freed only when the peer's RDS layer acknowledged it,
 *    i.e. queued it to a socket or dropped it for good.  A send completion
 *    from the HCA proves nothing (the HCA may ack before the data reaches
 *    memory, and may then fail).
 *  - ACKs are cumulative ("delivered everything up to N") and grouped.
 *  - After a reconnect the sender learns from the handshake what the peer
 *    delivered, frees that and retransmits the rest in order; the receiver
 *    drops anything it already delivered.  A message whose RDMA op was
 *    already posted is not retransmitted: it is dropped with its op.
 *  - Numbers can be skipped (a message cancelled before transmission, or
 *    dropped with its op): the receiver delivers anything past what it
 *    delivered.  This is safe because the sender never skips a message it
 *    still holds, and holds every message until it is acknowledged.
 *  - Each side has a generation, new at every module load.  A peer with a
 *    new generation has forgotten everything: the receiver starts afresh at
 *    the sender's first held sequence number, and an ACK the peer gave for
 *    another generation of ours is ignored.
 */
#ifndef _RDS_SEQ_H
#define _RDS_SEQ_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/types.h>
#else
#include "kshim.h"
#endif

/* a comes before b, with wrap-around (the difference is taken signed). */
static inline bool rds_seq_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

static inline bool rds_seq_after(u64 a, u64 b)
{
	return rds_seq_before(b, a);
}

/* ---- sender --------------------------------------------------------- */

struct rds_seq_tx {
	u64	next;		/* sequence of the next queued message */
	u64	posted;		/* highest one whose last frame was posted:
				 * the peer can acknowledge nothing beyond
				 */
	u64	acked;		/* peer delivered everything up to this */
	u32	since_req;	/* messages sent since one asked for an ACK */
	u64	bytes_since_req;
};

void rds_seq_tx_init(struct rds_seq_tx *tx, u64 first);

/* Sequence number of a newly queued message. */
u64 rds_seq_tx_assign(struct rds_seq_tx *tx);

/* The last frame of message seq was posted (on any connection attempt). */
void rds_seq_tx_posted(struct rds_seq_tx *tx, u64 seq);

enum rds_seq_ack {
	RDS_ACK_NEW,		/* moves the window: free up to tx->acked */
	RDS_ACK_OLD,		/* nothing new (reordered or repeated): ignore */
	RDS_ACK_BOGUS,		/* acks a message never posted (queued, or
				 * held by the transport): count, reset
				 */
};

/* A cumulative ACK arrived (in a header or the handshake). */
enum rds_seq_ack rds_seq_tx_ack(struct rds_seq_tx *tx, u64 ack);

/* The message with this sequence number may be freed. */
static inline bool rds_seq_tx_is_acked(const struct rds_seq_tx *tx, u64 seq)
{
	return !rds_seq_after(seq, tx->acked);
}

/* Whether the message being sent (len bytes) asks the peer for an ACK now:
 * every max_pkts messages, every max_bytes bytes, when the sender is short
 * of buffer (sndbuf_low) and on every retransmission.  Updates the counts.
 */
bool rds_seq_tx_want_ack(struct rds_seq_tx *tx, u32 len, u32 max_pkts,
			 u64 max_bytes, bool sndbuf_low, bool retransmit);

/* ---- receiver ------------------------------------------------------- */

struct rds_seq_rx {
	u64	next;		/* next sequence to deliver */
	bool	synced;		/* next is known (a handshake set it) */
	bool	owed;		/* a duplicate arrived: the sender needs an ACK */
	u32	unacked;	/* delivered but not yet acknowledged */
	u64	unacked_bytes;
};

void rds_seq_rx_init(struct rds_seq_rx *rx);

enum rds_seq_rx_verdict {
	RDS_RX_DELIVER,		/* new: deliver, then rds_seq_rx_done() */
	RDS_RX_DUP,		/* already delivered: drop, count, still ACK */
	RDS_RX_UNSYNCED,	/* data before any hello: protocol error */
	RDS_RX_FAR,		/* outside the window: protocol error */
};

/* The receive window.  Numbers are skipped only for messages the sender
 * cancelled or dropped with their op, and retransmissions start from the
 * oldest message it holds: neither comes near 2^32 apart from the next
 * expected number.  A sequence number 2^32 or more before or after it is
 * a broken or hostile sender, and the transport resets the connection.
 */
#define RDS_SEQ_RX_WINDOW	BIT_ULL(32)

static inline bool rds_seq_rx_in_window(u64 next, u64 seq)
{
	/* seq - next in [-W, W), taken modulo 2^64 */
	return seq - next + RDS_SEQ_RX_WINDOW < 2 * RDS_SEQ_RX_WINDOW;
}

/* Classify an arriving data message; a duplicate makes an ACK owed. */
enum rds_seq_rx_verdict rds_seq_rx_check(struct rds_seq_rx *rx, u64 seq);

/* The message seq (len bytes) was queued to its socket or dropped for good. */
void rds_seq_rx_done(struct rds_seq_rx *rx, u64 seq, u32 len);

/* The cumulative ACK to put on the wire: everything before rx->next. */
static inline u64 rds_seq_rx_ack(const struct rds_seq_rx *rx)
{
	return rx->next - 1;
}

enum rds_seq_ack_when {
	RDS_ACK_NONE,		/* nothing to acknowledge */
	RDS_ACK_LATER,		/* arm the delayed-ACK timer (or piggyback) */
	RDS_ACK_NOW,		/* send an ACK now */
};

/* When to acknowledge after a delivery: at once when the sender asked
 * (ack_required), when max_pkts messages / max_bytes bytes are pending or
 * when a duplicate showed that the sender missed an ACK, else later (the
 * delayed-ACK timer or any frame going out carries it).
 */
enum rds_seq_ack_when rds_seq_rx_ack_when(const struct rds_seq_rx *rx,
					  bool ack_required, u32 max_pkts,
					  u64 max_bytes);

/* An ACK carrying rds_seq_rx_ack() went out (alone or piggybacked). */
void rds_seq_rx_acked(struct rds_seq_rx *rx);

/* ---- handshake ------------------------------------------------------ */

/* What each side tells the other when a connection forms. */
struct rds_seq_hello {
	u32	gen;		/* sender's generation (never 0) */
	u32	peer_gen;	/* the generation of ours it knows, 0 if none */
	u64	rx_next;	/* next sequence it will deliver from us;
				 * meaningless when peer_gen is 0 (any value
				 * is a valid sequence number: no sentinel)
				 */
	u64	tx_first;	/* oldest sequence it still holds for us */
};

struct rds_seq_peer {
	u32	gen;		/* the peer's generation, 0 before the first hello */
};

enum rds_seq_hello_verdict {
	RDS_HELLO_SAME,		/* same peer: rx keeps its place */
	RDS_HELLO_NEW_PEER,	/* first contact or peer restarted: rx restarts */
	RDS_HELLO_BAD,		/* malformed (gen 0, or acks the unsent) */
};

/* Fill the hello this side sends.  Nothing below oldest_held is held
 * any more (some never left: cancelled or dropped before they were
 * posted), and a peer that starts afresh acknowledges oldest_held - 1:
 * tx counts it as posted.
 */
void rds_seq_hello_fill(struct rds_seq_hello *h, u32 my_gen,
			const struct rds_seq_peer *peer,
			const struct rds_seq_rx *rx, struct rds_seq_tx *tx,
			u64 oldest_held);

/* Apply the peer's hello: resynchronise rx when the peer is new, and
 * take the peer's rx_next as an ACK only if it was meant for my_gen.
 */
enum rds_seq_hello_verdict rds_seq_hello_apply(const struct rds_seq_hello *h,
					       u32 my_gen,
					       struct rds_seq_peer *peer,
					       struct rds_seq_tx *tx,
					       struct rds_seq_rx *rx);

/* ---- retransmission after a reconnect -------------------------------- */

/* What is known of the RDMA or atomic op bound to a message. */
enum rds_seq_op {
	RDS_OP_NONE,		/* the message carries no op */
	RDS_OP_UNPOSTED,	/* has an op, never handed to the HCA */
	RDS_OP_POSTED,		/* posted at least once, outcome unknown */
	RDS_OP_DONE,		/* posted and its completion was seen */
};

enum rds_seq_resend {
	RDS_RESEND_FREE,	/* the peer has it: free, notify op status */
	RDS_RESEND_SEND,	/* send it again, flagged RETRANSMITTED */
	RDS_RESEND_DROP,	/* drop it with its op: RDS_RDMA_DROPPED */
};

/* For each held message, in sequence order, once the connection is back. */
enum rds_seq_resend rds_seq_resend_choice(const struct rds_seq_tx *tx,
					  u64 seq, enum rds_seq_op op);

/* ---- the outcome of an op ------------------------------------------ */

/* How the message carrying an op left its connection. */
enum rds_seq_op_end {
	RDS_OP_END_ACKED,	/* the peer delivered it */
	RDS_OP_END_DROPPED,	/* RDS_RESEND_DROP after a reconnect */
	RDS_OP_END_CANCELED,	/* RDS_CANCEL_SENT_TO, before its ACK */
};

/* Op statuses, as <linux/rds.h> numbers them (RDS_RDMA_*). */
enum {
	RDS_SEQ_ST_SUCCESS	= 0,
	RDS_SEQ_ST_REMOTE_ERROR	= 1,
	RDS_SEQ_ST_CANCELED	= 2,
	RDS_SEQ_ST_DROPPED	= 3,
	RDS_SEQ_ST_OTHER_ERROR	= 4,
};

/* The status of an op whose message ended so; err is the status a failed
 * completion of the op recorded (RDS_SEQ_ST_SUCCESS if none failed).
 */
int rds_seq_op_status(enum rds_seq_op_end end, int err);

/* Whether the sender hears of it: it asked, or it failed and the socket
 * wants failures (RDS_RECVERR).
 */
static inline bool rds_seq_op_notify(int status, bool notify_me, bool recverr)
{
	return notify_me || (status != RDS_SEQ_ST_SUCCESS && recverr);
}

#endif /* _RDS_SEQ_H */
