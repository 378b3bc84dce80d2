// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/ib/hs.c, the IB connection handshake private data.
 *
 * The decoder is checked against a deliberately naive reference written
 * here from the layout in hs.h (byte offsets, big-endian by hand): every
 * length, every value of every single byte of a valid handshake, random
 * handshakes (printed seed), and version negotiation for every offer.
 * The flags of minor 2 against builds of minor 1 (whose decoder is kept
 * here as ref_old_decode): a new connecting side toward an old peer, a
 * new peer, the refusal of our flags and the retry without them, and an
 * old connecting side toward a new acceptor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "../../../net/ib/hs.h"

static u64 get_be(const unsigned char *p, int n)
{
	u64 v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* The reference for an offer (hs.h: the kernel's RDS layout, marker at
 * 13, "Rx" at 32): what decode must say about it.
 */
static bool ref_is_offer(const unsigned char *b, size_t len)
{
	return len >= 56 && b[13] == 0xA5 && get_be(b + 32, 2) == 0x5278;
}

/* Flags: only GIVEBACK (bit 0), and only at minor 2 or later. */
static bool ref_flags_bad(u64 flags, unsigned int minor)
{
	return (flags & ~1ULL) || (flags && minor < 2);
}

/* Builds of minor 1 (old): no flag at all. */
static bool old_builds;

static enum rds_ib_hs_reason ref_offer(const unsigned char *b)
{
	if (b[34] != 1)
		return RDS_IB_HS_R_VERSION;
	if (old_builds ? b[36] != 0 : ref_flags_bad(b[36], b[35]))
		return RDS_IB_HS_R_FLAGS;
	if (!get_be(b + 40, 4))
		return RDS_IB_HS_R_GEN;
	if (b[37] < 12 || b[37] > 16)
		return RDS_IB_HS_R_FRAG;
	return RDS_IB_HS_OK;
}

/* The reference: what decode must say about these bytes. */
static enum rds_ib_hs_reason ref_decode(const unsigned char *b, size_t len)
{
	if (ref_is_offer(b, len))
		return ref_offer(b);
	if (len < 40)
		return RDS_IB_HS_R_SHORT;
	if (get_be(b, 4) != 0x52445369)
		return RDS_IB_HS_R_MAGIC;
	if (b[4] != 1)
		return RDS_IB_HS_R_VERSION;
	if ((old_builds ? get_be(b + 6, 2) != 0 :
	     ref_flags_bad(get_be(b + 6, 2), b[5])) || b[37])
		return RDS_IB_HS_R_FLAGS;
	if (!get_be(b + 8, 4))
		return RDS_IB_HS_R_GEN;
	if (b[36] < 12 || b[36] > 16)
		return RDS_IB_HS_R_FRAG;
	/* a top byte of 0xff is the IPv6 mark, not credits */
	if (get_be(b + (b[32] == 0xff ? 33 : 32), b[32] == 0xff ? 3 : 4) >
	    65535)
		return RDS_IB_HS_R_CREDITS;
	return RDS_IB_HS_OK;
}

/* And the fields decode must produce when it accepts. */
static void ref_fields_match(const unsigned char *b, const struct rds_ib_hs *hs)
{
	EXPECT(hs->major == b[4] && hs->minor == b[5], "version fields");
	EXPECT(hs->flags == get_be(b + 6, 2), "flags");
	EXPECT(hs->hello.gen == get_be(b + 8, 4), "gen");
	EXPECT(hs->hello.peer_gen == get_be(b + 12, 4), "peer_gen");
	EXPECT(hs->hello.rx_next == get_be(b + 16, 8), "rx_next");
	EXPECT(hs->hello.tx_first == get_be(b + 24, 8), "tx_first");
	EXPECT(hs->v6 == (b[32] == 0xff), "IPv6 mark");
	EXPECT(hs->credits == (hs->v6 ? get_be(b + 33, 3) : get_be(b + 32, 4)),
	       "credits");
	EXPECT(hs->frag_shift == b[36], "frag_shift");
	EXPECT(hs->tos == b[38] && hs->reason == b[39], "tos, reason");
}

/* The fields decode must produce from an offer it accepts. */
static void ref_offer_fields_match(const unsigned char *b,
				   const struct rds_ib_hs *hs)
{
	EXPECT(hs->major == b[34] && hs->minor == b[35], "offer version");
	EXPECT(hs->flags == b[36], "offer flags");
	EXPECT(hs->frag_shift == b[37], "offer frag_shift");
	EXPECT(hs->credits == get_be(b + 38, 2), "offer credits");
	EXPECT(hs->hello.gen == get_be(b + 40, 4), "offer gen");
	EXPECT(hs->hello.peer_gen == get_be(b + 44, 4), "offer peer_gen");
	EXPECT(hs->hello.tx_first == get_be(b + 48, 8), "offer tx_first");
	EXPECT(hs->hello.rx_next == get_be(b + 16, 8) + 1,
	       "offer rx_next = ack_seq + 1");
	EXPECT(hs->tos == b[12], "offer tos");
}

static void valid(struct rds_ib_hs *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->major = RDS_IB_HS_MAJOR;
	hs->minor = rnd() & 7;
	hs->flags = hs->minor >= 2 && (rnd() & 1) ? RDS_IB_HS_F_GIVEBACK : 0;
	hs->hello.gen = (u32)rnd() | 1;
	hs->hello.peer_gen = (u32)rnd();
	hs->hello.rx_next = rnd();
	hs->hello.tx_first = rnd();
	hs->credits = rnd() % 65536;
	hs->v6 = rnd() & 1;
	hs->frag_shift = 12 + rnd() % 5;
	hs->tos = rnd();
	hs->reason = rnd() % RDS_IB_HS_R_MAX;
}

/* The flag rules under test, or broken ones (negative controls). */
static u16 (*request_flags)(u8 peer_minor, u16 wanted) =
	rds_ib_hs_request_flags;
static u16 (*accept_flags)(const struct rds_ib_hs *offer, u16 wanted) =
	rds_ib_hs_accept_flags;

static u8 (*refused_minor)(const struct rds_ib_hs *rej) =
	rds_ib_hs_refused_minor;

static u16 request_always(u8 peer_minor, u16 wanted)
{
	(void)peer_minor;
	return wanted;
}

/* the rule before: flags only toward a peer seen at minor 2 */
static u16 request_known_only(u8 peer_minor, u16 wanted)
{
	return peer_minor != RDS_IB_HS_PEER_UNKNOWN &&
	       peer_minor >= RDS_IB_HS_MINOR_FLAGS ? wanted : 0;
}

/* the rule before: any refusal for "flags" makes the peer minor 0 */
static u8 refused_flags_zero(const struct rds_ib_hs *rej)
{
	return rej->reason == RDS_IB_HS_R_FLAGS ? 0 :
	       rds_ib_hs_peer_minor(rej->minor);
}

static u16 accept_always(const struct rds_ib_hs *offer, u16 wanted)
{
	(void)offer;
	return wanted;
}

/* One of our hosts as the handshake code sees it: a new build (minor 2,
 * give-back wanted) or an old one (minor 1, no flags, old decoder), and
 * what it last saw of the other.
 */
struct host {
	bool old;
	bool ml;	/* runs the kernel's RDS (accepting side only) */
	u8 peer_minor;
};

/* A host of ours that has not seen its peer yet. */
#define NEW_HOST ((struct host){ .peer_minor = RDS_IB_HS_PEER_UNKNOWN })
#define OLD_HOST ((struct host){ .old = true, .peer_minor = 0 })

/* What host h's decoder says of len bytes. */
static enum rds_ib_hs_reason host_decode(const struct host *h,
					 const unsigned char *b, size_t len,
					 struct rds_ib_hs *out)
{
	enum rds_ib_hs_reason r;

	old_builds = h->old;
	r = ref_decode(b, len);
	old_builds = false;
	if (!h->old)
		EXPECT(rds_ib_hs_decode(b, len, out) == r,
		       "decode agrees with the reference");
	else if (r == RDS_IB_HS_OK)
		EXPECT(rds_ib_hs_decode(b, len, out) == RDS_IB_HS_OK,
		       "what an old build takes, a new one takes");
	return r;
}

/* One connection attempt of c to a: 1 up, 0 refused (then c learns from
 * the refusal); *c_gb, *a_gb: whether c, a may send returns (the other
 * asked).
 */
static int attempt(struct host *c, struct host *a, bool *c_gb, bool *a_gb)
{
	struct rds_ib_hs req = {
		.major = RDS_IB_HS_MAJOR, .minor = c->old ? 1 : RDS_IB_HS_MINOR,
		.frag_shift = 13, .credits = 64, .hello.gen = 7, .tos = 0,
	}, rep, got, rej;
	unsigned char b[64];
	enum rds_ib_hs_reason r;
	u8 minor;

	req.flags = c->old ? 0 : request_flags(c->peer_minor,
					       RDS_IB_HS_F_GIVEBACK);
	memset(b, 0, sizeof(b));
	/* IPv4: an offer in the kernel's RDS layout; bytes 0..31 random */
	for (minor = 0; minor < 32; minor++)
		b[minor] = rnd();
	b[12] = 0;
	rds_ib_hs_offer_put(&req, b);
	if (a->ml) {
		/* it reads the offer's first 32 bytes only: our flags there
		 * at first contact are never seen; once seen it is minor 0
		 * (mlcm.c) and gets none at all
		 */
		struct rds_ib_hs bare = req;
		unsigned char b0[64];

		memcpy(b0, b, sizeof(b0));
		bare.flags = 0;
		rds_ib_hs_offer_put(&bare, b0);
		EXPECT(!memcmp(b, b0, 32),
		       "the kernel's RDS reads nothing of our flags");
		EXPECT(!req.flags || c->peer_minor == RDS_IB_HS_PEER_UNKNOWN,
		       "no flag toward a peer seen running the kernel's RDS");
		c->peer_minor = 0;
		return 1;
	}
	r = host_decode(a, b, 56, &got);
	if (r) {
		/* a refuses: its REJ carries its version and the reason */
		memset(&rej, 0, sizeof(rej));
		rej.major = RDS_IB_HS_MAJOR;
		rej.minor = a->old ? 1 : RDS_IB_HS_MINOR;
		rej.frag_shift = 13;
		rej.hello.gen = 9;
		rej.reason = r;
		memset(b, 0, sizeof(b));
		rds_ib_hs_encode(&rej, b);
		EXPECT(host_decode(c, b, 40, &got) == RDS_IB_HS_OK,
		       "the refusal is read");
		if (!c->old)
			c->peer_minor = refused_minor(&got);
		return 0;
	}
	if (!a->old)
		EXPECT(rds_ib_hs_negotiate(&got, 0, &minor) == RDS_IB_HS_OK,
		       "negotiated");
	else
		minor = 1;
	a->peer_minor = a->old ? got.minor : rds_ib_hs_peer_minor(got.minor);
	*a_gb = got.flags & RDS_IB_HS_F_GIVEBACK;
	rep = req;
	rep.minor = minor;
	rep.hello.gen = 9;
	rep.flags = a->old ? 0 : accept_flags(&got, RDS_IB_HS_F_GIVEBACK);
	memset(b, 0, sizeof(b));
	rds_ib_hs_encode(&rep, b);
	EXPECT(host_decode(c, b, 40, &got) == RDS_IB_HS_OK,
	       "%s connecting side takes the %s accept", c->old ? "an old" : "a new",
	       a->old ? "old" : "new");
	c->peer_minor = c->old ? got.minor : rds_ib_hs_peer_minor(got.minor);
	*c_gb = got.flags & RDS_IB_HS_F_GIVEBACK;
	return 1;
}

/* Attempts until one is up (at most 3): how many it took. */
static int connect_hosts(struct host *c, struct host *a, bool *c_gb,
			 bool *a_gb)
{
	int n;

	*c_gb = false;
	*a_gb = false;
	for (n = 1; n <= 3; n++)
		if (attempt(c, a, c_gb, a_gb))
			return n;
	return 0;
}

static void compat(void)
{
	struct host c, a;
	struct rds_ib_hs rej;
	unsigned int v_minor;
	bool cg, ag;

	/* new -> old, first contact: one refusal (flags), then up without */
	c = NEW_HOST;
	a = OLD_HOST;
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 2 && !cg && !ag,
	       "new to old, first contact: refused once, up without flags");
	EXPECT(c.peer_minor == 1, "the old peer seen at minor 1");
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 1 && !cg && !ag,
	       "new to old again: no flag sent");

	/* new -> new, first contact: both ask, both give back */
	c = NEW_HOST;
	a = NEW_HOST;
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 1 && cg && ag,
	       "new to new, first contact: both give back");
	EXPECT(c.peer_minor == 2 && a.peer_minor == 2, "both seen at minor 2");
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 1 && cg && ag,
	       "new to new again: both give back");
	/* and the other way round, a knowing c from its request */
	EXPECT(connect_hosts(&a, &c, &cg, &ag) == 1 && cg && ag,
	       "the other way: both give back");

	/* the peer went back to an old build: refused for flags, retried */
	a = OLD_HOST;
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 2 && !cg && !ag,
	       "new to a downgraded peer: refused (flags), up without them");
	EXPECT(c.peer_minor == 1, "the downgraded peer seen at minor 1");

	/* old -> new: no flag either way, the old side takes the accept */
	c = OLD_HOST;
	a = NEW_HOST;
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 1 && !cg && !ag,
	       "old to new: up at once, no give-back");
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 1 && !cg && !ag,
	       "old to new again: no give-back");

	/* the kernel's RDS: never a flag, even at first contact (the offer
	 * puts them where it never reads), and never again once seen
	 */
	c = NEW_HOST;
	a = (struct host){ .ml = true };
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 1 && !cg && !ag &&
	       c.peer_minor == 0, "new to the kernel's RDS: up, seen at 0");
	EXPECT(connect_hosts(&c, &a, &cg, &ag) == 1 && !cg && !ag,
	       "new to the kernel's RDS again: no flag sent");

	/* a refusal of a new build for another reason that it reports as
	 * R_FLAGS ("acknowledges unsent messages", cm.c) keeps flags on;
	 * an old build's (minor 1, or 0 before packed frames) turns them off
	 */
	memset(&rej, 0, sizeof(rej));
	rej.reason = RDS_IB_HS_R_FLAGS;
	rej.minor = RDS_IB_HS_MINOR;
	EXPECT(rds_ib_hs_request_flags(refused_minor(&rej),
				       RDS_IB_HS_F_GIVEBACK) ==
	       RDS_IB_HS_F_GIVEBACK,
	       "a new build's R_FLAGS refusal keeps flags on");
	for (rej.minor = 0; rej.minor < RDS_IB_HS_MINOR_FLAGS; rej.minor++)
		EXPECT(!rds_ib_hs_request_flags(refused_minor(&rej),
						RDS_IB_HS_F_GIVEBACK),
		       "an old build's refusal (minor %u) turns flags off",
		       rej.minor);
	rej.minor = RDS_IB_HS_PEER_UNKNOWN;
	EXPECT(refused_minor(&rej) == RDS_IB_HS_MINOR,
	       "a refusal never makes the peer unknown again");

	/* the helpers themselves */
	EXPECT(!rds_ib_hs_request_flags(0, RDS_IB_HS_F_GIVEBACK) &&
	       !rds_ib_hs_request_flags(1, RDS_IB_HS_F_GIVEBACK) &&
	       rds_ib_hs_request_flags(2, RDS_IB_HS_F_GIVEBACK) ==
	       RDS_IB_HS_F_GIVEBACK &&
	       rds_ib_hs_request_flags(RDS_IB_HS_PEER_UNKNOWN,
				       RDS_IB_HS_F_GIVEBACK) ==
	       RDS_IB_HS_F_GIVEBACK &&
	       !rds_ib_hs_request_flags(2, 0),
	       "request flags to an unknown peer and one seen at minor 2");
	for (v_minor = 0; v_minor < 256; v_minor++)
		EXPECT(rds_ib_hs_peer_minor(v_minor) != RDS_IB_HS_PEER_UNKNOWN &&
		       rds_ib_hs_peer_minor(v_minor) <= RDS_IB_HS_MINOR,
		       "peer minor %u kept below the unknown mark", v_minor);
}

