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
	struct in_addr addr, back;
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
	inet_pton(AF_INET, "10.0.0.2", &addr);
	CHECK(options_to_text(&a, &addr, text, sizeof(text)) > 0,
	      "options_to_text");
	memset(&b, 0, sizeof(b));
	CHECK(options_from_text(&b, &back, text) == 0, "options_from_text");
	CHECK(back.s_addr == addr.s_addr, "address round trip");
	CHECK(!memcmp(&a, &b, sizeof(a)), "options round trip");
	CHECK(options_from_text(&b, &back, "addr=10.0.0.1\nbogus=1\n") < 0,
	      "unknown key refused");
	CHECK(options_from_text(&b, &back, "req=100\n") < 0,
	      "missing address refused");
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
	msg_build(&r, buf, len, OP_REQ, 1, 2, 7, 1234, 0, 0);

	r.o.active = 0;		/* the checker: the passive side */
	CHECK(msg_check(&r, buf, len, 2, why, sizeof(why), &h) == 0,
	      "good REQ refused: %s", why);
	CHECK(h.seq == 7 && h.src_task == 1 && h.dst_task == 2 &&
	      h.ts_ns == 1234 && h.op == OP_REQ, "header fields");
	CHECK(msg_check(&r, buf, len, 3, why, sizeof(why), &h) < 0,
	      "wrong destination task accepted");
	CHECK(msg_check(&r, buf, len - 1, 2, why, sizeof(why), &h) < 0,
	      "short message accepted");
	r.o.run_id = 43;
	CHECK(msg_check(&r, buf, len, 2, why, sizeof(why), &h) < 0,
	      "other run accepted");
	r.o.run_id = 42;
	r.o.active = 1;
	CHECK(msg_check(&r, buf, len, 2, why, sizeof(why), &h) < 0,
	      "own side's message accepted");
	r.o.active = 0;

	/* Every single-byte change (except padding) is caught. */
	for (i = 0; i < len; i++) {
		memcpy(copy, buf, len);
		copy[i] ^= 0x01;
		CHECK(msg_check(&r, copy, len, 2, why, sizeof(why), &h) < 0,
		      "byte %u changed, accepted", i);
		if (i == HDR_BYTES + 100)
			CHECK(strstr(why, "payload offset 100") != NULL,
			      "payload offset reported: %s", why);
	}

	/* An ACK with no payload; RDMA fields checked. */
	r.o.active = 1;
	r.o.rdma_bytes = 4096;
	r.o.rdma_mode = RDMA_WRITE_ONLY;
	msg_build(&r, buf, HDR_BYTES, OP_ACK, 0, 3, 5, 99, RDMA_OP_WRITE, 77);
	r.o.active = 0;
	CHECK(msg_check(&r, buf, HDR_BYTES, 3, why, sizeof(why), &h) == 0,
	      "good ACK refused: %s", why);
	CHECK(h.rdma_op == RDMA_OP_WRITE && h.rdma_bytes == 4096 &&
	      h.rdma_cookie == 77, "RDMA fields");
	r.o.rdma_mode = RDMA_READ_ONLY;
	CHECK(msg_check(&r, buf, HDR_BYTES, 3, why, sizeof(why), &h) < 0,
	      "wrong RDMA op accepted");
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
	patterns();
	printf("%s: rds-stress selftest\n", fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}
