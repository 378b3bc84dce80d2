// SPDX-License-Identifier: GPL-2.0
/*
 * peer_rdma_host: host 1's side of wire_peer -t rdma (peer_rdma.sh), an
 * AF_RDS application on our module facing the user-space peer of host 2.
 * A plain program (no kselftest harness): "ok N" / "not ok N" lines, exit
 * 0 only when every check passed.
 *
 * Part 1, the peer's ops on our memory: a region of 6000 bytes at offset
 * 1000 of three pages filled with a guard byte (RDS_GET_MR after a first
 * message, so the key is valid at once; its cookie in the next message).
 * After the peer's WRITE + READ the region holds its pattern and every
 * guard byte is intact; after its refused WRITEs (out of range, foreign
 * keys) nothing changed; RDS_FREE_MR, then after its WRITE with the freed
 * key nothing changed.
 *
 * Part 2, our ops on the peer's memory (its cookies in a message): a
 * WRITE and a READ with RDS_RDMA_NOTIFY_ME end RDS_RDMA_SUCCESS (the READ's
 * bytes checked); a WRITE with the key of a region the peer freed ends
 * RDS_RDMA_REMOTE_ERROR, and a plain message after it reaches the peer.
 *
 * Environment: RDS_ADDR, RDS_PEER (the harness's); TOS 113, our port
 * 7013, the peer's 7014.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>

#define TWO_HOST_NAME	"peer_rdma_host"
#include "two_host.h"

#define TOS		113
#define PORT		7013
#define PEER_PORT	7014
#define PAGE		4096
#define R_OFF		1000	/* our region: its offset in the buffer */
#define R_LEN		6000
#define GUARD		0xa5
#define WAIT_MS		180000
/* The peer's region (wire_rdma.c rdma_theirs). */
#define P_WR_OFF	100
#define P_WR_LEN	7000
#define P_RD_OFF	32778
#define P_RD_LEN	5000
#define P_BAD_LEN	100

static const char *const st_name[] = {
	"SUCCESS", "REMOTE_ERROR", "CANCELED", "DROPPED", "OTHER_ERROR",
};

static int fd;
static struct sockaddr_in to;
static int nchecks, nfail;
static struct rds_rdma_notify sts[16];
static unsigned int nsts;