int main(int argc, char **argv)
{
	unsigned char buf[64], b2[64];
	struct rds_ib_hs hs, out;
	u64 seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (u64)time(NULL);
	unsigned int i, v, len, major, minor;
	int f;

	rng = seed | 1;
	printf("TAP version 13\n1..13\n# seed 0x%llx (rerun: %s 0x%llx)\n",
	       (unsigned long long)seed, argv[0], (unsigned long long)seed);

	f = failures;
	for (i = 0; i < 100000; i++) {
		valid(&hs);
		memset(buf, 0, sizeof(buf));
		rds_ib_hs_encode(&hs, buf);
		EXPECT(ref_decode(buf, 40) == RDS_IB_HS_OK, "reference accepts");
		memset(&out, 0xaa, sizeof(out));
		EXPECT(rds_ib_hs_decode(buf, 40, &out) == RDS_IB_HS_OK,
		       "decode accepts a valid handshake");
		ref_fields_match(buf, &out);
		EXPECT(!memcmp(&out.hello, &hs.hello, sizeof(hs.hello)) &&
		       out.credits == hs.credits && out.tos == hs.tos &&
		       out.frag_shift == hs.frag_shift && out.v6 == hs.v6 &&
		       out.flags == hs.flags,
		       "round trip");
	}
	report("100000 random handshakes round-trip", f);

	f = failures;
	valid(&hs);
	memset(buf, 0, sizeof(buf));
	rds_ib_hs_encode(&hs, buf);
	for (len = 0; len <= sizeof(buf); len++)
		EXPECT(rds_ib_hs_decode(buf, len, &out) == ref_decode(buf, len),
		       "length %u", len);
	EXPECT(rds_ib_hs_decode(NULL, 0, &out) == RDS_IB_HS_R_SHORT, "NULL");
	report("every length 0..64: short ones refused, trailing bytes ignored", f);

	f = failures;
	for (i = 0; i < 40; i++) {
		for (v = 0; v < 256; v++) {
			enum rds_ib_hs_reason r;

			memcpy(b2, buf, sizeof(b2));
			b2[i] = v;
			r = rds_ib_hs_decode(b2, 40, &out);
			EXPECT(r == ref_decode(b2, 40),
			       "byte %u = 0x%02x: decode %d, reference %d", i, v,
			       r, ref_decode(b2, 40));
			if (r == RDS_IB_HS_OK)
				ref_fields_match(b2, &out);
		}
	}
	report("every value of every byte: decode agrees with the reference", f);

	f = failures;
	for (i = 0; i < 200000; i++) {
		for (len = 0; len < 40; len++)
			b2[len] = rnd();
		/* Half of them start as valid handshakes. */
		if (i & 1)
			memcpy(b2, buf, 8);
		len = rnd() % 65;
		EXPECT(rds_ib_hs_decode(b2, len, &out) == ref_decode(b2, len),
		       "random bytes, length %u", len);
	}
	report("200000 random byte strings: decode agrees with the reference", f);

	f = failures;
	for (major = 0; major < 256; major++) {
		for (minor = 0; minor < 256; minor++) {
			u8 use = 0xff, mine = RDS_IB_HS_MINOR;
			enum rds_ib_hs_reason r;

			hs.major = major;
			hs.minor = minor;
			hs.tos = 3;
			r = rds_ib_hs_negotiate(&hs, 3, &use);
			if (major != RDS_IB_HS_MAJOR) {
				EXPECT(r == RDS_IB_HS_R_VERSION, "major %u", major);
			} else {
				EXPECT(r == RDS_IB_HS_OK, "major %u", major);
				EXPECT(use == (minor < mine ? minor : mine),
				       "minor %u -> %u", minor, use);
			}
		}
	}
	{
		u8 use;

		hs.major = RDS_IB_HS_MAJOR;
		EXPECT(rds_ib_hs_negotiate(&hs, 4, &use) == RDS_IB_HS_R_TOS,
		       "TOS mismatch refused");
	}
	report("negotiation: other majors refused, min(minor) used, TOS checked",
	       f);

	f = failures;
	for (i = 0; i < 100000; i++) {
		unsigned int j;
		u64 ack;

		valid(&hs);
		/* The kernel's RDS layout under it: random, but for the
		 * marker's byte (its reserved1), and ack_seq = rx_next - 1.
		 */
		for (j = 0; j < sizeof(buf); j++)
			buf[j] = rnd();
		ack = hs.hello.rx_next - 1;
		for (j = 0; j < 8; j++)
			buf[16 + j] = ack >> (56 - 8 * j);
		buf[12] = hs.tos;
		rds_ib_hs_offer_put(&hs, buf);
		EXPECT(buf[13] == 0xA5, "marker written");
		EXPECT(ref_decode(buf, 56) == RDS_IB_HS_OK, "reference accepts");
		EXPECT(rds_ib_hs_is_offer(buf, 56), "an offer");
		EXPECT(!rds_ib_hs_is_offer(buf, 55), "55 bytes: not an offer");
		memset(&out, 0xaa, sizeof(out));
		EXPECT(rds_ib_hs_decode(buf, 56, &out) == RDS_IB_HS_OK,
		       "decode accepts a valid offer");
		ref_offer_fields_match(buf, &out);
		EXPECT(!memcmp(&out.hello, &hs.hello, sizeof(hs.hello)) &&
		       out.credits == hs.credits && out.tos == hs.tos &&
		       out.frag_shift == hs.frag_shift &&
		       out.major == hs.major && out.minor == hs.minor &&
		       out.flags == hs.flags,
		       "offer round trip");
		buf[13] = 0;	/* what the kernel's RDS sends */
		EXPECT(!rds_ib_hs_is_offer(buf, 56), "no marker: not an offer");
		EXPECT(rds_ib_hs_decode(buf, 56, &out) == ref_decode(buf, 56),
		       "no marker: our layout's verdict");
	}
	report("100000 random offers (ours in the kernel's RDS layout) round-trip",
	       f);

	f = failures;
	valid(&hs);
	memset(buf, 0, sizeof(buf));
	rds_ib_hs_offer_put(&hs, buf);
	for (i = 0; i < 56; i++) {
		for (v = 0; v < 256; v++) {
			enum rds_ib_hs_reason r;

			memcpy(b2, buf, sizeof(b2));
			b2[i] = v;
			r = rds_ib_hs_decode(b2, 56, &out);
			EXPECT(r == ref_decode(b2, 56),
			       "offer byte %u = 0x%02x: decode %d, reference %d",
			       i, v, r, ref_decode(b2, 56));
			if (r == RDS_IB_HS_OK && ref_is_offer(b2, 56))
				ref_offer_fields_match(b2, &out);
		}
	}
	report("every value of every byte of an offer: decode agrees", f);

	f = failures;
	for (i = 0; i < RDS_IB_HS_R_MAX + 10; i++)
		EXPECT(rds_ib_hs_reason_name(i) && *rds_ib_hs_reason_name(i),
		       "reason %u has a name", i);
	report("every refusal reason has a name", f);

	f = failures;
	compat();
	report("flags (minor 2): new to old (one refusal), new to new (both ways at first contact), downgraded peer, old to new, the kernel's RDS (never), refusals", f);

	/* Negative controls: the scenarios must catch flags sent blind. */
	for (i = 0; i < 4; i++) {
		static const char *const what[] = {
			"negative control: a request with flags to any peer is caught",
			"negative control: an accept with flags whatever the request offered is caught",
			"negative control: no flags in a first request is caught",
			"negative control: any R_FLAGS refusal taken as minor 0 is caught",
		};
		int before = failures;

		if (i == 0)
			request_flags = request_always;
		else if (i == 1)
			accept_flags = accept_always;
		else if (i == 2)
			request_flags = request_known_only;
		else
			refused_minor = refused_flags_zero;
		quiet = true;
		compat();
		quiet = false;
		request_flags = rds_ib_hs_request_flags;
		accept_flags = rds_ib_hs_accept_flags;
		refused_minor = rds_ib_hs_refused_minor;
		v = failures > before;
		failures = before + !v;
		report(what[i], before);
	}
	return failures ? 1 : 0;
}
