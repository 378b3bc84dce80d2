// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts over IB: congestion maps cross the wire.
 *
 * Host 1 binds RDS_ADDR:PORT with SO_RCVBUF RCVBUF_SET (RDS uses half of
 * the stored value, i.e. RCVBUF_SET bytes) and does not read it.  Host 2
 * binds RDS_ADDR:PORT, nonblocking, with RDS_CONG_MONITOR, and sends 4 KiB
 * messages (sequence number + deterministic payload) to the peer's port
 * PORT until sendmsg fails with ENOBUFS: host 1's port is congested, which
 * host 2 can only know from host 1's congestion map arriving over the wire.
 * EAGAIN (host 2's own sndbuf full) waits for POLLOUT.  After the first
 * FAST_SENDS messages the sends are paced (PACE_MS apart) so that a map
 * that never arrives ends in a clean failure after WAIT_MS, not in host 1
 * queueing gigabytes.  Host 2 hands the count to host 1 in a file of
 * RDS_SHARED; barrier "congested".
 *
 * Host 1 then drains and checks every message (in order, none missing,
 * intact); barrier "drained".  Host 2 waits (poll) for RDS_CMSG_CONG_UPDATE
 * with the bit of PORT (RDS_CONG_MONITOR_MASK) within WAIT_MS, then sends
 * MORE messages, the first of which must not meet ENOBUFS; host 1 receives
 * them after the first batch, in order.  Both print ib_counters.
 *
 * Single-host mode (RDS_LOOPBACK_SELF=1, or RDS_PEER unset or equal to
 * RDS_ADDR): both roles run in this process (host 1's in a thread) on
 * RDS_ADDR (default 127.0.0.1), ports PORT and PORT + 1, with in-process
 * barriers; this checks the test itself over the loopback transport.
 */
#include <fcntl.h>
#include <limits.h>

#define TWO_HOST_NAME	"ib_cong_test"
#include "two_host.h"
#include "rds_harness.h"

#define PORT		6000
#define MSG_LEN		4096
#define RCVBUF_SET	16384		/* setsockopt(SO_RCVBUF) on host 1 */
#define MORE		10		/* messages after the update */
#define FAST_SENDS	16		/* then one send per PACE_MS */
#define PACE_MS		50
#define MAX_FIRST	2000		/* no ENOBUFS after this many: fail */
#define WAIT_MS		60000
#define MAX_REPORTS	10
#define HDR_MAGIC	0x474e4f43U	/* "CONG" */

struct cong_hdr {
	uint32_t magic;
	uint32_t seq;
	uint32_t len;
	uint32_t host;			/* the sending host: 2 */
};

struct ctx {
	bool single;
	int host;			/* two-host mode: this host */
	const char *addr, *peer;
	/* single-host mode: in-process barrier and hand-over of the count */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int arrived, gen;
	bool aborted;
	uint32_t count;
};

struct result {
	int host;
	bool failed;
	/* host 1 */
	int rcvbuf;			/* RDS's receive buffer (half SO_RCVBUF) */
	uint32_t first;			/* first batch, as host 2 said */
	uint32_t rcvd, mismatches;
	unsigned int reports;
	/* host 2 */
	uint32_t sent, sent_more;
	bool enobufs, update;
	uint64_t mask;
	unsigned int eagains;
	int64_t enobufs_ms, update_ms;
};

static struct ctx ctx;

/* Message seq: header, then rds_fill() bytes seeded by seq. */
static void fill(unsigned char *buf, uint32_t seq)
{
	struct cong_hdr h = {
		.magic = HDR_MAGIC, .seq = seq, .len = MSG_LEN, .host = 2,
	};

	rds_fill(buf, MSG_LEN, seq);
	memcpy(buf, &h, sizeof(h));
}

/* Single-host mode: the two roles meet; -1 on timeout or abort. */
static int local_barrier(const char *name, int tmo)
{
	struct timespec dl;
	unsigned int gen;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += tmo;
	pthread_mutex_lock(&ctx.lock);
	if (ctx.aborted) {
		pthread_mutex_unlock(&ctx.lock);
		return -1;
	}
	gen = ctx.gen;
	if (++ctx.arrived == 2) {
		ctx.arrived = 0;
		ctx.gen++;
		pthread_cond_broadcast(&ctx.cond);
	} else {
		while (ctx.gen == gen && !ctx.aborted && !ret)
			ret = pthread_cond_timedwait(&ctx.cond, &ctx.lock, &dl);
		if (ctx.gen == gen) {
			note("barrier %s: %s", name,
			     ctx.aborted ? "the other role failed" : "timed out");
			ret = -1;
		} else {
			ret = 0;
		}
	}
	pthread_mutex_unlock(&ctx.lock);
	return ret;
}

static int sync_point(const char *name, int tmo)
{
	return ctx.single ? local_barrier(name, tmo) : barrier(name, tmo);
}

/* A role failed: single-host mode wakes the other one at its barrier. */
static void role_failed(struct result *r)
{
	r->failed = true;
	if (!ctx.single)
		return;
	pthread_mutex_lock(&ctx.lock);
	ctx.aborted = true;
	pthread_cond_broadcast(&ctx.cond);
	pthread_mutex_unlock(&ctx.lock);
}

/* Host 2, before "congested". */
static int count_publish(uint32_t n)
{
	if (ctx.single) {
		pthread_mutex_lock(&ctx.lock);
		ctx.count = n;
		pthread_mutex_unlock(&ctx.lock);
		return 0;
	}
	return shared_publish("count", "%u\n", n);
}

/* Host 1, after "congested". */
static int count_fetch(uint32_t *n)
{
	char path[512];
	int ret;

	if (ctx.single) {
		pthread_mutex_lock(&ctx.lock);
		*n = ctx.count;
		pthread_mutex_unlock(&ctx.lock);
		return 0;
	}
	ret = shared_fetch(path, sizeof(path), "count", "host 2's count file",
			   1, "%" SCNu32, n);
	if (ret > 0)
		note("host 2's count file %s holds no number", path);
	return ret ? -1 : 0;
}

static void print_counters(int host)
{
	char line[1024];

	if (read_counters(line, sizeof(line)) < 0) {
		note("host %d: %s: %s", host, IB_COUNTERS, strerror(errno));
		return;
	}
	note("host %d: ib_counters: %s", host, line);
}

static void mismatch(struct result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Host 1's: counted, the first MAX_REPORTS printed. */
static void mismatch(struct result *r, const char *fmt, ...)
{
	va_list ap;

	r->mismatches++;
	va_start(ap, fmt);
	vnote_limited(1, r->reports++, MAX_REPORTS, "mismatches", fmt, ap);
	va_end(ap);
}

/* Check message i (n bytes in got) received from *from. */
static void check_one(struct result *r, uint32_t i, const unsigned char *got,
		      ssize_t n, int flags, const struct sockaddr_in *from,
		      const struct sockaddr_in *want_from, unsigned char *exp)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	struct cong_hdr h;
	size_t off;

	if (from->sin_addr.s_addr != want_from->sin_addr.s_addr ||
	    from->sin_port != want_from->sin_port) {
		mismatch(r, "message %u: from %s:%u, expected from %s:%u", i,
			 ip(from->sin_addr, a), ntohs(from->sin_port),
			 ip(want_from->sin_addr, b), ntohs(want_from->sin_port));
		return;
	}
	if ((flags & MSG_TRUNC) || n != MSG_LEN) {
		mismatch(r, "message %u: %zd bytes%s, expected %d", i, n,
			 (flags & MSG_TRUNC) ? " (MSG_TRUNC)" : "", MSG_LEN);
		return;
	}
	memcpy(&h, got, sizeof(h));
	if (h.magic != HDR_MAGIC || h.len != MSG_LEN || h.host != 2) {
		mismatch(r, "message %u: bad header: magic 0x%08x seq %u len %u host %u",
			 i, h.magic, h.seq, h.len, h.host);
		return;
	}
	if (h.seq != i) {
		mismatch(r, "message %u: carries sequence number %u (%s)", i,
			 h.seq, h.seq > i ? "some missing" : "duplicate or reordered");
		return;
	}
	fill(exp, i);
	if (!memcmp(got, exp, MSG_LEN))
		return;
	for (off = 0; got[off] == exp[off]; off++)
		;
	mismatch(r, "message %u: first difference at offset %zu: 0x%02x, expected 0x%02x",
		 i, off, got[off], exp[off]);
}

/* Receive messages first..last-1 in order; -1 when one does not come. */
static int recv_range(struct result *r, int fd, uint32_t first,
		      uint32_t last, const struct sockaddr_in *want_from)
{
	unsigned char got[MSG_LEN + 1], exp[MSG_LEN];
	int64_t deadline = now_ms() + WAIT_MS;
	uint32_t i = first;

	while (i < last) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_in from;
		int64_t now = now_ms();
		ssize_t n;
		int flags;

		if (now >= deadline) {
			note("host 1: message %u not received in %d s (%u of %u received)",
			     i, WAIT_MS / 1000, i, last);
			return -1;
		}
		n = poll(&pfd, 1, deadline - now < 1000 ? deadline - now : 1000);
		if (n < 0 && errno != EINTR) {
			note("host 1: poll: %s", strerror(errno));
			return -1;
		}
		if (n <= 0)
			continue;
		n = recv_msg(fd, got, sizeof(got), MSG_DONTWAIT, &from, &flags);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			note("host 1: recvmsg waiting for message %u: %s", i,
			     strerror(errno));
			return -1;
		}
		check_one(r, i, got, n, flags, &from, want_from, exp);
		r->rcvd++;
		i++;
		deadline = now_ms() + WAIT_MS;
	}
	return 0;
}

