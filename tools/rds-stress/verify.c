// SPDX-License-Identifier: GPL-2.0
/*
 * Building and checking messages.  Each payload byte is a function of the
 * message's seed, which the receiver derives on its own from the run, the
 * flow, the op and the sequence number it expects; the header carries an
 * FNV-1a checksum of the payload and a checksum of itself.
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "rds_stress.h"

#define FNV_OFF		0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

/* FNV-1a over 64-bit words (then the tail bytes): cheap under emulation. */
uint64_t fnv64(const uint8_t *p, size_t n)
{
	uint64_t h = FNV_OFF, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * FNV_PRIME;
	}
	while (n--)
		h = (h ^ *p++) * FNV_PRIME;
	return h;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t msg_seed(const struct run *r, int from_active, unsigned int src,
		  unsigned int dst, int op, uint64_t seq)
{
	uint64_t s = r->o.run_id;

	s = mix64(s ^ ((uint64_t)from_active << 56 | (uint64_t)src << 40 |
		       (uint64_t)dst << 24 | (uint64_t)op << 16));
	return mix64(s ^ seq) | 1;
}

/* The seed of one message of socket sock's flow (sock < 256, dst < 64). */
static uint64_t flow_seed(const struct run *r, int from_active,
			  unsigned int src, unsigned int dst, unsigned int sock,
			  int op, uint64_t seq)
{
	return msg_seed(r, from_active, src, dst | sock << 8, op, seq);
}

/*
 * --size-mix: a pure function of (seed, side, flow, socket, seq), so that
 * both sides know every length and the same seed replays a run.  Half
 * the draws are boundaries (o->mix), the rest uniform up to -q, one in
 * eight of them below 2 headers (uniform up to 1M seldom is).
 */
static uint32_t mix_len(const struct options *o, int from_active,
			unsigned int src, unsigned int dst, unsigned int sock,
			uint64_t seq)
{
	uint64_t x = mix64(o->mix_seed ^ mix64((uint64_t)from_active << 56 |
					       (uint64_t)src << 40 |
					       (uint64_t)dst << 24 |
					       (uint64_t)sock << 8 | 0x5a));

	x = mix64(x ^ seq);
	switch (x & 7) {
	case 0: case 1: case 2: case 3:
		if (o->nmix)
			return o->mix[(x >> 8) % o->nmix];
		/* fall through */
	case 4: case 5: case 6:
		return (uint32_t)((x >> 8) % ((uint64_t)o->req_bytes + 1));
	default:
		return (uint32_t)((x >> 8) % (2 * HDR_BYTES));
	}
}

uint32_t req_len(const struct options *o, int from_active, unsigned int src,
		 unsigned int dst, unsigned int sock, uint64_t seq)
{
	if (o->size_mix)
		return mix_len(o, from_active, src, dst, sock, seq);
	if (o->nsizes)
		return o->sizes[(seq - 1 + src + dst + sock) % o->nsizes];
	return o->req_bytes;
}

static inline uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

void pattern_fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		w = xorshift(&seed);
		memcpy(p, &w, 8);
	}
	if (n) {
		w = xorshift(&seed);
		memcpy(p, &w, n);
	}
}

/* Offset of the first byte that differs from the pattern, or -1. */
long pattern_find(const uint8_t *p, size_t n, uint64_t seed, uint8_t *want,
		  uint8_t *got)
{
	size_t off = 0, k;
	uint64_t w;
	uint8_t b[8];

	while (off < n) {
		size_t c = n - off < 8 ? n - off : 8;

		w = xorshift(&seed);
		memcpy(b, &w, 8);
		if (memcmp(p + off, b, c)) {
			for (k = 0; k < c; k++)
				if (p[off + k] != b[k]) {
					*want = b[k];
					*got = p[off + k];
					return (long)(off + k);
				}
		}
		off += c;
	}
	return -1;
}

static uint32_t hdr_csum(const struct msg_hdr *h)
{
	struct msg_hdr c = *h;
	uint64_t f;

	c.hcsum = 0;
	f = fnv64((const uint8_t *)&c, sizeof(c));
	return (uint32_t)(f ^ (f >> 32));
}

