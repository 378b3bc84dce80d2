// SPDX-License-Identifier: GPL-2.0
/*
 * The handshake private data of an IB/RoCE connection: see hs.h.
 * Pure code: no locks, no allocation, no verbs.
 */
#ifdef __KERNEL__
#include <linux/limits.h>
#include <linux/string.h>
#else
#include <string.h>
#endif

#include "hs.h"

static const char *const rds_ib_hs_reasons[RDS_IB_HS_R_MAX] = {
	[RDS_IB_HS_OK]		= "ok",
	[RDS_IB_HS_R_SHORT]	= "short",
	[RDS_IB_HS_R_MAGIC]	= "not RDS",
	[RDS_IB_HS_R_VERSION]	= "version",
	[RDS_IB_HS_R_FLAGS]	= "flags",
	[RDS_IB_HS_R_GEN]	= "generation 0",
	[RDS_IB_HS_R_FRAG]	= "fragment size",
	[RDS_IB_HS_R_CREDITS]	= "credits",
	[RDS_IB_HS_R_TOS]	= "tos",
	[RDS_IB_HS_R_BUSY]	= "busy",
	[RDS_IB_HS_R_MAINLINE]	= "the kernel's RDS",
	[RDS_IB_HS_R_PEER_LIMIT] = "peer limit",
	[RDS_IB_HS_R_ACCEPT_LIMIT] = "accept limit",
};

const char *rds_ib_hs_reason_name(enum rds_ib_hs_reason reason)
{
	if ((unsigned int)reason >= RDS_IB_HS_R_MAX)
		return "unknown";
	return rds_ib_hs_reasons[reason];
}

void rds_ib_hs_encode(const struct rds_ib_hs *hs, void *buf)
{
	struct rds_ib_hs_wire w = {
		.magic		= cpu_to_be32(RDS_IB_HS_MAGIC),
		.major		= hs->major,
		.minor		= hs->minor,
		.flags		= cpu_to_be16(hs->flags),
		.gen		= cpu_to_be32(hs->hello.gen),
		.peer_gen	= cpu_to_be32(hs->hello.peer_gen),
		.rx_next	= cpu_to_be64(hs->hello.rx_next),
		.tx_first	= cpu_to_be64(hs->hello.tx_first),
		.credits	= cpu_to_be32(hs->credits |
					      (hs->v6 ? (u32)RDS_IB_HS_V6_MARK << 24 :
					       0)),
		.frag_shift	= hs->frag_shift,
		.reserved	= 0,
		.tos		= hs->tos,
		.reason		= hs->reason,
	};

	memcpy(buf, &w, sizeof(w));
}

void rds_ib_hs_offer_put(const struct rds_ib_hs *hs, void *buf)
{
	struct rds_ib_hs_offer_tail t = {
		.magic		= cpu_to_be16(RDS_IB_HS_OFFER_MAGIC),
		.major		= hs->major,
		.minor		= hs->minor,
		.flags		= (u8)hs->flags,
		.frag_shift	= hs->frag_shift,
		.credits	= cpu_to_be16(hs->credits > RDS_IB_HS_MAX_CREDITS ?
					      RDS_IB_HS_MAX_CREDITS :
					      hs->credits),
		.gen		= cpu_to_be32(hs->hello.gen),
		.peer_gen	= cpu_to_be32(hs->hello.peer_gen),
		.tx_first	= cpu_to_be64(hs->hello.tx_first),
	};
	u8 *b = buf;

	/* the tail has one byte of flags */
	static_assert(RDS_IB_HS_F_KNOWN <= U8_MAX);
	b[RDS_IB_HS_OFFER_MARK_OFF] = RDS_IB_HS_OFFER_MARK;
	memcpy(b + RDS_IB_HS_OFFER_LEN - sizeof(t), &t, sizeof(t));
}

bool rds_ib_hs_is_offer(const void *buf, size_t len)
{
	const u8 *b = buf;
	__be16 magic;

	if (!buf || len < RDS_IB_HS_OFFER_LEN ||
	    b[RDS_IB_HS_OFFER_MARK_OFF] != RDS_IB_HS_OFFER_MARK)
		return false;
	memcpy(&magic, b + RDS_IB_HS_OFFER_LEN -
	       sizeof(struct rds_ib_hs_offer_tail), sizeof(magic));
	return be16_to_cpu(magic) == RDS_IB_HS_OFFER_MAGIC;
}

/* Flags: known ones, at a minor that has them. */
static bool rds_ib_hs_flags_ok(u8 minor, u16 flags)
{
	return !flags || (!(flags & ~RDS_IB_HS_F_KNOWN) &&
			  minor >= RDS_IB_HS_MINOR_FLAGS);
}

