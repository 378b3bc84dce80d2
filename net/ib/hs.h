/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The handshake of an IB/RoCE connection: the private data that rides on
 * the rdma_cm connect request (REQ), the accept (REP) and the refusal
 * (REJ).  Pure code, no locks or allocation: compiled into the module and
 * into the user-space unit test tools/testing/unit/hs_test (and, later,
 * the user-space test peer), so the two ends cannot drift.
 *
 * Layout (big-endian, 40 bytes; an IB CM REQ carries at most 56 bytes of
 * rdma_cm private data, and unused bytes arrive as zeros):
 *
 *   0  magic      "RDSi"
 *   4  major      protocol major version: must match exactly
 *   5  minor      highest minor version the sender speaks
 *   6  flags      RDS_IB_HS_F_* (minor 2 and later; any other bit, or a
 *                 flag at a lower minor, is refused)
 *   8  gen        sender's generation (non-zero, new at every module load)
 *  12  peer_gen   generation of the receiver the sender knows (0: none)
 *  16  rx_next    next sequence number the sender will deliver
 *  24  tx_first   oldest sequence number the sender still holds
 *  32  credits    receives the sender grants the receiver at once; over
 *                 IPv6 its top byte is RDS_IB_HS_V6_MARK (below)
 *  36  frag_shift log2 of the data bytes of the sender's receive buffers
 *                 (12..16): the most a frame to it may carry after the
 *                 header (ours: 13).  Messages are fragmented at 4 KiB
 *                 whatever it says; packed frames fill up to it.
 *  37  reserved   0
 *  38  tos        type of service of the connection
 *  39  reason     REJ only: why the connection is refused (RDS_IB_HS_R_*)
 *
 * The IPv6 mark: the kernel's RDS reads byte 32 of an IPv6 request as its
 * major version (mlhs.h), and takes 0 there as 4.0: it would accept our
 * request as one between made-up addresses.  So over IPv6 that byte is
 * RDS_IB_HS_V6_MARK, a version it refuses; the decoder takes the credits
 * from the low 24 bits when the top byte is the mark (IPv4 handshakes,
 * which mainline reads otherwise, never carry it).
 *
 * Version negotiation: the connecting side offers its major.minor; the
 * accepting side refuses another major (with its own version in the REJ)
 * and otherwise answers with min(minor) which both then use.
 *
 * Flags (minor 2): each side's handshake says what it asks of the other
 * for this connection.  RDS_IB_HS_F_GIVEBACK: "give me back the credits
 * you do not use" (credit.h): the other side may then send returns
 * (RDS_IB_FLAG_RETURN, frame.h), and a side that did not ask refuses
 * them.  Builds of minor 1 and before refuse any flag (R_FLAGS) in a
 * request and fail an accept that carries one, so:
 *   - the accepting side sets flags in its accept only when the request
 *     offered minor 2 or later (rds_ib_hs_accept_flags());
 *   - the connecting side sets them in its request toward a peer it
 *     has not seen yet (RDS_IB_HS_PEER_UNKNOWN) or last saw at minor 2
 *     or later (rds_ib_hs_request_flags()).  An old build refuses that
 *     first request for flags with its own minor (1, or 0 before packed
 *     frames) in the REJ; the connecting side takes that minor
 *     (rds_ib_hs_refused_minor()) and the next attempt goes without:
 *     one refused attempt per connection to an old peer per module load.
 *     A new build's refusal says minor 2 whatever its reason (R_FLAGS
 *     also stands for "the handshake acknowledges unsent messages"),
 *     so flags stay on toward it.
 * The kernel's RDS never sees a flag: an offer (below) puts them where it
 * never reads, and a peer seen running it has minor 0 here (never
 * RDS_IB_HS_PEER_UNKNOWN again).
 */
#ifndef _RDS_IB_HS_H
#define _RDS_IB_HS_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <asm/byteorder.h>
#else
#include "kshim.h"
#endif

#include "../seq.h"

