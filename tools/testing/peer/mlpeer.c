// SPDX-License-Identifier: GPL-2.0
/*
 * libpeer's mainline mode (peer.h: peer_ml_init): the kernel's own RDS
 * over IB (rds_rdma), as Documentation/interop.md describes it, so that
 * the module's side of that protocol can be checked against a peer we
 * control.
 *
 * - Private data: net/ib/mlhs.c, the module's own codec, in its IPv4
 *   (32 bytes, port 18634) or IPv6 layout (56 bytes, port 16385) by the
 *   family of the addresses.  A request offers ml_ver (3.1 with mask
 *   0x0003, as rds_rdma does, or 4.1) and carries ack_seq 0 (ml_req_ack,
 *   for mlforge) and credit 0; a request received is taken when the
 *   version rule of rds_rdma takes it, and answered with ml_ver, our
 *   addresses and credit 0; else refused with its int 1.
 * - Send: each message as frames of a 48-byte header and at most 4 KiB,
 *   the header (h_ack, checksum) the same in all of them; ACK_REQUIRED by
 *   rds_rdma's rule (the first message, then every 9th or 16 MiB) or
 *   when the caller asks; a congestion map with sequence 0, ports 0 and
 *   flags exactly CONG_BITMAP, outside the rule.  An ACK-only frame: a
 *   header with sequence 0, ports 0, length 0, flags 0.
 * - Receive: what the module sends is checked against what rds_rdma
 *   would take, each departure counted (peer_stats.ml_*, and
 *   violations): a flag it never sets, a credit, a fragment of the wrong
 *   length, a map not 8192 bytes at sequence 0 from port 0, a map with
 *   another flag (rds_rdma would deliver it to port 0), an ACK-only frame
 *   with a sequence, flags or length.  Messages follow rds_rdma's
 *   sequence rule: one below the window flagged RETRANSMITTED would be
 *   dropped (ml_dups; queued all the same, peer_msg.dup), anything else
 *   delivered; each counts toward our ACK, sent once the batch is taken
 *   when one asked for it.
 */
#include <arpa/inet.h>
#include <string.h>

#include "peer_int.h"

#define PEER_ML_UNACKED_PKTS	8		/* rds_rdma's sysctl defaults */
#define PEER_ML_UNACKED_BYTES	(16u << 20)
#define PEER_ML_FLAGS		(RDS_FLAG_CONG_BITMAP | \
				 RDS_FLAG_ACK_REQUIRED | \
				 RDS_FLAG_RETRANSMITTED)

void peer_ml_init(struct peer *p, u16 ver)
{
	p->ml = true;
	p->ml_ver = ver;
	p->ml_rej = -1;
	p->ml_next_rx = 0;
	p->tx_next = 1;
}

void peer_ml_addr(u8 *a, const char *s)
{
	char buf[INET6_ADDRSTRLEN];

	memset(a, 0, 16);
	if (!peer_is_v6(s)) {
		a[10] = 0xff;
		a[11] = 0xff;
		inet_pton(AF_INET, s, a + 12);
		return;
	}
	/* the scope (%eth0) is rdma_cm's, not the private data's */
	snprintf(buf, sizeof(buf), "%s", s);
	buf[strcspn(buf, "%")] = '\0';
	inet_pton(AF_INET6, buf, a);
}

int peer_ml_connect(struct peer *p, const char *src, const char *dst, u8 tos,
		    int retries)
{
	struct rds_ib_mlhs m = {
		.v6		= peer_is_v6(dst),
		.major		= p->ml_ver >> 8,
		.minor		= p->ml_ver & 0xff,
		.minor_mask	= RDS_IB_MLHS_MASK,
		.tos		= tos,
		.ack_seq	= p->ml_req_ack,
	};
	u8 buf[RDS_IB_MLHS_V6_LEN];
	int reason = 0;
	size_t len;

	peer_ml_addr(m.saddr, src);
	peer_ml_addr(m.daddr, dst);
	len = rds_ib_mlhs_encode(&m, buf, sizeof(buf));
	if (!len)
		return -1;
	p->tos = tos;
	p->ml_rej = -1;
	if (peer_connect(p, src, dst, peer_rds_port(dst), buf, len, retries,
			 &reason))
		return -1;
	return 0;
}

/* Its private data, judged as rds_rdma would (p->ml_theirs filled). */
static int peer_ml_judge(struct peer *p, const void *pd, size_t len)
{
	if (rds_ib_mlhs_decode(pd, len, p->v6, &p->ml_theirs))
		return -1;
	p->ml_proto = rds_ib_mlhs_negotiate(p->ml_theirs.major,
					    p->ml_theirs.minor,
					    p->ml_theirs.minor_mask);
	return p->ml_proto ? 0 : -1;
}

