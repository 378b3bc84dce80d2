// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side checks of rds-stress's pure logic (no AF_RDS needed): sizes,
 * the options' text form, and that msg_check() accepts what msg_build()
 * makes and refuses every single-byte change of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "../rds_stress.h"

static int fails;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fails++;						\
		printf("not ok: %s:%d: ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

static void sizes(void)
{
	static const struct { const char *s; int ok; uint32_t v; } c[] = {
		{ "0", 1, 0 }, { "1024", 1, 1024 }, { "4K", 1, 4096 },
		{ "1m", 1, 1 << 20 }, { "3G", 1, 3U << 30 }, { "0x10", 1, 16 },
		{ "", 0, 0 }, { "-1", 0, 0 }, { "4KB", 0, 0 }, { "5G", 0, 0 },
		{ "k", 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint32_t v = 12345;
		int rc = parse_size(c[i].s, &v);

		CHECK((rc == 0) == c[i].ok, "parse_size(\"%s\") = %d", c[i].s,
		      rc);
		if (c[i].ok)
			CHECK(v == c[i].v, "parse_size(\"%s\") -> %u", c[i].s,
			      v);
	}
}

static void options_text(void)
{
	struct options a, b;
	struct rs_addr addr, back;
	char text[1024];

	memset(&a, 0, sizeof(a));
	a.req_bytes = 4096;
	a.ack_bytes = 100;
	a.depth = 8;
	a.tasks = 4;
	a.time_s = 30;
	a.one_way = 1;
	a.tos = 3;
	a.cong_monitor = 1;
	a.transport = 2;
	a.rdma_bytes = 65536;
	a.rdma_buffers = 3;
	a.rdma_mode = 2;
	a.rdma_use_once = 1;
	a.rdma_use_fence = 1;
	a.verify = 1;
	a.run_id = 0xfedcba9876543210ULL;
	a.rcvbuf = 65536;
	a.sockets = 16;
	a.slow_ms = 300;
	a.drain_s = 120;
	a.nsizes = 3;
	a.sizes[0] = 0;
	a.sizes[1] = 4097;
	a.sizes[2] = 1U << 20;
	a.size_mix = 1;
	a.mix_seed = 0x7fffffffffffffffULL;
	sizes_setup(&a);
	CHECK(addr_parse("10.0.0.2", &addr) == 0, "IPv4 address parsed");
	CHECK(options_to_text(&a, &addr, text, sizeof(text)) > 0,
	      "options_to_text");
	memset(&b, 0, sizeof(b));
	CHECK(options_from_text(&b, &back, text) == 0, "options_from_text");
	CHECK(addr_equal(&back, &addr), "address round trip");
	CHECK(!memcmp(&a, &b, sizeof(a)), "options round trip");
	CHECK(options_from_text(&b, &back, "addr=10.0.0.1\nbogus=1\n") < 0,
	      "unknown key refused");
	CHECK(options_from_text(&b, &back, "req=100\n") < 0,
	      "missing address refused");
	/* IPv6: the scope id stays on this host, the address travels */
	CHECK(addr_parse("fe80::5054:ff:fe12:3456%1", &addr) == 0 &&
	      addr.family == AF_INET6 && addr.scope == 1,
	      "link-local address with a scope id parsed");
	CHECK(addr_parse("fe80::1%no-such-if0", &back) < 0,
	      "unknown interface refused");
	CHECK(options_to_text(&a, &addr, text, sizeof(text)) > 0 &&
	      strstr(text, "addr=fe80::5054:ff:fe12:3456\n"),
	      "scope id left out of the options");
	CHECK(options_from_text(&b, &back, text) == 0 &&
	      back.family == AF_INET6 && !back.scope &&
	      !memcmp(&back.a6, &addr.a6, sizeof(back.a6)),
	      "IPv6 address round trip");
	CHECK(addr_parse("::ffff:10.0.0.2", &back) == 0 &&
	      back.family == AF_INET && back.a4.s_addr == htonl(0x0a000002),
	      "v4-mapped address taken as IPv4");
	CHECK(addr_parse("fd00::1%1", &back) == 0 && addr_parse("10.0.0.2%1", &back) < 0,
	      "scope only on IPv6");
}

static void messages(void)
{
	static struct run r;
	struct msg_hdr h;
	uint8_t buf[1024], copy[1024];
	char why[400];
	uint32_t len = 1000, i;

	r.o.active = 1;		/* the builder: the active side */
	r.o.req_bytes = len;
	r.o.ack_bytes = HDR_BYTES;
	r.o.tasks = 4;
	r.o.depth = 2;
	r.o.verify = 1;
	r.o.run_id = 42;
	msg_build(&r, buf, len, OP_REQ, 1, 2, 0, 7, 1234, 0, 0);

	r.o.active = 0;		/* the checker: the passive side */
	CHECK(msg_check(&r, buf, len, 2, 0, why, sizeof(why), &h) == 0,
	      "good REQ refused: %s", why);
	CHECK(h.seq == 7 && h.src_task == 1 && h.dst_task == 2 &&
	      h.ts_ns == 1234 && h.op == OP_REQ, "header fields");
	CHECK(msg_check(&r, buf, len, 3, 0, why, sizeof(why), &h) < 0,
	      "wrong destination task accepted");
	CHECK(msg_check(&r, buf, len - 1, 2, 0, why, sizeof(why), &h) < 0,
	      "short message accepted");
	r.o.run_id = 43;
	CHECK(msg_check(&r, buf, len, 2, 0, why, sizeof(why), &h) < 0,
	      "other run accepted");
	r.o.run_id = 42;
	r.o.active = 1;
	CHECK(msg_check(&r, buf, len, 2, 0, why, sizeof(why), &h) < 0,
	      "own side's message accepted");
	r.o.active = 0;

	/* Every single-byte change (except padding) is caught. */
	for (i = 0; i < len; i++) {
		memcpy(copy, buf, len);
		copy[i] ^= 0x01;
		CHECK(msg_check(&r, copy, len, 2, 0, why, sizeof(why), &h) < 0,
		      "byte %u changed, accepted", i);
		if (i == HDR_BYTES + 100)
			CHECK(strstr(why, "payload offset 100") != NULL,
			      "payload offset reported: %s", why);
	}

	/* An ACK with no payload; RDMA fields checked. */
	r.o.active = 1;
	r.o.rdma_bytes = 4096;
	r.o.rdma_mode = RDMA_WRITE_ONLY;
	msg_build(&r, buf, HDR_BYTES, OP_ACK, 0, 3, 0, 5, 99, RDMA_OP_WRITE,
		  77);
	r.o.active = 0;
	CHECK(msg_check(&r, buf, HDR_BYTES, 3, 0, why, sizeof(why), &h) == 0,
	      "good ACK refused: %s", why);
	CHECK(h.rdma_op == RDMA_OP_WRITE && h.rdma_bytes == 4096 &&
	      h.rdma_cookie == 77, "RDMA fields");
	r.o.rdma_mode = RDMA_READ_ONLY;
	CHECK(msg_check(&r, buf, HDR_BYTES, 3, 0, why, sizeof(why), &h) < 0,
	      "wrong RDMA op accepted");
}

static void size_lists(void)
{
	uint32_t v[MAX_SIZES + 1], n, i;
	char many[MAX_SIZES * 3 + 8] = "1";

	CHECK(!parse_sizes("0,1,1023,1024,4047,4048,4096,4097,8191,8192,8193,64K,1M",
			   v, &n) && n == 13 && v[0] == 0 && v[11] == 65536 &&
	      v[12] == 1U << 20, "the boundary list parses (%u)", n);
	CHECK(parse_sizes("2M", v, &n) < 0, "above 1M refused");
	CHECK(parse_sizes("", v, &n) < 0, "empty list refused");
	CHECK(parse_sizes("1,,2", v, &n) < 0, "empty item refused");
	CHECK(parse_sizes("1,", v, &n) < 0, "trailing comma refused");
	for (i = 1; i < MAX_SIZES; i++)
		strcat(many, ",1");
	CHECK(!parse_sizes(many, v, &n) && n == MAX_SIZES, "%u sizes",
	      MAX_SIZES);
	strcat(many, ",1");
	CHECK(parse_sizes(many, v, &n) < 0, "%u sizes refused",
	      MAX_SIZES + 1);
}

/* --sizes cycles, --size-mix replays from its seed and stays in range. */
static void schedules(void)
{
	struct options o, p;
	uint32_t i, l, small = 0, zero = 0, top = 0, bound = 0;
	int same = 1, differ = 0;

	memset(&o, 0, sizeof(o));
	o.req_bytes = 1024;
	o.ack_bytes = HDR_BYTES;
	CHECK(req_len(&o, 1, 0, 0, 0, 5) == 1024, "-q alone");
	parse_sizes("0,1,4096,1M", o.sizes, &o.nsizes);
	sizes_setup(&o);
	for (i = 1; i <= 8; i++)
		CHECK(req_len(&o, 1, 0, 0, 0, i) == o.sizes[(i - 1) % 4],
		      "--sizes: REQ %u is %u", i, req_len(&o, 1, 0, 0, 0, i));
	CHECK(max_msg(&o) == 1U << 20, "max of the list");

	memset(&o, 0, sizeof(o));
	o.req_bytes = 1U << 20;
	o.ack_bytes = HDR_BYTES;
	o.size_mix = 1;
	o.mix_seed = 12345;
	sizes_setup(&o);
	p = o;
	p.mix_seed = 12346;
	CHECK(o.nmix == 20, "every built-in boundary up to 1M (%u)", o.nmix);
	for (i = 1; i <= 20000; i++) {
		l = req_len(&o, 1, 1, 2, 3, i);
		same &= l == req_len(&o, 1, 1, 2, 3, i);
		differ += l != req_len(&p, 1, 1, 2, 3, i);
		small += l < HDR_BYTES;
		zero += !l;
		top += l == 1U << 20;
		bound += l == 4097 || l == 8191;
		if (l > o.req_bytes) {
			CHECK(0, "mix length %u above -q", l);
			break;
		}
	}
	CHECK(same, "the same seed gives the same sizes");
	CHECK(differ > 15000, "another seed gives other sizes (%d differ)",
	      differ);
	CHECK(small > 1000 && zero > 50 && top > 50 && bound > 200,
	      "the mix has short (%u), empty (%u), 1M (%u) and boundary (%u) sizes",
	      small, zero, top, bound);
	differ = 0;
	for (i = 1; i <= 100; i++)
		differ += req_len(&o, 1, 0, 0, 0, i) != req_len(&o, 0, 0, 0, 0, i);
	CHECK(differ > 50, "each direction has its own sizes");

	o.req_bytes = 4096;
	sizes_setup(&o);
	CHECK(o.nmix == 11, "boundaries up to -q only (%u)", o.nmix);
	for (i = 1; i <= 5000; i++)
		if (req_len(&o, 1, 0, 0, 0, i) > 4096) {
			CHECK(0, "mix length above -q 4096");
			break;
		}
}

/* A REQ below the header: length and every byte checked, seq bound. */
static void short_reqs(void)
{
	static struct run r;
	uint8_t buf[HDR_BYTES], copy[HDR_BYTES];
	char why[400];
	uint32_t len, i, seq;
	int fails0 = fails;

	r.o.req_bytes = 1024;
	r.o.ack_bytes = HDR_BYTES;
	r.o.tasks = 4;
	r.o.sockets = 2;
	r.o.depth = 2;
	r.o.run_id = 42;
	for (len = 0; len < HDR_BYTES; len++) {
		r.o.nsizes = 1;
		r.o.sizes[0] = len;
		r.o.active = 1;
		seq = 3 + len;
		msg_build(&r, buf, len, OP_REQ, 1, 2, 1, seq, 0, 0, 0);
		r.o.active = 0;
		CHECK(!short_check(&r, buf, len, 1, 2, 1, seq, why, sizeof(why)),
		      "good %u-byte REQ refused: %s", len, why);
		if (len)
			CHECK(short_check(&r, buf, len, 1, 2, 1, seq + 1, why,
					  sizeof(why)) < 0,
			      "%u-byte REQ taken for the next seq", len);
		CHECK(short_check(&r, buf, len, 1, 2, 0, seq, why,
				  sizeof(why)) < 0 || !len,
		      "%u-byte REQ of socket 1 taken for socket 0", len);
		r.o.sizes[0] = len + 1;
		CHECK(short_check(&r, buf, len, 1, 2, 1, seq, why,
				  sizeof(why)) < 0 &&
		      strstr(why, "length: expected"),
		      "%u bytes accepted where %u are due", len, len + 1);
		r.o.sizes[0] = len;
		for (i = 0; i < len; i++) {
			memcpy(copy, buf, len);
			copy[i] ^= 0x01;
			CHECK(short_check(&r, copy, len, 1, 2, 1, seq, why,
					  sizeof(why)) < 0,
			      "byte %u of a %u-byte REQ changed, accepted", i,
			      len);
		}
		r.o.one_way = 1;
		r.o.active = 1;
		CHECK(short_check(&r, buf, len, 1, 2, 1, seq, why,
				  sizeof(why)) < 0,
		      "one way: a short REQ from the passive side accepted");
		r.o.one_way = 0;
		if (fails != fails0)
			break;
	}

	/* With a header: the length is the schedule's for its seq. */
	r.o.nsizes = 2;
	r.o.sizes[0] = 200;	/* REQ 1 of socket 1 is sizes[1] */
	r.o.sizes[1] = 100;
	r.o.active = 1;
	msg_build(&r, copy, 100, OP_REQ, 0, 0, 1, 1, 5, 0, 0);
	r.o.active = 0;
	{
		struct msg_hdr h;

		CHECK(!msg_check(&r, copy, 100, 0, 1, why, sizeof(why), &h),
		      "scheduled REQ refused: %s", why);
		CHECK(msg_check(&r, copy, 100, 0, 0, why, sizeof(why), &h) < 0,
		      "REQ of socket 1 accepted on socket 0");
		r.o.sizes[0] = 100;
		r.o.sizes[1] = 200;
		CHECK(msg_check(&r, copy, 100, 0, 1, why, sizeof(why), &h) < 0 &&
		      strstr(why, "length: expected 200"),
		      "REQ of the wrong scheduled length accepted: %s", why);
	}
}

static void patterns(void)
{
	uint8_t a[333], want, got;

	pattern_fill(a, sizeof(a), 99);
	CHECK(pattern_find(a, sizeof(a), 99, &want, &got) < 0,
	      "pattern matches itself");
	CHECK(pattern_find(a, sizeof(a), 98, &want, &got) >= 0,
	      "other seed caught");
	a[332] ^= 0x80;
	CHECK(pattern_find(a, sizeof(a), 99, &want, &got) == 332 &&
	      (want ^ got) == 0x80, "last byte caught");
}

int main(void)
{
	sizes();
	options_text();
	messages();
	size_lists();
	schedules();
	short_reqs();
	patterns();
	printf("%s: rds-stress selftest\n", fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}
