// SPDX-License-Identifier: GPL-2.0
/*
 * Extension-header chains (exthdr.h).  Pure: no locks, no allocation.
 */
#include "exthdr.h"

unsigned int rds_exthdr_body_len(u8 type)
{
	switch (type) {
	case RDS_EXTHDR_VERSION:
	case RDS_EXTHDR_RDMA:
	case RDS_EXTHDR_GEN_NUM:
		return 4;
	case RDS_EXTHDR_RDMA_DEST:
		return 8;
	case RDS_EXTHDR_NPATHS:
		return 2;
	default:
		return 0;
	}
}

static void rds_exthdr_put32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static u32 rds_exthdr_get32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

bool rds_exthdr_add(u8 *ext, unsigned int *off, u8 type, const u32 *vals,
		    unsigned int n)
{
	unsigned int len = rds_exthdr_body_len(type), i;

	/* type byte, body, and room for the terminating 0 */
	if (!len || len != 4 * n || *off >= RDS_EXTHDR_SPACE ||
	    RDS_EXTHDR_SPACE - *off < 1 + len + 1)
		return false;
	ext[*off] = type;
	for (i = 0; i < n; i++)
		rds_exthdr_put32(ext + *off + 1 + 4 * i, vals[i]);
	*off += 1 + len;
	ext[*off] = RDS_EXTHDR_NONE;
	return true;
}

bool rds_exthdr_find(const u8 *ext, u8 type, u32 *vals, unsigned int n)
{
	unsigned int off = 0, len, i;

	while (off < RDS_EXTHDR_SPACE && ext[off] != RDS_EXTHDR_NONE) {
		len = rds_exthdr_body_len(ext[off]);
		if (!len || RDS_EXTHDR_SPACE - off - 1 < len)
			return false;
		if (ext[off] == type) {
			for (i = 0; i < n && 4 * i + 4 <= len; i++)
				vals[i] = rds_exthdr_get32(ext + off + 1 + 4 * i);
			return i == n;
		}
		off += 1 + len;
	}
	return false;
}
