/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The connect private data of the kernel's own RDS over IB ("mainline"),
 * and the classification of a received private data as ours, mainline's
 * or unknown (Documentation/interop.md).  Pure code, no locks or
 * allocation: compiled into the module and into the user-space unit test
 * tools/testing/unit/mlhs_test.
 *
 * Layout (big-endian; 32 bytes over IPv4, 56 over IPv6, which is all an
 * IB CM REQ leaves to rdma_cm's user):
 *
 *   v4   v6
 *    0    0  saddr       sender's address (4 or 16 bytes)
 *    4   16  daddr       receiver's address (4 or 16 bytes)
 *    8   32  major       protocol major version
 *    9   33  minor       protocol minor version
 *   10   34  minor_mask  be16: minor versions the sender speaks (bit n:
 *                        minor n); mainline sends 0x0003
 *   12   36  tos         type of service
 *   13   37  reserved1   0
 *   14   38  reserved2   be16, 0 (Oracle's UEK puts a fragment size here)
 *   16   40  ack_seq     be64: last sequence number the sender received
 *   24   48  credit      be32: receives granted (mainline: 0 in practice)
 *   28   52  pad         4 bytes, 0 (the tail padding of mainline's C
 *                        struct, which it sends and requires)
 *
 * Versions: mainline connects offering 3.1 with mask 0x0003.  Accepting,
 * it takes major 4 with (mask & 3) != 0 as 4.(highest bit of mask & 3),
 * exactly 3.1 as 3.1, no private data or major 0 as 4.0, and refuses the
 * rest (a REJ whose 4 bytes are the int 1, in the sender's byte order).
 */
#ifndef _RDS_IB_MLHS_H
#define _RDS_IB_MLHS_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <asm/byteorder.h>
#else
#include "kshim.h"
#endif

#define RDS_IB_MLHS_V4_LEN	32
#define RDS_IB_MLHS_V6_LEN	56
#define RDS_IB_MLHS_MASK	0x0003	/* minors 0 and 1 */
#define RDS_IB_MLHS_PROTO(maj, min)	((u16)((maj) << 8 | (min)))
#define RDS_IB_MLHS_3_1		RDS_IB_MLHS_PROTO(3, 1)
#define RDS_IB_MLHS_4_0		RDS_IB_MLHS_PROTO(4, 0)
#define RDS_IB_MLHS_4_1		RDS_IB_MLHS_PROTO(4, 1)
/* The int mainline's refusal carries (RDS_RDMA_REJ_INCOMPAT). */
#define RDS_IB_MLHS_REJ_INCOMPAT	1

/* The fields both layouts share, after the addresses. */
struct rds_ib_mlhs_cmn {
	u8	major;
	u8	minor;
	__be16	minor_mask;
	u8	tos;
	u8	reserved1;
	__be16	reserved2;
	__be64	ack_seq;
	__be32	credit;
	u8	pad[4];		/* the C struct's tail padding: 0 */
} __packed;

struct rds_ib_mlhs_v4 {
	__be32			saddr;
	__be32			daddr;
	struct rds_ib_mlhs_cmn	cmn;
} __packed;

struct rds_ib_mlhs_v6 {
	u8			saddr[16];
	u8			daddr[16];
	struct rds_ib_mlhs_cmn	cmn;
} __packed;

static_assert(sizeof(struct rds_ib_mlhs_cmn) == 24);
static_assert(sizeof(struct rds_ib_mlhs_v4) == RDS_IB_MLHS_V4_LEN);
static_assert(sizeof(struct rds_ib_mlhs_v6) == RDS_IB_MLHS_V6_LEN);
static_assert(offsetof(struct rds_ib_mlhs_v4, cmn.ack_seq) == 16);
static_assert(offsetof(struct rds_ib_mlhs_v6, cmn.ack_seq) == 40);

/* A decoded mainline private data.  Addresses are 16 bytes in network
 * order; an IPv4 one is IPv4-mapped (::ffff:a.b.c.d), as in
 * struct rds_connection.
 */
struct rds_ib_mlhs {
	bool	v6;
	u8	saddr[16];
	u8	daddr[16];
	u8	major;
	u8	minor;
	u16	minor_mask;
	u8	tos;
	u8	reserved1;
	u16	reserved2;
	u64	ack_seq;
	u32	credit;
};

/* What a received private data is. */
enum rds_ib_pd_kind {
	RDS_IB_PD_UNKNOWN = 0,
	RDS_IB_PD_OURS,		/* our handshake (hs.h), in our layout or as
				 * an offer: its decoder judges it
				 */
	RDS_IB_PD_MAINLINE,	/* the kernel's RDS, a version it speaks */
};

/* Why a private data is not a mainline one we could talk to. */
enum rds_ib_mlhs_reason {
	RDS_IB_MLHS_OK = 0,
	RDS_IB_MLHS_R_EMPTY,	/* no private data at all */
	RDS_IB_MLHS_R_SHORT,	/* shorter than the layout */
	RDS_IB_MLHS_R_NOVER,	/* major 0: no version (mainline: 4.0) */
	RDS_IB_MLHS_R_VERSION,	/* not 3.1, nor 4 with a usable mask */
	RDS_IB_MLHS_R_ADDR,	/* addresses not the connection's */
	RDS_IB_MLHS_R_MAX,
};

/* A classification: the kind, for MAINLINE the decoded fields and the
 * protocol version a mainline accepting side would choose (proto), for
 * UNKNOWN why (reason, and mainline's fields as far as they could be
 * read).
 */
struct rds_ib_pd_class {
	enum rds_ib_pd_kind	kind;
	enum rds_ib_mlhs_reason	reason;
	u16			proto;
	struct rds_ib_mlhs	ml;
};

/* Encode m into buf (room bytes): returns the length written (32 or 56),
 * or 0 if room is too small or an IPv4 layout is asked for addresses that
 * are not IPv4-mapped.  Reserved fields are written as given.
 */
size_t rds_ib_mlhs_encode(const struct rds_ib_mlhs *m, void *buf,
			  size_t room);

/* Decode the layout (v6 or not) from len bytes, without judging the
 * version: RDS_IB_MLHS_R_EMPTY or _SHORT, else OK and m filled.  Bytes
 * past the layout are ignored, as mainline does.
 */
enum rds_ib_mlhs_reason rds_ib_mlhs_decode(const void *buf, size_t len,
					   bool v6, struct rds_ib_mlhs *m);

/* The version an accepting mainline would choose for an offer of major,
 * minor and mask, or 0 where it refuses.  Major 0 is refused here (where
 * mainline would assume 4.0): nothing that runs today sends it.
 */
u16 rds_ib_mlhs_negotiate(u8 major, u8 minor, u16 mask);

/* Classify len bytes of private data received on a v6 (or v4) listener
 * or connection.  local and peer (16 bytes each, IPv4-mapped for v4) are
 * the connection's addresses as rdma_cm saw them, or NULL where unknown;
 * a mainline private data must name them (saddr is the peer).
 * Returns c->kind.
 */
enum rds_ib_pd_kind rds_ib_pd_classify(const void *buf, size_t len, bool v6,
				       const u8 *local, const u8 *peer,
				       struct rds_ib_pd_class *c);

/* Whether a request of ours (hs.h) carrying generation gen is refused by
 * the kernel's RDS.  It reads bytes 8..11 of ours (gen) as its major,
 * minor and mask: with some generations (top byte 0, 3 then 1, or 4 with
 * one of the two low bits) it would accept a request it cannot speak,
 * for a connection between made-up addresses.
 */
bool rds_ib_mlhs_gen_refused(u32 gen);

const char *rds_ib_mlhs_reason_name(enum rds_ib_mlhs_reason reason);

/* The kernel's own request, nothing of ours in it: version 3.1 with mask
 * 0x0003 (what it sends itself), tos, ack_seq, credit 0, reserved and
 * padding 0, from saddr to daddr (16 bytes each, IPv4-mapped unless v6).
 * Our request over IPv6 to a peer that refused ours as it does
 * (rds_ib_ml6_request()).  Returns the length written, 0 as encode does.
 */
size_t rds_ib_mlhs_request(const u8 *saddr, const u8 *daddr, bool v6, u8 tos,
			   u64 ack_seq, void *buf, size_t room);

/* What the private data of a refusal (REJ) of our request says. */
enum rds_ib_rej_kind {
	RDS_IB_REJ_NONE = 0,	/* not the peer's RDS: the CM's own, or
				 * a consumer's with no data or zeros only
				 */
	RDS_IB_REJ_OTHER,	/* the peer's, neither below */
	RDS_IB_REJ_OURS,	/* our handshake with a reason (*reason) */
	RDS_IB_REJ_MAINLINE,	/* the int 1 the kernel's RDS refuses
				 * with, in our byte order
				 */
};

/* Classify a refusal: consumer is whether the REJ was the peer's own
 * (IB_CM_REJ_CONSUMER_DEFINED), buf and len its private data.
 */
enum rds_ib_rej_kind rds_ib_rej_classify(bool consumer, const void *buf,
					 size_t len, u8 *reason);

/* Over IPv6 (Documentation/interop.md), what we send a peer depends on
 * what we remember of it ("it runs the kernel's RDS", per connection):
 * our own marked handshake (hs.h), or the kernel's own request
 * (rds_ib_mlhs_request()).  Over IPv4 always an offer (hs.h).
 */
enum rds_ib_req_kind {
	RDS_IB_REQ_OFFER,	/* IPv4: ours in its layout */
	RDS_IB_REQ_OURS,	/* IPv6: our handshake, marked */
	RDS_IB_REQ_ML,		/* IPv6: its request, nothing of ours */
};

static inline enum rds_ib_req_kind rds_ib_ml6_request(bool v6, bool peer_ml)
{
	if (!v6)
		return RDS_IB_REQ_OFFER;
	return peer_ml ? RDS_IB_REQ_ML : RDS_IB_REQ_OURS;
}

/* What happened to a connection over IPv6, for the memory above. */
enum rds_ib_ml6_event {
	RDS_IB_ML6_REFUSED_ML,	/* our request refused as the kernel's
				 * RDS refuses (RDS_IB_REJ_MAINLINE)
				 */
	RDS_IB_ML6_REFUSED,	/* refused otherwise by the peer's RDS
				 * (a reason of ours, or other data); a
				 * refusal that is not its (RDS_IB_REJ_NONE)
				 * is no event
				 */
	RDS_IB_ML6_ACCEPT_ML,	/* accepted in its layout (our request
				 * was its: the memory was set)
				 */
	RDS_IB_ML6_ACCEPT_OURS,	/* accepted with our handshake */
	RDS_IB_ML6_ACCEPT_BAD,	/* an accept neither could send */
	RDS_IB_ML6_PEER_ML,	/* we accepted its request in its layout */
	RDS_IB_ML6_PEER_OURS,	/* we accepted a request of ours */
	RDS_IB_ML6_UP,		/* an attempt came up, either side's:
				 * a connection exists
				 */
	RDS_IB_ML6_EV_MAX,
};

/* The refusals with the int 1 of the kernel's own request in a row that
 * the memory outlasts: the 32nd clears it (rds_ib_ml6_remember()).
 */
#define RDS_IB_ML6_RACED_MAX	32

/* The memory after ev, given it before (was) and what our request was
 * (sent; for the two PEER events and UP, what our last one was); *raced
 * counts the refusals with the int 1 of the kernel's request in a row.
 * Events are the peer's answers and requests, and an attempt coming up
 * (cm.c, mlcm.c): an attempt that fails without an answer (its timeout,
 * UNREACHABLE, CONNECT_ERROR, an address or route error) or that the IB
 * CM refuses (RDS_IB_REJ_NONE) neither counts nor resets, so the race
 * refusals of episodes with no connection between them add up (at most
 * one more refusal of our handshake per 32):
 * - its refusal of our handshake: it runs the kernel's RDS (the next
 *   request is its own); nothing else sets the memory;
 * - a refusal with the int 1 of its own request: the kernel's RDS makes
 *   it while its own attempt toward us is in flight (its connect race,
 *   which ends when its request reaches us and that connection comes up:
 *   PEER_ML, then UP); the memory stays, until the
 *   RDS_IB_ML6_RACED_MAX-th in a row: a module of ours older than the
 *   step that accepts the kernel's requests refuses them so too, and
 *   would be reached only when it connects to us (its request is ours:
 *   PEER_OURS).  At the default backoff (1 s at most) 32 attempts it
 *   paces take 11 s or more (a connection with an empty send queue
 *   reconnects at once on the next send: rds_ib_conn_connect() has no
 *   delay); the kernel's request goes again every 5 s or so (the IB
 *   CM's timeout) while its attempt lasts.  The cost: such a module is
 *   reached at our 33rd attempt; a race as long as 32 of our attempts
 *   costs one more refusal of our handshake;
 * - any other refusal of its own request, or an accept that is not in
 *   its layout: it does not run it;
 * - a request or accept of ours: it does not;
 * - a request in its layout that we accept, or an accept in it, leaves
 *   the memory as it was: anyone can send such a request for the address
 *   of a peer of ours, and the memory is set before we send one;
 * - the count is set to 0 by an attempt that comes up (UP: the race is
 *   over when a connection exists), and by every answer to our request
 *   and every request of ours that we accept; not by a request in its
 *   layout (PEER_ML), which anyone can send: were it to reset the count,
 *   one forged request per fewer than RDS_IB_ML6_RACED_MAX of our
 *   attempts would keep us on its layout toward an old module of ours.
 *   A forger that completes the connection it asked for (its RTU)
 *   brings it up, and resets the count, but then holds the connection
 *   in the peer's name, which no rule of ours prevents.  An answer comes
 *   to our request only (the IB CM matches it to our request's id); a
 *   request of ours that we accept clears the memory, so the count no
 *   longer matters (a forged one costs one more refusal of our
 *   handshake toward the kernel's RDS, once per forged request);
 * - anything else after our handshake leaves the memory as it was, and
 *   UP leaves it as it was after anything.
 */
bool rds_ib_ml6_remember(bool was, enum rds_ib_req_kind sent,
			 enum rds_ib_ml6_event ev, u8 *raced);

/* What the acknowledgment a handshake carries frees of our messages. */
enum rds_ib_hs_ack {
	RDS_IB_HS_ACK_NONE,	/* nothing: they stay, and are sent again */
	RDS_IB_HS_ACK_FREE,	/* every message up to ack */
	RDS_IB_HS_ACK_BAD,	/* it claims a message never posted: the
				 * attempt ends
				 */
};

/* The rule (Documentation/interop.md, "Acknowledgments in a
 * handshake"), for the private data of a request or an accept: kind is
 * whose it is; ack what it says the peer took (ours: rx_next - 1; the
 * kernel's: ack_seq); knows_us, for ours, whether it names this
 * generation of us; posted the last sequence number we posted.
 * - Our handshake that names this generation of us: up to ack, unless
 *   ack is past posted (BAD).  One that does not speaks of another
 *   generation: nothing.
 * - The kernel's layout: nothing, whatever ack says.  The kernel's RDS
 *   sends 0 (its ACK state is new at every connection, before it sends a
 *   request or an accept), and anyone on the fabric can send a request
 *   in its layout for the address of a peer of ours: an ack_seq there
 *   would free messages the peer never took.  What it did take comes
 *   again flagged RETRANSMITTED, and it drops that by sequence.
 * - Anything else: nothing.
 */
enum rds_ib_hs_ack rds_ib_hs_acked(enum rds_ib_pd_kind kind, bool knows_us,
				   u64 ack, u64 posted);

#endif /* _RDS_IB_MLHS_H */
