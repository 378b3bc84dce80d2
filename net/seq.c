// SPDX-License-Identifier: GPL-2.0
/*
 * Pure sequence, acknowledgment and retransmission logic: see seq.h.
 * No locks, no allocation, no lists; compiled into the module and into the
 * user-space unit test tools/testing/unit/seq_test.
 */
#include "seq.h"

void rds_seq_tx_init(struct rds_seq_tx *tx, u64 first)
{
	tx->next = first;
	tx->posted = first - 1;
	tx->acked = first - 1;
	tx->since_req = 0;
	tx->bytes_since_req = 0;
}

u64 rds_seq_tx_assign(struct rds_seq_tx *tx)
{
	return tx->next++;
}

void rds_seq_tx_posted(struct rds_seq_tx *tx, u64 seq)
{
	if (rds_seq_after(seq, tx->posted))
		tx->posted = seq;
}

enum rds_seq_ack rds_seq_tx_ack(struct rds_seq_tx *tx, u64 ack)
{
	/* Only messages posted whole can be acknowledged: one merely
	 * numbered (queued) or held back by the transport never left.
	 */
	if (rds_seq_after(ack, tx->posted))
		return RDS_ACK_BOGUS;
	if (!rds_seq_after(ack, tx->acked))
		return RDS_ACK_OLD;
	tx->acked = ack;
	return RDS_ACK_NEW;
}

bool rds_seq_tx_want_ack(struct rds_seq_tx *tx, u32 len, u32 max_pkts,
			 u64 max_bytes, bool sndbuf_low, bool retransmit)
{
	tx->since_req++;
	tx->bytes_since_req += len;
	if (retransmit || sndbuf_low || tx->since_req >= max_pkts ||
	    tx->bytes_since_req >= max_bytes) {
		tx->since_req = 0;
		tx->bytes_since_req = 0;
		return true;
	}
	return false;
}

void rds_seq_rx_init(struct rds_seq_rx *rx)
{
	rx->next = 1;
	rx->synced = false;
	rx->owed = false;
	rx->unacked = 0;
	rx->unacked_bytes = 0;
}

enum rds_seq_rx_verdict rds_seq_rx_check(struct rds_seq_rx *rx, u64 seq)
{
	/* Data before the handshake told us where the peer starts. */
	if (!rx->synced)
		return RDS_RX_UNSYNCED;
	if (!rds_seq_rx_in_window(rx->next, seq))
		return RDS_RX_FAR;
	if (rds_seq_before(seq, rx->next)) {
		rx->owed = true;
		return RDS_RX_DUP;
	}
	/* In order, or past numbers the sender will never send: it skips
	 * messages cancelled before transmission and messages dropped with
	 * their RDMA op, and frees only what was acknowledged, so nothing
	 * skipped here is still held by it.
	 */
	return RDS_RX_DELIVER;
}

void rds_seq_rx_done(struct rds_seq_rx *rx, u64 seq, u32 len)
{
	rx->next = seq + 1;
	rx->unacked++;
	rx->unacked_bytes += len;
}

enum rds_seq_ack_when rds_seq_rx_ack_when(const struct rds_seq_rx *rx,
					  bool ack_required, u32 max_pkts,
					  u64 max_bytes)
{
	if (rx->owed)
		return RDS_ACK_NOW;
	if (!rx->unacked)
		return RDS_ACK_NONE;
	if (ack_required || rx->unacked >= max_pkts ||
	    rx->unacked_bytes >= max_bytes)
		return RDS_ACK_NOW;
	return RDS_ACK_LATER;
}

void rds_seq_rx_acked(struct rds_seq_rx *rx)
{
	rx->owed = false;
	rx->unacked = 0;
	rx->unacked_bytes = 0;
}

void rds_seq_hello_fill(struct rds_seq_hello *h, u32 my_gen,
			const struct rds_seq_peer *peer,
			const struct rds_seq_rx *rx, struct rds_seq_tx *tx,
			u64 oldest_held)
{
	rds_seq_tx_posted(tx, oldest_held - 1);
	h->gen = my_gen;
	/* Without a place in the peer's stream, claim no knowledge of it. */
	h->peer_gen = rx->synced ? peer->gen : 0;
	h->rx_next = rx->next;
	h->tx_first = oldest_held;
}

enum rds_seq_hello_verdict rds_seq_hello_apply(const struct rds_seq_hello *h,
					       u32 my_gen,
					       struct rds_seq_peer *peer,
					       struct rds_seq_tx *tx,
					       struct rds_seq_rx *rx)
{
	enum rds_seq_hello_verdict verdict = RDS_HELLO_SAME;

	if (!h->gen)
		return RDS_HELLO_BAD;
	if (h->gen != peer->gen || !rx->synced) {
		/* First contact, or the peer restarted and forgot us. */
		rx->next = h->tx_first;
		rx->synced = true;
		rx->owed = false;
		rx->unacked = 0;
		rx->unacked_bytes = 0;
		verdict = RDS_HELLO_NEW_PEER;
	}
	/* The peer's rx_next counts in our sequence space only if it was
	 * meant for this generation of ours; otherwise it acks nothing and
	 * everything held is sent again (and delivered once, by the
	 * restarted receiver's rule above).
	 */
	if (h->peer_gen == my_gen &&
	    rds_seq_tx_ack(tx, h->rx_next - 1) == RDS_ACK_BOGUS)
		return RDS_HELLO_BAD;
	peer->gen = h->gen;
	return verdict;
}

enum rds_seq_resend rds_seq_resend_choice(const struct rds_seq_tx *tx,
					  u64 seq, enum rds_seq_op op)
{
	if (rds_seq_tx_is_acked(tx, seq))
		return RDS_RESEND_FREE;
	/* An RDMA op is never executed twice: drop it with its message. */
	if (op == RDS_OP_POSTED || op == RDS_OP_DONE)
		return RDS_RESEND_DROP;
	return RDS_RESEND_SEND;
}

int rds_seq_op_status(enum rds_seq_op_end end, int err)
{
	/* A completion that failed says more than how the message ended. */
	if (err != RDS_SEQ_ST_SUCCESS)
		return err;
	switch (end) {
	case RDS_OP_END_ACKED:
		/* The peer delivered the message, which it receives only
		 * after the op before it was done.
		 */
		return RDS_SEQ_ST_SUCCESS;
	case RDS_OP_END_CANCELED:
		return RDS_SEQ_ST_CANCELED;
	default:
		return RDS_SEQ_ST_DROPPED;
	}
}