/* Nothing more is queued; counts what is as mismatches. */
static void check_no_extra(struct result *r, int fd, const char *when)
{
	unsigned char buf[64];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC)) >= 0)
		mismatch(r, "extra message of %zd bytes %s", n, when);
}

/* Host 1: the congested receiver. */
static void *role1(void *p)
{
	struct result *r = p;
	struct sockaddr_in want_from;
	int v = RCVBUF_SET, fd;
	socklen_t len = sizeof(v);

	r->host = 1;
	fd = rds_bound(ctx.addr, PORT);
	if (fd < 0) {
		note("host 1: bind %s:%u: %s", ctx.addr, PORT, strerror(errno));
		goto fail;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) ||
	    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len)) {
		note("host 1: SO_RCVBUF: %s", strerror(errno));
		goto fail_close;
	}
	r->rcvbuf = v / 2;
	note("host 1: %s:%u bound, SO_RCVBUF %d (congested above %d bytes queued, free again below %d)",
	     ctx.addr, PORT, v, r->rcvbuf, r->rcvbuf / 2);
	want_from = rds_sin(ctx.peer, ctx.single ? PORT + 1 : PORT);

	if (sync_point("bound", 120))
		goto fail_close;
	/* host 2 sends for up to WAIT_MS (plus connection set-up) */
	if (sync_point("congested", WAIT_MS / 1000 + 120))
		goto fail_close;
	if (count_fetch(&r->first))
		goto fail_close;
	note("host 1: host 2 sent %u messages (%u bytes) before ENOBUFS; draining",
	     r->first, r->first * MSG_LEN);
	if (recv_range(r, fd, 0, r->first, &want_from))
		goto fail_close;
	check_no_extra(r, fd, "after the first batch");
	if (sync_point("drained", 120))
		goto fail_close;
	if (recv_range(r, fd, r->first, r->first + MORE, &want_from))
		goto fail_close;
	if (sync_point("done", 120))
		goto fail_close;
	check_no_extra(r, fd, "after the last message");
	print_counters(1);
	close(fd);
	return NULL;
