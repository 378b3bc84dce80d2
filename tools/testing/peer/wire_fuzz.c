// SPDX-License-Identifier: GPL-2.0
/*
 * wire_peer's fuzzer (peer_fuzz.sh): random mutations of valid traffic.
 */
#include "wire_peer.h"

/* ---- fuzz ------------------------------------------------------------- */

static u64 rng;

static u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One valid frame of random traffic, then mutated. */
static int fuzz_one(struct peer *p, unsigned long *mutated)
{
	static u8 d[2 * PEER_FRAG];
	struct rds_header h;
	u32 len, dlen, i;
	u8 g;
	/* One frame in four is mutated: the rest keeps a connection busy
	 * with valid traffic between the mutations that do not reset it.
	 */
	int what = rnd() % 4 ? 12 + rnd() % 8 : rnd() % 12;

	len = rnd() % 3 ? rnd() % 600 : rnd() % (3 * PEER_FRAG);
	for (i = 0; i < sizeof(d); i++)
		d[i] = (u8)rnd();
	if (what >= 12) {
		/* valid traffic: messages, control, packed */
		if (what < 16)
			return peer_send_msg(p, 7001, dport + rnd() % 4, 0,
					     d, len, 2000);
		if (what < 18)
			return peer_send_ctrl(p, rnd() % 2 ? RDS_IB_FLAG_HB : 0);
		{
			const u8 *pd[4] = { d, d + 600, d + 1200, d + 1800 };
			u32 pl[4] = { rnd() % 500, rnd() % 500, rnd() % 500,
				      rnd() % 500 };

			return peer_send_packed(p, 7001, dport, 2 + rnd() % 3,
						pd, pl, 2000);
		}
	}
	/* a mutated frame */
	(*mutated)++;
	peer_hdr_fill(p, &h, p->tx_next++, len, 7001, dport + rnd() % 4,
		      rnd() % 4 ? 0 : (u8)rnd());
	dlen = len < PEER_FRAG ? len : PEER_FRAG;
	if (!rds_ib_credit_take(&p->cr, &g))
		return peer_poll(p, 100, false) < 0 ? -1 : 0;
	h.h_credit = g;
	switch (what % 6) {
	case 0:	/* a random bit of the header */
		((u8 *)&h)[rnd() % 30] ^= 1u << (rnd() % 8);
		break;
	case 1:	/* a random byte */
		((u8 *)&h)[rnd() % 48] = (u8)rnd();
		break;
	case 2:	/* the frame's length */
		dlen = rnd() % (2 * PEER_FRAG);
		break;
	case 3:	/* sequence numbers */
		h.h_sequence = cpu_to_be64(rnd() % 2 ? rnd() :
					   p->tx_next - rnd() % 8);
		h.h_flags |= rnd() % 2 ? RDS_FLAG_RETRANSMITTED : 0;
		break;
	case 4:	/* ACK and credit */
		h.h_ack = cpu_to_be64(rnd() % 2 ? p->theirs.hello.tx_first +
				      rnd() % 4 : rnd());
		h.h_credit = (u8)rnd();
		break;
	case 5:	/* the flags */
		h.h_flags = (u8)rnd();
		break;
	}
	h.h_csum = peer_csum(&h);
	if (rnd() % 8 == 0)
		h.h_csum = (u16)rnd();
	if (what % 6 != 2 && h.h_flags & RDS_IB_FLAG_CTRL && rnd() % 2)
		dlen = 0;
	return peer_send_frame(p, &h, d, dlen, false);
}

int t_fuzz(void)
{
	unsigned long runs = 0, mutated = 0, resets = 0, conns = 0, pings = 0;
	u64 end;
	struct peer p;
	bool have = false;
	int fails = 0;

	rng = seed ? seed : 1;
	printf("fuzz: seed %llu, %d s\n", seed, secs);
	fflush(stdout);
	if (up(&witness, wtos, credits)) {
		check(false, "witness connection (TOS %d) up", wtos);
		return 1;
	}
	end = peer_now_ms() + (u64)secs * 1000;
	while (peer_now_ms() < end) {
		if (!have) {
			if (up(&p, tos, credits)) {
				if (++fails > 5) {
					check(false, "fuzz: connections keep failing");
					break;
				}
				peer_fini(&p);
				continue;
			}
			p.quiet = true;
			have = true;
			conns++;
		}
		runs++;
		peer_poll(&witness, 0, false);	/* answer its heartbeats */
		fuzz_one(&p, &mutated);
		if (runs % 8 == 0 || p.gone) {
			/* Does the module still talk on it? A ping to port
			 * 0 comes back as a pong from port 0.
			 */
			peer_send_drain(&p, 2000);
			peer_poll(&witness, 0, false);
			peer_poll(&p, 50, false);
			if (p.gone) {
				resets++;
				peer_fini(&p);
				have = false;
			}
			while (have && p.qn)
				peer_msg_free(&p.q[--p.qn]);
		}
		if (runs % 64 == 0) {
			if (!witness_ping()) {
				check(false, "fuzz: witness answers after %lu runs",
				      runs);
				break;
			}
			pings++;
		}
	}
	if (have)
		peer_fini(&p);
	check(witness_ping(), "fuzz: the witness answers at the end");
	check(conns > 1 && mutated > 0,
	      "fuzz: %lu runs, %lu mutated frames, %lu connections", runs,
	      mutated, conns);
	printf("fuzz: seed %llu runs %lu mutated %lu resets %lu connections %lu witness_pings %lu\n",
	       seed, runs, mutated, resets, conns, pings);
	peer_fini(&witness);
	return 0;
}
