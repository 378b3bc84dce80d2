// SPDX-License-Identifier: GPL-2.0
/*
 * wire_peer's hostile-input tests (peer_hostile.sh): malformed frames and
 * handshakes (hostile), the module's connection answered wrongly
 * (active) and an ACK of messages queued but never sent (ackahead).
 */
#include <stdlib.h>
#include <string.h>

#include "wire_peer.h"

/* ---- hostile ---------------------------------------------------------- */

enum hcase_kind { H_RESET, H_STAY, H_REFUSE };

struct hcase {
	const char	*name;
	enum hcase_kind	kind;
	int		bad;	/* bad_frames it must add on host 1 */
	int		(*fn)(struct peer *p);
};

static int h_data(struct peer *p, u32 len, u32 dlen, u8 flags, bool csum)
{
	static u8 d[3 * PEER_FRAG];
	struct rds_header h;
	u8 g;

	peer_hdr_fill(p, &h, p->tx_next++, len, 7001, dport, flags);
	if (!rds_ib_credit_take(&p->cr, &g))
		return -1;
	h.h_credit = g;
	h.h_csum = peer_csum(&h);
	if (!csum)
		h.h_csum ^= 0x5a5a;
	return peer_send_frame(p, &h, d, dlen, true);
}

static int hc_csum(struct peer *p) { return h_data(p, 10, 10, 0, false); }
static int hc_fraglen(struct peer *p) { return h_data(p, 100, 50, 0, true); }
static int hc_fraglen0(struct peer *p) { return h_data(p, 0, 16, 0, true); }

/* A SEND of 20 bytes: shorter than a header. */
static int hc_short(struct peer *p)
{
	struct rds_header h;

	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_csum = peer_csum(&h);
	return peer_send_bytes(p, &h, 20, true);
}

static int hc_ctrl_data(struct peer *p)
{
	struct rds_header h;

	peer_hdr_fill(p, &h, 0, 16, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, "0123456789abcdef", 16, true);
}