fail_close:
	close(fd);
fail:
	role_failed(r);
	return NULL;
}

/* Host 2: wait until fd has a CONG_UPDATE naming PORT; -1 after WAIT_MS. */
static int wait_update(struct result *r, int fd, const char *when)
{
	int64_t t0 = now_ms(), deadline = t0 + WAIT_MS;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		union {
			char buf[CMSG_SPACE(sizeof(uint64_t)) * 4];
			struct cmsghdr align;
		} cbuf;
		unsigned char data[MSG_LEN];
		struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf.buf,
			.msg_controllen = sizeof(cbuf.buf),
		};
		struct cmsghdr *cm;
		int64_t now = now_ms();
		ssize_t n;

		if (now >= deadline) {
			note("host 2: no RDS_CMSG_CONG_UPDATE with bit %u (port %u) %s in %d s (mask so far 0x%016" PRIx64 ")",
			     RDS_CONG_MONITOR_BIT(PORT), PORT, when,
			     WAIT_MS / 1000, r->mask);
			return -1;
		}
		n = poll(&pfd, 1, deadline - now < 1000 ? deadline - now : 1000);
		if (n < 0 && errno != EINTR) {
			note("host 2: poll: %s", strerror(errno));
			return -1;
		}
		if (n <= 0)
			continue;
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			note("host 2: recvmsg: %s", strerror(errno));
			return -1;
		}
		if (n > 0) {
			note("host 2: unexpected message of %zd bytes", n);
			return -1;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			uint64_t mask;

			if (cm->cmsg_level != SOL_RDS ||
			    cm->cmsg_type != RDS_CMSG_CONG_UPDATE)
				continue;
			if (cm->cmsg_len < CMSG_LEN(sizeof(mask))) {
				note("host 2: RDS_CMSG_CONG_UPDATE of %zu bytes",
				     (size_t)cm->cmsg_len);
				return -1;
			}
			memcpy(&mask, CMSG_DATA(cm), sizeof(mask));
			note("host 2: RDS_CMSG_CONG_UPDATE mask 0x%016" PRIx64 " %s, %.1f s after waiting began",
			     mask, when, (now_ms() - t0) / 1000.0);
			r->mask |= mask;
		}
		if (msg.msg_flags & MSG_CTRUNC)
			note("host 2: control data truncated (MSG_CTRUNC)");
		if (r->mask & RDS_CONG_MONITOR_MASK(PORT))
			return 0;
	}
}

