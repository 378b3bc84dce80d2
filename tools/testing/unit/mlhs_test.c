// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/ib/mlhs.c: the kernel's own RDS connect private data
 * (IPv4 and IPv6 layouts) and the classification of a received private
 * data as ours, mainline's or unknown.
 *
 * The code is checked against a deliberately naive reference written here
 * from the layout in mlhs.h (byte offsets, big-endian by hand): named
 * cases, every length 0..64 of both layouts, every value of every byte,
 * random handshakes and random garbage (printed seed), every version
 * offer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "../../../net/ib/hs.h"
#include "../../../net/ib/mlhs.h"

static u64 get_be(const unsigned char *p, int n)
{
	u64 v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

static void put_be(unsigned char *p, int n, u64 v)
{
	while (n--) {
		p[n] = v & 0xff;
		v >>= 8;
	}
}

/* The reference version rule (mlhs.h's comment, major 0 refused). */
static u16 ref_negotiate(unsigned int major, unsigned int minor,
			 unsigned int mask)
{
	if (major == 4 && (mask & 2))
		return 0x0401;
	if (major == 4 && (mask & 1))
		return 0x0400;
	if (major == 3 && minor == 1)
		return 0x0301;
	return 0;
}

static void mapped(unsigned char *a16, const unsigned char *v4)
{
	memset(a16, 0, 10);
	a16[10] = a16[11] = 0xff;
	memcpy(a16 + 12, v4, 4);
}

/* The sender's and receiver's addresses of a layout, 16 bytes each. */
static void ref_addrs(const unsigned char *b, bool v6, unsigned char *s,
		      unsigned char *d)
{
	if (v6) {
		memcpy(s, b, 16);
		memcpy(d, b + 16, 16);
	} else {
		mapped(s, b);
		mapped(d, b + 4);
	}
}

/* The reference classifier: kind, and reason when not ours. */
static enum rds_ib_pd_kind ref_classify(const unsigned char *b, size_t len,
					bool v6, const unsigned char *local,
					const unsigned char *peer,
					enum rds_ib_mlhs_reason *reason,
					u16 *proto)
{
	size_t need = v6 ? 56 : 32, alen = v6 ? 16 : 4;
	const unsigned char *c = b + 2 * alen;	/* the common part */
	unsigned char s[16], d[16];
	enum rds_ib_mlhs_reason r;
	bool magic = len >= 4 && get_be(b, 4) == 0x52445369;
	bool offer;

	*proto = 0;
	if (len == 0) {
		r = RDS_IB_MLHS_R_EMPTY;
	} else if (len < need) {
		r = RDS_IB_MLHS_R_SHORT;
	} else {
		ref_addrs(b, v6, s, d);
		*proto = ref_negotiate(c[0], c[1], get_be(c + 2, 2));
		if (!c[0])
			r = RDS_IB_MLHS_R_NOVER;
		else if (!*proto)
			r = RDS_IB_MLHS_R_VERSION;
		else if ((local && memcmp(d, local, 16)) ||
			 (peer && memcmp(s, peer, 16)))
			r = RDS_IB_MLHS_R_ADDR;
		else
			r = RDS_IB_MLHS_OK;
	}
	/* our offer (hs.h): IPv4 layout, marker at 13, "Rx" at 32 */
	offer = !v6 && len >= 56 && b[13] == 0xA5 &&
		get_be(b + 32, 2) == 0x5278;
	if (offer || (magic && !(r == RDS_IB_MLHS_OK && local && peer))) {
		*reason = RDS_IB_MLHS_OK;
		*proto = 0;
		return RDS_IB_PD_OURS;
	}
	*reason = r;
	if (r != RDS_IB_MLHS_OK)
		*proto = r == RDS_IB_MLHS_R_ADDR ? *proto : 0;
	return r == RDS_IB_MLHS_OK ? RDS_IB_PD_MAINLINE : RDS_IB_PD_UNKNOWN;
}

/* Classify with the module's code and the reference; they must agree. */
static enum rds_ib_pd_kind both(const unsigned char *b, size_t len, bool v6,
				const unsigned char *local,
				const unsigned char *peer,
				struct rds_ib_pd_class *c)
{
	enum rds_ib_mlhs_reason rr;
	enum rds_ib_pd_kind k, rk;
	u16 rp;

	k = rds_ib_pd_classify(b, len, v6, local, peer, c);
	rk = ref_classify(b, len, v6, local, peer, &rr, &rp);
	EXPECT(k == c->kind && k == rk && c->reason == rr &&
	       (k != RDS_IB_PD_MAINLINE || c->proto == rp),
	       "len %zu v6 %d: kind %d/%d (ref %d) reason %d (ref %d) proto %x (ref %x)",
	       len, v6, k, c->kind, rk, c->reason, rr, c->proto, rp);
	return k;
}

/* The fields decode must produce from a valid layout. */
static void ref_fields_match(const unsigned char *b, bool v6,
			     const struct rds_ib_mlhs *m)
{
	size_t alen = v6 ? 16 : 4;
	const unsigned char *c = b + 2 * alen;
	unsigned char s[16], d[16];

	ref_addrs(b, v6, s, d);
	EXPECT(m->v6 == v6, "v6");
	EXPECT(!memcmp(m->saddr, s, 16) && !memcmp(m->daddr, d, 16),
	       "addresses");
	EXPECT(m->major == c[0] && m->minor == c[1], "version");
	EXPECT(m->minor_mask == get_be(c + 2, 2), "minor_mask");
	EXPECT(m->tos == c[4] && m->reserved1 == c[5], "tos, reserved1");
	EXPECT(m->reserved2 == get_be(c + 6, 2), "reserved2");
	EXPECT(m->ack_seq == get_be(c + 8, 8), "ack_seq");
	EXPECT(m->credit == get_be(c + 16, 4), "credit");
}

static const unsigned char A1[4] = { 10, 0, 0, 1 }, A2[4] = { 10, 0, 0, 2 };
static unsigned char L4[16], P4[16], L6[16], P6[16];

/* A valid mainline offer from P to L (what mainline's active side sends). */
static void offer(struct rds_ib_mlhs *m, bool v6)
{
	memset(m, 0, sizeof(*m));
	m->v6 = v6;
	memcpy(m->saddr, v6 ? P6 : P4, 16);
	memcpy(m->daddr, v6 ? L6 : L4, 16);
	m->major = 3;
	m->minor = 1;
	m->minor_mask = RDS_IB_MLHS_MASK;
	m->ack_seq = 0;
}

static void random_mlhs(struct rds_ib_mlhs *m, bool v6)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->v6 = v6;
	for (i = 0; i < 16; i++) {
		m->saddr[i] = rnd();
		m->daddr[i] = rnd();
	}
	if (!v6) {
		memcpy(m->saddr, L4, 12);
		memcpy(m->daddr, L4, 12);
	}
	m->major = rnd();
	m->minor = rnd();
	m->minor_mask = rnd();
	m->tos = rnd();
	m->reserved1 = rnd();
	m->reserved2 = rnd();
	m->ack_seq = rnd();
	m->credit = rnd();
}

/* Named cases: what each private data is, and why. */
struct pd_case {
	const char *name;
	bool v6;
	int len;		/* -1: the layout's own */
	int major, minor, mask;	/* -1: the valid offer's */
	int what;		/* 0 none, 1 wrong daddr, 2 wrong saddr,
				 * 3 our handshake, 4 no addresses known,
				 * 5 saddr "RDSi", 6 as 5 with no peer known,
				 * 7 our offer (hs.h) on the valid layout
				 */
	enum rds_ib_pd_kind kind;
	enum rds_ib_mlhs_reason reason;
	u16 proto;
};

