// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of net/exthdr.c (extension-header chains) and of the outcome
 * rule of RDMA ops in net/seq.c (rds_seq_op_status, rds_seq_op_notify).
 *
 * Chains: every combination of the records the module writes (RDMA,
 * RDMA_DEST, in both orders, with every key and offset edge) is written
 * and read back; a record that does not fit is refused and leaves the
 * chain as it was.  The reader is compared with a reference walker over
 * every 16-byte header whose bytes come from a small alphabet at each
 * position of interest, and over random headers (printed seed); the
 * header sits in a buffer of exactly 16 bytes, so ASan catches any read
 * past it.
 *
 * Ops: every end (acked, dropped, cancelled) with every completion status
 * gives the status the rules of Documentation/rdma.md name, and the sender
 * is told exactly when it asked or when a failure meets RDS_RECVERR.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "../../../net/exthdr.h"
#include "../../../net/seq.h"

/* The reference: a straightforward walk with its own length table. */
static int ref_len(u8 t)
{
	static const int len[256] = { [1] = 4, [2] = 4, [3] = 8, [5] = 2,
				      [6] = 4 };
	return len[t];
}

static bool ref_find(const u8 *e, u8 type, u32 *vals, unsigned int n)
{
	int off = 0;

	while (off < 16) {
		int t = e[off], l;

		if (!t)
			return false;
		l = ref_len(t);
		if (!l || off + 1 + l > 16)
			return false;
		if (t == type) {
			unsigned int i;

			if ((unsigned int)l < 4 * n)
				return false;
			for (i = 0; i < n; i++) {
				const u8 *p = e + off + 1 + 4 * i;

				vals[i] = (u32)p[0] << 24 | (u32)p[1] << 16 |
					  (u32)p[2] << 8 | p[3];
			}
			return true;
		}
		off += 1 + l;
	}
	return false;
}

static void compare(const u8 *src)
{
	static const u8 types[] = { 0, 1, 2, 3, 4, 5, 6, 7, 255 };
	u8 *e = malloc(16);
	unsigned int i, n;

	memcpy(e, src, 16);
	for (i = 0; i < sizeof(types); i++) {
		for (n = 0; n <= 2; n++) {
			u32 a[2] = { 7, 7 }, b[2] = { 7, 7 };
			bool got = rds_exthdr_find(e, types[i], a, n);
			bool want = ref_find(e, types[i], b, n);

			EXPECT(got == want, "find type %u n %u: %d, want %d",
			       types[i], n, got, want);
			if (got && want)
				EXPECT(!memcmp(a, b, sizeof(a)),
				       "values of type %u differ", types[i]);
		}
	}
	free(e);
}

static void test_roundtrip(void)
{
	static const u32 edge[] = { 0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff,
				    0x10000, 0x7fffffff, 0x80000000,
				    0xfffffffe, 0xffffffff };
	unsigned int i, j, k, order, before = failures;
	unsigned long cases = 0;

	for (order = 0; order < 2; order++)
	for (i = 0; i < 12; i++)
	for (j = 0; j < 12; j++)
	for (k = 0; k < 12; k++) {
		u8 *e = calloc(1, 16);
		unsigned int off = 0;
		u32 rkey = edge[i], dest[2] = { edge[j], edge[k] }, v[2];
		bool ok;

		if (order) {
			ok = rds_exthdr_add(e, &off, RDS_EXTHDR_RDMA_DEST, dest, 2) &&
			     rds_exthdr_add(e, &off, RDS_EXTHDR_RDMA, &rkey, 1);
		} else {
			ok = rds_exthdr_add(e, &off, RDS_EXTHDR_RDMA, &rkey, 1) &&
			     rds_exthdr_add(e, &off, RDS_EXTHDR_RDMA_DEST, dest, 2);
		}
		EXPECT(ok && off == 14, "both records fit (off %u)", off);
		EXPECT(rds_exthdr_find(e, RDS_EXTHDR_RDMA, v, 1) && v[0] == rkey,
		       "rkey back");
		EXPECT(rds_exthdr_find(e, RDS_EXTHDR_RDMA_DEST, v, 2) &&
		       v[0] == dest[0] && v[1] == dest[1], "dest back");
		EXPECT(!rds_exthdr_find(e, RDS_EXTHDR_GEN_NUM, v, 1),
		       "absent type not found");
		compare(e);
		/* A third record does not fit: refused, chain unchanged. */
		{
			u8 copy[16];
			unsigned int off2 = off;

			memcpy(copy, e, 16);
			EXPECT(!rds_exthdr_add(e, &off2, RDS_EXTHDR_RDMA, &rkey, 1),
			       "no room refused");
			EXPECT(off2 == off && !memcmp(copy, e, 16),
			       "refusal left the chain alone");
		}
		free(e);
		cases++;
	}
	{
		u8 *e = calloc(1, 16);
		unsigned int off = 0;
		u32 v[2] = { 1, 2 };

		EXPECT(!rds_exthdr_add(e, &off, RDS_EXTHDR_NPATHS, v, 1),
		       "a 2-byte body cannot be written as 32-bit values");
		EXPECT(!rds_exthdr_add(e, &off, 9, v, 1), "unknown type refused");
		EXPECT(!rds_exthdr_add(e, &off, RDS_EXTHDR_RDMA_DEST, v, 1),
		       "wrong value count refused");
		off = 16;
		EXPECT(!rds_exthdr_add(e, &off, RDS_EXTHDR_RDMA, v, 1),
		       "offset at the end refused");
		free(e);
	}
	printf("# %lu round trips\n", cases);
	report("exthdr: records written and read back, overflow refused", before);
}