static void ck(bool ok, const char *fmt, ...)
{
	va_list ap;

	nchecks++;
	nfail += !ok;
	printf("%sok %d ", ok ? "" : "not ", nchecks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* tools/testing/peer/peer.h peer_pattern() */
static uint8_t pat(uint32_t idx, uint32_t i)
{
	return (uint8_t)(idx * 31 + i * 7 + (i >> 9));
}

static void fill(uint8_t *b, uint32_t idx, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = pat(idx, i);
}

/* Bytes of b[from, to) differing from the guard (idx < 0) or pattern. */
static unsigned int diff(const uint8_t *b, uint32_t from, uint32_t to, int idx)
{
	unsigned int bad = 0;
	uint32_t i;

	for (i = from; i < to; i++)
		bad += b[i] != (idx < 0 ? GUARD : pat(idx, i - from));
	return bad;
}

static ssize_t send_op(const char *txt, const struct rds_rdma_args *a)
{
	union {
		char b[CMSG_SPACE(sizeof(*a))];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { .iov_base = (void *)txt, .iov_len = strlen(txt) };
	struct msghdr msg = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	struct cmsghdr *c;

	if (a) {
		memset(&cb, 0, sizeof(cb));
		msg.msg_control = cb.b;
		msg.msg_controllen = sizeof(cb.b);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_RDMA_ARGS;
		c->cmsg_len = CMSG_LEN(sizeof(*a));
		memcpy(CMSG_DATA(c), a, sizeof(*a));
	}
	return sendmsg(fd, &msg, 0);
}

static bool say(const char *txt)
{
	ssize_t n = send_op(txt, NULL);

	note("to the peer: %s%s%s", txt, n < 0 ? ": " : "",
	     n < 0 ? strerror(errno) : "");
	return n == (ssize_t)strlen(txt);
}

/* One recvmsg within tmo ms: a message (its text in txt, 1) or notices
 * only (stashed, 0); -1 on timeout or error.
 */
static int recv_one(char *txt, size_t n, int tmo)
{
	union {
		char b[CMSG_SPACE(sizeof(struct rds_rdma_notify)) * 16];
		struct cmsghdr align;
	} cb;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct sockaddr_in from;
	struct iovec iov = { .iov_base = txt, .iov_len = n - 1 };
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cb.b, .msg_controllen = sizeof(cb.b),
	};
	struct cmsghdr *c;
	ssize_t len;

	if (poll(&pfd, 1, tmo) <= 0)
		return -1;
	len = recvmsg(fd, &msg, MSG_DONTWAIT);
	if (len < 0)
		return errno == EAGAIN ? 0 : -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		struct rds_rdma_notify nt;

		if (c->cmsg_level != SOL_RDS ||
		    c->cmsg_type != RDS_CMSG_RDMA_STATUS ||
		    c->cmsg_len < CMSG_LEN(sizeof(nt)))
			continue;
		memcpy(&nt, CMSG_DATA(c), sizeof(nt));
		note("status: token %llu %s", (unsigned long long)nt.user_token,
		     nt.status >= 0 && nt.status <= 4 ? st_name[nt.status] : "?");
		if (nsts < 16)
			sts[nsts++] = nt;
	}
	if (!len && !(msg.msg_flags & MSG_TRUNC))
		return 0;
	txt[len] = 0;
	note("from the peer (port %u): %s", ntohs(from.sin_port), txt);
	return 1;
}

/* The next message must start with word (its text in txt). */
static bool want(const char *word, char *txt, size_t n)
{
	int64_t end = now_ms() + WAIT_MS;
	int r;

	do {
		r = recv_one(txt, n, 1000);
		if (r > 0) {
			bool ok = !strncmp(txt, word, strlen(word));

			ck(ok, "the peer's \"%s\" arrived (got \"%s\")", word, txt);
			return ok;
		}
	} while (now_ms() < end);
	ck(false, "the peer's \"%s\" arrived within %d s", word,
	   WAIT_MS / 1000);
	return false;
}

/* The status of token within WAIT_MS, -1 if none came. */
static int status_of(uint64_t token)
{
	int64_t end = now_ms() + WAIT_MS;
	char txt[256];
	unsigned int i;

	do {
		for (i = 0; i < nsts; i++)
			if (sts[i].user_token == token)
				return sts[i].status;
		if (recv_one(txt, sizeof(txt), 1000) > 0)
			ck(false, "no message while waiting for a status (got \"%s\")",
			   txt);
	} while (now_ms() < end);
	return -1;
}

static const char *sn(int st)
{
	return st >= 0 && st <= 4 ? st_name[st] : "none";
}

/* Our region: pattern idx (or the guard, idx < 0) and every guard byte. */
static void check_region(const uint8_t *buf, int idx, const char *when)
{
	unsigned int in = diff(buf, R_OFF, R_OFF + R_LEN, idx);
	unsigned int out = diff(buf, 0, R_OFF, -1) +
			   diff(buf, R_OFF + R_LEN, 3 * PAGE, -1);

	ck(!in, "%s: the region holds %s (%u of %u bytes differ)", when,
	   idx < 0 ? "its guard bytes" : "the peer's pattern", in, R_LEN);
	ck(!out, "%s: every guard byte around it untouched (%u differ)", when,
	   out);
}

static long long ctr(const char *key)
{
	char line[2048];

	if (read_counters(line, sizeof(line)) <= 0)
		return -1;
	return counter(line, key);
}

/* The counter key once it reached min (the module counts a connection
 * when it handles its ESTABLISHED event, which may come after the first
 * message on it), or its value after 20 s.
 */
static long long ctr_wait(const char *key, long long min)
{
	int64_t end = now_ms() + 20000;
	long long v;

	while ((v = ctr(key)) < min && now_ms() < end)
		usleep(50000);
	return v;
}

/* After n refused ops of the peer (counters taken before as r0, c0): the
 * connection was reset after each and accepted again, exactly n times.
 */
static void expect_reaccepted(long long r0, long long c0, int n,
			      const char *what)
{
	long long r = ctr_wait("resets", r0 + n) - r0;
	long long c = ctr_wait("connects", c0 + n) - c0;

	ck(r >= n && c == n,
	   "%s: the connection was reset and accepted again (resets +%lld, connects +%lld)",
	   what, r, c);
}

static void part1(void)
{
	uint8_t *buf = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rds_get_mr_args mr = { 0 };
	struct rds_free_mr_args fr = { 0 };
	long long mr0 = ctr("mr_in_use"), r0, c0;
	uint64_t cookie = 0;
	char txt[256];

	if (buf == MAP_FAILED) {
		ck(false, "mmap: %s", strerror(errno));
		return;
	}
	memset(buf, GUARD, 3 * PAGE);
	/* A first message: the socket's connection, where GET_MR posts its
	 * registration at once.
	 */
	ck(say("hello"), "hello sent");
	mr.vec.addr = (uintptr_t)(buf + R_OFF);
	mr.vec.bytes = R_LEN;
	mr.cookie_addr = (uintptr_t)&cookie;
	ck(!setsockopt(fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr)),
	   "RDS_GET_MR of %d bytes at offset %d: %s", R_LEN, R_OFF,
	   strerror(errno));
	ck(cookie >> 32 == R_OFF, "cookie %016llx: offset %d in its first page",
	   (unsigned long long)cookie, R_OFF);
	ck(ctr("mr_in_use") == mr0 + 1, "mr_in_use %lld, was %lld", ctr("mr_in_use"),
	   mr0);
	snprintf(txt, sizeof(txt), "mr %llx %d", (unsigned long long)cookie,
		 R_LEN);
	ck(say(txt), "cookie sent");
	if (!want("written", txt, sizeof(txt)))
		return;
	check_region(buf, 201, "after the peer's WRITE");
	r0 = ctr("resets");
	c0 = ctr("connects");
	ck(say("checked"), "checked sent");
	if (!want("denied", txt, sizeof(txt)))
		return;
	check_region(buf, 201, "after the refused WRITEs");
	expect_reaccepted(r0, c0, 5, "after each of the 5 refused WRITEs");
	fr.cookie = cookie;
	ck(!setsockopt(fd, SOL_RDS, RDS_FREE_MR, &fr, sizeof(fr)),
	   "RDS_FREE_MR: %s", strerror(errno));
	r0 = ctr("resets");
	c0 = ctr("connects");
	ck(say("freed"), "freed sent");
	if (!want("stale", txt, sizeof(txt)))
		return;
	check_region(buf, 201, "after the WRITE with the freed key");
	expect_reaccepted(r0, c0, 1, "after the WRITE with the freed key");
	munmap(buf, 3 * PAGE);
}