static const struct pd_case cases[] = {
	{ "v4 offer 3.1 mask 3", 0, -1, -1, -1, -1, 0, RDS_IB_PD_MAINLINE, 0, 0x0301 },
	{ "v6 offer 3.1 mask 3", 1, -1, -1, -1, -1, 0, RDS_IB_PD_MAINLINE, 0, 0x0301 },
	{ "v4 offer 3.1 mask 0", 0, -1, 3, 1, 0, 0, RDS_IB_PD_MAINLINE, 0, 0x0301 },
	{ "v4 offer 4.1 mask 3", 0, -1, 4, 1, 3, 0, RDS_IB_PD_MAINLINE, 0, 0x0401 },
	{ "v6 offer 4.0 mask 1", 1, -1, 4, 0, 1, 0, RDS_IB_PD_MAINLINE, 0, 0x0400 },
	{ "v4 offer 4.9 mask 2", 0, -1, 4, 9, 2, 0, RDS_IB_PD_MAINLINE, 0, 0x0401 },
	{ "v4 offer 4.1 mask 0x8000", 0, -1, 4, 1, 0x8000, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_VERSION, 0 },
	{ "v4 offer 4.1 mask 4", 0, -1, 4, 1, 4, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_VERSION, 0 },
	{ "v4 offer 4.1 mask 0", 0, -1, 4, 1, 0, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_VERSION, 0 },
	{ "v4 offer 3.0", 0, -1, 3, 0, 3, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_VERSION, 0 },
	{ "v6 offer 3.2", 1, -1, 3, 2, 3, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_VERSION, 0 },
	{ "v4 offer 5.1", 0, -1, 5, 1, 3, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_VERSION, 0 },
	{ "v4 major 0", 0, -1, 0, 0, 0, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_NOVER, 0 },
	{ "v6 major 0 mask 3", 1, -1, 0, 1, 3, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_NOVER, 0 },
	{ "v4 empty", 0, 0, -1, -1, -1, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_EMPTY, 0 },
	{ "v6 empty", 1, 0, -1, -1, -1, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_EMPTY, 0 },
	{ "v4 31 bytes", 0, 31, -1, -1, -1, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_SHORT, 0 },
	{ "v6 55 bytes", 1, 55, -1, -1, -1, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_SHORT, 0 },
	{ "v6 layout 32 bytes (a v4 offer)", 1, 32, -1, -1, -1, 0, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_SHORT, 0 },
	{ "v4 33 bytes", 0, 33, -1, -1, -1, 0, RDS_IB_PD_MAINLINE, 0, 0x0301 },
	{ "v4 daddr not ours", 0, -1, -1, -1, -1, 1, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_ADDR, 0x0301 },
	{ "v6 saddr not the peer", 1, -1, -1, -1, -1, 2, RDS_IB_PD_UNKNOWN, RDS_IB_MLHS_R_ADDR, 0x0301 },
	{ "v4 addresses unknown", 0, -1, -1, -1, -1, 4, RDS_IB_PD_MAINLINE, 0, 0x0301 },
	{ "v4 ours", 0, 40, -1, -1, -1, 3, RDS_IB_PD_OURS, 0, 0 },
	{ "v6 ours", 1, 56, -1, -1, -1, 3, RDS_IB_PD_OURS, 0, 0 },
	{ "v4 ours, 8 bytes", 0, 8, -1, -1, -1, 3, RDS_IB_PD_OURS, 0, 0 },
	{ "v4 mainline from 82.68.83.105", 0, -1, -1, -1, -1, 5, RDS_IB_PD_MAINLINE, 0, 0x0301 },
	{ "v4 same, peer unknown: ours", 0, -1, -1, -1, -1, 6, RDS_IB_PD_OURS, 0, 0 },
	{ "v4 our offer (marker, Rx)", 0, 56, -1, -1, -1, 7, RDS_IB_PD_OURS, 0, 0 },
	{ "v4 our offer cut at 55", 0, 55, -1, -1, -1, 7, RDS_IB_PD_MAINLINE, 0, 0x0301 },
};

static void run_case(const struct pd_case *t)
{
	unsigned char buf[64], peer[16];
	const unsigned char *lp, *pp;
	struct rds_ib_pd_class c;
	struct rds_ib_mlhs m;
	size_t len;

	memset(buf, 0, sizeof(buf));
	offer(&m, t->v6);
	if (t->major >= 0) {
		m.major = t->major;
		m.minor = t->minor;
		m.minor_mask = t->mask;
	}
	lp = t->v6 ? L6 : L4;
	pp = t->v6 ? P6 : P4;
	if (t->what == 1)
		m.daddr[15] ^= 1;
	if (t->what == 2)
		m.saddr[0] ^= 0x80;
	if (t->what == 4)
		lp = pp = NULL;
	if (t->what == 5 || t->what == 6) {
		memcpy(peer, P4, 12);
		put_be(peer + 12, 4, 0x52445369);
		memcpy(m.saddr, peer, 16);
		pp = t->what == 5 ? peer : NULL;
	}
	len = rds_ib_mlhs_encode(&m, buf, sizeof(buf));
	EXPECT(len == (t->v6 ? 56u : 32u), "%s: encoded %zu", t->name, len);
	if (t->what == 3) {
		struct rds_ib_hs hs = {
			.major = RDS_IB_HS_MAJOR, .minor = RDS_IB_HS_MINOR,
			.frag_shift = 13, .hello.gen = 0x04000003,
		};

		memset(buf, 0, sizeof(buf));
		rds_ib_hs_encode(&hs, buf);
	}
	if (t->what == 7) {
		struct rds_ib_hs hs = {
			.major = RDS_IB_HS_MAJOR, .minor = RDS_IB_HS_MINOR,
			.frag_shift = 13, .hello.gen = 0x04000003,
		};

		rds_ib_hs_offer_put(&hs, buf);
	}
	if (t->len >= 0)
		len = t->len;
	both(buf, len, t->v6, lp, pp, &c);
	EXPECT(c.kind == t->kind && c.reason == t->reason &&
	       (t->kind != RDS_IB_PD_MAINLINE || c.proto == t->proto),
	       "%s: kind %d reason %s proto %x", t->name, c.kind,
	       rds_ib_mlhs_reason_name(c.reason), c.proto);
	if (c.kind == RDS_IB_PD_MAINLINE)
		ref_fields_match(buf, t->v6, &c.ml);
}

/* Whether mainline's accepting side takes these bytes (its rule as
 * mlhs.h states it, major 0 and no data included): for the hazard count.
 */
static bool mainline_takes(const unsigned char *b, size_t len, bool v6)
{
	const unsigned char *c = b + (v6 ? 32 : 8);

	if (!len || len < (v6 ? 56u : 32u) || !c[0])
		return true;	/* "4.0" */
	return ref_negotiate(c[0], c[1], get_be(c + 2, 2)) != 0;
}

/* --- Over IPv6 toward the kernel's RDS (interop.md) ------------------ */

/* The kernel's own request, by hand from the layout: 3.1, mask 3, the TOS
 * and ack_seq given, everything else 0.
 */
