// SPDX-License-Identifier: GPL-2.0
/*
 * The connect private data of the kernel's own RDS over IB, and the
 * classification of a received one: see mlhs.h.
 * Pure code: no locks, no allocation, no verbs.
 */
#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif

#include "hs.h"
#include "mlhs.h"

static const char *const rds_ib_mlhs_reasons[RDS_IB_MLHS_R_MAX] = {
	[RDS_IB_MLHS_OK]	= "ok",
	[RDS_IB_MLHS_R_EMPTY]	= "no private data",
	[RDS_IB_MLHS_R_SHORT]	= "short",
	[RDS_IB_MLHS_R_NOVER]	= "no version",
	[RDS_IB_MLHS_R_VERSION]	= "version",
	[RDS_IB_MLHS_R_ADDR]	= "addresses",
};

const char *rds_ib_mlhs_reason_name(enum rds_ib_mlhs_reason reason)
{
	if ((unsigned int)reason >= RDS_IB_MLHS_R_MAX)
		return "unknown";
	return rds_ib_mlhs_reasons[reason];
}

/* ::ffff:0:0/96, the prefix of an IPv4-mapped address */
static const u8 rds_ib_mlhs_v4mapped[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

static void rds_ib_mlhs_cmn_put(const struct rds_ib_mlhs *m,
				struct rds_ib_mlhs_cmn *c)
{
	c->major = m->major;
	c->minor = m->minor;
	c->minor_mask = cpu_to_be16(m->minor_mask);
	c->tos = m->tos;
	c->reserved1 = m->reserved1;
	c->reserved2 = cpu_to_be16(m->reserved2);
	c->ack_seq = cpu_to_be64(m->ack_seq);
	c->credit = cpu_to_be32(m->credit);
	memset(c->pad, 0, sizeof(c->pad));
}

static void rds_ib_mlhs_cmn_get(const struct rds_ib_mlhs_cmn *c,
				struct rds_ib_mlhs *m)
{
	m->major = c->major;
	m->minor = c->minor;
	m->minor_mask = be16_to_cpu(c->minor_mask);
	m->tos = c->tos;
	m->reserved1 = c->reserved1;
	m->reserved2 = be16_to_cpu(c->reserved2);
	m->ack_seq = be64_to_cpu(c->ack_seq);
	m->credit = be32_to_cpu(c->credit);
}

size_t rds_ib_mlhs_encode(const struct rds_ib_mlhs *m, void *buf,
			  size_t room)
{
	struct rds_ib_mlhs_v6 w6;
	struct rds_ib_mlhs_v4 w4;

	if (m->v6) {
		if (room < sizeof(w6))
			return 0;
		memcpy(w6.saddr, m->saddr, 16);
		memcpy(w6.daddr, m->daddr, 16);
		rds_ib_mlhs_cmn_put(m, &w6.cmn);
		memcpy(buf, &w6, sizeof(w6));
		return sizeof(w6);
	}
	if (room < sizeof(w4) ||
	    memcmp(m->saddr, rds_ib_mlhs_v4mapped, 12) ||
	    memcmp(m->daddr, rds_ib_mlhs_v4mapped, 12))
		return 0;
	memcpy(&w4.saddr, m->saddr + 12, 4);
	memcpy(&w4.daddr, m->daddr + 12, 4);
	rds_ib_mlhs_cmn_put(m, &w4.cmn);
	memcpy(buf, &w4, sizeof(w4));
	return sizeof(w4);
}

enum rds_ib_mlhs_reason rds_ib_mlhs_decode(const void *buf, size_t len,
					   bool v6, struct rds_ib_mlhs *m)
{
	if (!buf || !len)
		return RDS_IB_MLHS_R_EMPTY;
	memset(m, 0, sizeof(*m));
	m->v6 = v6;
	if (v6) {
		struct rds_ib_mlhs_v6 w;

		if (len < sizeof(w))
			return RDS_IB_MLHS_R_SHORT;
		memcpy(&w, buf, sizeof(w));
		memcpy(m->saddr, w.saddr, 16);
		memcpy(m->daddr, w.daddr, 16);
		rds_ib_mlhs_cmn_get(&w.cmn, m);
	} else {
		struct rds_ib_mlhs_v4 w;

		if (len < sizeof(w))
			return RDS_IB_MLHS_R_SHORT;
		memcpy(&w, buf, sizeof(w));
		memcpy(m->saddr, rds_ib_mlhs_v4mapped, 12);
		memcpy(m->saddr + 12, &w.saddr, 4);
		memcpy(m->daddr, rds_ib_mlhs_v4mapped, 12);
		memcpy(m->daddr + 12, &w.daddr, 4);
		rds_ib_mlhs_cmn_get(&w.cmn, m);
	}
	return RDS_IB_MLHS_OK;
}

u16 rds_ib_mlhs_negotiate(u8 major, u8 minor, u16 mask)
{
	u16 common = mask & RDS_IB_MLHS_MASK;

	if (major == 4 && common)
		return RDS_IB_MLHS_PROTO(4, (common & 2) ? 1 : 0);
	if (RDS_IB_MLHS_PROTO(major, minor) == RDS_IB_MLHS_3_1)
		return RDS_IB_MLHS_3_1;
	return 0;
}

bool rds_ib_mlhs_gen_refused(u32 gen)
{
	return gen >> 24 &&
	       !rds_ib_mlhs_negotiate(gen >> 24, gen >> 16, gen & 0xffff);
}

/* Judge a decoded mainline private data: its version, its addresses. */
static enum rds_ib_mlhs_reason rds_ib_mlhs_judge(struct rds_ib_pd_class *c,
						 const u8 *local,
						 const u8 *peer)
{
	const struct rds_ib_mlhs *m = &c->ml;

	if (!m->major)
		return RDS_IB_MLHS_R_NOVER;
	c->proto = rds_ib_mlhs_negotiate(m->major, m->minor, m->minor_mask);
	if (!c->proto)
		return RDS_IB_MLHS_R_VERSION;
	if ((local && memcmp(m->daddr, local, 16)) ||
	    (peer && memcmp(m->saddr, peer, 16)))
		return RDS_IB_MLHS_R_ADDR;
	return RDS_IB_MLHS_OK;
}

enum rds_ib_pd_kind rds_ib_pd_classify(const void *buf, size_t len, bool v6,
				       const u8 *local, const u8 *peer,
				       struct rds_ib_pd_class *c)
{
	__be32 magic;

	memset(c, 0, sizeof(*c));
	c->kind = RDS_IB_PD_UNKNOWN;
	c->reason = rds_ib_mlhs_decode(buf, len, v6, &c->ml);
	if (c->reason == RDS_IB_MLHS_OK)
		c->reason = rds_ib_mlhs_judge(c, local, peer);

	/* Ours in the kernel's IPv4 layout (hs.h): the marker that RDS
	 * never writes, and our magic where it never reads.
	 */
	if (!v6 && rds_ib_hs_is_offer(buf, len)) {
		c->kind = RDS_IB_PD_OURS;
		c->reason = RDS_IB_MLHS_OK;
		c->proto = 0;
		return c->kind;
	}
	if (buf && len >= sizeof(magic)) {
		memcpy(&magic, buf, sizeof(magic));
		/* Ours starts with the magic.  So does a mainline private
		 * data from a peer whose address reads "RDSi": that one is
		 * mainline's only if it names both known addresses.
		 */
		if (be32_to_cpu(magic) == RDS_IB_HS_MAGIC &&
		    !(c->reason == RDS_IB_MLHS_OK && local && peer)) {
			c->kind = RDS_IB_PD_OURS;
			c->reason = RDS_IB_MLHS_OK;
			c->proto = 0;
			return c->kind;
		}
	}
	if (c->reason == RDS_IB_MLHS_OK)
		c->kind = RDS_IB_PD_MAINLINE;
	return c->kind;
}

size_t rds_ib_mlhs_request(const u8 *saddr, const u8 *daddr, bool v6, u8 tos,
			   u64 ack_seq, void *buf, size_t room)
{
	struct rds_ib_mlhs m = {
		.v6		= v6,
		.major		= 3,
		.minor		= 1,
		.minor_mask	= RDS_IB_MLHS_MASK,
		.tos		= tos,
		.ack_seq	= ack_seq,
	};

	memcpy(m.saddr, saddr, sizeof(m.saddr));
	memcpy(m.daddr, daddr, sizeof(m.daddr));
	return rds_ib_mlhs_encode(&m, buf, room);
}

enum rds_ib_rej_kind rds_ib_rej_classify(bool consumer, const void *buf,
					 size_t len, u8 *reason)
{
	const u8 *b = buf;
	struct rds_ib_hs hs;
	size_t i;
	int rej;

	*reason = 0;
	if (!consumer || !buf)
		return RDS_IB_REJ_NONE;
	/* The IB CM's own refusal for a consumer (no rdma_cm listener on
	 * the port, an id destroyed) carries nothing: zeros throughout.
	 */
	i = 0;
	while (i < len && !b[i])
		i++;
	if (i == len)
		return RDS_IB_REJ_NONE;
	if (rds_ib_hs_decode(buf, len, &hs) == RDS_IB_HS_OK && hs.reason) {
		*reason = hs.reason;
		return RDS_IB_REJ_OURS;
	}
	if (len < sizeof(rej))
		return RDS_IB_REJ_OTHER;
	memcpy(&rej, buf, sizeof(rej));
	return rej == RDS_IB_MLHS_REJ_INCOMPAT ? RDS_IB_REJ_MAINLINE :
						 RDS_IB_REJ_OTHER;
}

bool rds_ib_ml6_remember(bool was, enum rds_ib_req_kind sent,
			 enum rds_ib_ml6_event ev, u8 *raced)
{
	if (ev == RDS_IB_ML6_REFUSED_ML && sent == RDS_IB_REQ_ML) {
		/* its connect race, or an old module of ours (mlhs.h) */
		if (*raced < RDS_IB_ML6_RACED_MAX - 1) {
			++*raced;
			return was;
		}
		*raced = 0;
		return false;
	}
	/* Neither set nor counted: a request in its layout can be anyone's
	 * (a forged one for a peer of ours).  The race it would end is over
	 * when its connection comes up (UP).
	 */
	if (ev == RDS_IB_ML6_PEER_ML)
		return was;
	*raced = 0;
	switch (ev) {
	/* An accept in its layout never sets it: it answers a request sent
	 * because the memory was set.
	 */
	case RDS_IB_ML6_ACCEPT_ML:
	case RDS_IB_ML6_UP:
		return was;
	case RDS_IB_ML6_ACCEPT_OURS:
	case RDS_IB_ML6_PEER_OURS:
		return false;
	case RDS_IB_ML6_REFUSED_ML:
		if (sent == RDS_IB_REQ_OURS)
			return true;
		break;
	default:
		break;
	}
	return sent == RDS_IB_REQ_ML ? false : was;
}

enum rds_ib_hs_ack rds_ib_hs_acked(enum rds_ib_pd_kind kind, bool knows_us,
				   u64 ack, u64 posted)
{
	if (kind != RDS_IB_PD_OURS || !knows_us)
		return RDS_IB_HS_ACK_NONE;
	if (rds_seq_after(ack, posted))
		return RDS_IB_HS_ACK_BAD;
	return RDS_IB_HS_ACK_FREE;
}