static int hc_fragmix(struct peer *p)
{
	static u8 d[PEER_FRAG];
	struct rds_header h;

	peer_hdr_fill(p, &h, p->tx_next++, 8192, 7001, dport, 0);
	if (peer_send_data(p, &h, d, PEER_FRAG, 10000))
		return -1;
	peer_hdr_fill(p, &h, p->tx_next++, 8192, 7001, dport, 0);
	return peer_send_data(p, &h, d, PEER_FRAG, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_fragcount(struct peer *p)
{
	static u8 d[PEER_FRAG];
	struct rds_header h;

	/* 2 MiB: 512 fragments, twice what a message may have */
	peer_hdr_fill(p, &h, p->tx_next++, 2u << 20, 7001, dport, 0);
	return peer_send_data(p, &h, d, PEER_FRAG, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_fraglast(struct peer *p)
{
	static u8 d[PEER_FRAG];
	struct rds_header h;
	u64 seq = p->tx_next++;

	/* 4097 bytes: the second fragment must be 1 byte, not 4096 */
	peer_hdr_fill(p, &h, seq, 4097, 7001, dport, 0);
	if (peer_send_data(p, &h, d, PEER_FRAG, 10000))
		return -1;
	peer_hdr_fill(p, &h, seq, 4097, 7001, dport, 0);
	return peer_send_data(p, &h, d, PEER_FRAG, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_ack_unsent(struct peer *p)
{
	struct rds_header h;

	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_ack = cpu_to_be64(p->theirs.hello.tx_first + 1000);
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, NULL, 0, true);
}

static int hc_credit_absurd(struct peer *p)
{
	struct rds_header h;

	/* We granted credits in the handshake and nothing was used. */
	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_credit = 255;
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, NULL, 0, true);
}

static int hc_credit_one(struct peer *p)
{
	struct rds_header h;

	/* One more than we could have given back. */
	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_credit = 1;
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, NULL, 0, true);
}

static int hc_pack(struct peer *p, int what)
{
	u8 frame[PEER_FRAG] = { 0 };
	struct rds_header h, in;
	u32 used = 100;

	peer_hdr_fill(p, &h, p->tx_next++, 100, 7001, dport, RDS_IB_FLAG_PACK);
	peer_hdr_fill(p, &in, p->tx_next++, 50, 7001, dport, 0);
	in.h_ack = 0;
	if (what == 1)
		in.h_ack = cpu_to_be64(1);
	if (what == 3)
		in.h_flags = RDS_IB_FLAG_PACK;
	if (what == 4)
		in.h_len = cpu_to_be32(5000);
	in.h_csum = peer_csum(&in);
	if (what == 2)
		in.h_csum ^= 1;
	memcpy(frame + used, &in, sizeof(in));
	used += sizeof(in) + 50;
	if (what == 5)
		used = 100;	/* flagged packed, one message */
	if (what == 6)
		used = 130;	/* a header cut short */
	return peer_send_data(p, &h, frame, used, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_pack_ack(struct peer *p) { return hc_pack(p, 1); }
static int hc_pack_csum(struct peer *p) { return hc_pack(p, 2); }
static int hc_pack_flags(struct peer *p) { return hc_pack(p, 3); }
static int hc_pack_len(struct peer *p) { return hc_pack(p, 4); }
static int hc_pack_empty(struct peer *p) { return hc_pack(p, 5); }
static int hc_pack_short(struct peer *p) { return hc_pack(p, 6); }

/* A SEND bigger than the module's receive buffer (header + 8 KiB). */
static int hc_oversize(struct peer *p)
{
	static u8 d[2 * PEER_FRAG + 1024];
	struct rds_header h;

	peer_hdr_fill(p, &h, p->tx_next++, sizeof(d), 7001, dport, 0);
	peer_send_data(p, &h, d, sizeof(d), 10000);
	peer_send_drain(p, 10000);
	return 0;
}

static int hc_cong_size(struct peer *p)
{
	static u8 d[100];

	return peer_send_msg(p, 0, 0, RDS_FLAG_CONG_BITMAP, d, sizeof(d), 10000) ||
	       peer_send_drain(p, 10000) ||
	       wait_acked(p, p->tx_next - 1, 10000);
}

static int hc_noport(struct peer *p)
{
	return peer_send_msg(p, 7001, 9999, 0, "nobody", 6, 10000) ||
	       peer_send_drain(p, 10000) ||
	       wait_acked(p, p->tx_next - 1, 10000);
}

/* Sequence numbers outside the receive window (net/seq.h: 2^32 either
 * side of the next expected): the module resets the connection.
 */
static int hc_seq_far(struct peer *p)
{
	return peer_send_msg_at(p, p->tx_next + (1ull << 62), 7001, 9999, 0,
				"far", 3, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_seq_behind(struct peer *p)
{
	return peer_send_msg_at(p, p->tx_next - (1ull << 33), 7001, 9999,
				RDS_FLAG_RETRANSMITTED, "old", 3, 10000) ||
	       peer_send_drain(p, 10000);
}

/* A give-back (credit.h) of n credits, on a control frame (ctrl) or a
 * data frame of 10 bytes.
 */
static int h_return(struct peer *p, bool ctrl, u32 n)
{
	struct rds_header h;
	u8 d[10] = { 0 };

	if (!ctrl)
		return h_data(p, 10, 10, RDS_IB_FLAG_RETURN, true) ? -1 : 0;
	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL | RDS_IB_FLAG_RETURN);
	h.h_sport = cpu_to_be16(n);
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, d, 0, true);
}

static int hc_ret_zero(struct peer *p) { return h_return(p, true, 0); }
static int hc_ret_data(struct peer *p) { return h_return(p, false, 0); }

/* One more than would leave us RDS_IB_CREDIT_KEEP of the module's grant. */
static int hc_ret_below_keep(struct peer *p)
{
	return h_return(p, true, p->cr.avail - RDS_IB_CREDIT_KEEP + 1);
}

/* A correct one (the module's accept asked for it): it stays up. */
static int hc_ret_ok(struct peer *p)
{
	u32 n;

	if (!(p->theirs.flags & RDS_IB_HS_F_GIVEBACK)) {
		printf("# the module's accept did not ask for give-back\n");
		return -1;
	}
	n = rds_ib_credit_give_back(&p->cr, RDS_IB_CREDIT_KEEP, 0xffff);
	if (!n)
		return -1;
	return h_return(p, true, n);
}

static const struct hcase hcases[] = {
	{ "header checksum wrong", H_RESET, 1, hc_csum },
	{ "frame shorter than a header", H_RESET, 1, hc_short },
	{ "length does not match the fragment", H_RESET, 1, hc_fraglen },
	{ "empty message with data", H_RESET, 1, hc_fraglen0 },
	{ "control frame with data", H_RESET, 1, hc_ctrl_data },
	{ "fragment of another message", H_RESET, 1, hc_fragmix },
	{ "fragment count overflow (2 MiB)", H_RESET, 1, hc_fragcount },
	{ "last fragment too long", H_RESET, 1, hc_fraglast },
	{ "ACK of a message never sent", H_RESET, 1, hc_ack_unsent },
	{ "absurd credit grant (255)", H_RESET, 1, hc_credit_absurd },
	{ "credit grant one beyond the handshake", H_RESET, 1, hc_credit_one },
	{ "give-back of 0 credits", H_RESET, 1, hc_ret_zero },
	{ "give-back on a data frame", H_RESET, 1, hc_ret_data },
	{ "give-back leaving fewer than 4 credits", H_RESET, 1, hc_ret_below_keep },
	{ "give-back within the grant (asked for)", H_STAY, 0, hc_ret_ok },
	{ "packed: inner header with an ACK", H_RESET, 1, hc_pack_ack },
	{ "packed: inner checksum wrong", H_RESET, 1, hc_pack_csum },
	{ "packed: inner header flagged packed", H_RESET, 1, hc_pack_flags },
	{ "packed: inner length past the frame", H_RESET, 1, hc_pack_len },
	{ "packed: only one message", H_RESET, 1, hc_pack_empty },
	{ "packed: inner header cut short", H_RESET, 1, hc_pack_short },
	{ "SEND larger than a receive buffer", H_RESET, 0, hc_oversize },
	{ "congestion map of the wrong size", H_STAY, 1, hc_cong_size },
	{ "message to a port nobody bound", H_STAY, 0, hc_noport },
	{ "sequence number 2^62 ahead", H_RESET, 1, hc_seq_far },
	{ "retransmission 2^33 behind", H_RESET, 1, hc_seq_behind },
};

/* Handshakes off the ordinary: 0 accepted, else the refusal reason. */
static int hs_try(const void *pd, size_t len, int port)
{
	struct peer p;
	int reason = -1, r;

	if (witness.id)
		peer_poll(&witness, 0, false);	/* answer its heartbeats */
	if (peer_init(&p, credits))
		return -2;
	p.quiet = true;
	r = peer_connect(&p, src, dst, port, pd, len, 2, &reason);
	peer_fini(&p);
	return r == 0 ? 0 : r == 3 ? reason : -1;
}

int t_hostile(void)
{
	u8 pd[56];
	struct rds_ib_hs hs;
	unsigned int i;
	int bad = 0, resets = 0, r, n;

	if (up(&witness, wtos, credits)) {
		check(false, "witness connection (TOS %d) up", wtos);
		return 1;
	}
	check(witness_ping(), "witness connection (TOS %d) answers a ping", wtos);
	for (i = 0; i < sizeof(hcases) / sizeof(hcases[0]); i++) {
		const struct hcase *c = &hcases[i];
		struct peer p;
		bool ok;

		if (up(&p, tos, credits)) {
			check(false, "%s: connected", c->name);
			continue;
		}
		r = c->fn(&p);
		if (c->kind == H_RESET) {
			ok = !peer_wait_gone(&p, 15000);
			check(ok, "%s: the module reset the connection (%s)",
			      c->name, p.gone_why ?: "still up");
			resets += ok;
		} else {
			/* It must still take and acknowledge a message. */
			ok = !r && !peer_send_msg(&p, 7001, 9999,
						  RDS_FLAG_ACK_REQUIRED, "x", 1, 10000) &&
			     !wait_acked(&p, p.tx_next - 1, 10000);
			check(ok, "%s: the connection stays up and acknowledges", c->name);
		}
		bad += c->bad;
		peer_fini(&p);
		peer_poll(&witness, 0, false);
		check(witness_ping(), "%s: the witness connection still answers",
		      c->name);
	}
	/* Handshakes: oversized private data with junk after our 40 bytes
	 * (ignored), one byte short, every length 0..39 refused.
	 */
	peer_hs_default(&hs, gen_new(), credits, tos);
	memset(pd, 0xa5, sizeof(pd));
	rds_ib_hs_encode(&hs, pd);
	check(hs_try(pd, sizeof(pd), PEER_RDS_PORT) == 0,
	      "56 bytes of private data, junk after the handshake: accepted");
	/* Truncated: the IB CM pads private data to 56 bytes with zeros,
	 * so the module must answer what its own decoder makes of our
	 * bytes followed by zeros (a refusal or, at 39 bytes, which only
	 * cuts the reason byte, an accept).
	 */
	n = 0;
	{
		static const unsigned int cut[] = { 0, 4, 8, 13, 26, 36, 37, 39 };
		unsigned int k;

		for (k = 0; k < sizeof(cut) / sizeof(cut[0]); k++) {
			u8 z[56] = { 0 };
			struct rds_ib_hs d;
			int want, got;

			memcpy(z, pd, cut[k]);
			want = rds_ib_hs_decode(z, sizeof(z), &d);
			got = hs_try(pd, cut[k], PEER_RDS_PORT);
			printf("# private data cut to %u bytes: %s (decoder: %s)\n",
			       cut[k], got < 0 ? "no answer" :
			       rds_ib_hs_reason_name(got),
			       rds_ib_hs_reason_name(want));
			n += got == want;
		}
		check(n == (int)k,
		      "truncated private data (0..39 bytes): answered as the decoder reads it zero-padded (%d of %u)",
		      n, k);
	}
	pd[37] = 1;
	check(hs_try(pd, 40, PEER_RDS_PORT) == RDS_IB_HS_R_FLAGS,
	      "reserved byte set: refused (flags)");
	pd[37] = 0;
	check(hs_try(pd, 40, PEER_RDS_PORT + 1) == -1,
	      "rdma_cm port %d where nobody listens: no answer from RDS",
	      PEER_RDS_PORT + 1);
	check(witness_ping(), "after the handshakes: the witness answers");
	/* A flood of connection requests: valid ones replacing each other
	 * and garbage ones, back to back.
	 */
	{
		int acc = 0, ref = 0, k;

		for (k = 0; k < 30; k++) {
			u8 junk[56];
			unsigned int j;

			hs.hello.gen = gen_new();
			rds_ib_hs_encode(&hs, pd);
			acc += hs_try(pd, 40, PEER_RDS_PORT) == 0;
			for (j = 0; j < sizeof(junk); j++)
				junk[j] = (u8)rand();
			ref += hs_try(junk, 40, PEER_RDS_PORT) > 0;
		}
		check(acc == 30 && ref == 30,
		      "flood: %d of 30 valid requests accepted, %d of 30 garbage refused",
		      acc, ref);
		printf("flood accepted %d refused %d\n", acc, ref);
	}
	check(witness_ping(), "after the flood: the witness answers");
	{
		struct peer p;

		check(!up(&p, tos, credits) && !peer_send_msg(&p, 7001, 9999,
			RDS_FLAG_ACK_REQUIRED, "y", 1, 10000) &&
		      !wait_acked(&p, p.tx_next - 1, 10000),
		      "a fresh connection on TOS %d works", tos);
		peer_fini(&p);
	}
	check(!witness.st.violations, "the module kept every credit rule");
	stats(&witness, "witness");
	printf("expect bad_frames %d resets %d\n", bad, resets);
	peer_fini(&witness);
	return 0;
}

/* ---- active: the module connects to us ---------------------------------- */

/* Host 1 sends -n messages to us on a TOS nobody connected yet: its
 * module connects to us.  The first request is accepted with a malformed
 * handshake (magic wrong), the second with one whose rx_next acknowledges
 * messages never sent: the module must count each, end the attempt and
 * try again; the third is answered properly and the messages arrive.
 */
int t_active(void)
{
	struct peer p;
	struct peer_msg m;
	u8 junk[40];
	int i, got = 0, bad = 0;

	if (peer_init(&p, credits))
		return 1;
	p.accept_tos = tos;
	check(!peer_listen(&p, src, PEER_RDS_PORT), "listening on %s:%d", src,
	      PEER_RDS_PORT);
	printf("up\n");
	fflush(stdout);
	peer_hs_default(&p.mine, gen_new(), credits, tos);
	rds_ib_hs_encode(&p.mine, junk);
	junk[0] ^= 0xff;
	/* The module sees ESTABLISHED, then a bad handshake: it ends it. */
	i = !peer_accept_pd(&p, 180000, junk, sizeof(junk)) &&
	    !peer_wait_gone(&p, 30000);
	check(i, "request 1 (tx_first %llu) answered with a bad magic: the module ended it",
	      (unsigned long long)p.theirs.hello.tx_first);
	peer_disconnect(&p);
	/* An rx_next acknowledging what it never sent. */
	p.mine.hello.peer_gen = p.theirs.hello.gen;
	p.mine.hello.rx_next = p.theirs.hello.tx_first + 1000;
	check(!peer_accept(&p, 180000) && !peer_wait_gone(&p, 30000),
	      "request 2 answered acknowledging 1000 messages never sent: the module ended it");
	peer_disconnect(&p);
	p.mine.hello.peer_gen = 0;
	p.mine.hello.rx_next = 1;
	if (peer_accept(&p, 180000)) {
		check(false, "request 3 accepted");
		peer_fini(&p);
		return 1;
	}
	check(true, "request 3 accepted with a valid handshake");
	for (i = 0; i < count; i++) {
		if (peer_recv_msg(&p, &m, 180000))
			break;
		got++;
		if (!pattern_ok(&m, i, sizes[i % nsizes]) || m.dport != dport)
			bad++;
		peer_msg_free(&m);
	}
	check(got == count && !bad, "the %d messages arrived intact, in order (%d bad)",
	      count, bad);
	check(!p.st.violations, "the module kept every credit rule");
	stats(&p, "active");
	peer_poll(&p, 200, false);
	peer_fini(&p);
	return 0;
}

/* ---- ackahead: an ACK of messages queued, never sent ------------------ */

/* Host 1 sends -n messages; we grant -c credits and withhold the refills:
 * the module sends what our grant allows and keeps the others queued,
 * never sent whole.  Then we acknowledge the first of those (the module
 * may hold it for a packed frame or a credit, handed to its transport
 * but not posted): an ACK beyond what was posted is a bad frame, the
 * module must reset the connection, not free the messages as delivered.
 * It still holds every message, so it connects to us again and sends
 * them all, those sent before flagged RETRANSMITTED.
 */
int t_ackahead(void)
{
	struct peer p;
	struct peer_msg m;
	u64 seqs[1024], hi, ack;
	int i, n = 0, got = 0, bad = 0, flagged = 0;
	u32 gen;
	bool ok;

	if (count > 1024)
		return 2;
	if (up(&p, tos, credits)) {
		check(false, "connected");
		return 1;
	}
	check(true, "connected: the module grants us %u, tx_first %llu",
	      p.theirs.credits, (unsigned long long)p.theirs.hello.tx_first);
	gen = p.mine.hello.gen;
	p.withhold = true;
	p.no_ack = true;
	printf("up\n");
	fflush(stdout);
	withheld_grant_used(&p);
	while (n < count && !peer_recv_msg(&p, &m, 0)) {
		seqs[n] = m.seq;
		if ((n && m.seq != seqs[n - 1] + 1) ||
		    !pattern_ok(&m, n, sizes[n % nsizes]) || m.dport != dport) {
			if (bad++ < 5)
				printf("# message %d: len %u, dport %u, seq %llu\n",
				       n, m.len, m.dport,
				       (unsigned long long)m.seq);
		}
		n++;
		peer_msg_free(&m);
	}
	check(n > 0 && !bad,
	      "%d whole messages in our grant (%d in part), intact and in order, none acknowledged",
	      n, p.part_busy);
	if (!n || p.gone) {
		peer_fini(&p);
		return 1;
	}
	hi = p.part_busy ? be64_to_cpu(p.part.hdr.h_sequence) : seqs[n - 1];
	/* The first message not posted whole: one cut by the grant, else
	 * the next one, which the module may hold for a packed frame or a
	 * credit although it was handed to the transport.
	 */
	ack = p.part_busy ? hi : hi + 1;
	check(count - n >= 3,
	      "%d of host 1's %d messages not sent whole (from seq %llu): the ACK of seq %llu covers the first",
	      count - n, count, (unsigned long long)(seqs[n - 1] + 1),
	      (unsigned long long)ack);
	if (count - n < 3) {
		peer_fini(&p);
		return 1;
	}
	/* The module keeps its messages for us after a reset: it connects
	 * to us again.
	 */
	p.accept_tos = p.tos;
	check(!peer_listen(&p, src, PEER_RDS_PORT), "listening on %s:%d",
	      src, PEER_RDS_PORT);
	/* Still withholding: the ACK grants no credit. */
	p.no_ack = false;
	p.rx_last = ack;
	check(!peer_send_ctrl(&p, 0),
	      "ACK of seq %llu sent: the first message not sent whole (the last received whole: %llu)",
	      (unsigned long long)ack, (unsigned long long)seqs[n - 1]);
	ok = !peer_wait_gone(&p, 15000);
	check(ok, "ACK of a message never sent: the module reset the connection (%s)",
	      p.gone_why ?: "still up after 15 s");
	if (!ok)
		printf("# the module took the ACK: we drop the connection\n");
	peer_disconnect(&p);
	/* We delivered nothing: rx_next is the first it sent us. */
	p.withhold = false;
	p.no_ack = false;
	p.mine.hello.gen = gen;
	p.mine.hello.peer_gen = p.theirs.hello.gen;
	p.mine.hello.rx_next = seqs[0];
	p.mine.hello.tx_first = 1;
	if (peer_accept(&p, 120000)) {
		check(false, "the module connected to us again (waited 120 s)");
		peer_fini(&p);
		return 1;
	}
	check(p.theirs.hello.peer_gen == gen,
	      "the module connected to us again, knows us (gen %x) and holds from %llu",
	      gen, (unsigned long long)p.theirs.hello.tx_first);
	check(p.theirs.hello.tx_first == seqs[0],
	      "it still holds every message: its oldest is the first it sent (%llu), the ACK freed nothing",
	      (unsigned long long)seqs[0]);
	bad = 0;
	for (i = 0; i < count; i++) {
		if (peer_recv_msg(&p, &m, 60000)) {
			printf("# message %d of %d did not arrive (waited 60 s)\n",
			       i, count);
			break;
		}
		got++;
		flagged += !!(m.flags & RDS_FLAG_RETRANSMITTED);
		if (m.seq != seqs[0] + i || m.dport != dport ||
		    !pattern_ok(&m, i, sizes[i % nsizes]) ||
		    (i < n && !(m.flags & RDS_FLAG_RETRANSMITTED))) {
			if (bad++ < 5)
				printf("# message %d: seq %llu (want %llu), len %u, flags %x\n",
				       i, (unsigned long long)m.seq,
				       (unsigned long long)(seqs[0] + i), m.len,
				       m.flags);
		}
		peer_msg_free(&m);
	}
	check(got == count && !bad,
	      "all %d messages arrived, in order, intact, the %d sent before flagged RETRANSMITTED (%d of %d, %d bad)",
	      count, n, got, count, bad);
	printf("# %d of them flagged RETRANSMITTED\n", flagged);
	/* Nothing more may come (a bounded wait: the resend is a burst). */
	peer_poll(&p, 1500, false);
	check(!p.qn, "nothing beyond them (%u more)", p.qn);
	check(!p.st.violations, "the module kept every credit rule");
	stats(&p, "ackahead");
	peer_poll(&p, 200, false);
	peer_fini(&p);
	return 0;
}