/* Host 2: the sender. */
static void *role2(void *p)
{
	struct result *r = p;
	struct sockaddr_in to = rds_sin(ctx.peer, PORT);
	unsigned char buf[MSG_LEN];
	uint16_t port = ctx.single ? PORT + 1 : PORT;
	int64_t t0, deadline;
	int one = 1, fd, fl;
	uint32_t i;

	r->host = 2;
	fd = rds_bound(ctx.addr, port);
	if (fd < 0) {
		note("host 2: bind %s:%u: %s", ctx.addr, port, strerror(errno));
		goto fail;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK)) {
		note("host 2: O_NONBLOCK: %s", strerror(errno));
		goto fail_close;
	}
	if (setsockopt(fd, SOL_RDS, RDS_CONG_MONITOR, &one, sizeof(one))) {
		note("host 2: RDS_CONG_MONITOR: %s", strerror(errno));
		goto fail_close;
	}
	if (sync_point("bound", 120))
		goto fail_close;

	/* first batch: until the peer's port is congested */
	t0 = now_ms();
	deadline = t0 + WAIT_MS;
	for (;;) {
		ssize_t n;

		if (now_ms() >= deadline || r->sent >= MAX_FIRST) {
			note("host 2: no ENOBUFS after %u messages (%u bytes) in %.1f s: host 1's congestion map did not arrive",
			     r->sent, r->sent * MSG_LEN,
			     (now_ms() - t0) / 1000.0);
			goto fail_close;
		}
		fill(buf, r->sent);
		n = rds_sendto(fd, buf, MSG_LEN, MSG_DONTWAIT, &to);
		if (n == MSG_LEN) {
			r->sent++;
			/* past what host 1 can hold: wait for the map */
			if (r->sent >= FAST_SENDS)
				poll(NULL, 0, PACE_MS);
			continue;
		}
		if (n >= 0) {
			note("host 2: send of message %u returned %zd", r->sent,
			     n);
			goto fail_close;
		}
		if (errno == ENOBUFS) {
			r->enobufs = true;
			r->enobufs_ms = now_ms() - t0;
			break;
		}
		if (errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			r->eagains++;
			poll(&pfd, 1, 1000);
			continue;
		}
		if (errno == EINTR)
			continue;
		note("host 2: send of message %u: %s", r->sent, strerror(errno));
		goto fail_close;
	}
	note("host 2: ENOBUFS after %u messages (%u bytes, %u EAGAIN waits) in %.1f s",
	     r->sent, r->sent * MSG_LEN, r->eagains, r->enobufs_ms / 1000.0);
	if (count_publish(r->sent))
		goto fail_close;
	if (sync_point("congested", 120))
		goto fail_close;
	if (sync_point("drained", WAIT_MS / 1000 + 120))
		goto fail_close;

	t0 = now_ms();
	if (wait_update(r, fd, "after host 1 drained"))
		goto fail_close;
	r->update = true;
	r->update_ms = now_ms() - t0;

	/* and it can send again */
	deadline = now_ms() + WAIT_MS;
	for (i = 0; i < MORE;) {
		ssize_t n;

		if (now_ms() >= deadline) {
			note("host 2: message %u after the update: still failing after %d s",
			     r->sent + i, WAIT_MS / 1000);
			goto fail_close;
		}
		fill(buf, r->sent + i);
		n = rds_sendto(fd, buf, MSG_LEN, MSG_DONTWAIT, &to);
		if (n == MSG_LEN) {
			i++;
			r->sent_more++;
			deadline = now_ms() + WAIT_MS;
			continue;
		}
		if (n >= 0) {
			note("host 2: send of message %u returned %zd",
			     r->sent + i, n);
			goto fail_close;
		}
		if (errno == ENOBUFS && i == 0) {
			note("host 2: ENOBUFS on the first send after the update");
			goto fail_close;
		}
		if (errno == ENOBUFS) {
			/* host 1 reads slower than this sends: congested again */
			note("host 2: congested again after %u more messages; waiting for the update",
			     i);
			r->mask = 0;
			if (wait_update(r, fd, "after congestion again"))
				goto fail_close;
			continue;
		}
		if (errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, 1000);
			continue;
		}
		if (errno == EINTR)
			continue;
		note("host 2: send of message %u: %s", r->sent + i,
		     strerror(errno));
		goto fail_close;
	}
	note("host 2: %u more messages sent after the update", r->sent_more);
	if (sync_point("done", WAIT_MS / 1000 + 120))
		goto fail_close;
	print_counters(2);
	close(fd);
	return NULL;
