// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts over IB: every fragment boundary delivered intact, both
 * directions at once on one socket per host.
 *
 * The size list: 0..64; k*4096-1, k*4096, k*4096+1 for k = 1..16 and for
 * k = 32, 64, 128, 256 (up to and including 1 MiB); then 24 random sizes
 * in 0..1 MiB.  RDS_SIZES_FULL=1 takes every k = 1..256 and 200 random
 * sizes (about 500 MB each way: minutes under emulation, not for make
 * check).  Host 1 picks
 * the seed (RDS_SEED, else the time) and hands it to host 2 in a file of
 * RDS_SHARED before the first barrier.  Each host sends the whole list to
 * the peer's port PORT in order while it receives the peer's list, and
 * checks every message: its place (i-th received is message i), its size
 * (no MSG_TRUNC), its source and its bytes (regenerated from seed, index
 * and sending host; the first 16 bytes carry index, size and host).
 *
 * RDS_ADDR and RDS_PEER may be IPv6 addresses, a link-local one with
 * "%scope" (ib_ipv6 runs the test so).
 *
 * Single-host mode (RDS_LOOPBACK_SELF=1, or RDS_PEER unset or equal to
 * RDS_ADDR): both hosts' roles run in this process, bound to RDS_ADDR
 * (default 127.0.0.1) ports PORT and PORT + 1, without barriers; this
 * checks the test itself over the loopback transport.
 *
 * Knobs: RDS_SEED, RDS_SIZES_MAXK (largest k of the boundary sizes, 256).
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>

#define TWO_HOST_NAME	"ib_sizes_test"
#include "two_host.h"
#include "rds_harness.h"

#define PORT		4000
#define MAX_MSG		(1 << 20)
#define FRAG		4096
#define MAXK		256
#define NRANDOM		200
#define SOCKBUF		(8 << 20)	/* SO_SNDBUF and SO_RCVBUF */
#define WAIT_MS		60000		/* per send, per received message */
#define PROGRESS_MS	30000
#define MAX_REPORTS	10		/* detailed mismatch lines per role */
#define HDR_MAGIC	0x5a53444eU	/* "NDSZ" */

/* The first 16 bytes of a message of 16 bytes or more. */
struct sz_hdr {
	uint32_t index;
	uint32_t size;
	uint32_t host;
	uint32_t magic;
};

struct role {
	int host, peer_host;
	int fd;
	struct sockaddr_storage to;	/* the peer's socket (either family) */
	socklen_t tolen;
	/* sender's results */
	uint64_t sent, sent_bytes;
	bool tx_failed;
	/* receiver's results */
	uint64_t rcvd, rcvd_bytes, mismatches;
	bool rx_failed;
	unsigned int reports;
	pthread_t tx, rx;
};

static size_t *sizes;
static unsigned int nsizes;
static uint64_t seed;

/* The bytes of message index sent by host: a xorshift64 stream, header. */
static void fill(unsigned char *buf, size_t len, uint32_t index, int host)
{
	uint64_t s = seed ^ ((uint64_t)index << 20) ^ ((uint64_t)host << 56);
	uint64_t x = splitmix64(&s) | 1;
	struct sz_hdr h;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, 8);
	}
	if (i < len) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(buf + i, &x, len - i);
	}
	if (len >= sizeof(h)) {
		h.index = index;
		h.size = len;
		h.host = host;
		h.magic = HDR_MAGIC;
		memcpy(buf, &h, sizeof(h));
	}
}

/* What a received buffer says it is, for failure messages. */
static const char *describe(const unsigned char *buf, size_t len,
			    char *out, size_t outlen)
{
	struct sz_hdr h;

	if (len < sizeof(h)) {
		snprintf(out, outlen, "too short for a header");
		return out;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != HDR_MAGIC)
		snprintf(out, outlen, "no valid header");
	else
		snprintf(out, outlen, "its header says index %u size %u host %u",
			 h.index, h.size, h.host);
	return out;
}