#define RDS_IB_HS_MAGIC		0x52445369	/* "RDSi" */
#define RDS_IB_HS_MAJOR		1
/* 1: packed frames (frame.h); 2: handshake flags, give-back (credit.h) */
#define RDS_IB_HS_MINOR		2
#define RDS_IB_HS_MINOR_FLAGS	2	/* the first minor with flags */
#define RDS_IB_HS_F_GIVEBACK	0x0001	/* return unused credits to me */
#define RDS_IB_HS_F_KNOWN	RDS_IB_HS_F_GIVEBACK
/* The minor of a peer never seen (no handshake of its yet): above any
 * minor we keep (rds_ib_hs_peer_minor() caps those at ours).
 */
#define RDS_IB_HS_PEER_UNKNOWN	0xff
#define RDS_IB_HS_MIN_SHIFT	12	/* 4 KiB fragments */
#define RDS_IB_HS_MAX_SHIFT	16	/* 64 KiB fragments */
#define RDS_IB_HS_MAX_CREDITS	65535
#define RDS_IB_HS_V6_MARK	0xff	/* top byte of credits over IPv6 */

struct rds_ib_hs_wire {
	__be32	magic;
	u8	major;
	u8	minor;
	__be16	flags;
	__be32	gen;
	__be32	peer_gen;
	__be64	rx_next;
	__be64	tx_first;
	__be32	credits;
	u8	frag_shift;
	u8	reserved;
	u8	tos;
	u8	reason;
} __packed;

static_assert(sizeof(struct rds_ib_hs_wire) == 40);
static_assert(offsetof(struct rds_ib_hs_wire, rx_next) == 16);
static_assert(offsetof(struct rds_ib_hs_wire, credits) == 32);
static_assert(offsetof(struct rds_ib_hs_wire, reason) == 39);

/* Why a handshake is refused (the REJ's reason byte, and counters). */
enum rds_ib_hs_reason {
	RDS_IB_HS_OK = 0,
	RDS_IB_HS_R_SHORT,		/* fewer bytes than the header */
	RDS_IB_HS_R_MAGIC,		/* not an RDS handshake */
	RDS_IB_HS_R_VERSION,		/* another major version */
	RDS_IB_HS_R_FLAGS,		/* unknown flags or reserved bits */
	RDS_IB_HS_R_GEN,		/* generation 0 */
	RDS_IB_HS_R_FRAG,		/* fragment size out of range */
	RDS_IB_HS_R_CREDITS,		/* absurd credit count */
	RDS_IB_HS_R_TOS,		/* TOS differs from the request */
	RDS_IB_HS_R_BUSY,		/* refused for now: retry later */
	RDS_IB_HS_R_MAINLINE,		/* the kernel's RDS (mlhs.h): never
					 * sent to a peer of ours
					 */
	RDS_IB_HS_R_PEER_LIMIT,		/* the peer has ib_peer_conn_max
					 * connections with us already
					 */
	RDS_IB_HS_R_ACCEPT_LIMIT,	/* the device has ib_accept_max
					 * accepted attempts not up yet:
					 * retry later (a build without
					 * this reason names it "unknown"
					 * and retries, as after any
					 * refusal)
					 */
	RDS_IB_HS_R_MAX,
};

/* A decoded handshake. */
struct rds_ib_hs {
	u8			major;
	u8			minor;
	u16			flags;	/* RDS_IB_HS_F_* */
	u8			frag_shift;
	u32			credits;
	u8			tos;
	u8			reason;
	bool			v6;	/* the credits carry the IPv6 mark */
	struct rds_seq_hello	hello;
};

