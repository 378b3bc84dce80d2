// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/ib/frame.c, the layout of packed frames.
 *
 * The sender's rule (rds_ib_pack_fits) is compared with a reference in
 * 64-bit arithmetic over every small case and the edges of u32.  Frames
 * are packed with it from random message sizes (printed seed), laid out
 * byte for byte as the wire carries them, and walked back with the
 * receiver's functions: every message must come back, in order, with its
 * header and data.  Every truncation and random corruption of such frames
 * must be refused or yield only messages inside the frame; the frame data
 * sits in a buffer of exactly its size, so ASan catches any read past it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "../../../net/ib/frame.h"

static void put_be(unsigned char *p, u64 v, int n)
{
	while (n--) {
		p[n] = v & 0xff;
		v >>= 8;
	}
}

static u64 get_be(const unsigned char *p, int n)
{
	u64 v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

static bool ref_fits(u64 used, unsigned int n, u64 len, u64 frag,
		     unsigned int max)
{
	u64 cost = n ? 48 + len : len;

	return n < max && used <= frag && len <= frag && used + cost <= frag;
}

#define FRAG	8192	/* a receive buffer between our modules (RDS_IB_RX_BYTES) */
#define MAXMSG	64	/* messages in one test frame, at most */

struct msg {
	u64 seq;
	u32 len;
	u8 flags;
	u8 fill;
};

/* A header as the sender writes it (the checksum is not the walker's). */
static void hdr_make(unsigned char *h, const struct msg *m, bool first,
		     bool packed)
{
	memset(h, 0, 48);
	put_be(h, m->seq, 8);
	if (first)
		put_be(h + 8, 12345, 8);	/* the frame's ACK */
	put_be(h + 16, m->len, 4);
	h[24] = m->flags | (packed ? RDS_IB_FLAG_PACK : 0);
	if (first)
		h[25] = 7;			/* the frame's credits */
}

/* Pack msgs[from..] into one frame as the sender does: returns how many
 * went in; hdr gets the first header, data/data_len the rest.
 */
static unsigned int pack(const struct msg *msgs, unsigned int nmsgs,
			 unsigned int max, unsigned char *hdr,
			 unsigned char *data, u32 *data_len)
{
	unsigned int n = 0;
	u32 used = 0;

	while (n < nmsgs &&
	       rds_ib_pack_fits(used, n, msgs[n].len, FRAG, max)) {
		if (n) {
			hdr_make(data + used, &msgs[n], false, false);
			memset(data + used + 48, msgs[n].fill, msgs[n].len);
		} else {
			memset(data, msgs[0].fill, msgs[0].len);
		}
		used += rds_ib_pack_cost(n, msgs[n].len);
		n++;
	}
	hdr_make(hdr, &msgs[0], true, n > 1);
	*data_len = used;
	return n;
}

/* Walk a frame as the receiver does.  Returns the messages it yields (in
 * out) and the error it stopped at (OK: walked to the end).
 */
static enum rds_ib_frame_err walk(const unsigned char *hdr,
				  const unsigned char *data, u32 data_len,
				  struct msg *out, unsigned int *nout)
{
	u32 len = get_be(hdr + 16, 4), off, hoff;
	enum rds_ib_frame_err err;

	*nout = 0;
	err = rds_ib_pack_first(len, hdr[24] & ~RDS_IB_FLAG_PACK, data_len);
	if (err)
		return err;
	out[0].seq = get_be(hdr, 8);
	out[0].len = len;
	out[0].fill = len ? data[0] : 0;
	*nout = 1;
	for (off = len; off < data_len; ) {
		u32 before = off;

		err = rds_ib_pack_next(data, data_len, &off, &hoff, &len);
		if (err)
			return err;
		EXPECT(hoff == before && off == hoff + 48 + len &&
		       off <= data_len, "walker bounds");
		EXPECT(!(data[hoff + 24] & (RDS_IB_FLAG_CTRL | RDS_IB_FLAG_HB |
					    RDS_IB_FLAG_PACK | 1)) &&
		       !get_be(data + hoff + 8, 8) && !data[hoff + 25],
		       "an accepted inner header breaks the rules");
		if (*nout < MAXMSG) {
			out[*nout].seq = get_be(data + hoff, 8);
			out[*nout].len = len;
			out[*nout].fill = len ? data[hoff + 48] : 0;
		}
		(*nout)++;
	}
	return RDS_IB_FRAME_OK;
}

static void random_msgs(struct msg *m, unsigned int n, u64 *seq)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		switch (rnd() % 4) {
		case 0:
			m[i].len = rnd() % 65;
			break;
		case 1:
			m[i].len = 1024;
			break;
		case 2:
			m[i].len = rnd() % (FRAG - 48 + 1);
			break;
		default:
			m[i].len = rnd() % 1500;
			break;
		}
		m[i].seq = (*seq)++;
		m[i].flags = rnd() % 8 & ~1;	/* ACK_REQUIRED, RETRANSMITTED */
		m[i].fill = rnd();
	}
}