fail_close:
	close(fd);
fail:
	role_failed(r);
	return NULL;
}

FIXTURE(ib)
{
	int unused;
};

FIXTURE_SETUP(ib)
{
}

FIXTURE_TEARDOWN(ib)
{
}

TEST_F_TIMEOUT(ib, cong, 290)
{
	int host = this_host();
	static struct result res[2];
	pthread_t th;
	unsigned int i;

	ctx.single = single_host(&ctx.addr, &ctx.peer);
	ASSERT_TRUE(ctx.single || host == 1 || host == 2)
		TH_LOG("RDS_HOST must be 1 or 2, is %d", host);
	ctx.host = host;
	pthread_mutex_init(&ctx.lock, NULL);
	pthread_cond_init(&ctx.cond, NULL);
	memset(res, 0, sizeof(res));
	note("host %d: %s -> %s port %u, %d-byte messages%s", host, ctx.addr,
	     ctx.peer, PORT, MSG_LEN,
	     ctx.single ? " (single-host mode, both roles here)" : "");

	if (ctx.single) {
		ASSERT_EQ(0, pthread_create(&th, NULL, role1, &res[0]));
		role2(&res[1]);
		pthread_join(th, NULL);
	} else if (host == 1) {
		role1(&res[0]);
	} else {
		role2(&res[1]);
	}

	for (i = 0; i < 2; i++) {
		struct result *r = &res[i];

		if (!ctx.single && (int)i + 1 != host)
			continue;
		if (i == 0) {
			note("host 1: received %u of %u + %u messages, %u mismatches",
			     r->rcvd, r->first, MORE, r->mismatches);
			EXPECT_FALSE(r->failed) TH_LOG("host 1 failed");
			if (r->first || !r->failed) {
				EXPECT_LT(r->rcvbuf, (int)(r->first * MSG_LEN))
					TH_LOG("ENOBUFS after %u bytes: host 1's port was not over its %d-byte rcvbuf",
					       r->first * MSG_LEN, r->rcvbuf);
			}
			EXPECT_EQ(r->first + MORE, r->rcvd);
			EXPECT_EQ(0U, r->mismatches);
		} else {
			EXPECT_FALSE(r->failed) TH_LOG("host 2 failed");
			EXPECT_TRUE(r->enobufs) TH_LOG("no ENOBUFS");
			EXPECT_TRUE(r->update)
				TH_LOG("no RDS_CMSG_CONG_UPDATE for port %u",
				       PORT);
			EXPECT_EQ((unsigned int)MORE, r->sent_more);
		}
	}
}

TEST_HARNESS_MAIN