/* Our handshake in the kernel's RDS layout (Documentation/interop.md,
 * "Our offer"): the request we send, so that a peer running the kernel's
 * RDS (mlhs.h) accepts it too.  Bytes 0..31 are that RDS's IPv4 private
 * data (written by rds_ib_mlhs_encode(): addresses, version 3.1, TOS,
 * ack_seq = rx_next - 1, credit 0), byte 13 (its reserved1, which it
 * never reads) is RDS_IB_HS_OFFER_MARK, and bytes 32..55, which it never
 * reads either, carry the rest of ours:
 *
 *  32  magic      "Rx"
 *  34  major
 *  35  minor
 *  36  flags      the low byte of the flags (all of them fit)
 *  37  frag_shift
 *  38  credits    be16 (RDS_IB_HS_MAX_CREDITS at most)
 *  40  gen
 *  44  peer_gen
 *  48  tx_first
 *
 * A 56-byte request is all an IB CM REQ leaves to rdma_cm's user.
 */
#define RDS_IB_HS_OFFER_LEN	56
#define RDS_IB_HS_OFFER_MARK	0xA5	/* at RDS_IB_HS_OFFER_MARK_OFF */
#define RDS_IB_HS_OFFER_MARK_OFF 13
#define RDS_IB_HS_OFFER_TOS_OFF	12
#define RDS_IB_HS_OFFER_ACK_OFF	16	/* be64: rx_next - 1 */
#define RDS_IB_HS_OFFER_MAGIC	0x5278	/* "Rx" */

struct rds_ib_hs_offer_tail {
	__be16	magic;
	u8	major;
	u8	minor;
	u8	flags;
	u8	frag_shift;
	__be16	credits;
	__be32	gen;
	__be32	peer_gen;
	__be64	tx_first;
} __packed;

static_assert(sizeof(struct rds_ib_hs_offer_tail) ==
	      RDS_IB_HS_OFFER_LEN - 32);

/* Write the marker and bytes 32..55 of an offer of hs into buf, whose
 * first 32 bytes already hold the kernel's RDS layout.
 */
void rds_ib_hs_offer_put(const struct rds_ib_hs *hs, void *buf);

/* Whether len bytes of private data are an offer (marker and magic). */
bool rds_ib_hs_is_offer(const void *buf, size_t len);

/* Encode hs into buf (at least sizeof(struct rds_ib_hs_wire) bytes). */
void rds_ib_hs_encode(const struct rds_ib_hs *hs, void *buf);

/* Decode and validate len bytes of private data, in our layout or as an
 * offer (above).  Returns RDS_IB_HS_OK and fills hs, or the reason to
 * refuse it.  Trailing bytes (zeros, or a newer minor's additions) are
 * ignored.
 */
enum rds_ib_hs_reason rds_ib_hs_decode(const void *buf, size_t len,
				       struct rds_ib_hs *hs);

/* Accepting side: the minor version to use, or a refusal (version, TOS). */
enum rds_ib_hs_reason rds_ib_hs_negotiate(const struct rds_ib_hs *offer,
					  u8 my_tos, u8 *minor);

/* The minor to keep of a peer whose handshake said minor: capped at
 * ours, so that it is never RDS_IB_HS_PEER_UNKNOWN.
 */
u8 rds_ib_hs_peer_minor(u8 minor);

/* Connecting side: the flags of our request (wanted: the ones we would
 * ask for), toward a peer last seen at peer_minor (RDS_IB_HS_PEER_UNKNOWN:
 * never seen; 0: seen running the kernel's RDS; 0 or 1: an old build,
 * which refuses flags).
 */
u16 rds_ib_hs_request_flags(u8 peer_minor, u16 wanted);

/* Accepting side: the flags of our accept of offer (wanted: as above). */
u16 rds_ib_hs_accept_flags(const struct rds_ib_hs *offer, u16 wanted);

/* Connecting side: what to take the peer's minor as after it refused us
 * with rej (decoded): its own, whatever the reason (an old build's says
 * 0 or 1, which turns our flags off).
 */
u8 rds_ib_hs_refused_minor(const struct rds_ib_hs *rej);

const char *rds_ib_hs_reason_name(enum rds_ib_hs_reason reason);

#endif /* _RDS_IB_HS_H */