/* The common checks of a decoded handshake, whatever its layout. */
static enum rds_ib_hs_reason rds_ib_hs_check(const struct rds_ib_hs *hs)
{
	if (!hs->hello.gen)
		return RDS_IB_HS_R_GEN;
	if (hs->frag_shift < RDS_IB_HS_MIN_SHIFT ||
	    hs->frag_shift > RDS_IB_HS_MAX_SHIFT)
		return RDS_IB_HS_R_FRAG;
	if (hs->credits > RDS_IB_HS_MAX_CREDITS)
		return RDS_IB_HS_R_CREDITS;
	return RDS_IB_HS_OK;
}

static enum rds_ib_hs_reason rds_ib_hs_offer_decode(const u8 *b,
						    struct rds_ib_hs *hs)
{
	struct rds_ib_hs_offer_tail t;
	__be64 ack;

	memcpy(&t, b + RDS_IB_HS_OFFER_LEN - sizeof(t), sizeof(t));
	memcpy(&ack, b + RDS_IB_HS_OFFER_ACK_OFF, sizeof(ack));
	hs->major = t.major;
	hs->minor = t.minor;
	hs->reason = 0;
	hs->v6 = false;		/* offers are IPv4 only */
	if (t.major != RDS_IB_HS_MAJOR)
		return RDS_IB_HS_R_VERSION;
	if (!rds_ib_hs_flags_ok(t.minor, t.flags))
		return RDS_IB_HS_R_FLAGS;
	hs->flags = t.flags;
	hs->hello.gen = be32_to_cpu(t.gen);
	hs->hello.peer_gen = be32_to_cpu(t.peer_gen);
	hs->hello.rx_next = be64_to_cpu(ack) + 1;
	hs->hello.tx_first = be64_to_cpu(t.tx_first);
	hs->credits = be16_to_cpu(t.credits);
	hs->frag_shift = t.frag_shift;
	hs->tos = b[RDS_IB_HS_OFFER_TOS_OFF];
	return rds_ib_hs_check(hs);
}

enum rds_ib_hs_reason rds_ib_hs_decode(const void *buf, size_t len,
				       struct rds_ib_hs *hs)
{
	struct rds_ib_hs_wire w;

	if (rds_ib_hs_is_offer(buf, len))
		return rds_ib_hs_offer_decode(buf, hs);
	if (!buf || len < sizeof(w))
		return RDS_IB_HS_R_SHORT;
	memcpy(&w, buf, sizeof(w));
	if (be32_to_cpu(w.magic) != RDS_IB_HS_MAGIC)
		return RDS_IB_HS_R_MAGIC;
	hs->major = w.major;
	hs->minor = w.minor;
	hs->reason = w.reason;
	/* Fields below may change meaning with the major version. */
	if (w.major != RDS_IB_HS_MAJOR)
		return RDS_IB_HS_R_VERSION;
	if (!rds_ib_hs_flags_ok(w.minor, be16_to_cpu(w.flags)) || w.reserved)
		return RDS_IB_HS_R_FLAGS;
	hs->flags = be16_to_cpu(w.flags);
	hs->hello.gen = be32_to_cpu(w.gen);
	hs->hello.peer_gen = be32_to_cpu(w.peer_gen);
	hs->hello.rx_next = be64_to_cpu(w.rx_next);
	hs->hello.tx_first = be64_to_cpu(w.tx_first);
	hs->credits = be32_to_cpu(w.credits);
	hs->v6 = hs->credits >> 24 == RDS_IB_HS_V6_MARK;
	if (hs->v6)
		hs->credits &= 0x00ffffff;
	hs->frag_shift = w.frag_shift;
	hs->tos = w.tos;
	return rds_ib_hs_check(hs);
}

enum rds_ib_hs_reason rds_ib_hs_negotiate(const struct rds_ib_hs *offer,
					  u8 my_tos, u8 *minor)
{
	u8 mine = RDS_IB_HS_MINOR;

	if (offer->major != RDS_IB_HS_MAJOR)
		return RDS_IB_HS_R_VERSION;
	if (offer->tos != my_tos)
		return RDS_IB_HS_R_TOS;
	*minor = offer->minor < mine ? offer->minor : mine;
	return RDS_IB_HS_OK;
}

u8 rds_ib_hs_peer_minor(u8 minor)
{
	static_assert(RDS_IB_HS_MINOR < RDS_IB_HS_PEER_UNKNOWN);
	return minor < RDS_IB_HS_MINOR ? minor : RDS_IB_HS_MINOR;
}

u16 rds_ib_hs_request_flags(u8 peer_minor, u16 wanted)
{
	if (peer_minor == RDS_IB_HS_PEER_UNKNOWN ||
	    peer_minor >= RDS_IB_HS_MINOR_FLAGS)
		return wanted;
	return 0;
}

u16 rds_ib_hs_accept_flags(const struct rds_ib_hs *offer, u16 wanted)
{
	return offer->minor >= RDS_IB_HS_MINOR_FLAGS ? wanted : 0;
}

u8 rds_ib_hs_refused_minor(const struct rds_ib_hs *rej)
{
	return rds_ib_hs_peer_minor(rej->minor);
}