int peer_ml_answer(struct peer *p, const void *pd, size_t len)
{
	/* rds_rdma takes the version of the accept, 3.1 at least. */
	if (peer_ml_judge(p, pd, len))
		return -1;
	p->theirs.tos = p->ml_theirs.tos;
	return 0;
}

int peer_ml_request(struct peer *p, const void *pd, size_t len)
{
	if (peer_ml_judge(p, pd, len))
		return -1;
	p->ml_offer = rds_ib_hs_is_offer(pd, len);
	p->theirs.tos = p->ml_theirs.tos;
	return 0;
}

void peer_ml_refuse(struct peer *p, struct rdma_cm_event *ev)
{
	int incompat = RDS_IB_MLHS_REJ_INCOMPAT;	/* in our byte order */
	struct rdma_cm_id *id = ev->id;
	struct rds_ib_hs hs;
	int tos = -1;

	/* The module's own handshake names its TOS: one of another of its
	 * connections (peer_accept_pd) is refused all the same, not counted.
	 */
	if (rds_ib_hs_decode(ev->param.conn.private_data,
			     ev->param.conn.private_data_len, &hs) == RDS_IB_HS_OK)
		tos = hs.tos;
	if (p->accept_tos < 0 || tos < 0 || tos == p->accept_tos)
		p->ml_refused++;
	peer_log(p, "request refused as the kernel's RDS refuses one (%u bytes, version %u.%u, %s handshake, TOS %d)",
		 ev->param.conn.private_data_len, p->ml_theirs.major,
		 p->ml_theirs.minor, tos < 0 ? "not our" : "our", tos);
	rdma_ack_cm_event(ev);
	rdma_reject(id, &incompat, sizeof(incompat));
	rdma_destroy_id(id);
}

size_t peer_ml_accept_pd(struct peer *p, u8 *buf)
{
	struct rds_ib_mlhs m = {
		.v6		= p->ml_theirs.v6,
		.major		= p->ml_ver >> 8,
		.minor		= p->ml_ver & 0xff,
		.minor_mask	= RDS_IB_MLHS_MASK,
		.tos		= p->ml_theirs.tos,
	};

	memcpy(m.saddr, p->ml_theirs.daddr, 16);
	memcpy(m.daddr, p->ml_theirs.saddr, 16);
	return rds_ib_mlhs_encode(&m, buf, RDS_IB_MLHS_V6_LEN);
}

void peer_ml_start(struct peer *p)
{
	/* Its ACK state starts afresh with every connection. */
	p->rx_last = 0;
	p->ack_sent = 0;
	p->ml_ack_asked = false;
	p->inflight = 0;
	if (!p->tx_next)
		p->tx_next = 1;
}

/* ---- send ------------------------------------------------------------ */

/* rds_rdma's rule: an ACK asked of the first message, then of every
 * ninth, or earlier when 16 MiB went unasked.
 */
static u8 peer_ml_rule(struct peer *p, u32 len)
{
	if (p->ml_no_rule)
		return 0;
	if (!p->ml_unacked_pkts || p->ml_unacked_bytes < len) {
		p->ml_unacked_pkts = PEER_ML_UNACKED_PKTS;
		p->ml_unacked_bytes = PEER_ML_UNACKED_BYTES;
		return RDS_FLAG_ACK_REQUIRED;
	}
	p->ml_unacked_pkts--;
	p->ml_unacked_bytes -= len;
	return 0;
}

static int peer_ml_post(struct peer *p, u64 seq, u16 sport, u16 dport,
			u8 flags, const void *data, u32 len)
{
	const u8 *d = data;
	struct rds_header h;
	u32 off = 0;

	peer_hdr_fill(p, &h, seq, len, sport, dport, flags);
	h.h_csum = peer_csum(&h);
	p->ack_sent = peer_ack_value(p);
	do {
		u32 n = len - off < PEER_FRAG ? len - off : PEER_FRAG;

		if (peer_send_frame(p, &h, d + off, n, false))
			return -1;
		off += n;
	} while (off < len);
	p->st.tx_msgs++;
	return 0;
}

int peer_ml_send_msg_at(struct peer *p, u64 seq, u16 sport, u16 dport,
			u8 flags, const void *data, u32 len)
{
	if (flags == RDS_FLAG_CONG_BITMAP)
		return peer_ml_post(p, 0, 0, 0, flags, data, len);
	if (!rds_seq_before(seq, p->tx_next))
		p->tx_next = seq + 1;
	return peer_ml_post(p, seq, sport, dport, flags | peer_ml_rule(p, len),
			    data, len);
}