static bool size_k_wanted(unsigned int k, bool full)
{
	return full || k <= 16 || !(k & (k - 1));
}

static void build_sizes(unsigned int maxk)
{
	const char *env_full = getenv("RDS_SIZES_FULL");
	bool full = env_full && atoi(env_full);
	unsigned int nrandom = full ? NRANDOM : 24;
	uint64_t r = seed;
	unsigned int k, i;
	int d;

	sizes = calloc(65 + 3 * maxk + NRANDOM, sizeof(*sizes));
	nsizes = 0;
	for (i = 0; i <= 64; i++)
		sizes[nsizes++] = i;
	for (k = 1; k <= maxk; k++)
		for (d = -1; d <= 1 && size_k_wanted(k, full); d++) {
			size_t s = (size_t)k * FRAG + d;

			if (s <= MAX_MSG)
				sizes[nsizes++] = s;
		}
	for (i = 0; i < nrandom; i++)
		sizes[nsizes++] = splitmix64(&r) % (MAX_MSG + 1);
}

/* Host 2, after the first barrier. */
static int seed_fetch(void)
{
	char path[512];
	int ret = shared_fetch(path, sizeof(path), "seed", "host 1's seed file",
			       1, "%" SCNu64, &seed);

	if (ret > 0)
		note("host 1's seed file %s holds no number", path);
	return ret ? -1 : 0;
}

static int big_buffers(int fd)
{
	int v = SOCKBUF, got = 0;
	socklen_t len = sizeof(got);

	if (set_sockbufs(fd, v))
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &got, &len))
		return -1;
	if (got / 2 < MAX_MSG) {
		note("SO_SNDBUF is %d after asking for %d: too small for 1 MiB",
		     got, v);
		errno = ENOBUFS;
		return -1;
	}
	return 0;
}

/*
 * Blocking send (SO_SNDTIMEO 1 s) retried while the send buffer is full or
 * the port congested; failing for WAIT_MS is a failure.
 */
static int send_retry(struct role *r, const void *buf, size_t len,
		      uint32_t index)
{
	int64_t deadline = now_ms() + WAIT_MS;
	char a[80];
	ssize_t n;

	for (;;) {
		n = sendto(r->fd, buf, len, 0, (struct sockaddr *)&r->to,
			   r->tolen);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0) {
			note("host %d: send of message %u (size %zu) returned %zd",
			     r->host, index, len, n);
			return -1;
		}
		if (errno != EAGAIN && errno != ENOBUFS &&
		    errno != ETIMEDOUT && errno != EINTR) {
			note("host %d: send of message %u (size %zu) to %s: %s",
			     r->host, index, len,
			     rds_sa_str(&r->to, a, sizeof(a)), strerror(errno));
			return -1;
		}
		if (now_ms() >= deadline) {
			note("host %d: send of message %u (size %zu) still failing after %d s: %s",
			     r->host, index, len, WAIT_MS / 1000,
			     strerror(errno));
			return -1;
		}
		if (errno == ENOBUFS)	/* not expected when blocking */
			poll(NULL, 0, 10);
	}
}

static void *sender(void *p)
{
	struct role *r = p;
	unsigned char *buf = malloc(MAX_MSG);
	unsigned int i;

	if (!buf) {
		r->tx_failed = true;
		return NULL;
	}
	for (i = 0; i < nsizes; i++) {
		fill(buf, sizes[i], i, r->host);
		if (send_retry(r, buf, sizes[i], i)) {
			r->tx_failed = true;
			break;
		}
		r->sent++;
		r->sent_bytes += sizes[i];
	}
	free(buf);
	return NULL;
}