static void ref_request(unsigned char *ref, const unsigned char *s,
			const unsigned char *d, bool v6, unsigned int tos,
			u64 ack)
{
	unsigned char *c = ref + (v6 ? 32 : 8);

	memset(ref, 0, 56);
	memcpy(ref, v6 ? s : s + 12, v6 ? 16 : 4);
	memcpy(ref + (v6 ? 16 : 4), v6 ? d : d + 12, v6 ? 16 : 4);
	c[0] = 3;
	c[1] = 1;
	put_be(c + 2, 2, 3);
	c[4] = tos;
	put_be(c + 8, 8, ack);
}

/* The refusal rule, by hand: the peer's own (consumer) REJ with a byte
 * that is not zero; our handshake (magic, our major, a reason at 39)
 * wins; else the int 1 in this host's byte order.
 */
static enum rds_ib_rej_kind ref_rej(bool consumer, const unsigned char *b,
				    size_t len, u8 *reason)
{
	static const unsigned char one_le[4] = { 1, 0, 0, 0 };
	static const unsigned char one_be[4] = { 0, 0, 0, 1 };
	const unsigned int probe = 1;
	bool le = *(const unsigned char *)&probe == 1;
	struct rds_ib_hs hs;
	size_t i;
	bool zeros = true;

	*reason = 0;
	for (i = 0; b && i < len; i++)
		zeros &= !b[i];
	if (!consumer || !b || zeros)
		return RDS_IB_REJ_NONE;
	if (len >= 40 && get_be(b, 4) == 0x52445369 && b[39] &&
	    rds_ib_hs_decode(b, len, &hs) == RDS_IB_HS_OK) {
		*reason = b[39];
		return RDS_IB_REJ_OURS;
	}
	if (len >= 4 && !memcmp(b, le ? one_le : one_be, 4))
		return RDS_IB_REJ_MAINLINE;
	return RDS_IB_REJ_OTHER;
}

/* The memory rule of mlhs.h as a table: [sent][event] -> the memory
 * after, from was = 0 and was = 1 ('w': as it was), with fewer than
 * RDS_IB_ML6_RACED_MAX - 1 refusals in a row before (ref_remember()
 * adds the count).
 */
static const char ref_mem[3][RDS_IB_ML6_EV_MAX] = {
	/*       REF_ML REF  ACC_ML ACC_OURS ACC_BAD PEER_ML PEER_OURS UP */
	[RDS_IB_REQ_OFFER] = { 'w', 'w', 'w', 0, 'w', 'w', 0, 'w' },
	[RDS_IB_REQ_OURS]  = { 1,   'w', 'w', 0, 'w', 'w', 0, 'w' },
	[RDS_IB_REQ_ML]    = { 'w', 0,   'w', 0, 0,   'w', 0, 'w' },
};

/* The table and the count: the int 1 refusing the kernel's request adds
 * one, and the 32nd in a row clears the memory and the count; a request
 * in its layout that we accept (PEER_ML, anyone's) leaves the count; every
 * other event, an attempt coming up (UP) included, sets it to 0.
 */
static bool ref_remember(unsigned int k, unsigned int e, unsigned int w,
			 unsigned int raced, unsigned int *raced_after)
{
	if (k == RDS_IB_REQ_ML && e == RDS_IB_ML6_REFUSED_ML) {
		if (raced + 1 >= 32) {
			*raced_after = 0;
			return false;
		}
		*raced_after = raced + 1;
		return w;
	}
	*raced_after = e == RDS_IB_ML6_PEER_ML ? raced : 0;
	return ref_mem[k][e] == 'w' ? w : (unsigned int)ref_mem[k][e];
}

/* A peer over IPv6, for the scenarios: how it answers each request. */
enum peer_kind {
	PEER_MAINLINE,		/* refuses ours (int 1), accepts its own */
	PEER_OLD,		/* ours before this step: accepts ours,
				 * refuses the kernel's (int 1)
				 */
	PEER_NEW,		/* ours now: accepts both, each in its own */
	PEER_RACING,		/* the kernel's RDS whose own attempt is in
				 * flight: refuses everything (int 1)
				 */
	PEER_MAX,
};

typedef bool (*remember_fn)(bool was, enum rds_ib_req_kind sent,
			    enum rds_ib_ml6_event ev, u8 *raced);

/* What one side remembers of a peer: the memory and its count. */
struct mem {
	bool ml;
	u8 raced;
};

static enum rds_ib_req_kind mem_request(const struct mem *m)
{
	return rds_ib_ml6_request(true, m->ml);
}

static void mem_learn(remember_fn fn, struct mem *m, enum rds_ib_req_kind k,
		      enum rds_ib_ml6_event ev)
{
	m->ml = fn(m->ml, k, ev, &m->raced);
}

/* What peer does with a request of kind k: an event of ours. */
static enum rds_ib_ml6_event peer_answer(enum peer_kind peer,
					 enum rds_ib_req_kind k)
{
	switch (peer) {
	case PEER_MAINLINE:
		return k == RDS_IB_REQ_ML ? RDS_IB_ML6_ACCEPT_ML :
					    RDS_IB_ML6_REFUSED_ML;
	case PEER_OLD:
		return k == RDS_IB_REQ_ML ? RDS_IB_ML6_REFUSED_ML :
					    RDS_IB_ML6_ACCEPT_OURS;
	case PEER_NEW:
		return k == RDS_IB_REQ_ML ? RDS_IB_ML6_ACCEPT_ML :
					    RDS_IB_ML6_ACCEPT_OURS;
	default:
		return RDS_IB_ML6_REFUSED_ML;
	}
}

/* What a run of attempts gave. */
struct run {
	unsigned int n;		/* the attempt accepted, 0: none */
	unsigned int refused;
	unsigned int sent;	/* bit per kind sent */
	unsigned int ours;	/* our handshakes sent */
};

#define ATTEMPTS_MAX	(3 * RDS_IB_ML6_RACED_MAX)

/* Connect to peer from memory m with rule fn, the first race attempts
 * refused as in the kernel's connect race (PEER_RACING), and after every
 * forge refused attempts (0: never) a forged request in the kernel's
 * layout that we accept and that never comes up: up to ATTEMPTS_MAX
 * attempts.  An accepted attempt comes up.
 */
static struct run connect_forged(remember_fn fn, enum peer_kind peer,
				 struct mem *m, unsigned int race,
				 unsigned int forge)
{
	struct run r = { 0 };
	unsigned int n;

	for (n = 1; n <= ATTEMPTS_MAX; n++) {
		enum rds_ib_req_kind k = mem_request(m);
		enum rds_ib_ml6_event ev = peer_answer(n <= race ? PEER_RACING :
						       peer, k);

		r.sent |= 1u << k;
		r.ours += k == RDS_IB_REQ_OURS;
		mem_learn(fn, m, k, ev);
		if (ev == RDS_IB_ML6_ACCEPT_ML || ev == RDS_IB_ML6_ACCEPT_OURS) {
			mem_learn(fn, m, k, RDS_IB_ML6_UP);
			r.n = n;
			return r;
		}
		r.refused++;
		if (forge && !(n % forge))
			mem_learn(fn, m, mem_request(m), RDS_IB_ML6_PEER_ML);
	}
	return r;
}

static struct run connect_peer(remember_fn fn, enum peer_kind peer,
			       struct mem *m, unsigned int race)
{
	return connect_forged(fn, peer, m, race, 0);
}