/* The seed of a REQ shorter than the header: its length is part of it. */
static uint64_t short_seed(const struct run *r, int from_active,
			   unsigned int src, unsigned int dst,
			   unsigned int sock, uint64_t seq, uint32_t len)
{
	return flow_seed(r, from_active, src, dst, sock, OP_SHORT, seq) ^
	       ((uint64_t)len << 32);
}

void msg_build(const struct run *r, uint8_t *buf, uint32_t len, int op,
	       unsigned int src, unsigned int dst, unsigned int sock,
	       uint64_t seq, uint64_t ts_ns, int rdma_op, uint64_t cookie)
{
	struct msg_hdr *h = (struct msg_hdr *)buf;
	uint8_t *pl = buf + HDR_BYTES;
	uint32_t plen = len - HDR_BYTES;

	if (len < HDR_BYTES) {	/* only REQs: no header, all pattern */
		pattern_fill(buf, len, short_seed(r, r->o.active, src, dst,
						  sock, seq, len));
		return;
	}
	memset(h, 0, sizeof(*h));
	h->magic = htobe32(MSG_MAGIC);
	h->version = MSG_VERSION;
	h->op = op;
	h->from_active = r->o.active;
	h->src_task = htobe16(src);
	h->dst_task = htobe16(dst);
	h->msg_bytes = htobe32(len);
	h->seq = htobe64(seq);
	h->sock = htobe32(sock);
	h->run_id = htobe64(r->o.run_id);
	h->ts_ns = htobe64(ts_ns);
	h->req_bytes = htobe32(r->o.req_bytes);
	h->ack_bytes = htobe32(r->o.ack_bytes);
	if (rdma_op) {
		h->rdma_op = rdma_op;
		h->rdma_bytes = htobe32(r->o.rdma_bytes);
		h->rdma_cookie = htobe64(cookie);
	}
	if (r->o.verify && plen) {
		pattern_fill(pl, plen, flow_seed(r, r->o.active, src, dst,
						 sock, op, seq));
		h->csum = htobe64(fnv64(pl, plen));
	}
	h->hcsum = htobe32(hdr_csum(h));
}

#define WHY(...) do { snprintf(why, whylen, __VA_ARGS__); return -1; } while (0)

/*
 * Checks what does not depend on the flow's state: framing, header,
 * sizes and payload.  The caller checks the sequence number.
 */
int short_check(const struct run *r, const uint8_t *buf, uint32_t len,
		unsigned int src, unsigned int dst, unsigned int sock,
		uint64_t seq, char *why, size_t whylen)
{
	int from = !r->o.active;
	uint32_t want = req_len(&r->o, from, src, dst, sock, seq);
	uint8_t w = 0, g = 0;
	long off;

	if (r->o.one_way && !from)
		WHY("one-way run: a message of %u bytes (shorter than a header: a REQ) arrived from the passive side",
		    len);
	if (len != want)
		WHY("REQ seq %llu length: expected %u, arrived %u (shorter than a header, so taken for the next REQ of the flow%s)",
		    (unsigned long long)seq, want, len,
		    want < len ? "; a REQ lost before it?" : "");
	off = pattern_find(buf, len, short_seed(r, from, src, dst, sock, seq,
						len), &w, &g);
	if (off >= 0)
		WHY("REQ seq %llu of %u bytes (no header): byte %ld: expected 0x%02x, arrived 0x%02x (corrupt, or not REQ seq %llu: lost, duplicated or reordered)",
		    (unsigned long long)seq, len, off, w, g,
		    (unsigned long long)seq);
	return 0;
}

int msg_check(const struct run *r, const uint8_t *buf, uint32_t len,
	      unsigned int dst, unsigned int sock, char *why, size_t whylen,
	      struct msg_hdr *out)
{
	const struct msg_hdr *w = (const struct msg_hdr *)buf;
	struct msg_hdr h;
	uint32_t want_len, plen, hc;
	uint64_t csum;