/* Every header with bytes from a small alphabet at the positions where
 * chains branch, then random headers.
 */
static void test_walker(void)
{
	static const u8 alpha[] = { 0, 1, 2, 3, 5, 6, 9, 0xff };
	unsigned int before = failures, i;
	unsigned long cases = 0;
	u8 e[16];

	/* positions 0, 5, 9, 13, 15 (where the records of 4-byte bodies
	 * and the 8-byte one can start), the rest filled with 0x11
	 */
	for (i = 0; i < 8 * 8 * 8 * 8 * 8; i++) {
		unsigned int x = i;

		memset(e, 0x11, sizeof(e));
		e[0] = alpha[x % 8]; x /= 8;
		e[5] = alpha[x % 8]; x /= 8;
		e[9] = alpha[x % 8]; x /= 8;
		e[13] = alpha[x % 8]; x /= 8;
		e[15] = alpha[x % 8];
		compare(e);
		cases++;
	}
	for (i = 0; i < 200000; i++) {
		unsigned int j;

		for (j = 0; j < 16; j++)
			e[j] = rnd() % 4 ? alpha[rnd() % 8] : rnd();
		compare(e);
		cases++;
	}
	printf("# %lu headers walked\n", cases);
	report("exthdr: reader agrees with a reference walker, stays inside", before);
}

static void test_op_status(void)
{
	static const int errs[] = { RDS_SEQ_ST_SUCCESS, RDS_SEQ_ST_REMOTE_ERROR,
				    RDS_SEQ_ST_OTHER_ERROR };
	unsigned int before = failures, e, end, nm, re;

	for (e = 0; e < 3; e++) {
		for (end = RDS_OP_END_ACKED; end <= RDS_OP_END_CANCELED; end++) {
			int st = rds_seq_op_status(end, errs[e]);
			int want = errs[e] != RDS_SEQ_ST_SUCCESS ? errs[e] :
				   end == RDS_OP_END_ACKED ? RDS_SEQ_ST_SUCCESS :
				   end == RDS_OP_END_CANCELED ? RDS_SEQ_ST_CANCELED :
				   RDS_SEQ_ST_DROPPED;

			EXPECT(st == want, "end %u err %d: %d, want %d", end,
			       errs[e], st, want);
			for (nm = 0; nm < 2; nm++)
				for (re = 0; re < 2; re++)
					EXPECT(rds_seq_op_notify(st, nm, re) ==
					       (nm || (st != RDS_SEQ_ST_SUCCESS && re)),
					       "notify st %d me %u recverr %u",
					       st, nm, re);
		}
	}
	/* A dropped op is never reported a success; an acked one without
	 * a failed completion always is.
	 */
	EXPECT(rds_seq_op_status(RDS_OP_END_DROPPED, RDS_SEQ_ST_SUCCESS) !=
	       RDS_SEQ_ST_SUCCESS, "dropped is not success");
	report("op outcome: status per end and completion, who is told", before);
}

int main(void)
{
	unsigned long seed = getenv("SEED") ? strtoul(getenv("SEED"), NULL, 0) :
			     (unsigned long)time(NULL);

	rng = seed | 1;
	printf("TAP version 13\n1..3\n# seed %lu (SEED=%lu replays)\n", seed, seed);
	test_roundtrip();
	test_walker();
	test_op_status();
	return failures ? 1 : 0;
}