/* The scenario checks made since the last reset (each SCEN). */
static unsigned int scen_checks;

/* A broken expectation of a scenario: counted in bad, said if verbose. */
#define SCEN(cond, ...) do {						\
	scen_checks++;							\
	if (!(cond)) {							\
		bad++;							\
		if (verbose)						\
			printf("# FAIL scenario: " __VA_ARGS__);	\
	}								\
} while (0)

/* Two modules of ours over IPv6, A and B, each with its memory of the
 * other (ma, mb): the initiator sends what its memory picks, the other
 * accepts it in its protocol (PEER_NEW), the connection comes up on both
 * and both apply fn.  Returns whether the connection is in our protocol.
 */
static bool pair_connect(remember_fn fn, struct mem *mi, struct mem *ma)
{
	enum rds_ib_req_kind k = mem_request(mi);
	bool ml = k == RDS_IB_REQ_ML;

	mem_learn(fn, ma, mem_request(ma),
		  ml ? RDS_IB_ML6_PEER_ML : RDS_IB_ML6_PEER_OURS);
	mem_learn(fn, mi, k, ml ? RDS_IB_ML6_ACCEPT_ML :
				  RDS_IB_ML6_ACCEPT_OURS);
	mem_learn(fn, ma, mem_request(ma), RDS_IB_ML6_UP);
	mem_learn(fn, mi, mem_request(mi), RDS_IB_ML6_UP);
	return !ml;
}

static unsigned int pair_scenarios(remember_fn fn, bool verbose)
{
	struct mem ma, mb;
	unsigned int bad = 0, i;
	bool ours;

	/* A forged request in the kernel's layout to B, for A's address,
	 * while A and B talk ours: the next connection, either way, is ours.
	 */
	for (i = 0; i < 2; i++) {
		ma = (struct mem){ 0 };
		mb = (struct mem){ 0 };
		ours = pair_connect(fn, &ma, &mb);
		mem_learn(fn, &mb, mem_request(&mb), RDS_IB_ML6_PEER_ML);
		ours = ours && (i ? pair_connect(fn, &ma, &mb) :
				    pair_connect(fn, &mb, &ma));
		ours = ours && pair_connect(fn, &ma, &mb) &&
		       pair_connect(fn, &mb, &ma);
		SCEN(ours && !ma.ml && !mb.ml,
		     "a forged request to B, then %s connects: ours %u, memories %u %u\n",
		     i ? "A" : "B", ours, ma.ml, mb.ml);
	}
	/* A new peer of ours, B, on an address A remembers as the kernel's
	 * RDS: A's request is its, B takes it in that protocol; within two
	 * connections (B's next) the pair is in ours, and stays so.
	 */
	ma = (struct mem){ .ml = true };
	mb = (struct mem){ 0 };
	pair_connect(fn, &ma, &mb);
	ours = pair_connect(fn, &mb, &ma);
	ours = ours && pair_connect(fn, &ma, &mb);
	SCEN(ours && !ma.ml && !mb.ml,
	     "a new peer after the kernel's RDS: ours %u, memories %u %u\n",
	     ours, ma.ml, mb.ml);
	return bad;
}

/* The kernel's connect race after a link cut, from memory start: our
 * requests refused with the int 1 (race of them), then its own request
 * accepted (PEER_ML) and its connection up (UP).  Our handshake goes once per
 * RDS_IB_ML6_RACED_MAX + 1 refusals from memory 0 (the first refusal),
 * once per that many after the first RDS_IB_ML6_RACED_MAX from 1; the
 * memory outlives a race shorter than RDS_IB_ML6_RACED_MAX.
 */
static unsigned int race_scenarios(remember_fn fn, bool verbose)
{
	const unsigned int max = RDS_IB_ML6_RACED_MAX;
	unsigned int bad = 0, race, start, cut;
	struct run r;
	struct mem m;

	for (start = 0; start < 2; start++) {
		for (race = 1; race < ATTEMPTS_MAX; race++) {
			m = (struct mem){ .ml = start };
			r = (struct run){ 0 };
			for (cut = 0; cut < race; cut++) {
				enum rds_ib_req_kind k = mem_request(&m);

				r.ours += k == RDS_IB_REQ_OURS;
				mem_learn(fn, &m, k, RDS_IB_ML6_REFUSED_ML);
			}
			mem_learn(fn, &m, mem_request(&m), RDS_IB_ML6_PEER_ML);
			mem_learn(fn, &m, mem_request(&m), RDS_IB_ML6_UP);
			SCEN(r.ours == (race + (start ? 0 : max)) / (max + 1),
			     "a race of %u from %u: %u handshakes\n", race,
			     start, r.ours);
			if (race < max)
				SCEN(m.ml && !m.raced,
				     "a race of %u from %u: memory %u count %u\n",
				     race, start, m.ml, m.raced);
		}
	}
	/* Races one after the other, each one short of the bound, each
	 * ended by its request accepted and its connection up: no handshake
	 * of ours, remembered.
	 */
	m = (struct mem){ .ml = true };
	r = (struct run){ 0 };
	for (cut = 0; cut < 8; cut++) {
		for (race = 0; race < max - 1; race++) {
			enum rds_ib_req_kind k = mem_request(&m);

			r.ours += k == RDS_IB_REQ_OURS;
			mem_learn(fn, &m, k, RDS_IB_ML6_REFUSED_ML);
		}
		mem_learn(fn, &m, mem_request(&m), RDS_IB_ML6_PEER_ML);
		mem_learn(fn, &m, mem_request(&m), RDS_IB_ML6_UP);
	}
	SCEN(!r.ours && m.ml, "8 races: %u handshakes, memory %u\n", r.ours,
	     m.ml);
	return bad;
}

/* Requests in the kernel's layout forged for the address of a peer we
 * remember as the kernel's RDS, each accepted and never up: they reset
 * nothing.  31 race refusals, a forged request, one more refusal: the
 * 32nd in a row clears the memory.  An old module of ours on that
 * address, a forged request after every 1 to 32 of our refused attempts:
 * reached at our 33rd attempt all the same, with one handshake of ours.
 */
static unsigned int forge_scenarios(remember_fn fn, bool verbose)
{
	const unsigned int max = RDS_IB_ML6_RACED_MAX;
	unsigned int bad = 0, n, forge;
	struct run r;
	struct mem m;

	m = (struct mem){ .ml = true };
	for (n = 0; n < max - 1; n++)
		mem_learn(fn, &m, mem_request(&m), RDS_IB_ML6_REFUSED_ML);
	mem_learn(fn, &m, mem_request(&m), RDS_IB_ML6_PEER_ML);
	SCEN(m.ml && m.raced == max - 1,
	     "31 refusals and a forged request: memory %u count %u\n", m.ml,
	     m.raced);
	mem_learn(fn, &m, mem_request(&m), RDS_IB_ML6_REFUSED_ML);
	SCEN(!m.ml && !m.raced,
	     "31 refusals, a forged request, one more: memory %u count %u\n",
	     m.ml, m.raced);
	for (forge = 1; forge <= max; forge++) {
		m = (struct mem){ .ml = true };
		r = connect_forged(fn, PEER_OLD, &m, 0, forge);
		SCEN(r.n == max + 1 && r.ours == 1 && !m.ml,
		     "an old peer, a forged request per %u: %u attempts, %u handshakes, memory %u\n",
		     forge, r.n, r.ours, m.ml);
	}
	return bad;
}