static void part2(void)
{
	static uint8_t wsrc[P_WR_LEN], rdst[P_RD_LEN], bsrc[P_BAD_LEN];
	struct rds_iovec iov;
	struct rds_rdma_args a = { 0 };
	unsigned int key, stale, bad;
	char txt[256];
	int st;

	if (!want("peer ", txt, sizeof(txt)))
		return;
	if (sscanf(txt, "peer %x %x", &key, &stale) != 2) {
		ck(false, "the peer's cookies parsed (%s)", txt);
		return;
	}
	/* (a) WRITE */
	fill(wsrc, 301, P_WR_LEN);
	iov.addr = (uintptr_t)wsrc;
	iov.bytes = P_WR_LEN;
	a.cookie = key;		/* offset 0: iova 0 */
	a.remote_vec.addr = P_WR_OFF;
	a.remote_vec.bytes = P_WR_LEN;
	a.local_vec_addr = (uintptr_t)&iov;
	a.nr_local = 1;
	a.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME;
	a.user_token = 1;
	ck(send_op("write", &a) == 5, "WRITE of %d bytes at %d of the peer's region sent: %s",
	   P_WR_LEN, P_WR_OFF, strerror(errno));
	/* The peer holds its ACK of that message: no status may come. */
	if (!want("holding", txt, sizeof(txt)))
		return;
	ck(!nsts, "WRITE: no status while the peer holds its ACK (%u)", nsts);
	ck(say("seen"), "seen sent");
	st = status_of(1);
	ck(st == RDS_RDMA_SUCCESS, "WRITE: status %s once the peer acknowledged (want SUCCESS)",
	   sn(st));
	/* (b) READ */
	memset(rdst, 0, sizeof(rdst));
	iov.addr = (uintptr_t)rdst;
	iov.bytes = P_RD_LEN;
	a.remote_vec.addr = P_RD_OFF;
	a.remote_vec.bytes = P_RD_LEN;
	a.flags = RDS_RDMA_NOTIFY_ME;
	a.user_token = 2;
	ck(send_op("read", &a) == 4, "READ of %d bytes at %d of the peer's region sent: %s",
	   P_RD_LEN, P_RD_OFF, strerror(errno));
	st = status_of(2);
	bad = 0;
	for (unsigned int i = 0; i < P_RD_LEN; i++)
		bad += rdst[i] != pat(302, i);
	ck(st == RDS_RDMA_SUCCESS, "READ: status %s (want SUCCESS)", sn(st));
	ck(!bad, "READ: the peer's %d bytes here (%u differ)", P_RD_LEN, bad);
	/* (c) the key of the peer's freed region */
	memset(bsrc, 0x77, sizeof(bsrc));
	iov.addr = (uintptr_t)bsrc;
	iov.bytes = P_BAD_LEN;
	a.cookie = stale;
	a.remote_vec.addr = 0;
	a.remote_vec.bytes = P_BAD_LEN;
	a.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME;
	a.user_token = 3;
	ck(send_op("bad", &a) == 3, "WRITE with the peer's freed key %08x sent: %s",
	   stale, strerror(errno));
	st = status_of(3);
	ck(st == RDS_RDMA_REMOTE_ERROR, "WRITE on a freed key: status %s (want REMOTE_ERROR)",
	   sn(st));
	ck(say("after"), "a plain message after it sent");
	want("done", txt, sizeof(txt));
	ck(nsts == 3, "exactly one status per op (%u)", nsts);
}

int main(void)
{
	const char *addr, *peer;
	uint8_t tos = TOS;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (single_host(&addr, &peer)) {
		note("needs two hosts");
		return 4;
	}
	fd = rds_bound(addr, PORT);
	if (fd < 0 || ioctl(fd, SIOCRDSSETTOS, &tos)) {
		ck(false, "socket bound to %s:%d on TOS %d: %s", addr, PORT, TOS,
		   strerror(errno));
		return 1;
	}
	set_sockbufs(fd, 4 << 20);
	to = rds_sin(peer, PEER_PORT);
	if (barrier("rdma.up", 300)) {
		ck(false, "the peer is up (barrier rdma.up)");
		return 1;
	}
	part1();
	part2();
	close(fd);
	printf("result: %s checks=%d failed=%d\n", nfail ? "fail" : "pass",
	       nchecks, nfail);
	return nfail ? 1 : 0;
}