int main(int argc, char **argv)
{
	u64 seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (u64)time(NULL);
	static const u32 edges[] = { 0, 1, 47, 48, 49, 4047, 4048, 4095, 4096,
				     4097, 0x7fffffff, 0xffffffcf, 0xffffffd0,
				     0xfffffffe, 0xffffffff };
	unsigned int hist[RDS_IB_PACK_MAX + 1] = { 0 };
	unsigned char hdr[48], *frame = malloc(FRAG);
	struct msg in[MAXMSG], out[MAXMSG];
	u64 seq = 1, cases = 0, msgs = 0;
	unsigned int i, j, k, n, nout;
	u32 used, len, data_len;
	int f;

	rng = seed | 1;
	printf("TAP version 13\n1..6\n# seed 0x%llx (rerun: %s 0x%llx)\n",
	       (unsigned long long)seed, argv[0], (unsigned long long)seed);

	f = failures;
	for (used = 0; used <= 300; used++)
		for (len = 0; len <= 300; len++)
			for (n = 0; n <= 5; n++)
				for (k = 0; k <= 5; k++) {
					EXPECT(rds_ib_pack_fits(used, n, len, 256, k) ==
					       ref_fits(used, n, len, 256, k),
					       "fits(%u, %u, %u, 256, %u)", used, n,
					       len, k);
					cases++;
				}
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		for (j = 0; j < sizeof(edges) / sizeof(edges[0]); j++)
			for (k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
				for (n = 0; n <= 2; n++) {
					EXPECT(rds_ib_pack_fits(edges[i], n, edges[j],
								edges[k], 4) ==
					       ref_fits(edges[i], n, edges[j],
							edges[k], 4),
					       "fits edge %u %u %u n %u", edges[i],
					       edges[j], edges[k], n);
					cases++;
				}
	printf("# %llu cases\n", (unsigned long long)cases);
	report("pack_fits agrees with the reference (every small case, u32 edges)",
	       f);

	f = failures;
	for (i = 0; i < 200000; i++) {
		unsigned int max = 1 + rnd() % RDS_IB_PACK_MAX;
		unsigned char *exact;
		enum rds_ib_frame_err err;

		random_msgs(in, 8, &seq);
		n = pack(in, 8, max, hdr, frame, &data_len);
		EXPECT(n >= 1 && n <= max && data_len <= FRAG, "pack %u", n);
		hist[n]++;
		msgs += n;
		if (n == 1)
			continue;	/* a plain data frame, not packed */
		exact = malloc(data_len);
		memcpy(exact, frame, data_len);
		err = walk(hdr, exact, data_len, out, &nout);
		EXPECT(!err && nout == n, "walk: %s, %u of %u",
		       rds_ib_frame_err_name(err), nout, n);
		for (j = 0; j < n && j < nout; j++)
			EXPECT(out[j].seq == in[j].seq && out[j].len == in[j].len &&
			       (!in[j].len || out[j].fill == in[j].fill),
			       "message %u of %u", j, n);
		/* and the sender never packs what would not fit */
		EXPECT(!rds_ib_pack_fits(data_len, n, n < 8 ? in[n].len : 0,
					 FRAG, max) || n == 8, "stopped early");
		free(exact);
	}
	printf("# %llu messages in 200000 frames; frames of 1..%u messages:",
	       (unsigned long long)msgs, RDS_IB_PACK_MAX);
	for (i = 1; i <= RDS_IB_PACK_MAX; i++)
		printf(" %u", hist[i]);
	printf("\n");
	report("200000 random frames: packed and walked back, every message intact",
	       f);

	f = failures;
	cases = 0;
	for (i = 0; i < 1500; i++) {
		random_msgs(in, 8, &seq);
		n = pack(in, 8, RDS_IB_PACK_MAX, hdr, frame, &data_len);
		if (n == 1)
			continue;
		for (len = 0; len < data_len; len++) {
			unsigned char *exact = malloc(len ? len : 1);
			enum rds_ib_frame_err err;
			u32 end = in[0].len;

			memcpy(exact, frame, len);
			err = walk(hdr, exact, len, out, &nout);
			/* accepted only if it ends on a message boundary */
			for (j = 1; j < nout && j < n; j++)
				end += 48 + in[j].len;
			if (!err)
				EXPECT(nout < n && end == len,
				       "cut at %u of %u accepted (%u messages)",
				       len, data_len, nout);
			free(exact);
			cases++;
		}
	}
	printf("# %llu truncations\n", (unsigned long long)cases);
	report("every truncation: refused, or a prefix ending on a boundary", f);

	f = failures;
	cases = 0;
	for (i = 0; i < 100000; i++) {
		unsigned char *exact;

		random_msgs(in, 8, &seq);
		n = pack(in, 8, RDS_IB_PACK_MAX, hdr, frame, &data_len);
		if (n == 1)
			continue;
		exact = malloc(data_len);
		memcpy(exact, frame, data_len);
		for (j = 1 + rnd() % 4; j; j--) {
			if (rnd() % 2)
				exact[rnd() % data_len] ^= 1 << rnd() % 8;
			else
				exact[rnd() % data_len] = rnd();
		}
		if (rnd() % 4 == 0)
			put_be(hdr + 16, rnd() % (FRAG + 100), 4);
		walk(hdr, exact, data_len, out, &nout);
		free(exact);
		cases++;
	}
	printf("# %llu corrupted frames walked\n", (unsigned long long)cases);
	report("random corruption: the walker stays inside the frame", f);

	f = failures;
	EXPECT(rds_ib_pack_first(10, RDS_IB_FLAG_CTRL, 100) == RDS_IB_FRAME_E_FLAGS,
	       "control");
	EXPECT(rds_ib_pack_first(10, RDS_IB_FLAG_HB, 100) == RDS_IB_FRAME_E_FLAGS,
	       "heartbeat");
	EXPECT(rds_ib_pack_first(10, 1, 100) == RDS_IB_FRAME_E_FLAGS, "cong map");
	EXPECT(rds_ib_pack_first(101, 0, 100) == RDS_IB_FRAME_E_LEN, "too long");
	EXPECT(rds_ib_pack_first(100, 0, 100) == RDS_IB_FRAME_E_EMPTY, "empty");
	EXPECT(rds_ib_pack_first(0xffffffff, 0, 100) == RDS_IB_FRAME_E_LEN, "huge");
	EXPECT(rds_ib_pack_first(0, 6, 100) == RDS_IB_FRAME_OK, "ok");
	memset(frame, 0, 200);
	put_be(frame + 16, 10, 4);
	frame[24] = RDS_IB_FLAG_PACK;
	used = 0;
	EXPECT(rds_ib_pack_next(frame, 200, &used, &i, &len) ==
	       RDS_IB_FRAME_E_FLAGS, "inner packed flag");
	frame[24] = 0;
	frame[25] = 1;
	EXPECT(rds_ib_pack_next(frame, 200, &used, &i, &len) ==
	       RDS_IB_FRAME_E_FIELDS, "inner credits");
	frame[25] = 0;
	frame[15] = 1;
	EXPECT(rds_ib_pack_next(frame, 200, &used, &i, &len) ==
	       RDS_IB_FRAME_E_FIELDS, "inner ACK");
	frame[15] = 0;
	EXPECT(rds_ib_pack_next(frame, 57, &used, &i, &len) ==
	       RDS_IB_FRAME_E_LEN, "inner data past the end");
	EXPECT(rds_ib_pack_next(frame, 47, &used, &i, &len) ==
	       RDS_IB_FRAME_E_SHORT, "inner header cut");
	EXPECT(rds_ib_pack_next(frame, 58, &used, &i, &len) == RDS_IB_FRAME_OK &&
	       used == 58 && i == 0 && len == 10, "inner ok");
	used = 59;
	EXPECT(rds_ib_pack_next(frame, 58, &used, &i, &len) ==
	       RDS_IB_FRAME_E_SHORT, "offset past the end");
	report("each refusal of a first or inner header", f);

	f = failures;
	for (i = 0; i <= RDS_IB_FRAME_E_MAX; i++)
		EXPECT(rds_ib_frame_err_name(i) && *rds_ib_frame_err_name(i),
		       "error %u has a name", i);
	report("every frame error has a name", f);
	free(frame);
	return failures ? 1 : 0;
}