/* The scenarios' verdict on a rule: the number of broken expectations. */
static unsigned int scenarios(remember_fn fn, bool verbose)
{
	/* the refused attempts to reach each peer, from memory 0 and 1 */
	static const unsigned int refusals[2][PEER_RACING] = {
		[0] = { [PEER_MAINLINE] = 1 },
		[1] = { [PEER_OLD] = RDS_IB_ML6_RACED_MAX },
	};
	unsigned int bad = 0, start, p;
	struct run r;
	struct mem m;

	for (start = 0; start < 2; start++) {
		for (p = 0; p < PEER_RACING; p++) {
			m = (struct mem){ .ml = start };
			r = connect_peer(fn, p, &m, 0);
			SCEN(r.n && r.refused == refusals[start][p],
			     "peer %u from %u: %u attempts, %u refused\n", p,
			     start, r.n, r.refused);
			/* and then remembered: the next goes at once */
			r = connect_peer(fn, p, &m, 0);
			SCEN(r.n == 1, "peer %u again: %u attempts\n", p, r.n);
			if (start)
				continue;
			/* a first contact to one of ours sends nothing new */
			m = (struct mem){ 0 };
			r = connect_peer(fn, p, &m, 0);
			if (p != PEER_MAINLINE)
				SCEN(r.sent == 1u << RDS_IB_REQ_OURS && r.n == 1,
				     "peer %u fresh: sent %x in %u\n", p,
				     r.sent, r.n);
			else
				SCEN(r.n == 2 && r.refused == 1,
				     "the kernel's RDS fresh: %u attempts, %u refused\n",
				     r.n, r.refused);
		}
	}
	/* An old peer of ours replacing the kernel's RDS on the same
	 * address: our 33rd attempt is our handshake, which it accepts; or
	 * at once its own request (ours), which we accept.
	 */
	m = (struct mem){ .ml = true };
	r = connect_peer(fn, PEER_OLD, &m, 0);
	SCEN(r.n == RDS_IB_ML6_RACED_MAX + 1 && !m.ml && r.ours == 1,
	     "an old peer after the kernel's RDS: %u, memory %u\n", r.n, m.ml);
	m = (struct mem){ .ml = true, .raced = 5 };
	mem_learn(fn, &m, mem_request(&m), RDS_IB_ML6_PEER_OURS);
	SCEN(!m.ml && !m.raced, "an old peer's request: memory %u count %u\n",
	     m.ml, m.raced);
	bad += race_scenarios(fn, verbose);
	bad += pair_scenarios(fn, verbose);
	bad += forge_scenarios(fn, verbose);
	return bad;
}

/* Negative controls: rules that look right and are not. */
static bool sticky(bool was, enum rds_ib_req_kind sent,
		   enum rds_ib_ml6_event ev, u8 *raced)
{
	/* never forgets: an old peer of ours refusing its request */
	if (ev == RDS_IB_ML6_REFUSED_ML && sent == RDS_IB_REQ_ML)
		return true;
	return rds_ib_ml6_remember(was, sent, ev, raced);
}

/* A bound other than the module's: 1 is the rule before (its race
 * refusal cleared the memory at once), 2 one too small.
 */
static unsigned int control_bound;

static bool bounded(bool was, enum rds_ib_req_kind sent,
		    enum rds_ib_ml6_event ev, u8 *raced)
{
	bool mem = rds_ib_ml6_remember(was, sent, ev, raced);

	if (*raced >= control_bound) {
		*raced = 0;
		return false;
	}
	return mem;
}

static bool unreset(bool was, enum rds_ib_req_kind sent,
		    enum rds_ib_ml6_event ev, u8 *raced)
{
	/* counts across connections: the count survives other events */
	u8 before = *raced;
	bool mem = rds_ib_ml6_remember(was, sent, ev, raced);

	if (!(ev == RDS_IB_ML6_REFUSED_ML && sent == RDS_IB_REQ_ML))
		*raced = before;
	return mem;
}

static bool peer_resets(bool was, enum rds_ib_req_kind sent,
			enum rds_ib_ml6_event ev, u8 *raced)
{
	/* the rule before: a request in its layout that we accept sets the
	 * count to 0 when it arrives, forged or not
	 */
	bool mem = rds_ib_ml6_remember(was, sent, ev, raced);

	if (ev == RDS_IB_ML6_PEER_ML)
		*raced = 0;
	return mem;
}

static bool up_keeps(bool was, enum rds_ib_req_kind sent,
		     enum rds_ib_ml6_event ev, u8 *raced)
{
	/* a connection that comes up leaves the count */
	u8 before = *raced;
	bool mem = rds_ib_ml6_remember(was, sent, ev, raced);

	if (ev == RDS_IB_ML6_UP)
		*raced = before;
	return mem;
}

static bool eager(bool was, enum rds_ib_req_kind sent,
		  enum rds_ib_ml6_event ev, u8 *raced)
{
	/* takes every refusal for the kernel's (the CM's or ours too) */
	if (ev == RDS_IB_ML6_REFUSED)
		return sent != RDS_IB_REQ_ML;
	return rds_ib_ml6_remember(was, sent, ev, raced);
}

static bool trusting(bool was, enum rds_ib_req_kind sent,
		     enum rds_ib_ml6_event ev, u8 *raced)
{
	/* the rule before: a request or accept in its layout sets it */
	if (ev == RDS_IB_ML6_PEER_ML || ev == RDS_IB_ML6_ACCEPT_ML)
		return true;
	return rds_ib_ml6_remember(was, sent, ev, raced);
}

static bool trusting_peer(bool was, enum rds_ib_req_kind sent,
			  enum rds_ib_ml6_event ev, u8 *raced)
{
	/* sets it on accepting its request alone */
	if (ev == RDS_IB_ML6_PEER_ML)
		return true;
	return rds_ib_ml6_remember(was, sent, ev, raced);
}

static bool deaf(bool was, enum rds_ib_req_kind sent,
		 enum rds_ib_ml6_event ev, u8 *raced)
{
	/* never learns from a refusal */
	if (ev == RDS_IB_ML6_REFUSED_ML && sent == RDS_IB_REQ_OURS)
		return was;
	return rds_ib_ml6_remember(was, sent, ev, raced);
}