static void mismatch(struct role *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mismatch(struct role *r, const char *fmt, ...)
{
	va_list ap;

	r->mismatches++;
	va_start(ap, fmt);
	vnote_limited(r->host, r->reports++, MAX_REPORTS, "mismatches", fmt,
		      ap);
	va_end(ap);
}

/* Check the i-th message received (n bytes in got). */
static void check_one(struct role *r, unsigned int i, const unsigned char *got,
		      ssize_t n, int flags, const struct sockaddr_storage *from,
		      unsigned char *exp)
{
	char what[96], a[80], b[80];
	size_t want = sizes[i];
	size_t off;

	if (flags & MSG_TRUNC) {
		mismatch(r, "message %u (size %zu): MSG_TRUNC set, %zd bytes returned",
			 i, want, n);
		return;
	}
	if (!rds_sa_equal(from, &r->to)) {
		mismatch(r, "message %u (size %zu): from %s, expected from %s",
			 i, want, rds_sa_str(from, a, sizeof(a)),
			 rds_sa_str(&r->to, b, sizeof(b)));
		return;
	}
	if ((size_t)n != want) {
		mismatch(r, "message %u: expected size %zu, received %zd bytes (%s)",
			 i, want, n, describe(got, n, what, sizeof(what)));
		return;
	}
	fill(exp, want, i, r->peer_host);
	if (!memcmp(got, exp, want))
		return;
	for (off = 0; off < want && got[off] == exp[off]; off++)
		;
	mismatch(r, "message %u (size %zu): first difference at offset %zu: 0x%02x, expected 0x%02x (%s)",
		 i, want, off, got[off], exp[off],
		 describe(got, n, what, sizeof(what)));
}

static void *receiver(void *p)
{
	struct role *r = p;
	unsigned char *got = malloc(MAX_MSG + 1), *exp = malloc(MAX_MSG);
	int64_t deadline = now_ms() + WAIT_MS;
	int64_t progress = now_ms() + PROGRESS_MS;
	unsigned int i = 0;

	if (!got || !exp) {
		r->rx_failed = true;
		goto out;
	}
	while (i < nsizes) {
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
		struct sockaddr_storage from;
		int64_t now = now_ms();
		ssize_t n;
		int flags;

		if (now >= progress) {
			note("host %d: %u of %u messages received (%" PRIu64 " bytes)",
			     r->host, i, nsizes, r->rcvd_bytes);
			progress = now + PROGRESS_MS;
		}
		if (now >= deadline) {
			note("host %d: message %u (size %zu) not received in %d s (%u of %u received)",
			     r->host, i, sizes[i], WAIT_MS / 1000, i, nsizes);
			r->rx_failed = true;
			break;
		}
		n = poll(&pfd, 1, deadline - now < 1000 ? deadline - now : 1000);
		if (n < 0 && errno != EINTR) {
			note("host %d: poll: %s", r->host, strerror(errno));
			r->rx_failed = true;
			break;
		}
		if (n <= 0)
			continue;
		n = recv_msg_sa(r->fd, got, MAX_MSG + 1, MSG_DONTWAIT, &from,
				sizeof(from), &flags);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			note("host %d: recvmsg waiting for message %u: %s",
			     r->host, i, strerror(errno));
			r->rx_failed = true;
			break;
		}
		check_one(r, i, got, n, flags, &from, exp);
		r->rcvd++;
		r->rcvd_bytes += n;
		i++;
		deadline = now_ms() + WAIT_MS;
	}
out:
	free(got);
	free(exp);
	return NULL;
}