int peer_ml_send_msg(struct peer *p, u16 sport, u16 dport, u8 flags,
		     const void *data, u32 len)
{
	return peer_ml_send_msg_at(p, p->tx_next, sport, dport, flags, data,
				   len);
}

int peer_ml_send_map(struct peer *p, const void *map, u32 len)
{
	return peer_ml_post(p, 0, 0, 0, RDS_FLAG_CONG_BITMAP, map, len);
}

int peer_ml_send_ack(struct peer *p)
{
	struct rds_header h;

	peer_hdr_fill(p, &h, 0, 0, 0, 0, 0);
	h.h_csum = peer_csum(&h);
	p->ack_sent = peer_ack_value(p);
	p->ml_ack_asked = false;
	p->st.tx_ctrl++;
	return peer_send_frame(p, &h, NULL, 0, false);
}

/* ---- receive --------------------------------------------------------- */

static void peer_ml_count(struct peer *p, u64 *ctr, const char *why)
{
	(*ctr)++;
	peer_bad(p, why);
}

/* A whole message of the module: its map, or a message. */
static void peer_ml_msg(struct peer *p, struct peer_msg *m)
{
	m->seq = be64_to_cpu(m->hdr.h_sequence);
	m->len = be32_to_cpu(m->hdr.h_len);
	m->sport = be16_to_cpu(m->hdr.h_sport);
	m->dport = be16_to_cpu(m->hdr.h_dport);
	m->flags = m->hdr.h_flags;
	if (m->flags & RDS_FLAG_CONG_BITMAP) {
		p->st.cong_maps++;
		if (m->flags != RDS_FLAG_CONG_BITMAP) {
			/* rds_rdma would take it for a message to port 0 */
			peer_ml_count(p, &p->st.ml_map_flags,
				      "congestion map with another flag");
		} else {
			if (m->len != RDS_CONG_MAP_BYTES || m->seq ||
			    m->sport || m->dport || m->frags != 2)
				peer_ml_count(p, &p->st.ml_bad_map,
					      "congestion map not 8192 bytes in two fragments at sequence 0 from port 0");
			/* outside the sequence, not acknowledged */
			peer_queue(p, m);
			return;
		}
	}
	p->st.msgs++;
	if (m->flags & RDS_FLAG_RETRANSMITTED)
		p->st.retrans_msgs++;
	if (m->flags & RDS_FLAG_ACK_REQUIRED) {
		p->st.ack_req++;
		p->ml_ack_asked = true;
	}
	p->rx_last = m->seq;
	/* What rds_rdma would drop is queued all the same, marked, for the
	 * tests to see what came.
	 */
	if (p->ml_next_rx && rds_seq_before(m->seq, p->ml_next_rx) &&
	    (m->flags & RDS_FLAG_RETRANSMITTED)) {
		p->st.ml_dups++;
		m->dup = true;
	} else {
		p->ml_next_rx = m->seq + 1;
	}
	peer_queue(p, m);
}

void peer_ml_frame(struct peer *p, const u8 *b, u32 len)
{
	struct peer_msg m;
	struct rds_header h;
	u32 dlen;

	if (!peer_frame_head(p, b, len, &h, &dlen))
		return;
	if (h.h_flags & ~PEER_ML_FLAGS)
		peer_ml_count(p, &p->st.ml_bad_flags,
			      "a flag the kernel's RDS never sets");
	if (h.h_credit)
		peer_ml_count(p, &p->st.ml_credit,
			      "a credit granted (the kernel's RDS asked for none)");
	peer_ack_take(p, &h);
	/* rds_rdma's test of an ACK-only frame: ports 0, no data. */
	if (!h.h_sport && !h.h_dport && !dlen) {
		p->st.ctrl_frames++;
		p->st.ml_acks++;
		if (h.h_sequence || h.h_flags || h.h_len)
			peer_ml_count(p, &p->st.ml_bad_ack,
				      "ACK-only frame with a sequence, flags or length");
		return;
	}
	p->st.data_frames++;
	switch (peer_part_add(p, &h, b + RDS_IB_HDR_LEN, dlen, &m)) {
	case PEER_PART_DONE:
		peer_ml_msg(p, &m);
		break;
	case PEER_PART_BAD_LEN:
		/* rds_rdma takes every fragment but the last as 4 KiB */
		p->st.ml_bad_frag++;
		break;
	default:
		break;
	}
}