static void ml6_tests(void)
{
	unsigned char buf[64], ref[56], s[16], d[16];
	struct rds_ib_pd_class c;
	unsigned int i, k, e, w, n, len, v6;
	u8 reason, rreason;
	int f;

	f = failures;
	for (i = 0; i < 100000; i++) {
		unsigned int tos = rnd() & 0xff;
		u64 ack = (i & 1) ? 0 : rnd();
		size_t n;

		v6 = (i >> 1) & 1;
		for (k = 0; k < 16; k++) {
			s[k] = rnd();
			d[k] = rnd();
		}
		if (!v6) {
			mapped(s, s + 12);
			mapped(d, d + 12);
		}
		memset(buf, 0xee, sizeof(buf));
		n = rds_ib_mlhs_request(s, d, v6, tos, ack, buf, sizeof(buf));
		ref_request(ref, s, d, v6, tos, ack);
		EXPECT(n == (v6 ? 56u : 32u) && !memcmp(buf, ref, n) &&
		       buf[n] == 0xee, "request bytes (v6 %u)", v6);
		/* the kernel's rule takes it, as 3.1 */
		EXPECT(mainline_takes(buf, n, v6), "the kernel's rule takes it");
		/* our listener calls it the kernel's, whatever the bytes
		 * (an address that spells "RDSi" included: both named)
		 */
		both(buf, n, v6, d, s, &c);
		EXPECT(c.kind == RDS_IB_PD_MAINLINE && c.proto == 0x0301 &&
		       c.ml.tos == tos && c.ml.ack_seq == ack && !c.ml.credit &&
		       !c.ml.reserved1 && !c.ml.reserved2,
		       "our listener: kind %d proto %x", c.kind, c.proto);
		EXPECT(!rds_ib_hs_is_offer(buf, n), "no offer of ours");
		/* negative control: the same bytes with the offer's marker
		 * and tail are ours (v4), and our marked handshake is not
		 * the kernel's
		 */
		if (!v6) {
			struct rds_ib_hs hs = { .major = 1, .minor = 1,
						.frag_shift = 13,
						.hello.gen = 7 };

			memset(buf, 0, sizeof(buf));
			rds_ib_mlhs_request(s, d, false, tos, ack, buf, 56);
			rds_ib_hs_offer_put(&hs, buf);
			both(buf, 56, false, d, s, &c);
			EXPECT(c.kind == RDS_IB_PD_OURS, "control: the offer");
		}
	}
	for (v6 = 0; v6 < 2; v6++) {
		memset(s, 0, 16);
		memset(d, 0, 16);
		if (!v6) {
			mapped(s, A1);
			mapped(d, A2);
		}
		for (len = 0; len <= 64; len++)
			EXPECT(rds_ib_mlhs_request(s, d, v6, 0, 0, buf, len) ==
			       (len >= (v6 ? 56u : 32u) ? (v6 ? 56u : 32u) : 0),
			       "room %u v6 %u", len, v6);
	}
	EXPECT(rds_ib_mlhs_request(L6, P6, false, 0, 0, buf, 64) == 0,
	       "an IPv4 layout of IPv6 addresses");
	report("the kernel's own request (IPv6): its layout at 3.1, taken by its rule, the kernel's to our listener; room",
	       f);

	f = failures;
	/* every first byte and every length, the rest zero; both origins */
	for (i = 0; i < 256; i++) {
		for (len = 0; len <= 64; len++) {
			for (k = 0; k < 2; k++) {
				memset(buf, 0, sizeof(buf));
				buf[0] = i;
				EXPECT(rds_ib_rej_classify(k, buf, len, &reason) ==
				       ref_rej(k, buf, len, &rreason) &&
				       reason == rreason,
				       "byte %u len %u consumer %u", i, len, k);
			}
		}
		/* the byte at each of the int's places */
		for (k = 0; k < 4; k++) {
			memset(buf, 0, sizeof(buf));
			buf[k] = i;
			EXPECT(rds_ib_rej_classify(true, buf, 4, &reason) ==
			       ref_rej(true, buf, 4, &rreason),
			       "byte %u at %u", i, k);
		}
	}
	/* our refusals, every reason (0: none, not a refusal of ours) */
	for (i = 0; i < 256; i++) {
		struct rds_ib_hs hs = { .major = 1, .minor = 1,
					.frag_shift = 13, .reason = i,
					.hello.gen = 9 };

		memset(buf, 0, sizeof(buf));
		rds_ib_hs_encode(&hs, buf);
		EXPECT(rds_ib_rej_classify(true, buf, 40, &reason) ==
		       (i ? RDS_IB_REJ_OURS : RDS_IB_REJ_OTHER) &&
		       reason == (i ? i : 0), "our refusal, reason %u", i);
		EXPECT(rds_ib_rej_classify(false, buf, 40, &reason) ==
		       RDS_IB_REJ_NONE, "not the peer's: reason %u", i);
	}
	for (i = 0; i < 400000; i++) {
		for (len = 0; len < sizeof(buf); len++)
			buf[len] = (i & 1) ? rnd() : (rnd() & 1);
		if ((i & 7) == 2)
			put_be(buf, 4, 0x52445369);
		len = rnd() % 65;
		k = rnd() & 1;
		EXPECT(rds_ib_rej_classify(k, buf, len, &reason) ==
		       ref_rej(k, buf, len, &rreason) && reason == rreason,
		       "random refusal %u", i);
	}
	EXPECT(rds_ib_rej_classify(true, NULL, 4, &reason) == RDS_IB_REJ_NONE,
	       "NULL");
	/* the CM's consumer REJ with zeros (no listener): not the peer's,
	 * at every length; one byte set makes it the peer's
	 */
	for (len = 0; len <= 64; len++) {
		memset(buf, 0, sizeof(buf));
		EXPECT(rds_ib_rej_classify(true, buf, len, &reason) ==
		       RDS_IB_REJ_NONE, "zeros, len %u", len);
		if (!len)
			continue;
		buf[len - 1] = 0x80;
		EXPECT(rds_ib_rej_classify(true, buf, len, &reason) ==
		       RDS_IB_REJ_OTHER, "one byte at %u", len - 1);
	}
	{
		int one = RDS_IB_MLHS_REJ_INCOMPAT;

		EXPECT(rds_ib_rej_classify(true, &one, sizeof(one), &reason) ==
		       RDS_IB_REJ_MAINLINE, "the kernel's int 1");
		EXPECT(rds_ib_rej_classify(false, &one, sizeof(one), &reason) ==
		       RDS_IB_REJ_NONE, "the int 1 not from the peer");
	}
	report("refusals: ours with each reason, the kernel's int 1, every first byte and length, random",
	       f);

	f = failures;
	n = 0;
	for (k = 0; k < 3; k++)
		for (e = 0; e < RDS_IB_ML6_EV_MAX; e++)
			for (w = 0; w < 2; w++)
				for (i = 0; i < 256; i++, n++) {
					unsigned int ra;
					bool want = ref_remember(k, e, w, i, &ra);
					u8 raced = i;

					EXPECT(rds_ib_ml6_remember(w, k, e, &raced) == want &&
					       raced == ra,
					       "sent %u event %u was %u count %u: count %u",
					       k, e, w, i, raced);
				}
	for (v6 = 0; v6 < 2; v6++)
		for (w = 0; w < 2; w++)
			EXPECT(rds_ib_ml6_request(v6, w) ==
			       (!v6 ? RDS_IB_REQ_OFFER :
				w ? RDS_IB_REQ_ML : RDS_IB_REQ_OURS),
			       "request v6 %u remembered %u", v6, w);
	EXPECT(RDS_IB_ML6_RACED_MAX == 32, "the bound the reference has");
	EXPECT(RDS_IB_ML6_EV_MAX == 8, "the events the table has");
	printf("# the IPv6 memory: %u states (request, event, memory, count) against the table\n",
	       n);
	report("the IPv6 memory: every request, event, memory and count against the table; the request it picks",
	       f);

	f = failures;
	scen_checks = 0;
	EXPECT(scenarios(rds_ib_ml6_remember, true) == 0, "the module's rule");
	n = scen_checks;
	printf("# scenarios: %u checks\n", n);
	report("scenarios: the kernel's RDS reached after one refusal, ours at once with nothing new, an old module of ours after 32, the kernel's connect race (1 to 95 refusals) costs one handshake per 33, each remembered, a peer changing side, forged requests in its layout reset nothing",
	       f);

	f = failures;
	control_bound = 1;
	k = scenarios(bounded, false);
	printf("# negative control \"the rule before\" (a race refusal of its request clears the memory): %u scenario checks fail\n",
	       k);
	EXPECT(k > 0 && race_scenarios(bounded, false) > 0,
	       "the rule before: a race refusal of its request clears the memory");
	control_bound = 2;
	EXPECT(race_scenarios(bounded, false) > 0, "a bound of 2");
	control_bound = RDS_IB_ML6_RACED_MAX;
	EXPECT(scenarios(bounded, false) == 0, "control of the control: the module's bound");
	EXPECT(race_scenarios(unreset, false) > 0,
	       "a count that survives a connection");
	k = scenarios(peer_resets, false);
	e = forge_scenarios(peer_resets, false);
	printf("# negative control \"a request in its layout resets the count\" (the rule before this change): %u of %u scenario checks fail, all %u in the forged requests\n",
	       k, n, e);
	EXPECT(k > 0 && k == e, "the rule before: a forged request resets the count");
	{
		struct mem m = { .ml = true };

		for (i = 0; i < RDS_IB_ML6_RACED_MAX - 1; i++)
			mem_learn(peer_resets, &m, RDS_IB_REQ_ML,
				  RDS_IB_ML6_REFUSED_ML);
		mem_learn(peer_resets, &m, RDS_IB_REQ_ML, RDS_IB_ML6_PEER_ML);
		mem_learn(peer_resets, &m, RDS_IB_REQ_ML,
			  RDS_IB_ML6_REFUSED_ML);
		EXPECT(m.ml && m.raced == 1,
		       "the rule before: 31 refusals, a forged request, one more keep the memory (%u, count %u)",
		       m.ml, m.raced);
	}
	k = scenarios(up_keeps, false);
	printf("# negative control \"a connection leaves the count\": %u of %u scenario checks fail\n",
	       k, n);
	EXPECT(race_scenarios(up_keeps, false) > 0,
	       "a count that survives a connection coming up");
	EXPECT(scenarios(sticky, false) > 0, "a rule that never forgets");
	EXPECT(scenarios(deaf, false) > 0, "a rule that never learns");
	EXPECT(scenarios(trusting, false) > 0,
	       "a rule that takes a request or accept in its layout");
	EXPECT(scenarios(trusting_peer, false) > 0,
	       "a rule that takes a request in its layout");
	{
		u8 r0 = 0, r1 = 0;

		EXPECT(scenarios(eager, false) == 0 &&
		       eager(false, RDS_IB_REQ_OURS, RDS_IB_ML6_REFUSED, &r0) !=
		       rds_ib_ml6_remember(false, RDS_IB_REQ_OURS,
					   RDS_IB_ML6_REFUSED, &r1),
		       "a rule that takes any refusal: the scenarios miss it, the table does not");
	}
	report("negative controls: wrong rules fail the scenarios (or the table)",
	       f);
}