/* After the last barrier: nothing more may arrive. */
static void check_no_extra(struct role *r)
{
	unsigned char buf[64];
	char what[96];
	ssize_t n;

	while ((n = recv(r->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC))
	       >= 0)
		mismatch(r, "extra message of %zd bytes after the last one (%s)",
			 n, describe(buf, n < 64 ? n : 64, what, sizeof(what)));
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

TEST_F_TIMEOUT(ib, sizes, 590)
{
	const char *env_seed = getenv("RDS_SEED"), *env_k, *addr, *peer;
	bool single = single_host(&addr, &peer);
	struct role roles[2];
	unsigned int maxk = MAXK, nroles, i;
	int host = this_host();
	int64_t t0;

	ASSERT_TRUE(single || host == 1 || host == 2)
		TH_LOG("RDS_HOST must be 1 or 2, is %d", host);
	env_k = getenv("RDS_SIZES_MAXK");
	if (env_k)
		maxk = strtoul(env_k, NULL, 0);
	ASSERT_TRUE(maxk >= 1 && maxk <= MAXK)
		TH_LOG("RDS_SIZES_MAXK must be in 1..%d", MAXK);

	if (single || host == 1) {
		seed = env_seed ? strtoull(env_seed, NULL, 0) :
		       (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		note("seed %" PRIu64, seed);
		if (!single)
			ASSERT_EQ(0, shared_publish("seed", "%" PRIu64 "\n",
						     seed));
	}

	memset(roles, 0, sizeof(roles));
	nroles = single ? 2 : 1;
	for (i = 0; i < nroles; i++) {
		struct role *r = &roles[i];
		int h = single ? (int)i + 1 : host;
		uint16_t port = single ? PORT + i : PORT;
		uint16_t pport = single ? PORT + !i : PORT;

		r->host = h;
		r->peer_host = 3 - h;
		r->fd = rds_bound(addr, port);
		ASSERT_LE(0, r->fd) TH_LOG("bind %s:%u: %s", addr, port,
					   strerror(errno));
		ASSERT_EQ(0, big_buffers(r->fd))
			TH_LOG("socket buffers of %d: %s", SOCKBUF,
			       strerror(errno));
		r->tolen = rds_sa(peer, pport, &r->to);
		ASSERT_NE(0U, r->tolen) TH_LOG("peer address %s", peer);
	}

	if (!single) {
		ASSERT_EQ(0, barrier("bound", 120));
		if (host == 2) {
			ASSERT_EQ(0, seed_fetch());
			note("seed %" PRIu64 " (from host 1)", seed);
		}
	}
	build_sizes(maxk);
	ASSERT_NE(NULL, sizes);
	note("host %d: %u messages each way, %s:%u <-> %s:%u%s", host, nsizes,
	     addr, PORT, peer, single ? PORT + 1 : PORT,
	     single ? " (single-host mode, both roles here)" : "");

	t0 = now_ms();
	for (i = 0; i < nroles; i++) {
		ASSERT_EQ(0, pthread_create(&roles[i].rx, NULL, receiver,
					    &roles[i]));
		ASSERT_EQ(0, pthread_create(&roles[i].tx, NULL, sender,
					    &roles[i]));
	}
	for (i = 0; i < nroles; i++) {
		pthread_join(roles[i].tx, NULL);
		pthread_join(roles[i].rx, NULL);
	}
	note("host %d: done in %.1f s", host, (now_ms() - t0) / 1000.0);

	/* both done (the peer has everything) before anyone closes */
	if (!single)
		EXPECT_EQ(0, barrier("done", 300));

	for (i = 0; i < nroles; i++) {
		struct role *r = &roles[i];

		check_no_extra(r);
		note("sent %" PRIu64 " msgs (%" PRIu64 " bytes), received %" PRIu64
		     " msgs (%" PRIu64 " bytes), %" PRIu64 " mismatches%s",
		     r->sent, r->sent_bytes, r->rcvd, r->rcvd_bytes,
		     r->mismatches, single ? (i ? " (role 2)" : " (role 1)") : "");
		EXPECT_FALSE(r->tx_failed) TH_LOG("host %d: sending failed",
						  r->host);
		EXPECT_FALSE(r->rx_failed) TH_LOG("host %d: receiving failed",
						  r->host);
		EXPECT_EQ((uint64_t)nsizes, r->sent);
		EXPECT_EQ((uint64_t)nsizes, r->rcvd);
		EXPECT_EQ(0ULL, (unsigned long long)r->mismatches);
	}

	if (!single)
		EXPECT_EQ(0, barrier("closing", 120));
	for (i = 0; i < nroles; i++)
		close(roles[i].fd);
	free(sizes);
}

TEST_HARNESS_MAIN