	if (len < HDR_BYTES)
		WHY("short message: %u bytes arrived, a header is %u", len,
		    HDR_BYTES);
	memcpy(&h, w, sizeof(h));
	h.magic = be32toh(w->magic);
	h.src_task = be16toh(w->src_task);
	h.dst_task = be16toh(w->dst_task);
	h.msg_bytes = be32toh(w->msg_bytes);
	h.seq = be64toh(w->seq);
	h.run_id = be64toh(w->run_id);
	h.ts_ns = be64toh(w->ts_ns);
	h.req_bytes = be32toh(w->req_bytes);
	h.ack_bytes = be32toh(w->ack_bytes);
	h.csum = be64toh(w->csum);
	h.hcsum = be32toh(w->hcsum);
	h.rdma_cookie = be64toh(w->rdma_cookie);
	h.rdma_bytes = be32toh(w->rdma_bytes);
	h.sock = be32toh(w->sock);
	*out = h;

	if (h.magic != MSG_MAGIC)
		WHY("bad magic: expected %08x, arrived %08x", MSG_MAGIC,
		    h.magic);
	hc = hdr_csum(w);
	if (hc != h.hcsum)
		WHY("header checksum: expected %08x, arrived %08x", hc,
		    h.hcsum);
	if (h.version != MSG_VERSION)
		WHY("header version: expected %u, arrived %u", MSG_VERSION,
		    h.version);
	if (h.run_id != r->o.run_id)
		WHY("run id: expected %016llx, arrived %016llx (a message of another run)",
		    (unsigned long long)r->o.run_id,
		    (unsigned long long)h.run_id);
	if (h.op != OP_REQ && h.op != OP_ACK)
		WHY("op: expected REQ or ACK, arrived %u", h.op);
	if (h.from_active == r->o.active)
		WHY("sender side: a message from the %s side arrived at the %s side",
		    h.from_active ? "active" : "passive",
		    r->o.active ? "active" : "passive");
	if (h.op == OP_REQ && r->o.one_way && !h.from_active)
		WHY("one-way run: a REQ arrived from the passive side");
	if (h.src_task >= r->o.tasks)
		WHY("source task: expected < %u, arrived %u", r->o.tasks,
		    h.src_task);
	if (h.dst_task != dst)
		WHY("destination task: expected %u, arrived %u", dst,
		    h.dst_task);
	if (h.sock != sock)
		WHY("socket: expected %u, arrived %u", sock, h.sock);
	if (h.req_bytes != r->o.req_bytes || h.ack_bytes != r->o.ack_bytes)
		WHY("sizes: expected -q %u -a %u, arrived -q %u -a %u",
		    r->o.req_bytes, r->o.ack_bytes, h.req_bytes, h.ack_bytes);
	{
		int want_op = r->o.rdma_bytes ? rdma_op_for(r, h.seq) : 0;
		uint32_t want_b = want_op ? r->o.rdma_bytes : 0;

		if (h.rdma_op != want_op || h.rdma_bytes != want_b)
			WHY("%s seq %llu: RDMA: expected op %d of %u bytes, arrived op %d of %u bytes",
			    h.op == OP_REQ ? "REQ" : "ACK",
			    (unsigned long long)h.seq, want_op, want_b,
			    h.rdma_op, h.rdma_bytes);
	}
	want_len = h.op == OP_REQ ? req_len(&r->o, h.from_active, h.src_task,
					    h.dst_task, sock, h.seq) :
				    r->o.ack_bytes;
	if (len != want_len || h.msg_bytes != want_len)
		WHY("%s seq %llu length: expected %u, arrived %u (header says %u)",
		    h.op == OP_REQ ? "REQ" : "ACK", (unsigned long long)h.seq,
		    want_len, len, h.msg_bytes);
	plen = len - HDR_BYTES;
	if (r->o.verify && plen) {
		uint64_t seed = flow_seed(r, h.from_active, h.src_task,
					  h.dst_task, sock, h.op, h.seq);
		uint8_t want = 0, got = 0;
		long off;

		csum = fnv64(buf + HDR_BYTES, plen);
		off = pattern_find(buf + HDR_BYTES, plen, seed, &want, &got);
		if (csum != h.csum || off >= 0) {
			if (off >= 0)
				WHY("payload checksum: expected %016llx, arrived %016llx; first bad byte at payload offset %ld: expected 0x%02x, arrived 0x%02x",
				    (unsigned long long)h.csum,
				    (unsigned long long)csum, off, want, got);
			WHY("payload checksum: expected %016llx, arrived %016llx (the payload matches its pattern: the header's checksum is wrong)",
			    (unsigned long long)h.csum,
			    (unsigned long long)csum);
		}
	}
	return 0;
}