int main(int argc, char **argv)
{
	unsigned char buf[64], b2[64];
	u64 seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (u64)time(NULL);
	struct rds_ib_pd_class c;
	struct rds_ib_mlhs m, out;
	unsigned int i, v, len, v6, major, minor, mask, taken;
	int f;

	rng = seed | 1;
	printf("TAP version 13\n1..15\n# seed 0x%llx (rerun: %s 0x%llx)\n",
	       (unsigned long long)seed, argv[0], (unsigned long long)seed);
	mapped(L4, A1);
	mapped(P4, A2);
	for (i = 0; i < 16; i++) {
		L6[i] = 0xfe - i;
		P6[i] = 0x20 + i;
	}

	f = failures;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	report("named cases: ours, mainline 3.1/4.0/4.1, each refusal", f);

	f = failures;
	for (i = 0; i < 100000; i++) {
		unsigned char ref[56];
		size_t n;

		v6 = i & 1;
		random_mlhs(&m, v6);
		memset(buf, 0xee, sizeof(buf));
		n = rds_ib_mlhs_encode(&m, buf, sizeof(buf));
		EXPECT(n == (v6 ? 56u : 32u), "encode length %zu", n);
		/* The reference layout, by hand (the padding 0). */
		memset(ref, 0, sizeof(ref));
		memcpy(ref, v6 ? m.saddr : m.saddr + 12, v6 ? 16 : 4);
		memcpy(ref + (v6 ? 16 : 4), v6 ? m.daddr : m.daddr + 12,
		       v6 ? 16 : 4);
		{
			unsigned char *p = ref + (v6 ? 32 : 8);

			p[0] = m.major;
			p[1] = m.minor;
			put_be(p + 2, 2, m.minor_mask);
			p[4] = m.tos;
			p[5] = m.reserved1;
			put_be(p + 6, 2, m.reserved2);
			put_be(p + 8, 8, m.ack_seq);
			put_be(p + 16, 4, m.credit);
		}
		EXPECT(!memcmp(buf, ref, n), "encoded bytes");
		EXPECT(buf[n] == 0xee, "nothing written past the layout");
		EXPECT(rds_ib_mlhs_decode(buf, n, v6, &out) == RDS_IB_MLHS_OK,
		       "decode");
		EXPECT(!memcmp(&out, &m, sizeof(m)), "round trip");
		ref_fields_match(buf, v6, &out);
	}
	report("100000 random private data: encode matches the layout, round trip",
	       f);

	f = failures;
	offer(&m, false);
	EXPECT(rds_ib_mlhs_encode(&m, buf, 31) == 0, "v4 in 31 bytes");
	EXPECT(rds_ib_mlhs_encode(&m, buf, 32) == 32, "v4 in 32 bytes");
	m.v6 = true;
	EXPECT(rds_ib_mlhs_encode(&m, buf, 55) == 0, "v6 in 55 bytes");
	EXPECT(rds_ib_mlhs_encode(&m, buf, 56) == 56, "v6 in 56 bytes");
	offer(&m, true);
	m.v6 = false;
	EXPECT(rds_ib_mlhs_encode(&m, buf, 64) == 0,
	       "v4 layout of IPv6 addresses refused");
	for (v6 = 0; v6 < 2; v6++) {
		offer(&m, v6);
		memset(buf, 0, sizeof(buf));
		rds_ib_mlhs_encode(&m, buf, sizeof(buf));
		for (len = 0; len <= sizeof(buf); len++) {
			enum rds_ib_mlhs_reason want;

			want = !len ? RDS_IB_MLHS_R_EMPTY :
			       len < (v6 ? 56 : 32) ? RDS_IB_MLHS_R_SHORT :
			       RDS_IB_MLHS_OK;
			EXPECT(rds_ib_mlhs_decode(buf, len, v6, &out) == want,
			       "decode v6 %u length %u", v6, len);
			both(buf, len, v6, v6 ? L6 : L4, v6 ? P6 : P4, &c);
			EXPECT((c.kind == RDS_IB_PD_MAINLINE) ==
			       (want == RDS_IB_MLHS_OK),
			       "classify v6 %u length %u", v6, len);
		}
		EXPECT(rds_ib_mlhs_decode(NULL, 56, v6, &out) ==
		       RDS_IB_MLHS_R_EMPTY, "NULL");
		both(NULL, 0, v6, NULL, NULL, &c);
	}
	report("every length 0..64 of both layouts; encode room boundaries", f);

	f = failures;
	for (v6 = 0; v6 < 2; v6++) {
		size_t n;

		offer(&m, v6);
		memset(buf, 0, sizeof(buf));
		n = rds_ib_mlhs_encode(&m, buf, sizeof(buf));
		for (i = 0; i < n; i++) {
			for (v = 0; v < 256; v++) {
				memcpy(b2, buf, sizeof(b2));
				b2[i] = v;
				both(b2, n, v6, v6 ? L6 : L4, v6 ? P6 : P4,
				     &c);
				if (c.kind == RDS_IB_PD_MAINLINE)
					ref_fields_match(b2, v6, &c.ml);
			}
		}
	}
	report("every value of every byte of both layouts: classify agrees with the reference",
	       f);

	f = failures;
	for (i = 0; i < 400000; i++) {
		for (len = 0; len < sizeof(b2); len++)
			b2[len] = rnd();
		v6 = rnd() & 1;
		/* A quarter start as a valid offer, a quarter as ours. */
		if ((i & 3) == 1) {
			offer(&m, v6);
			rds_ib_mlhs_encode(&m, b2, sizeof(b2));
			b2[rnd() % 64] = rnd();
		} else if ((i & 3) == 2) {
			put_be(b2, 4, 0x52445369);
		}
		len = rnd() % 65;
		if (i & 4)
			both(b2, len, v6, v6 ? L6 : L4, v6 ? P6 : P4, &c);
		else
			both(b2, len, v6, NULL, NULL, &c);
	}
	report("400000 random byte strings: classify agrees with the reference",
	       f);

	f = failures;
	for (major = 0; major < 256; major++)
		for (minor = 0; minor < 256; minor++)
			for (mask = 0; mask < 16; mask++)
				EXPECT(rds_ib_mlhs_negotiate(major, minor, mask) ==
				       ref_negotiate(major, minor, mask),
				       "offer %u.%u mask %x", major, minor, mask);
	for (mask = 0; mask < 65536; mask++) {
		EXPECT(rds_ib_mlhs_negotiate(4, 1, mask) ==
		       ref_negotiate(4, 1, mask), "4.1 mask %x", mask);
		EXPECT(rds_ib_mlhs_negotiate(3, 1, mask) == 0x0301,
		       "3.1 mask %x", mask);
	}
	report("negotiation: every major.minor with masks 0..15, every mask of 4.1 and 3.1",
	       f);

	/* Our own handshake, read by mainline's rule: for which values of
	 * its generation's first two bytes (mainline's major and minor) and
	 * the mask bits it does accept today; classify must call every one
	 * ours.
	 */
	f = failures;
	taken = 0;
	for (i = 0; i < 65536 * 4; i++) {
		struct rds_ib_hs hs = {
			.major = RDS_IB_HS_MAJOR, .minor = RDS_IB_HS_MINOR,
			.frag_shift = 13,
			.hello.gen = (i >> 2) << 16 | (i & 3),
		};

		if (!hs.hello.gen)
			continue;
		memset(buf, 0, sizeof(buf));
		rds_ib_hs_encode(&hs, buf);
		taken += mainline_takes(buf, 40, false);
		EXPECT(rds_ib_mlhs_gen_refused(hs.hello.gen) !=
		       mainline_takes(buf, 40, false),
		       "gen %08x: refused by mainline's rule?", hs.hello.gen);
		/* The same with random low bytes above the mask's bits. */
		hs.hello.gen |= (u32)rnd() & 0xfffc;
		memset(buf, 0, sizeof(buf));
		rds_ib_hs_encode(&hs, buf);
		EXPECT(rds_ib_mlhs_gen_refused(hs.hello.gen) !=
		       mainline_takes(buf, 40, false),
		       "gen %08x: refused by mainline's rule?", hs.hello.gen);
		both(buf, 40, false, L4, P4, &c);
		EXPECT(c.kind == RDS_IB_PD_OURS, "gen %08x", hs.hello.gen);
	}
	printf("# mainline's rule accepts our 40-byte request for %u of %u generation patterns (%.2f%%)\n",
	       taken, 65536 * 4 - 1, taken * 100.0 / (65536 * 4 - 1));
	EXPECT(taken > 0, "the hazard is there to count");
	report("our handshake is ours whatever its generation; gen_refused is mainline's rule",
	       f);

	f = failures;
	/* A refusal from mainline: the int 1 (little-endian on x86), then
	 * the REJ's zero padding.  Not a handshake of ours.
	 */
	memset(buf, 0, sizeof(buf));
	buf[0] = RDS_IB_MLHS_REJ_INCOMPAT;
	{
		struct rds_ib_hs hs;

		EXPECT(rds_ib_hs_decode(buf, 64, &hs) == RDS_IB_HS_R_MAGIC,
		       "mainline's REJ is not our handshake");
	}
	both(buf, 64, false, NULL, NULL, &c);
	EXPECT(c.kind == RDS_IB_PD_UNKNOWN, "mainline's REJ is no offer");
	report("mainline's refusal is neither our handshake nor an offer", f);

	f = failures;
	/* Our handshake over IPv6, as rdma_cm hands it over (56 bytes, zeros
	 * after ours): mainline reads its major at byte 32, the top byte of
	 * our credits.  Without the IPv6 mark that is 0, "4.0", and mainline
	 * would take it; with the mark it refuses it.  Either way we call it
	 * ours, with any addresses (mainline's would start "RDSi").
	 */
	for (i = 0; i < 100000; i++) {
		struct rds_ib_hs hs = {
			.major = RDS_IB_HS_MAJOR, .minor = RDS_IB_HS_MINOR,
			.frag_shift = 12 + rnd() % 5,
			.credits = rnd() % 65536,
			.hello.gen = (u32)rnd() | 1,
			.hello.peer_gen = (u32)rnd(),
			.hello.rx_next = rnd(), .hello.tx_first = rnd(),
		};
		struct rds_ib_hs back;

		memset(buf, 0, sizeof(buf));
		rds_ib_hs_encode(&hs, buf);
		EXPECT(mainline_takes(buf, 56, true),
		       "unmarked: the hazard is there (credits %u)",
		       hs.credits);
		hs.v6 = true;
		memset(buf, 0, sizeof(buf));
		rds_ib_hs_encode(&hs, buf);
		EXPECT(!mainline_takes(buf, 56, true),
		       "marked: mainline refuses (credits %u)", hs.credits);
		EXPECT(rds_ib_hs_decode(buf, 56, &back) == RDS_IB_HS_OK &&
		       back.v6 && back.credits == hs.credits,
		       "marked: we decode it, credits %u", hs.credits);
		both(buf, 56, true, L6, P6, &c);
		EXPECT(c.kind == RDS_IB_PD_OURS, "marked v6 handshake is ours");
		memcpy(P6, buf, 16);	/* a peer whose address is our bytes */
		memcpy(L6, buf + 16, 16);
		both(buf, 56, true, L6, P6, &c);
		EXPECT(c.kind == RDS_IB_PD_OURS,
		       "ours even between the addresses it spells");
	}
	for (i = 0; i < 16; i++) {
		L6[i] = 0xfe - i;
		P6[i] = 0x20 + i;
	}
	report("our IPv6 handshake: mainline refuses it, we call it ours", f);

	ml6_tests();

	f = failures;
	for (i = 0; i < RDS_IB_MLHS_R_MAX + 10; i++)
		EXPECT(rds_ib_mlhs_reason_name(i) &&
		       *rds_ib_mlhs_reason_name(i), "reason %u has a name", i);
	report("every reason has a name", f);
	return failures ? 1 : 0;
}
