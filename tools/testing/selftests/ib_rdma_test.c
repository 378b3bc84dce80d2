// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts over IB: RDMA and atomics through RDS (issue 7).
 *
 * Both hosts run this binary (RDS_HOST=1/2); every case starts and ends
 * with a barrier, host 1 picks the case's seed (RDS_SEED, else the time),
 * prints it and hands it to host 2 in a file of RDS_SHARED.  Everything
 * random (sizes, page offsets, piece layouts, data, keys) is derived from
 * that seed on both hosts, so each host knows what the other's memory must
 * hold.  Data: a counter-mode pattern (splitmix64 of key + word index), so
 * any range of any buffer can be regenerated and compared byte by byte.
 *
 * Roles per operation: the owner registers memory (RDS_GET_MR and an
 * RDS_CMSG_RDMA_DEST cmsg on the message that carries the offer, or
 * RDS_CMSG_RDMA_MAP on it), the issuer sends a message carrying
 * RDS_CMSG_RDMA_ARGS or an atomic, with NOTIFY_ME, and waits for its
 * RDS_CMSG_RDMA_STATUS.  The owner verifies its whole mapping when the
 * issuer's message arrives (the op is performed before the message is
 * delivered), the issuer when the status arrives; both report to the
 * other.  Cases:
 *
 *   sizes     WRITE and READ of 1 .. 1 MiB (boundaries and 4 random
 *             sizes), both routes (GET_MR, RDMA_MAP), both directions,
 *             random page offsets, registered regions with bytes before
 *             and after the target range
 *   iovecs    2, 17, 64 and 1024 local pieces (1 KiB, uneven 5000 B,
 *             uneven 1 MiB), with gaps between them, WRITE and READ
 *   use_once  RDS_RDMA_USE_ONCE (GET_MR and MAP): a second op gets
 *             REMOTE_ERROR and does not land; a plain message after it
 *             arrives
 *   silent    RDS_RDMA_SILENT: a WRITE on a message of no bytes lands
 *             (SUCCESS) and the owner's socket gets nothing (the next
 *             message it gets is the plain one after); without SILENT
 *             (the control) it gets the empty message; with a payload it
 *             gets the message
 *   errors    bad key, freed key (GET_MR and MAP), out-of-range ranges,
 *             RDS_RECVERR without NOTIFY_ME, a good op right behind a bad
 *             one (SUCCESS or DROPPED), a good op after all of them, with
 *             plain numbered messages before and after each: all arrive
 *             exactly once and in order; the connection re-forms
 *   atomics   FADD, CSWP (hit and miss), masked FADD/CSWP (EOPNOTSUPP or
 *             correct)
 *   args      the errno of every argument check of GET_MR, FREE_MR and
 *             sendmsg with RDMA cmsgs; rejected sends deliver nothing
 *   mr_pool   ib_mr_max = 8: EAGAIN, blocking waits (SO_SNDTIMEO, 10 s,
 *             a free wakes the waiter, EINTR), RDMA_MAP EAGAIN
 *   exit      a child with MRs (GET_MR and MAP) exits or is killed: the
 *             peer's ops on them get REMOTE_ERROR
 *
 * RDS_RDMA_MAINLINE=1 (for checking this test against the kernel's own
 * rds_rdma, which refuses RDS_GET_MR over IB) skips what needs GET_MR.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#define TWO_HOST_NAME	"ib_rdma_test"
#include "two_host.h"
#include "rds_harness.h"

#define PORT_BASE	7100
#define WAIT_MS		30000
#define MAX_RDMA	(1 << 20)
#define MAX_MR		((1 << 20) + 4096)
#define MAX_REPORTS	12
#define MAGIC		0x414d4452U	/* "RDMA" */
#define MR_MAX_PARAM	"/sys/module/rds/parameters/ib_mr_max"

enum { OP_WRITE = 1, OP_READ = 2 };
enum { R_GETMR = 1, R_MAP = 2 };
enum {
	M_HELLO = 1, M_OFFER, M_DO, M_RESULT, M_PLAIN, M_SYNC, M_SYNCED,
	M_FREED, M_END, M_GOT, M_EXITED, M_MARK,
};

static const char *const mtype_name[] = {
	"?", "HELLO", "OFFER", "DO", "RESULT", "PLAIN", "SYNC", "SYNCED",
	"FREED", "END", "GOT", "EXITED", "MARK",
};

static const char *const st_name[] = {
	"SUCCESS", "REMOTE_ERROR", "CANCELED", "DROPPED", "OTHER_ERROR",
};

/* The control messages the hosts exchange (the payload of every message). */
struct ctl {
	uint32_t magic, type, idx, host;
	uint64_t cookie;
	uint64_t a, b, c;
};

struct rxmsg {
	struct ctl m;
	ssize_t len;
	bool has_cookie;
	uint64_t cookie;
	uint16_t sport;
};

struct peerio {
	int fd;
	struct sockaddr_in to;
	struct rxmsg q[128];
	unsigned int qh, qn;
	struct rds_rdma_notify st[256];
	unsigned int nst;
	unsigned int nstatus_total;
	unsigned int nempty;	/* zero-byte messages delivered */
};

struct cm {
	int type;
	const void *data;
	size_t len;
};

static uint64_t seed;
static int host;
/*
 * RDS_RDMA_NEG (a negative control of the checks themselves): "write"
 * makes the issuer spoil one byte of every WRITE's source after planning
 * it (the owner must report the byte), "read" makes the owner spoil one
 * byte of every READ's source (the issuer must report it).
 */
static const char *neg;
static const char *addr, *peer;
static bool mainline;
static unsigned int fails, reports;
static const char *cur_case = "?";

/* A failure of this case: counted, the first MAX_REPORTS printed. */
static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	fails++;
	va_start(ap, fmt);
	vnote_limited(host, reports++, MAX_REPORTS, "failures", fmt, ap);
	va_end(ap);
}

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A key for (tag, index, role), the same on both hosts. */
static uint64_t key_of(uint64_t tag, uint64_t idx, uint64_t role)
{
	return mix64(seed ^ mix64(tag * 0x100000001b3ULL + (idx << 8) + role));
}

/* Byte off + j of the pattern of key, for j < len. */
static void pat_fill(uint8_t *b, size_t len, uint64_t key, uint64_t off)
{
	uint64_t w = 0, wi = UINT64_MAX;
	size_t j;

	for (j = 0; j < len; j++) {
		uint64_t pos = off + j, i = pos >> 3;

		if (i != wi) {
			wi = i;
			w = mix64(key + i * 0x9e3779b97f4a7c15ULL);
		}
		b[j] = w >> ((pos & 7) * 8);
	}
}

/* First j < len where b[j] is not pattern byte off + j of key, else -1. */
static int64_t pat_cmp(const uint8_t *b, size_t len, uint64_t key,
		       uint64_t off, uint8_t *want)
{
	uint64_t w = 0, wi = UINT64_MAX;
	size_t j;

	for (j = 0; j < len; j++) {
		uint64_t pos = off + j, i = pos >> 3;
		uint8_t e;

		if (i != wi) {
			wi = i;
			w = mix64(key + i * 0x9e3779b97f4a7c15ULL);
		}
		e = w >> ((pos & 7) * 8);
		if (b[j] != e) {
			*want = e;
			return j;
		}
	}
	return -1;
}

/* A mapping filled with its own pattern. */
struct area {
	uint8_t *map;
	size_t len;
	uint64_t key;
};

static int area_new(struct area *a, size_t need, uint64_t key)
{
	a->len = (need + 4096 + 4095) & ~(size_t)4095;
	a->key = key;
	a->map = mmap(NULL, a->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->map == MAP_FAILED) {
		fail("mmap of %zu bytes: %s", a->len, strerror(errno));
		a->map = NULL;
		return -1;
	}
	pat_fill(a->map, a->len, key, 0);
	return 0;
}

static void area_free(struct area *a)
{
	if (a->map)
		munmap(a->map, a->len);
	a->map = NULL;
}

/* Range [off, off + len) of an area must hold pattern key from src. */
struct span {
	uint64_t off, len, key, src;
};

/*
 * Checks the whole area: each span (ascending, not overlapping) holds its
 * expected bytes, everything else the area's own pattern.  Returns the
 * number of bad ranges found (0 or 1 per span or gap), each reported.
 */
static unsigned int area_verify(const struct area *a, const struct span *sp,
				unsigned int n, const char *what)
{
	uint64_t pos = 0;
	unsigned int bad = 0, i;
	uint8_t want;
	int64_t o;

	for (i = 0; i <= n; i++) {
		uint64_t end = i < n ? sp[i].off : a->len;

		if (end > pos) {
			o = pat_cmp(a->map + pos, end - pos, a->key, pos, &want);
			if (o >= 0) {
				fail("%s: byte at offset %" PRIu64 " of the mapping (%s) changed: 0x%02x, expected 0x%02x",
				     what, pos + o,
				     n ? "outside the op's range" :
				     "nothing of it may change",
				     a->map[pos + o], want);
				bad++;
			}
		}
		if (i == n)
			break;
		o = pat_cmp(a->map + sp[i].off, sp[i].len, sp[i].key,
			    sp[i].src, &want);
		if (o >= 0) {
			fail("%s: byte %" PRIu64 " of range %u (mapping offset %" PRIu64 ", %" PRIu64 " bytes) wrong: 0x%02x, expected 0x%02x%s",
			     what, (uint64_t)o, i, sp[i].off + o, sp[i].len,
			     a->map[sp[i].off + o], want,
			     a->map[sp[i].off + o] ==
			     ({ uint8_t own; pat_fill(&own, 1, a->key,
						      sp[i].off + o); own; }) ?
			     " (not transferred)" : "");
			bad++;
		}
		pos = sp[i].off + sp[i].len;
	}
	return bad;
}

/* ---- sockets, messages, notifications ---- */

static int sock_open(struct peerio *p, const char *bind_addr, uint16_t port,
		     uint16_t peer_port)
{
	struct timeval tv = { .tv_sec = WAIT_MS / 1000 };

	memset(p, 0, sizeof(*p));
	p->fd = rds_bound(bind_addr, port);
	if (p->fd < 0) {
		fail("bind %s:%u: %s", bind_addr, port, strerror(errno));
		return -1;
	}
	set_sockbufs(p->fd, 8 << 20);
	setsockopt(p->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	p->to = rds_sin(peer, peer_port);
	return 0;
}

static ssize_t send_cm(int fd, const struct sockaddr_in *to, const void *buf,
		       size_t len, const struct cm *cm, int ncm)
{
	union {
		char b[1024];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = (void *)to, .msg_namelen = sizeof(*to),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	struct cmsghdr *c;
	size_t total = 0;
	int i;

	memset(&cb, 0, sizeof(cb));
	for (i = 0; i < ncm; i++)
		total += CMSG_SPACE(cm[i].len);
	if (ncm) {
		msg.msg_control = cb.b;
		msg.msg_controllen = total;
	}
	for (i = 0, c = ncm ? CMSG_FIRSTHDR(&msg) : NULL; i < ncm;
	     i++, c = CMSG_NXTHDR(&msg, c)) {
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = cm[i].type;
		c->cmsg_len = CMSG_LEN(cm[i].len);
		memcpy(CMSG_DATA(c), cm[i].data, cm[i].len);
	}
	return sendmsg(fd, &msg, 0);
}

static struct ctl mk(uint32_t type, uint32_t idx)
{
	struct ctl m = { .magic = MAGIC, .type = type, .idx = idx,
			 .host = host };

	return m;
}

/* Sends m (with cmsgs); 0, or -1 with the failure reported. */
static int send_ctl(struct peerio *p, const struct ctl *m, const struct cm *cm,
		    int ncm)
{
	ssize_t n = send_cm(p->fd, &p->to, m, sizeof(*m), cm, ncm);

	if (n == (ssize_t)sizeof(*m))
		return 0;
	fail("send of %s %u: %s", mtype_name[m->type], m->idx,
	     n < 0 ? strerror(errno) : "short");
	return -1;
}

/* One recvmsg within tmo ms into p's queues: 1, 0 (nothing), -1 error. */
static int recv_some(struct peerio *p, int tmo)
{
	union {
		char b[CMSG_SPACE(sizeof(struct rds_rdma_notify)) * 64];
		struct cmsghdr align;
	} cb;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	struct sockaddr_in from;
	struct ctl m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cb.b, .msg_controllen = sizeof(cb.b),
	};
	struct cmsghdr *c;
	struct rxmsg *r;
	bool has_cookie = false, had_status = false;
	uint64_t cookie = 0;
	ssize_t n;
	int rc;

	rc = poll(&pfd, 1, tmo);
	if (rc < 0 && errno != EINTR) {
		fail("poll: %s", strerror(errno));
		return -1;
	}
	if (rc <= 0)
		return 0;
	memset(&m, 0, sizeof(m));
	n = recvmsg(p->fd, &msg, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		fail("recvmsg: %s", strerror(errno));
		return -1;
	}
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_STATUS) {
			struct rds_rdma_notify nt;

			if (c->cmsg_len < CMSG_LEN(sizeof(nt))) {
				fail("RDS_CMSG_RDMA_STATUS of %zu bytes",
				     (size_t)c->cmsg_len);
				continue;
			}
			memcpy(&nt, CMSG_DATA(c), sizeof(nt));
			p->nstatus_total++;
			had_status = true;
			if (n > 0)
				fail("status (token %" PRIx64 ") delivered with a %zd-byte message, not alone",
				     (uint64_t)nt.user_token, n);
			if (p->nst < 256)
				p->st[p->nst++] = nt;
			else
				fail("more than 256 statuses stashed");
		} else if (c->cmsg_type == RDS_CMSG_RDMA_DEST) {
			if (c->cmsg_len < CMSG_LEN(sizeof(cookie))) {
				fail("RDS_CMSG_RDMA_DEST of %zu bytes",
				     (size_t)c->cmsg_len);
				continue;
			}
			memcpy(&cookie, CMSG_DATA(c), sizeof(cookie));
			has_cookie = true;
		}
	}
	if (msg.msg_flags & MSG_CTRUNC)
		fail("control data truncated (MSG_CTRUNC)");
	if (n == 0) {
		/* a notice alone, or a message of no bytes */
		if (!had_status)
			p->nempty++;
		return 1;
	}
	if (n != sizeof(m) || m.magic != MAGIC) {
		fail("unexpected message of %zd bytes (magic 0x%08x) from port %u",
		     n, m.magic, ntohs(from.sin_port));
		return 1;
	}
	if (from.sin_addr.s_addr != p->to.sin_addr.s_addr)
		fail("%s from a wrong address", mtype_name[m.type % 13]);
	if (p->qn == 128) {
		fail("more than 128 messages queued");
		return -1;
	}
	r = &p->q[(p->qh + p->qn++) % 128];
	r->m = m;
	r->len = n;
	r->has_cookie = has_cookie;
	r->cookie = cookie;
	r->sport = ntohs(from.sin_port);
	return 1;
}

/* The next message, within tmo ms; 0 or -1 (reported as waiting for what). */
static int next_msg(struct peerio *p, struct rxmsg *out, int tmo,
		    const char *what)
{
	int64_t deadline = now_ms() + tmo;

	while (!p->qn) {
		int64_t left = deadline - now_ms();

		if (left <= 0) {
			fail("no message in %d s while waiting for %s", tmo / 1000,
			     what);
			return -1;
		}
		if (recv_some(p, left > 1000 ? 1000 : left) < 0)
			return -1;
	}
	*out = p->q[p->qh];
	p->qh = (p->qh + 1) % 128;
	p->qn--;
	return 0;
}

/* The next message must be type/idx. */
static int expect_msg(struct peerio *p, uint32_t type, uint32_t idx,
		      struct rxmsg *out)
{
	char what[64];

	snprintf(what, sizeof(what), "%s %u", mtype_name[type], idx);
	if (next_msg(p, out, WAIT_MS, what))
		return -1;
	if (out->m.type != type || out->m.idx != idx) {
		fail("expected %s, received %s %u", what,
		     mtype_name[out->m.type % 13], out->m.idx);
		return -1;
	}
	return 0;
}

/* The status of token within tmo ms: its status, or -100 (reported). */
static int wait_status(struct peerio *p, uint64_t token, int tmo)
{
	int64_t deadline = now_ms() + tmo;

	for (;;) {
		unsigned int i;

		for (i = 0; i < p->nst; i++) {
			if (p->st[i].user_token == token) {
				int s = p->st[i].status;

				p->st[i] = p->st[--p->nst];
				return s;
			}
		}
		if (now_ms() >= deadline) {
			fail("no RDS_CMSG_RDMA_STATUS for token %" PRIx64 " in %d s (%u other statuses stashed)",
			     token, tmo / 1000, p->nst);
			return -100;
		}
		if (recv_some(p, 200) < 0)
			return -100;
	}
}

static const char *sname(int s)
{
	return s >= 0 && s <= 4 ? st_name[s] : "?";
}

static void expect_status(struct peerio *p, uint64_t token, int want,
			  const char *what)
{
	int s = wait_status(p, token, WAIT_MS);

	if (s != -100 && s != want)
		fail("%s: status %d (%s), expected %d (%s)", what, s, sname(s),
		     want, sname(want));
}

/* Statuses nobody asked for: none may be left. */
static void expect_no_status(struct peerio *p, const char *when)
{
	while (recv_some(p, 0) > 0)
		;
	while (p->nst) {
		p->nst--;
		fail("unexpected RDS_CMSG_RDMA_STATUS token %" PRIx64 " status %d (%s) %s",
		     (uint64_t)p->st[p->nst].user_token, p->st[p->nst].status,
		     sname(p->st[p->nst].status), when);
	}
}

static int get_mr(int fd, const void *a, uint64_t len, uint64_t *cookie,
		  uint64_t flags)
{
	struct rds_get_mr_args mr = {
		.vec = { .addr = (uintptr_t)a, .bytes = len },
		.cookie_addr = (uintptr_t)cookie, .flags = flags,
	};

	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr)) ? errno : 0;
}

static int free_mr(int fd, uint64_t cookie)
{
	struct rds_free_mr_args fr = { .cookie = cookie };

	return setsockopt(fd, SOL_RDS, RDS_FREE_MR, &fr, sizeof(fr)) ? errno : 0;
}

static void check_cookie(uint64_t cookie, const void *a, const char *what)
{
	if (cookie >> 32 != ((uintptr_t)a & 4095))
		fail("%s: cookie %016" PRIx64 ": high 32 bits should be the page offset %lu of %p",
		     what, cookie, (unsigned long)((uintptr_t)a & 4095), a);
}

/* ---- counters ---- */

static long long ctr(const char *key)
{
	char line[2048];

	if (read_counters(line, sizeof(line)) <= 0)
		return -1;
	return counter(line, key);
}

static const char *const rdma_keys[] = {
	"mr_regs", "mr_frees", "mr_in_use", "mr_waits", "mr_exhausted",
	"rdma_ops", "rdma_bytes", "rdma_errors", "atomics",
	"resets", "connects",
};

static long long delta(const char *c0, const char *key)
{
	char line[2048];
	long long a = counter(c0, key), b;

	if (read_counters(line, sizeof(line)) <= 0)
		return LLONG_MIN;
	b = counter(line, key);
	if (a < 0 || b < 0)
		return LLONG_MIN;
	return b - a;
}

static void print_deltas(const char *c0)
{
	char line[2048], out[1024];
	size_t i, o = 0;

	if (read_counters(line, sizeof(line)) <= 0) {
		note("host %d: %s: cannot read", host, IB_COUNTERS);
		return;
	}
	for (i = 0; i < sizeof(rdma_keys) / sizeof(rdma_keys[0]); i++) {
		long long a = counter(c0, rdma_keys[i]);
		long long b = counter(line, rdma_keys[i]);

		if (b < 0)
			o += snprintf(out + o, sizeof(out) - o, " %s=absent",
				      rdma_keys[i]);
		else if (!strcmp(rdma_keys[i], "mr_in_use"))
			o += snprintf(out + o, sizeof(out) - o, " %s=%lld",
				      rdma_keys[i], b);
		else
			o += snprintf(out + o, sizeof(out) - o, " %s=+%lld",
				      rdma_keys[i], b - (a < 0 ? 0 : a));
	}
	note("host %d: %s counters:%s", host, cur_case, out);
}

/* At least min: -1 when the counter is absent (noted once per case). */
static void expect_delta_ge(const char *c0, const char *key, long long min)
{
	long long d = delta(c0, key);

	if (d == LLONG_MIN) {
		note("host %d: counter %s absent: not checked", host, key);
		return;
	}
	if (d < min)
		fail("counter %s moved by %lld, expected at least %lld", key, d,
		     min);
}

/* ---- fixture: seed, barriers, counters ---- */

FIXTURE(rdma)
{
	char c0[2048];
	long long in_use0;
	bool started;
};

static bool need_two_hosts(void)
{
	return !single_host(&addr, &peer);
}

static char mr_max_saved[32];

static void mr_max_restore(void)
{
	FILE *f;

	if (!mr_max_saved[0])
		return;
	f = fopen(MR_MAX_PARAM, "w");
	if (!f || fputs(mr_max_saved, f) < 0 || fclose(f))
		fail("restoring %s to %s failed", MR_MAX_PARAM, mr_max_saved);
	mr_max_saved[0] = 0;
}

/* RDS_RDMA_CASES=a,b: run only those cases (both hosts the same). */
static bool case_wanted(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *q = list;

	while ((q = strstr(q, name))) {
		if ((q == list || q[-1] == ',') && (!q[n] || q[n] == ','))
			return true;
		q += n;
	}
	return false;
}

FIXTURE_SETUP(rdma)
{
	const char *env = getenv("RDS_SEED"), *ml = getenv("RDS_RDMA_MAINLINE");
	const char *cases_env = getenv("RDS_RDMA_CASES");
	char bar[96], path[512];

	cur_case = _metadata->name;
	host = this_host();
	mainline = ml && !strcmp(ml, "1");
	neg = getenv("RDS_RDMA_NEG");
	fails = reports = 0;
	if (!need_two_hosts())
		SKIP(return, "needs two hosts (RDS_ADDR, RDS_PEER)");
	if (cases_env && !case_wanted(cases_env, cur_case))
		SKIP(return, "not in RDS_RDMA_CASES");
	ASSERT_TRUE(host == 1 || host == 2);
	snprintf(bar, sizeof(bar), "%s.seed", cur_case);
	if (host == 1) {
		seed = env ? strtoull(env, NULL, 0) :
		       (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		ASSERT_EQ(0, shared_publish(bar, "%" PRIu64 "\n", seed));
	}
	snprintf(bar, sizeof(bar), "%s.start", cur_case);
	ASSERT_EQ(0, barrier(bar, 120));
	if (host == 2) {
		snprintf(bar, sizeof(bar), "%s.seed", cur_case);
		ASSERT_EQ(0, shared_fetch(path, sizeof(path), bar, "seed", 1,
					  "%" SCNu64, &seed));
	}
	note("host %d: case %s: seed %" PRIu64 "%s", host, cur_case, seed,
	     mainline ? " (RDS_RDMA_MAINLINE: GET_MR parts skipped)" : "");
	if (read_counters(self->c0, sizeof(self->c0)) <= 0)
		self->c0[0] = 0;
	self->in_use0 = counter(self->c0, "mr_in_use");
	self->started = true;
}

FIXTURE_TEARDOWN(rdma)
{
	char bar[96];
	int64_t deadline;
	long long u = -1;

	if (!self->started)
		return;
	mr_max_restore();
	/* every MR of the case is freed (sockets are closed by now) */
	deadline = now_ms() + 10000;
	while (self->in_use0 >= 0 && (u = ctr("mr_in_use")) > self->in_use0 &&
	       now_ms() < deadline)
		poll(NULL, 0, 50);
	if (self->in_use0 >= 0 && u > self->in_use0)
		fail("mr_in_use is %lld 10 s after the case, was %lld before",
		     u, self->in_use0);
	print_deltas(self->c0);
	snprintf(bar, sizeof(bar), "%s.end", cur_case);
	EXPECT_EQ(0, barrier(bar, 240));
	EXPECT_EQ(0U, fails) TH_LOG("host %d: %u failures in %s", host, fails,
				   cur_case);
}

/*
 * Both hosts have bound their sockets (a message to a port nobody bound is
 * dropped), then say hello: the connection is up before any RDMA.
 */
static int hello(struct peerio *p)
{
	struct ctl m = mk(M_HELLO, 0);
	struct rxmsg r;
	char bar[96];

	snprintf(bar, sizeof(bar), "%s.bound", cur_case);
	if (barrier(bar, 120)) {
		fail("barrier %s", bar);
		return -1;
	}
	if (host == 1) {
		if (send_ctl(p, &m, NULL, 0) || expect_msg(p, M_HELLO, 0, &r))
			return -1;
	} else {
		if (expect_msg(p, M_HELLO, 0, &r) || send_ctl(p, &m, NULL, 0))
			return -1;
	}
	return 0;
}

/* ---- one RDMA operation between owner and issuer ---- */

struct piece {
	uint64_t off, len;
};

struct item {
	unsigned int idx;
	int op, route, owner;
	uint64_t size, pre, post, opage;
	uint64_t mr_flags, op_flags;
	unsigned int n;
	struct piece *pc;		/* the issuer's pieces, in its mapping */
	uint64_t iext;			/* the issuer's mapping holds them */
};

/* Lengths summing to size, each at least 1, uneven; gaps 0..32. */
static int plan_item(struct item *it, unsigned int idx, int op, int route,
		     int owner, uint64_t size, unsigned int n)
{
	uint64_t r = seed ^ mix64(0x17e4 + idx), rem, sum = 0, off, wsum = 0;
	uint32_t *w;
	unsigned int k;

	memset(it, 0, sizeof(*it));
	it->idx = idx;
	it->op = op;
	it->route = route;
	it->owner = owner;
	it->size = size;
	it->n = n;
	it->pre = splitmix64(&r) % 65;
	it->post = splitmix64(&r) % 65;
	it->opage = splitmix64(&r) % 4096;
	/*
	 * No registration past 257 pages (1 MiB + 4096 from a page start):
	 * whether 1 MiB + a few bytes from late in a page (258 pages) may
	 * be registered is left open (args notes it).
	 */
	if (it->opage + it->pre + size + it->post > MAX_MR)
		it->pre = it->post = 0;
	switch (idx % 4) {
	case 1:
		it->op_flags = RDS_RDMA_FENCE;
		break;
	case 2:
		it->op_flags = RDS_RDMA_SILENT;
		break;
	}
	it->pc = calloc(n, sizeof(*it->pc));
	w = calloc(n, sizeof(*w));
	if (!it->pc || !w) {
		free(w);
		fail("out of memory");
		return -1;
	}
	rem = size - n;
	for (k = 0; k < n; k++) {
		w[k] = splitmix64(&r) % 65536;
		wsum += w[k];
	}
	for (k = 0; k < n; k++) {
		it->pc[k].len = 1 + (wsum ? rem * w[k] / wsum : 0);
		sum += it->pc[k].len;
	}
	/* rounding: the rest goes to random pieces */
	while (sum < size) {
		it->pc[splitmix64(&r) % n].len++;
		sum++;
	}
	free(w);
	off = splitmix64(&r) % 4096;
	for (k = 0; k < n; k++) {
		uint64_t g = splitmix64(&r);

		it->pc[k].off = off;
		off += it->pc[k].len + (g % 4 ? g % 33 : 0);
	}
	it->iext = off;
	return 0;
}

static uint64_t owner_key(const struct item *it)
{
	return key_of(1, it->idx, it->owner);
}

static uint64_t issuer_key(const struct item *it)
{
	return key_of(2, it->idx, 3 - it->owner);
}

/*
 * Spans the op changes: WRITE at the owner (pieces, in order, at pre), READ
 * at the issuer (each piece from the owner's region).
 */
static struct span *item_spans(const struct item *it, bool at_owner)
{
	struct span *sp = calloc(it->n, sizeof(*sp));
	uint64_t cum = 0;
	unsigned int k;

	if (!sp)
		return NULL;
	for (k = 0; k < it->n; k++) {
		if (at_owner)
			sp[k] = (struct span){ it->opage + it->pre + cum,
					       it->pc[k].len, issuer_key(it),
					       it->pc[k].off };
		else
			sp[k] = (struct span){ it->pc[k].off, it->pc[k].len,
					       owner_key(it),
					       it->opage + it->pre + cum };
		cum += it->pc[k].len;
	}
	return sp;
}

static const char *opn(int op)
{
	return op == OP_WRITE ? "WRITE" : "READ";
}

static void item_name(const struct item *it, char *b, size_t n)
{
	snprintf(b, n, "item %u (%s of %" PRIu64 " B, %s, %u piece%s, owner host %d, page offset %" PRIu64 ", pre %" PRIu64 " post %" PRIu64 ")",
		 it->idx, opn(it->op), it->size,
		 it->route == R_GETMR ? "GET_MR" : "RDMA_MAP", it->n,
		 it->n == 1 ? "" : "s", it->owner, it->opage, it->pre, it->post);
}

/* Owner side of one item; -1 when the exchange broke down. */
static int own_one(struct peerio *p, const struct item *it)
{
	struct area a;
	struct ctl m = mk(M_OFFER, it->idx);
	struct rxmsg r;
	uint64_t cookie = 0, reglen = it->pre + it->size + it->post;
	unsigned int f0 = fails;
	uint8_t *region;
	char name[200];
	int e, ret = 0;

	item_name(it, name, sizeof(name));
	if (area_new(&a, it->opage + reglen, owner_key(it))) {
		m.a = 1;
		send_ctl(p, &m, NULL, 0);
		return -1;
	}
	region = a.map + it->opage;
	if (neg && !strcmp(neg, "read") && it->op == OP_READ) {
		region[it->pre + it->size / 2] ^= 0x20;
		note("host %d: RDS_RDMA_NEG=read: spoilt byte %" PRIu64 " of item %u's READ source",
		     host, it->size / 2, it->idx);
	}
	if (it->route == R_GETMR) {
		e = get_mr(p->fd, region, reglen, &cookie, it->mr_flags);
		if (e) {
			fail("%s: RDS_GET_MR of %" PRIu64 " bytes: %s", name,
			     reglen, strerror(e));
			m.a = 1;
			send_ctl(p, &m, NULL, 0);
			goto out;
		}
		check_cookie(cookie, region, name);
		m.cookie = cookie;
		{
			struct cm c = { RDS_CMSG_RDMA_DEST, &cookie, 8 };

			if (send_ctl(p, &m, &c, 1)) {
				ret = -1;
				goto out;
			}
		}
	} else {
		struct rds_get_mr_args mr = {
			.vec = { .addr = (uintptr_t)region, .bytes = reglen },
			.cookie_addr = (uintptr_t)&cookie,
			.flags = it->mr_flags,
		};
		struct cm c = { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) };
		ssize_t n = send_cm(p->fd, &p->to, &m, sizeof(m), &c, 1);

		if (n != sizeof(m)) {
			fail("%s: sendmsg with RDS_CMSG_RDMA_MAP: %s", name,
			     n < 0 ? strerror(errno) : "short");
			m.a = 1;
			send_ctl(p, &m, NULL, 0);
			goto out;
		}
		if (!cookie)
			fail("%s: RDS_CMSG_RDMA_MAP wrote no cookie", name);
		check_cookie(cookie, region, name);
	}
	if (expect_msg(p, M_DO, it->idx, &r)) {
		ret = -1;
		goto out_free;
	}
	if (r.m.a)		/* the issuer could not do it (reported there) */
		goto out_free;
	if (r.m.cookie != cookie)
		fail("%s: the issuer received cookie %016" PRIx64 ", registered %016" PRIx64,
		     name, r.m.cookie, cookie);
	if (it->op == OP_WRITE) {
		struct span *sp = item_spans(it, true);

		if (sp)
			area_verify(&a, sp, it->n, name);
		free(sp);
	} else {
		area_verify(&a, NULL, 0, name);
	}
out_free:
	e = free_mr(p->fd, cookie);
	if (e && !(e == EINVAL && (it->mr_flags & RDS_RDMA_USE_ONCE)))
		fail("%s: RDS_FREE_MR: %s", name, strerror(e));
	m = mk(M_RESULT, it->idx);
	m.a = fails - f0;
	if (send_ctl(p, &m, NULL, 0))
		ret = -1;
out:
	area_free(&a);
	return ret;
}

static struct rds_iovec *item_iov(const struct item *it, uint8_t *map)
{
	struct rds_iovec *v = calloc(it->n, sizeof(*v));
	unsigned int k;

	if (!v)
		return NULL;
	for (k = 0; k < it->n; k++) {
		v[k].addr = (uintptr_t)(map + it->pc[k].off);
		v[k].bytes = it->pc[k].len;
	}
	return v;
}

/* Issuer side of one item. */
/* Bytes of the READs this host issued that succeeded (recv_rdma_bytes). */
static uint64_t read_bytes;

static int issue_one(struct peerio *p, const struct item *it,
		     uint64_t *ops, uint64_t *bytes)
{
	struct rds_rdma_args args;
	struct rds_iovec *v = NULL;
	struct ctl m = mk(M_DO, it->idx);
	struct area a = { 0 };
	struct rxmsg r, o;
	uint64_t token = 0x5100000000ULL + it->idx;
	char name[200];
	int s, ret = 0;

	item_name(it, name, sizeof(name));
	if (expect_msg(p, M_OFFER, it->idx, &o))
		return -1;
	if (o.m.a) {
		fail("%s: the owner could not register (see host %d)", name,
		     it->owner);
		return 0;
	}
	if (!o.has_cookie) {
		fail("%s: the offer came without an RDS_CMSG_RDMA_DEST cmsg",
		     name);
		m.a = 1;
		goto send;
	}
	if (it->route == R_GETMR && o.m.cookie != o.cookie)
		fail("%s: RDS_CMSG_RDMA_DEST carried %016" PRIx64 ", the owner's GET_MR gave %016" PRIx64,
		     name, o.cookie, o.m.cookie);
	m.cookie = o.cookie;
	if (area_new(&a, it->iext, issuer_key(it)) ||
	    !(v = item_iov(it, a.map))) {
		m.a = 1;
		goto send;
	}
	if (neg && !strcmp(neg, "write") && it->op == OP_WRITE) {
		a.map[it->pc[it->n - 1].off] ^= 0x20;
		note("host %d: RDS_RDMA_NEG=write: spoilt the first byte of item %u's last piece",
		     host, it->idx);
	}
	memset(&args, 0, sizeof(args));
	args.cookie = o.cookie;
	args.remote_vec.addr = it->pre;
	args.remote_vec.bytes = it->size;
	args.local_vec_addr = (uintptr_t)v;
	args.nr_local = it->n;
	args.flags = RDS_RDMA_NOTIFY_ME | it->op_flags |
		     (it->op == OP_WRITE ? RDS_RDMA_READWRITE : 0);
	args.user_token = token;
	{
		struct cm c = { RDS_CMSG_RDMA_ARGS, &args, sizeof(args) };
		ssize_t n = send_cm(p->fd, &p->to, &m, sizeof(m), &c, 1);

		if (n != sizeof(m)) {
			fail("%s: sendmsg with RDS_CMSG_RDMA_ARGS: %s", name,
			     n < 0 ? strerror(errno) : "short");
			m.a = 1;
			goto send;
		}
	}
	s = wait_status(p, token, WAIT_MS);
	if (s == -100) {
		ret = -1;
	} else if (s) {
		fail("%s: status %d (%s)", name, s, sname(s));
	} else {
		(*ops)++;
		*bytes += it->size;
		if (it->op == OP_READ)
			read_bytes += it->size;
	}
	if (it->op == OP_READ && s == 0) {
		struct span *sp = item_spans(it, false);

		if (sp)
			area_verify(&a, sp, it->n, name);
		free(sp);
	} else {
		area_verify(&a, NULL, 0, name);
	}
	goto result;
send:
	if (send_ctl(p, &m, NULL, 0))
		ret = -1;
result:
	if (expect_msg(p, M_RESULT, it->idx, &r))
		ret = -1;
	else if (r.m.a)
		fail("%s: the owner (host %d) found %" PRIu64 " problems",
		     name, it->owner, r.m.a);
	free(v);
	area_free(&a);
	return ret;
}

/* Runs items in order, this host taking its role in each. */
static void run_items(struct peerio *p, struct item *items, unsigned int n,
		      uint64_t *ops, uint64_t *bytes)
{
	unsigned int i;
	int64_t t0 = now_ms();

	for (i = 0; i < n; i++) {
		int rc = items[i].owner == host ? own_one(p, &items[i]) :
			 issue_one(p, &items[i], ops, bytes);

		if (rc) {
			char name[200];

			item_name(&items[i], name, sizeof(name));
			fail("%s: the exchange broke down; stopping", name);
			break;
		}
	}
	note("host %d: %u items in %.1f s: %" PRIu64 " ops issued here, %" PRIu64 " bytes",
	     host, i, (now_ms() - t0) / 1000.0, *ops, *bytes);
}

static void free_items(struct item *items, unsigned int n);

/* A case made of planned items: one socket on port, the items in order,
 * no status left over, the counters moved by at least what was issued
 * here; the items are freed.
 */
static void run_case_items(const char *c0, uint16_t port, struct item *items,
			   unsigned int n)
{
	uint64_t ops = 0, bytes = 0, read0 = read_bytes;
	long long rb0 = -1, rb1 = -1;
	struct peerio p;

	if (!sock_open(&p, addr, port, port)) {
		rb0 = rds_info_counter(p.fd, "recv_rdma_bytes");
		if (!hello(&p))
			run_items(&p, items, n, &ops, &bytes);
		expect_no_status(&p, "after the last item");
		rb1 = rds_info_counter(p.fd, "recv_rdma_bytes");
		close(p.fd);
	}
	/* the core's recv_rdma_bytes: what the READs issued here brought in */
	if (read_bytes > read0) {
		note("host %d: recv_rdma_bytes +%lld, READs issued here %" PRIu64 " bytes",
		     host, rb1 - rb0, read_bytes - read0);
		if (rb0 < 0 || rb1 < 0)
			fail("no recv_rdma_bytes in RDS_INFO_COUNTERS");
		else if ((uint64_t)(rb1 - rb0) < read_bytes - read0)
			fail("recv_rdma_bytes moved by %lld, the READs issued here took %" PRIu64,
			     rb1 - rb0, read_bytes - read0);
	}
	if (ops)
		expect_delta_ge(c0, "rdma_ops", ops);
	if (bytes)
		expect_delta_ge(c0, "rdma_bytes", bytes);
	free_items(items, n);
}

static void free_items(struct item *items, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		free(items[i].pc);
	free(items);
}

/* ---- case 1: sizes ---- */

TEST_F_TIMEOUT(rdma, sizes, 280)
{
	if (!self->started)
		return;
	static const uint64_t fixed[] = {
		1, 2, 7, 4095, 4096, 4097, 8191, 8192, 65535, 65536, 65537,
		MAX_RDMA - 1, MAX_RDMA,
	};
	const unsigned int nfixed = sizeof(fixed) / sizeof(fixed[0]);
	unsigned int nsz = nfixed + 4, n = 0, s, op, route, dir;
	uint64_t sizes[32], r = seed ^ 0x5125;
	struct item *items;

	for (s = 0; s < nfixed; s++)
		sizes[s] = fixed[s];
	for (; s < nsz; s++)
		sizes[s] = 1 + splitmix64(&r) % MAX_RDMA;
	note("random sizes: %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
	     sizes[nfixed], sizes[nfixed + 1], sizes[nfixed + 2],
	     sizes[nfixed + 3]);
	items = calloc(nsz * 8, sizeof(*items));
	ASSERT_NE(NULL, items);
	for (dir = 1; dir <= 2; dir++)
		for (route = R_GETMR; route <= R_MAP; route++) {
			if (route == R_GETMR && mainline)
				continue;
			for (op = OP_WRITE; op <= OP_READ; op++)
				for (s = 0; s < nsz; s++, n++)
					if (plan_item(&items[n], n, op, route,
						      dir, sizes[s], 1))
						break;
		}
	run_case_items(self->c0, PORT_BASE, items, n);
}

/* ---- case 2: many local iovecs ---- */

TEST_F_TIMEOUT(rdma, iovecs, 200)
{
	if (!self->started)
		return;
	static const struct { unsigned int n; uint64_t size; } v[] = {
		{ 2, 0 }, { 17, 0 }, { 64, 0 }, { 1024, 1024 },
		{ 1024, 5000 }, { 1024, MAX_RDMA }, { 64, MAX_RDMA },
	};
	const unsigned int nv = sizeof(v) / sizeof(v[0]);
	uint64_t r = seed ^ 0x10fec;
	unsigned int n = 0, i, op, dir;
	struct item *items = calloc(nv * 4, sizeof(*items));

	ASSERT_NE(NULL, items);
	for (dir = 1; dir <= 2; dir++)
		for (op = OP_WRITE; op <= OP_READ; op++)
			for (i = 0; i < nv; i++, n++) {
				uint64_t size = v[i].size ? v[i].size :
						v[i].n + splitmix64(&r) % 100000;

				if (plan_item(&items[n], n, op,
					      (mainline || (n & 1)) ? R_MAP :
					      R_GETMR, dir, size, v[i].n))
					break;
			}
	run_case_items(self->c0, PORT_BASE + 10, items, n);
}

/* ---- case 3: USE_ONCE ---- */

/*
 * Owner (host 1): registers with USE_ONCE (GET_MR for round 0, MAP for
 * round 1) and offers; the issuer (host 2) does a first op (WRITE in round
 * 0, READ in round 1), which must succeed and be correct, then a second op
 * with the same cookie (other data), which must end REMOTE_ERROR and
 * change nothing, then a plain message, which must arrive.
 */
TEST_F_TIMEOUT(rdma, use_once, 150)
{
	if (!self->started)
		return;
	struct peerio p;
	unsigned int round;

	if (sock_open(&p, addr, PORT_BASE + 20, PORT_BASE + 20))
		return;
	if (hello(&p))
		goto out;
	for (round = 0; round < 2; round++) {
		struct item it;
		int op = round ? OP_READ : OP_WRITE;
		char name[200];

		if (round == 0 && mainline)
			continue;
		if (plan_item(&it, round, op, round ? R_MAP : R_GETMR, 1,
			      16384 + 4096 * round, 1))
			break;
		it.mr_flags = RDS_RDMA_USE_ONCE;
		it.op_flags = 0;
		item_name(&it, name, sizeof(name));
		if (host == 1) {
			struct area a;
			struct ctl m = mk(M_OFFER, round);
			struct rxmsg r;
			uint64_t cookie = 0, reglen = it.pre + it.size + it.post;
			struct span *sp = NULL;
			bool got_do2 = false;
			unsigned int f0 = fails;
			int e;

			if (area_new(&a, it.opage + reglen, owner_key(&it)))
				break;
			if (it.route == R_GETMR) {
				struct cm c = { RDS_CMSG_RDMA_DEST, &cookie, 8 };

				e = get_mr(p.fd, a.map + it.opage, reglen,
					   &cookie, RDS_RDMA_USE_ONCE);
				if (e)
					fail("%s: RDS_GET_MR: %s", name,
					     strerror(e));
				m.cookie = cookie;
				if (send_ctl(&p, &m, &c, 1))
					goto own_out;
			} else {
				struct rds_get_mr_args mr = {
					.vec = { (uintptr_t)(a.map + it.opage),
						 reglen },
					.cookie_addr = (uintptr_t)&cookie,
					.flags = RDS_RDMA_USE_ONCE,
				};
				struct cm c = { RDS_CMSG_RDMA_MAP, &mr,
						sizeof(mr) };

				if (send_ctl(&p, &m, &c, 1))
					goto own_out;
			}
			/* first op */
			if (expect_msg(&p, M_DO, 1, &r))
				goto own_out;
			if (op == OP_WRITE) {
				sp = item_spans(&it, true);
				area_verify(&a, sp, 1, name);
			} else {
				area_verify(&a, NULL, 0, name);
			}
			m = mk(M_RESULT, 1);
			m.a = fails - f0;
			if (send_ctl(&p, &m, NULL, 0))
				goto own_out;
			/* second op (its message may or may not come), plain */
			for (;;) {
				if (next_msg(&p, &r, WAIT_MS, "the plain message after the second op"))
					goto own_out;
				if (r.m.type == M_DO && r.m.idx == 2 && !got_do2) {
					got_do2 = true;
					continue;
				}
				if (r.m.type != M_PLAIN || r.m.idx != 3)
					fail("%s: expected PLAIN 3 after the second op, received %s %u",
					     name, mtype_name[r.m.type % 13],
					     r.m.idx);
				break;
			}
			note("host 1: %s: the message of the failed second op %s",
			     name, got_do2 ? "was delivered" : "was not delivered");
			/* the second op changed nothing */
			area_verify(&a, op == OP_WRITE ? sp : NULL,
				    op == OP_WRITE, name);
			e = free_mr(p.fd, cookie);
			if (e && e != EINVAL)
				fail("%s: RDS_FREE_MR after use: %s", name,
				     strerror(e));
			m = mk(M_RESULT, 3);
			m.a = fails - f0;
			send_ctl(&p, &m, NULL, 0);
own_out:
			free(sp);
			area_free(&a);
		} else {
			struct area a = { 0 }, b = { 0 };
			struct rds_rdma_args args;
			struct rds_iovec iv;
			struct ctl m;
			struct rxmsg o, r;
			struct cm c = { RDS_CMSG_RDMA_ARGS, &args, sizeof(args) };
			struct span *sp = NULL;

			if (expect_msg(&p, M_OFFER, round, &o))
				break;
			if (!o.has_cookie) {
				fail("%s: no RDS_CMSG_RDMA_DEST with the offer",
				     name);
				break;
			}
			if (area_new(&a, it.iext, issuer_key(&it)) ||
			    area_new(&b, it.iext, issuer_key(&it) ^ 1))
				goto iss_out;
			memset(&args, 0, sizeof(args));
			args.cookie = o.cookie;
			args.remote_vec.addr = it.pre;
			args.remote_vec.bytes = it.size;
			args.local_vec_addr = (uintptr_t)&iv;
			args.nr_local = 1;
			args.flags = RDS_RDMA_NOTIFY_ME |
				     (op == OP_WRITE ? RDS_RDMA_READWRITE : 0);
			iv.addr = (uintptr_t)(a.map + it.pc[0].off);
			iv.bytes = it.size;
			args.user_token = 0x0e1;
			m = mk(M_DO, 1);
			if (send_ctl(&p, &m, &c, 1))
				goto iss_out;
			expect_status(&p, 0x0e1, RDS_RDMA_SUCCESS,
				      "first op on a USE_ONCE key");
			if (op == OP_READ) {
				sp = item_spans(&it, false);
				area_verify(&a, sp, 1, name);
			} else {
				area_verify(&a, NULL, 0, name);
			}
			if (expect_msg(&p, M_RESULT, 1, &r))
				goto iss_out;
			if (r.m.a)
				fail("%s: the owner found %" PRIu64 " problems after the first op",
				     name, r.m.a);
			/* the second op, from other data / into b */
			iv.addr = (uintptr_t)(b.map + it.pc[0].off);
			args.user_token = 0x0e2;
			m = mk(M_DO, 2);
			if (send_ctl(&p, &m, &c, 1))
				goto iss_out;
			m = mk(M_PLAIN, 3);
			if (send_ctl(&p, &m, NULL, 0))
				goto iss_out;
			expect_status(&p, 0x0e2, RDS_RDMA_REMOTE_ERROR,
				      "second op on a USE_ONCE key");
			area_verify(&b, NULL, 0, "the second op's local buffer");
			if (expect_msg(&p, M_RESULT, 3, &r))
				goto iss_out;
			if (r.m.a)
				fail("%s: the owner found %" PRIu64 " problems",
				     name, r.m.a);
			expect_no_status(&p, "after the USE_ONCE ops");
iss_out:
			free(sp);
			area_free(&a);
			area_free(&b);
		}
		free(it.pc);
	}
out:
	close(p.fd);
}

/* ---- RDS_RDMA_SILENT ---- */

/*
 * Round 0: a WRITE with SILENT on a message of no bytes; round 1 the same
 * without SILENT (the control: the owner gets an empty message); round 2
 * SILENT on a message with a payload (delivered as usual).  After each op
 * the issuer sends PLAIN r; the owner counts what it got before it.
 */
TEST_F_TIMEOUT(rdma, silent, 120)
{
	if (!self->started)
		return;
	static const char *const what[] = {
		"SILENT, no payload", "no SILENT, no payload (control)",
		"SILENT with a payload",
	};
	struct peerio p;
	unsigned int round;

	if (mainline)
		SKIP(return, "needs RDS_GET_MR");
	if (sock_open(&p, addr, PORT_BASE + 25, PORT_BASE + 25))
		return;
	if (hello(&p))
		goto out;
	for (round = 0; round < 3; round++) {
		uint64_t key = key_of(25, round, 2);
		const size_t len = 256;

		if (host == 1) {
			struct ctl m = mk(M_OFFER, round);
			struct cm c = { RDS_CMSG_RDMA_DEST, NULL, 8 };
			long long s0 = rds_info_counter(p.fd, "recv_rdma_silent"), s1;
			unsigned int e0 = p.nempty, got_do = 0, empties;
			uint64_t cookie = 0;
			uint8_t *region, want = 0;
			struct rxmsg r;
			int64_t bad;
			int e;

			region = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (region == MAP_FAILED) {
				fail("mmap: %s", strerror(errno));
				break;
			}
			memset(region, 0, 4096);
			e = get_mr(p.fd, region, len, &cookie, 0);
			if (e) {
				fail("RDS_GET_MR: %s", strerror(e));
				munmap(region, 4096);
				break;
			}
			c.data = &cookie;
			m.cookie = cookie;
			if (send_ctl(&p, &m, &c, 1))
				goto own_out;
			for (;;) {
				if (next_msg(&p, &r, WAIT_MS, "the plain message after the op"))
					goto own_out;
				if (r.m.type == M_DO && r.m.idx == round) {
					got_do++;
					continue;
				}
				if (r.m.type != M_PLAIN || r.m.idx != round)
					fail("%s: expected PLAIN %u, received %s %u",
					     what[round], round,
					     mtype_name[r.m.type % 13], r.m.idx);
				break;
			}
			empties = p.nempty - e0;
			s1 = rds_info_counter(p.fd, "recv_rdma_silent");
			note("host 1: %s: %u empty messages, %u with a payload, recv_rdma_silent +%lld",
			     what[round], empties, got_do, s1 - s0);
			if (empties != (round == 1) || got_do != (round == 2))
				fail("%s: %u empty messages and %u with a payload delivered, expected %u and %u",
				     what[round], empties, got_do, round == 1,
				     round == 2);
			if (s1 - s0 != (round == 0))
				fail("%s: recv_rdma_silent moved by %lld", what[round],
				     s1 - s0);
			/* the op landed before the message after it */
			bad = pat_cmp(region, len, key, 0, &want);
			if (bad >= 0)
				fail("%s: region byte %" PRId64 " is 0x%02x, expected 0x%02x",
				     what[round], bad, region[bad], want);
own_out:
			free_mr(p.fd, cookie);
			munmap(region, 4096);
		} else {
			struct rds_rdma_args args;
			struct rds_iovec iv;
			struct cm c = { RDS_CMSG_RDMA_ARGS, &args, sizeof(args) };
			struct ctl m = mk(M_DO, round);
			uint8_t src[256];
			struct rxmsg o;
			ssize_t n;

			if (expect_msg(&p, M_OFFER, round, &o))
				break;
			pat_fill(src, len, key, 0);
			memset(&args, 0, sizeof(args));
			args.cookie = o.m.cookie;
			args.remote_vec.bytes = len;
			args.local_vec_addr = (uintptr_t)&iv;
			args.nr_local = 1;
			args.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME |
				     (round != 1 ? RDS_RDMA_SILENT : 0);
			args.user_token = 0x5100 + round;
			iv.addr = (uintptr_t)src;
			iv.bytes = len;
			if (round == 2) {
				if (send_ctl(&p, &m, &c, 1))
					break;
			} else {
				n = send_cm(p.fd, &p.to, NULL, 0, &c, 1);
				if (n != 0) {
					fail("%s: sendmsg: %zd (%s)", what[round],
					     n, n < 0 ? strerror(errno) : "bytes");
					break;
				}
			}
			expect_status(&p, 0x5100 + round, RDS_RDMA_SUCCESS,
				      what[round]);
			m = mk(M_PLAIN, round);
			if (send_ctl(&p, &m, NULL, 0))
				break;
		}
	}
	expect_no_status(&p, "after the SILENT ops");
out:
	close(p.fd);
}

/* ---- case 4: failing ops and a plain stream on the same connection ---- */

enum {
	E_BADKEY_W, E_BADKEY_R, E_FREED_GETMR_W, E_FREED_MAP_R,
	E_RANGE_W_TAIL, E_RANGE_R_PAST, E_RANGE_W_FAR, E_RECVERR,
	E_BAD_THEN_GOOD, E_SURVIVE, E_GOOD_AFTER, E_NCASES,
};

static const struct ecase {
	const char *name;
	int op;
	int route;		/* owner's registration, 0 = none (bad key) */
	bool freed;
	uint64_t off, bytes;	/* remote range (region is ERGN bytes) */
	bool notify;		/* NOTIFY_ME (else RDS_RECVERR) */
	int want;		/* status of the failing op */
} ecases[E_NCASES] = {
	[E_BADKEY_W] = { "WRITE with a random key", OP_WRITE, 0, false, 0,
			 4096, true, RDS_RDMA_REMOTE_ERROR },
	[E_BADKEY_R] = { "READ with a random key", OP_READ, 0, false, 0, 4096,
			 true, RDS_RDMA_REMOTE_ERROR },
	[E_FREED_GETMR_W] = { "WRITE to a freed GET_MR key", OP_WRITE,
			      R_GETMR, true, 0, 4096, true,
			      RDS_RDMA_REMOTE_ERROR },
	[E_FREED_MAP_R] = { "READ from a freed RDMA_MAP key", OP_READ, R_MAP,
			    true, 0, 4096, true, RDS_RDMA_REMOTE_ERROR },
	[E_RANGE_W_TAIL] = { "WRITE past the region's end", OP_WRITE,
			     R_GETMR, false, 8192 - 100, 200, true,
			     RDS_RDMA_REMOTE_ERROR },
	[E_RANGE_R_PAST] = { "READ just after the region", OP_READ, R_MAP,
			     false, 8192, 1, true, RDS_RDMA_REMOTE_ERROR },
	[E_RANGE_W_FAR] = { "WRITE 1 MiB after the region", OP_WRITE,
			    R_GETMR, false, MAX_RDMA, 8, true,
			    RDS_RDMA_REMOTE_ERROR },
	[E_RECVERR] = { "WRITE with a random key, RDS_RECVERR, no NOTIFY_ME",
			OP_WRITE, 0, false, 0, 4096, false,
			RDS_RDMA_REMOTE_ERROR },
	[E_BAD_THEN_GOOD] = { "a bad-key WRITE, a good WRITE right behind it",
			      OP_WRITE, R_GETMR, false, 0, 4096, true,
			      RDS_RDMA_REMOTE_ERROR },
	[E_SURVIVE] = { "a bad-key WRITE, then a good WRITE with a key registered before that reset",
			 OP_WRITE, R_GETMR, false, 0, 4096, true,
			 RDS_RDMA_REMOTE_ERROR },
	[E_GOOD_AFTER] = { "a good WRITE after all that", OP_WRITE, R_GETMR,
			   false, 0, 8192, true, RDS_RDMA_SUCCESS },
};

#define ERGN		8192
#define EPLAIN		20	/* plain messages before and after each op */

/* Owner of case errors: host 1. */
static void errors_owner(struct peerio *p)
{
	uint32_t next_plain = 0;
	unsigned int i;

	for (i = 0; i < E_NCASES; i++) {
		const struct ecase *ec = &ecases[i];
		struct area a = { 0 };
		struct ctl m = mk(M_OFFER, i);
		struct rxmsg r;
		uint64_t cookie = 0, opage = key_of(4, i, 0) % 4096 & ~7ULL;
		unsigned int f0 = fails, ndo = 0;
		bool good_arrived = false;
		int e;

		if ((ec->route == R_GETMR && mainline) ||
		    (i == E_FREED_GETMR_W && mainline))
			continue;
		if (ec->route) {
			if (area_new(&a, opage + ERGN, key_of(5, i, 1)))
				return;
			if (ec->route == R_GETMR) {
				struct cm c = { RDS_CMSG_RDMA_DEST, &cookie, 8 };

				e = get_mr(p->fd, a.map + opage, ERGN, &cookie,
					   0);
				if (e)
					fail("%s: RDS_GET_MR: %s", ec->name,
					     strerror(e));
				m.cookie = cookie;
				if (send_ctl(p, &m, &c, 1))
					goto fail_out;
			} else {
				struct rds_get_mr_args mr = {
					.vec = { (uintptr_t)(a.map + opage),
						 ERGN },
					.cookie_addr = (uintptr_t)&cookie,
				};
				struct cm c = { RDS_CMSG_RDMA_MAP, &mr,
						sizeof(mr) };

				if (send_ctl(p, &m, &c, 1))
					goto fail_out;
			}
			if (ec->freed) {
				e = free_mr(p->fd, cookie);
				if (e)
					fail("%s: RDS_FREE_MR: %s", ec->name,
					     strerror(e));
				m = mk(M_FREED, i);
				if (send_ctl(p, &m, NULL, 0))
					goto fail_out;
			}
		}
		/* plain messages in order, the DOs, then SYNC */
		for (;;) {
			if (next_msg(p, &r, 2 * WAIT_MS, "the plain stream"))
				goto fail_out;
			if (r.m.type == M_PLAIN) {
				if (r.m.a != next_plain) {
					fail("%s: plain message %" PRIu64 " arrived, expected %u (%s)",
					     ec->name, r.m.a, next_plain,
					     r.m.a < next_plain ?
					     "a duplicate or reordered" :
					     "some missing");
					if (r.m.a > next_plain)
						next_plain = r.m.a + 1;
				} else {
					next_plain++;
				}
				continue;
			}
			if (r.m.type == M_DO && r.m.idx == i) {
				ndo++;
				if (r.m.b == 1)
					good_arrived = true;
				continue;
			}
			if (r.m.type == M_SYNC && r.m.idx == i)
				break;
			fail("%s: unexpected %s %u", ec->name,
			     mtype_name[r.m.type % 13], r.m.idx);
		}
		if (r.m.a != next_plain)
			fail("%s: the issuer sent %" PRIu64 " plain messages so far, %u arrived",
			     ec->name, r.m.a, next_plain);
		/* r.m.b: the issuer's status of the good op (if any) */
		if (i == E_SURVIVE) {
			struct span sp = { opage, 4096, key_of(6, i, 2), 0 };

			if (!good_arrived)
				fail("%s: the good op's message never arrived",
				     ec->name);
			area_verify(&a, &sp, 1, ec->name);
		} else if (i == E_BAD_THEN_GOOD) {
			struct span sp = { opage, 4096, key_of(6, i, 2), 0 };

			note("host 1: %s: good op status %s, its message %s",
			     ec->name, sname(r.m.b), good_arrived ?
			     "delivered" : "not delivered");
			if (r.m.b == RDS_RDMA_SUCCESS) {
				if (!good_arrived)
					fail("%s: SUCCESS but its message never arrived",
					     ec->name);
				area_verify(&a, &sp, 1, ec->name);
			} else {
				/* DROPPED: whether it landed is not said */
				uint8_t want;

				note("host 1: %s: the dropped WRITE %s",
				     ec->name,
				     pat_cmp(a.map + opage, 4096, sp.key, 0,
					     &want) < 0 ? "landed" :
				     pat_cmp(a.map, a.len, a.key, 0, &want) < 0 ?
				     "did not land" : "partly landed");
			}
		} else if (i == E_GOOD_AFTER) {
			struct span sp = { opage, ERGN, key_of(6, i, 2), 0 };

			if (!good_arrived)
				fail("%s: its message never arrived", ec->name);
			area_verify(&a, &sp, 1, ec->name);
		} else if (ec->route) {
			area_verify(&a, NULL, 0, ec->name);
		}
		if (ec->route && !ec->freed) {
			e = free_mr(p->fd, cookie);
			if (e)
				fail("%s: RDS_FREE_MR: %s", ec->name,
				     strerror(e));
		}
		m = mk(M_SYNCED, i);
		m.a = next_plain;
		m.b = fails - f0;
		if (send_ctl(p, &m, NULL, 0))
			goto fail_out;
		area_free(&a);
		continue;
fail_out:
		area_free(&a);
		return;
	}
}

static int send_plains(struct peerio *p, uint32_t *next, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		struct ctl m = mk(M_PLAIN, 0);

		m.a = (*next)++;
		if (send_ctl(p, &m, NULL, 0))
			return -1;
	}
	return 0;
}

/* Issuer of case errors: host 2; returns the REMOTE_ERRORs seen. */
static unsigned int ndropped;

static unsigned int errors_issuer(struct peerio *p)
{
	uint32_t next_plain = 0;
	unsigned int i, nerr = 0;
	uint64_t rr = seed ^ 0xe77;

	for (i = 0; i < E_NCASES; i++) {
		const struct ecase *ec = &ecases[i];
		struct area a = { 0 };
		struct rds_rdma_args args;
		struct rds_iovec iv;
		struct cm c = { RDS_CMSG_RDMA_ARGS, &args, sizeof(args) };
		struct ctl m;
		struct rxmsg r;
		uint64_t cookie, tok = 0xe000 + i;
		int s, one = 1, zero = 0, good_st = -1;

		if ((ec->route == R_GETMR && mainline) ||
		    (i == E_FREED_GETMR_W && mainline))
			continue;
		/* a random key: no MR of the owner has it */
		cookie = (uint32_t)splitmix64(&rr);
		if (ec->route) {
			if (expect_msg(p, M_OFFER, i, &r))
				return nerr;
			if (!r.has_cookie) {
				fail("%s: no RDS_CMSG_RDMA_DEST with the offer",
				     ec->name);
				return nerr;
			}
			if (i != E_BAD_THEN_GOOD && i != E_SURVIVE)
				cookie = r.cookie;
			if (ec->freed && expect_msg(p, M_FREED, i, &r))
				return nerr;
		}
		if (area_new(&a, 2 * ERGN, key_of(6, i, 2)))
			return nerr;
		if (send_plains(p, &next_plain, EPLAIN))
			goto fail_out;
		if (i == E_RECVERR &&
		    setsockopt(p->fd, SOL_RDS, RDS_RECVERR, &one, sizeof(one)))
			fail("RDS_RECVERR: %s", strerror(errno));
		memset(&args, 0, sizeof(args));
		args.cookie = cookie;
		args.remote_vec.addr = ec->off;
		args.remote_vec.bytes = ec->bytes;
		args.local_vec_addr = (uintptr_t)&iv;
		args.nr_local = 1;
		args.flags = (ec->notify ? RDS_RDMA_NOTIFY_ME : 0) |
			     (ec->op == OP_WRITE ? RDS_RDMA_READWRITE : 0);
		args.user_token = tok;
		iv.addr = (uintptr_t)a.map;
		iv.bytes = ec->bytes;
		m = mk(M_DO, i);
		m.b = i == E_GOOD_AFTER;	/* b: a good op */
		if (send_ctl(p, &m, &c, 1))
			goto fail_out;
		if (i == E_BAD_THEN_GOOD) {
			/* the good op, right behind the bad one */
			args.cookie = r.cookie;
			args.user_token = tok + 0x100;
			m.b = 1;
			if (send_ctl(p, &m, &c, 1))
				goto fail_out;
		}
		if (send_plains(p, &next_plain, EPLAIN))
			goto fail_out;
		s = wait_status(p, tok, WAIT_MS * 2);
		if (s != -100 && s != ec->want)
			fail("%s: status %d (%s), expected %s", ec->name, s,
			     sname(s), sname(ec->want));
		if (s == RDS_RDMA_REMOTE_ERROR)
			nerr++;
		if (s == RDS_RDMA_DROPPED)
			ndropped++;
		if (i == E_SURVIVE) {
			/* the reset is over: the key registered before it works */
			args.cookie = r.cookie;
			args.user_token = tok + 0x100;
			m = mk(M_DO, i);
			m.b = 1;
			if (send_ctl(p, &m, &c, 1))
				goto fail_out;
			good_st = wait_status(p, tok + 0x100, WAIT_MS * 2);
			if (good_st != RDS_RDMA_SUCCESS && good_st != -100)
				fail("%s: the good op: status %d (%s), expected SUCCESS",
				     ec->name, good_st, sname(good_st));
			if (good_st == RDS_RDMA_DROPPED)
				ndropped++;
		}
		if (i == E_BAD_THEN_GOOD) {
			good_st = wait_status(p, tok + 0x100, WAIT_MS * 2);
			note("host 2: %s: the good op ended %d (%s)", ec->name,
			     good_st, sname(good_st));
			if (good_st == RDS_RDMA_DROPPED)
				ndropped++;
			if (good_st != RDS_RDMA_SUCCESS &&
			    good_st != RDS_RDMA_DROPPED && good_st != -100)
				fail("%s: the good op: status %d (%s), expected SUCCESS or DROPPED",
				     ec->name, good_st, sname(good_st));
		}
		if (i == E_RECVERR &&
		    setsockopt(p->fd, SOL_RDS, RDS_RECVERR, &zero, sizeof(zero)))
			fail("RDS_RECVERR 0: %s", strerror(errno));
		/* the local buffer: a WRITE's source stays, a READ got nothing */
		area_verify(&a, NULL, 0, ec->name);
		m = mk(M_SYNC, i);
		m.a = next_plain;
		m.b = good_st < 0 ? 99 : good_st;
		if (send_ctl(p, &m, NULL, 0))
			goto fail_out;
		if (expect_msg(p, M_SYNCED, i, &r))
			goto fail_out;
		if (r.m.b)
			fail("%s: the owner found %" PRIu64 " problems",
			     ec->name, r.m.b);
		expect_no_status(p, ec->name);
		area_free(&a);
		continue;
fail_out:
		area_free(&a);
		return nerr;
	}
	return nerr;
}

static void check_connected(int fd)
{
	struct rds_info_connection *c;
	struct in_addr la, fa;
	int n, i;
	bool found = false;

	inet_pton(AF_INET, addr, &la);
	inet_pton(AF_INET, peer, &fa);
	n = info_conns(fd, &c);
	if (n < 0) {
		fail("RDS_INFO_CONNECTIONS failed");
		return;
	}
	for (i = 0; i < n; i++) {
		if (c[i].laddr != la.s_addr || c[i].faddr != fa.s_addr ||
		    c[i].tos)
			continue;
		found = true;
		note("host %d: connection %s -> %s: %s, flags 0x%x, next tx %" PRIu64 " rx %" PRIu64,
		     host, addr, peer, c[i].transport, c[i].flags,
		     (uint64_t)c[i].next_tx_seq, (uint64_t)c[i].next_rx_seq);
		if (!(c[i].flags & RDS_INFO_CONNECTION_FLAG_CONNECTED))
			fail("the connection to %s is not up (flags 0x%x)",
			     peer, c[i].flags);
	}
	if (!found)
		fail("RDS_INFO_CONNECTIONS has no connection %s -> %s", addr,
		     peer);
	free(c);
}

TEST_F_TIMEOUT(rdma, errors, 300)
{
	if (!self->started)
		return;
	struct peerio p;
	struct ctl m;
	struct rxmsg r;
	unsigned int nerr = 0;
	long long d0 = -1, d1;

	if (sock_open(&p, addr, PORT_BASE + 30, PORT_BASE + 30))
		return;
	if (hello(&p))
		goto out;
	d0 = rds_info_counter(p.fd, "send_rdma_dropped");
	if (host == 1)
		errors_owner(&p);
	else
		nerr = errors_issuer(&p);
	/* the connection is up again: one more round trip, then the info */
	m = mk(M_END, 0);
	if (host == 1) {
		if (!send_ctl(&p, &m, NULL, 0))
			expect_msg(&p, M_END, 0, &r);
	} else {
		if (!expect_msg(&p, M_END, 0, &r))
			send_ctl(&p, &m, NULL, 0);
	}
	check_connected(p.fd);
	d1 = rds_info_counter(p.fd, "send_rdma_dropped");
	note("host %d: RDS_INFO_COUNTERS send_rdma_dropped +%lld", host,
	     d0 >= 0 && d1 >= 0 ? d1 - d0 : -1);
	if (host == 2) {
		note("host 2: %u REMOTE_ERRORs, %u DROPPED", nerr, ndropped);
		expect_delta_ge(self->c0, "resets", nerr);
		expect_delta_ge(self->c0, "rdma_errors", nerr);
		if (d0 >= 0 && d1 >= 0 && d1 - d0 < ndropped)
			fail("send_rdma_dropped moved by %lld, %u ops ended DROPPED",
			     d1 - d0, ndropped);
	}
	expect_no_status(&p, "at the end");
out:
	close(p.fd);
}

/* ---- case 5: atomics ---- */

#define A_SLOTS		64

enum { A_FADD, A_FADD2, A_CSWP_HIT, A_CSWP_MISS, A_MFADD, A_MCSWP, A_N };

static uint64_t mfadd(uint64_t v, uint64_t add, uint64_t nocarry)
{
	uint64_t r = 0, carry = 0;
	int b;

	for (b = 0; b < 64; b++) {
		uint64_t s = ((v >> b) & 1) + ((add >> b) & 1) + carry;

		r |= (s & 1) << b;
		carry = (s >> 1) && !((nocarry >> b) & 1);
	}
	return r;
}

struct astep {
	int type;		/* cmsg type */
	int region;		/* 0: GET_MR region, 1: MAP region */
	unsigned int slot;
	struct rds_atomic_args args;
	uint64_t old, new;	/* expected */
};

/* The plan of atomics over the two regions' values (both hosts). */
static void atomics_plan(struct astep *st, uint64_t vals[2][A_SLOTS])
{
	uint64_t r = seed ^ 0xa70, *v;
	unsigned int i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < A_SLOTS; i++)
			vals[k][i] = splitmix64(&r);
	memset(st, 0, sizeof(*st) * A_N);
	for (i = 0; i < A_N; i++) {
		st[i].region = (i == A_CSWP_HIT || i == A_CSWP_MISS ||
				i == A_MCSWP) && !mainline ? 1 : 0;
		if (mainline)
			st[i].region = 1;
		st[i].slot = i == A_FADD2 ? st[A_FADD].slot :
			     i == A_CSWP_MISS ? st[A_CSWP_HIT].slot :
			     1 + splitmix64(&r) % (A_SLOTS - 2);
		v = &vals[st[i].region][st[i].slot];
		st[i].old = *v;
		st[i].args.remote_addr = st[i].slot * 8;
		switch (i) {
		case A_FADD:
		case A_FADD2:
			st[i].type = RDS_CMSG_ATOMIC_FADD;
			st[i].args.fadd.add = splitmix64(&r);
			st[i].new = *v + st[i].args.fadd.add;
			break;
		case A_CSWP_HIT:
			st[i].type = RDS_CMSG_ATOMIC_CSWP;
			st[i].args.cswp.compare = *v;
			st[i].args.cswp.swap = splitmix64(&r);
			st[i].new = st[i].args.cswp.swap;
			break;
		case A_CSWP_MISS:
			st[i].type = RDS_CMSG_ATOMIC_CSWP;
			st[i].args.cswp.compare = *v ^ 0x10;
			st[i].args.cswp.swap = splitmix64(&r);
			st[i].new = *v;
			break;
		case A_MFADD:
			st[i].type = RDS_CMSG_MASKED_ATOMIC_FADD;
			st[i].args.m_fadd.add = splitmix64(&r);
			st[i].args.m_fadd.nocarry_mask = 0x8000800080008000ULL;
			st[i].new = mfadd(*v, st[i].args.m_fadd.add,
					  st[i].args.m_fadd.nocarry_mask);
			break;
		case A_MCSWP:
			st[i].type = RDS_CMSG_MASKED_ATOMIC_CSWP;
			st[i].args.m_cswp.compare_mask = 0x00000000ffffffffULL;
			st[i].args.m_cswp.compare =
				(*v & 0xffffffffULL) | 0x1234567800000000ULL;
			st[i].args.m_cswp.swap_mask = 0xffff0000ffff0000ULL;
			st[i].args.m_cswp.swap = splitmix64(&r);
			st[i].new = (*v & ~st[i].args.m_cswp.swap_mask) |
				    (st[i].args.m_cswp.swap &
				     st[i].args.m_cswp.swap_mask);
			break;
		}
		st[i].args.flags = RDS_RDMA_NOTIFY_ME;
		st[i].args.user_token = 0xa000 + i;
		*v = st[i].new;
	}
}

static const char *const aname[A_N] = {
	"FADD", "FADD again", "CSWP (compare equal)", "CSWP (compare differs)",
	"masked FADD", "masked CSWP",
};

TEST_F_TIMEOUT(rdma, atomics, 150)
{
	if (!self->started)
		return;
	uint64_t vals[2][A_SLOTS], cur[2][A_SLOTS];
	struct astep st[A_N];
	struct peerio p;
	struct ctl m;
	struct rxmsg r;
	unsigned int i, done = 0;

	atomics_plan(st, vals);
	/* vals now holds the final values; the initial ones again: */
	{
		uint64_t rr = seed ^ 0xa70;
		unsigned int k;

		for (k = 0; k < 2; k++)
			for (i = 0; i < A_SLOTS; i++)
				cur[k][i] = splitmix64(&rr);
	}
	if (sock_open(&p, addr, PORT_BASE + 40, PORT_BASE + 40))
		return;
	if (hello(&p))
		goto out;
	if (host == 1) {
		uint64_t *reg[2], cookie[2] = { 0, 0 };
		uint8_t *map = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int e;

		if (map == MAP_FAILED) {
			fail("mmap: %s", strerror(errno));
			goto out;
		}
		/* region 0 page aligned, region 1 at an 8-aligned offset */
		reg[0] = (uint64_t *)map;
		reg[1] = (uint64_t *)(map + 4096 + 8 * (seed % 64));
		memcpy(reg[0], cur[0], sizeof(cur[0]));
		memcpy(reg[1], cur[1], sizeof(cur[1]));
		m = mk(M_OFFER, 0);
		if (!mainline) {
			struct cm c = { RDS_CMSG_RDMA_DEST, &cookie[0], 8 };

			e = get_mr(p.fd, reg[0], sizeof(cur[0]), &cookie[0], 0);
			if (e)
				fail("RDS_GET_MR: %s", strerror(e));
			if (send_ctl(&p, &m, &c, 1))
				goto own_out;
		} else {
			if (send_ctl(&p, &m, NULL, 0))
				goto own_out;
		}
		{
			struct rds_get_mr_args mr = {
				.vec = { (uintptr_t)reg[1], sizeof(cur[1]) },
				.cookie_addr = (uintptr_t)&cookie[1],
			};
			struct cm c = { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) };

			m = mk(M_OFFER, 1);
			if (send_ctl(&p, &m, &c, 1))
				goto own_out;
		}
		for (i = 0; i < A_N; i++) {
			unsigned int f0 = fails, k, s;

			if (expect_msg(&p, M_DO, i, &r))
				goto own_out;
			if (!r.m.a) {	/* performed (else EOPNOTSUPP) */
				cur[st[i].region][st[i].slot] = st[i].new;
				done++;
			} else if (cur[st[i].region][st[i].slot] != st[i].new) {
				/* later steps expect it done: do it here */
				reg[st[i].region][st[i].slot] = st[i].new;
				cur[st[i].region][st[i].slot] = st[i].new;
			}
			for (k = 0; k < 2; k++)
				for (s = 0; s < A_SLOTS; s++)
					if (reg[k][s] != cur[k][s])
						fail("%s: region %u slot %u is %016" PRIx64 ", expected %016" PRIx64,
						     aname[i], k, s, reg[k][s],
						     cur[k][s]);
			m = mk(M_RESULT, i);
			m.a = fails - f0;
			if (send_ctl(&p, &m, NULL, 0))
				goto own_out;
		}
		for (i = 0; i < 2; i++)
			if (cookie[i] && (e = free_mr(p.fd, cookie[i])))
				fail("RDS_FREE_MR: %s", strerror(e));
own_out:
		munmap(map, 3 * 4096);
	} else {
		struct rxmsg o[2];
		uint64_t *local = aligned_alloc(64, 64);

		if (!local || expect_msg(&p, M_OFFER, 0, &o[0]) ||
		    expect_msg(&p, M_OFFER, 1, &o[1]))
			goto iss_out;
		for (i = 0; i < A_N; i++) {
			struct rds_atomic_args a = st[i].args;
			struct cm c = { st[i].type, &a, sizeof(a) };
			bool masked = st[i].type == RDS_CMSG_MASKED_ATOMIC_FADD ||
				      st[i].type == RDS_CMSG_MASKED_ATOMIC_CSWP;
			ssize_t n;
			int s;

			m = mk(M_DO, i);
			if (!o[st[i].region].has_cookie) {
				fail("%s: region %d was offered without a cookie",
				     aname[i], st[i].region);
				m.a = 1;
				goto send;
			}
			local[1] = 0x5a5a5a5a5a5a5a5aULL;
			local[0] = local[2] = 0x1111111111111111ULL;
			a.cookie = o[st[i].region].cookie;
			a.local_addr = (uintptr_t)&local[1];
			n = send_cm(p.fd, &p.to, &m, sizeof(m), &c, 1);
			if (n != sizeof(m)) {
				int e = errno;

				if (masked && n < 0 && e == EOPNOTSUPP) {
					note("host 2: %s: EOPNOTSUPP (the device lacks masked atomics)",
					     aname[i]);
				} else {
					fail("%s: sendmsg: %s", aname[i],
					     n < 0 ? strerror(e) : "short");
				}
				m.a = 1;
				goto send;
			}
			s = wait_status(&p, a.user_token, WAIT_MS);
			if (s != -100 && s)
				fail("%s: status %d (%s)", aname[i], s,
				     sname(s));
			if (!s && local[1] != st[i].old)
				fail("%s: returned %016" PRIx64 ", the old value was %016" PRIx64,
				     aname[i], local[1], st[i].old);
			if (local[0] != 0x1111111111111111ULL ||
			    local[2] != 0x1111111111111111ULL)
				fail("%s: the bytes around local_addr changed",
				     aname[i]);
			if (!s)
				done++;
			goto result;
send:
			if (send_ctl(&p, &m, NULL, 0))
				break;
result:
			if (expect_msg(&p, M_RESULT, i, &r))
				break;
			if (r.m.a)
				fail("%s: the owner found %" PRIu64 " wrong values",
				     aname[i], r.m.a);
		}
		expect_no_status(&p, "after the atomics");
		expect_delta_ge(self->c0, "atomics", done);
iss_out:
		free(local);
	}
	note("host %d: %u atomics performed", host, done);
	if (done < A_N - 2)
		fail("only %u of the %d plain atomics performed", done, A_N - 2);
out:
	close(p.fd);
}

/* ---- case 6: argument checks ---- */

static void want_errno(int got, int want, const char *what)
{
	if (got != want)
		fail("%s: %s (%d), expected %s (%d)", what,
		     got ? strerror(got) : "success", got, strerror(want), want);
}

static int setopt_err(int fd, int opt, const void *v, socklen_t len)
{
	return setsockopt(fd, SOL_RDS, opt, v, len) ? errno : 0;
}

/* RDS_GET_MR, RDS_FREE_MR checks on this host alone. */
static void local_mr_checks(uint8_t *buf, uint8_t *ro)
{
	struct rds_get_mr_args mr;
	struct rds_get_mr_for_dest_args fd_args;
	uint64_t cookie = 0, c2 = 0, c3 = 0;
	char big[64];
	int fd, e;

	/* unbound */
	fd = rds_socket();
	e = get_mr(fd, buf, 4096, &cookie, 0);
	want_errno(e, ENOTCONN, "RDS_GET_MR on an unbound socket");
	close(fd);
	/* loopback */
	fd = rds_bound("127.0.0.1", 0);
	if (fd < 0) {
		fail("bind 127.0.0.1: %s", strerror(errno));
	} else {
		e = get_mr(fd, buf, 4096, &cookie, 0);
		want_errno(e, EOPNOTSUPP, "RDS_GET_MR on a 127.0.0.1 socket");
		close(fd);
	}

	fd = rds_bound(addr, 0);
	if (fd < 0) {
		fail("bind %s: %s", addr, strerror(errno));
		return;
	}
	if (mainline) {
		note("host %d: RDS_RDMA_MAINLINE: GET_MR checks skipped", host);
		close(fd);
		return;
	}
	memset(&mr, 0, sizeof(mr));
	mr.vec.addr = (uintptr_t)buf;
	mr.vec.bytes = 4096;
	mr.cookie_addr = (uintptr_t)&cookie;
	memset(big, 0, sizeof(big));
	memcpy(big, &mr, sizeof(mr));
	want_errno(setopt_err(fd, RDS_GET_MR, big, sizeof(mr) - 1), EINVAL,
		   "RDS_GET_MR with optlen 31");
	want_errno(setopt_err(fd, RDS_GET_MR, big, sizeof(mr) + 8), EINVAL,
		   "RDS_GET_MR with optlen 40");
	want_errno(get_mr(fd, buf, 0, &cookie, 0), EINVAL,
		   "RDS_GET_MR of 0 bytes");
	want_errno(get_mr(fd, (void *)(uintptr_t)(UINT64_MAX - 100), 4096,
			  &cookie, 0), EINVAL,
		   "RDS_GET_MR of a range that wraps");
	want_errno(get_mr(fd, buf, MAX_MR + 1, &cookie, 0), EMSGSIZE,
		   "RDS_GET_MR of 1 MiB + 4097 bytes");
	want_errno(get_mr(fd, buf, 4096, (uint64_t *)ro, 0), EFAULT,
		   "RDS_GET_MR with a read-only cookie_addr");
	want_errno(get_mr(fd, buf, 4096, (uint64_t *)8, 0), EFAULT,
		   "RDS_GET_MR with cookie_addr 8");
	e = get_mr(fd, (void *)(uintptr_t)0x1000, 4096, &cookie, 0);
	if (!e)
		fail("RDS_GET_MR of unmapped memory (0x1000) succeeded");
	else
		note("host %d: RDS_GET_MR of unmapped memory: %s", host,
		     strerror(e));
	/* the largest size works */
	cookie = 0;
	e = get_mr(fd, buf, MAX_MR, &cookie, 0);
	want_errno(e, 0, "RDS_GET_MR of 1 MiB + 4096 bytes");
	if (!e) {
		check_cookie(cookie, buf, "1 MiB + 4096 bytes");
		want_errno(free_mr(fd, cookie), 0, "RDS_FREE_MR");
		want_errno(free_mr(fd, cookie), EINVAL,
			   "RDS_FREE_MR of a freed cookie");
	}
	/* 1 MiB + 100 bytes from page offset 4000: 258 pages (only noted) */
	e = get_mr(fd, buf + 4000, MAX_RDMA + 100, &cookie, 0);
	note("host %d: RDS_GET_MR of 1 MiB + 100 bytes at page offset 4000 (258 pages): %s",
	     host, e ? strerror(e) : "accepted");
	if (!e)
		want_errno(free_mr(fd, cookie), 0, "RDS_FREE_MR");
	/* GET_MR_FOR_DEST: 160 bytes, the destination ignored */
	memset(&fd_args, 0, sizeof(fd_args));
	fd_args.vec.addr = (uintptr_t)(buf + 100);
	fd_args.vec.bytes = 5000;
	fd_args.cookie_addr = (uintptr_t)&c2;
	if (sizeof(fd_args) != 160)
		fail("struct rds_get_mr_for_dest_args is %zu bytes",
		     sizeof(fd_args));
	want_errno(setopt_err(fd, RDS_GET_MR_FOR_DEST, &fd_args,
			      sizeof(fd_args)), 0, "RDS_GET_MR_FOR_DEST");
	check_cookie(c2, buf + 100, "RDS_GET_MR_FOR_DEST");
	want_errno(setopt_err(fd, RDS_GET_MR_FOR_DEST, &fd_args,
			      sizeof(fd_args) - 8), EINVAL,
		   "RDS_GET_MR_FOR_DEST with optlen 152");
	/* FREE_MR */
	want_errno(free_mr(fd, 0x123456789abULL), EINVAL,
		   "RDS_FREE_MR of an unknown cookie");
	{
		struct rds_free_mr_args fr = { .cookie = c2 };

		want_errno(setopt_err(fd, RDS_FREE_MR, &fr, sizeof(fr) - 1),
			   EINVAL, "RDS_FREE_MR with optlen 15");
	}
	want_errno(get_mr(fd, buf + 8192, 8192, &c3, 0), 0, "RDS_GET_MR");
	{
		long long u0 = ctr("mr_in_use");

		want_errno(free_mr(fd, 0), 0, "RDS_FREE_MR of cookie 0 (all)");
		if (u0 >= 0 && ctr("mr_in_use") != u0 - 2)
			fail("mr_in_use went from %lld to %lld after freeing the socket's 2 MRs",
			     u0, ctr("mr_in_use"));
	}
	want_errno(free_mr(fd, c2), EINVAL,
		   "RDS_FREE_MR after cookie 0 freed it");
	want_errno(free_mr(fd, c3), EINVAL,
		   "RDS_FREE_MR after cookie 0 freed it");
	/* closing frees */
	{
		long long u0 = ctr("mr_in_use"), f0 = ctr("mr_frees");
		int64_t deadline;

		want_errno(get_mr(fd, buf, 4096, &c2, 0), 0, "RDS_GET_MR");
		want_errno(get_mr(fd, buf + 4096, 4096, &c3, 0), 0,
			   "RDS_GET_MR");
		close(fd);
		fd = -1;
		deadline = now_ms() + 5000;
		while (u0 >= 0 && ctr("mr_in_use") != u0 && now_ms() < deadline)
			poll(NULL, 0, 20);
		if (u0 >= 0 && ctr("mr_in_use") != u0)
			fail("mr_in_use %lld after closing a socket with 2 MRs, was %lld",
			     ctr("mr_in_use"), u0);
		if (f0 >= 0 && ctr("mr_frees") < f0 + 2)
			fail("mr_frees moved by %lld after closing a socket with 2 MRs",
			     ctr("mr_frees") - f0);
	}
	if (fd >= 0)
		close(fd);
}

/* In a child without CAP_IPC_LOCK and RLIMIT_MEMLOCK 64 KiB; exit code. */
static int memlock_child(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	struct rlimit rl = { 65536, 65536 };
	uint64_t c1 = 0, c2 = 0;
	uint8_t *buf;
	int fd, e, i, bad = 0;

	if (syscall(SYS_capget, &h, d))
		return 100;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].inheritable &= ~(1U << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &h, d))
		return 101;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 102;
	buf = mmap(NULL, 256 * 1024, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return 103;
	fd = rds_bound(addr, 0);
	if (fd < 0)
		return 104;
	e = get_mr(fd, buf, 128 * 1024, &c1, 0);
	if (e != ENOMEM) {
		note("child: RDS_GET_MR of 128 KiB over a 64 KiB RLIMIT_MEMLOCK: %s, expected ENOMEM",
		     e ? strerror(e) : "success");
		bad |= 1;
	}
	e = get_mr(fd, buf, 32 * 1024, &c1, 0);
	if (e) {
		note("child: RDS_GET_MR of 32 KiB under a 64 KiB RLIMIT_MEMLOCK: %s",
		     strerror(e));
		bad |= 2;
	}
	e = get_mr(fd, buf + 64 * 1024, 36 * 1024, &c2, 0);
	if (e != ENOMEM) {
		note("child: a second RDS_GET_MR (32 + 36 KiB over 64 KiB): %s, expected ENOMEM",
		     e ? strerror(e) : "success");
		bad |= 4;
	}
	/* RDS_FREE_MR uncharges before it returns: a registration right
	 * after it fits, again and again (once, the release ran later, from
	 * a work item, and the next registration met ENOMEM now and then).
	 */
	for (i = 0; i < 20 && !bad && !free_mr(fd, c1); i++) {
		e = get_mr(fd, buf + 64 * 1024, 36 * 1024, &c2, 0);
		if (e) {
			note("child: RDS_GET_MR of 36 KiB after freeing the 32 KiB one (round %d): %s",
			     i, strerror(e));
			bad |= 8;
			break;
		}
		if (free_mr(fd, c2) ||
		    (e = get_mr(fd, buf, 32 * 1024, &c1, 0))) {
			note("child: freeing the 36 KiB one and registering 32 KiB again (round %d): %s",
			     i, e ? strerror(e) : "free failed");
			bad |= 16;
		}
	}
	if (!bad && i != 20) {
		note("child: RDS_FREE_MR failed in round %d", i);
		bad |= 32;
	}
	close(fd);
	return bad;
}

/* sendmsg checks from host 2 with host 1's cookie; nothing may arrive. */
static void send_checks(struct peerio *p, uint64_t cookie, uint8_t *buf,
			uint8_t *ro)
{
	static struct rds_iovec many[1025];
	struct rds_rdma_args a, base;
	struct rds_iovec iv[2];
	struct rds_get_mr_args mr;
	struct rds_atomic_args at;
	struct ctl m = mk(M_DO, 0);
	uint64_t c2 = 0;
	unsigned int k;
	int lo;

	memset(&base, 0, sizeof(base));
	base.cookie = cookie;
	base.remote_vec.addr = 0;
	base.remote_vec.bytes = 65536;
	base.local_vec_addr = (uintptr_t)iv;
	base.nr_local = 1;
	base.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME;
	base.user_token = 0xbad;
	iv[0].addr = (uintptr_t)buf;
	iv[0].bytes = 4096;
	iv[1].addr = (uintptr_t)buf + 8192;
	iv[1].bytes = 4096;

#define SEND_ERR(want, what, ...)					\
	do {								\
		struct cm cms[] = { __VA_ARGS__ };			\
		ssize_t n_ = send_cm(p->fd, &p->to, &m, sizeof(m), cms,	\
				     sizeof(cms) / sizeof(cms[0]));	\
		want_errno(n_ < 0 ? errno : 0, want, what);		\
	} while (0)

	a = base;
	a.nr_local = 0;
	SEND_ERR(EINVAL, "RDMA_ARGS with nr_local 0",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	for (k = 0; k < 1025; k++) {
		many[k].addr = (uintptr_t)buf + k;
		many[k].bytes = 1;
	}
	a = base;
	a.local_vec_addr = (uintptr_t)many;
	a.nr_local = 1025;
	SEND_ERR(EMSGSIZE, "RDMA_ARGS with nr_local 1025",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	a = base;
	a.nr_local = 2;
	iv[1].bytes = 0;
	SEND_ERR(EINVAL, "RDMA_ARGS with a 0-byte local iovec",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	iv[1].addr = UINT64_MAX - 100;
	iv[1].bytes = 4096;
	SEND_ERR(EINVAL, "RDMA_ARGS with a wrapping local iovec",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	iv[1].addr = (uintptr_t)buf + 8192;
	a = base;
	a.remote_vec.bytes = 4095;
	SEND_ERR(EINVAL, "RDMA_ARGS with local bytes > remote_vec.bytes",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	a = base;
	a.remote_vec.bytes = MAX_RDMA + 1;
	iv[0].bytes = MAX_RDMA + 1;
	SEND_ERR(EMSGSIZE, "RDMA_ARGS of 1 MiB + 1 bytes",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	iv[0].bytes = 4096;
	a = base;
	a.local_vec_addr = 8;
	SEND_ERR(EFAULT, "RDMA_ARGS with local_vec_addr 8",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	a = base;
	iv[0].addr = 0x1000;
	SEND_ERR(EFAULT, "RDMA_ARGS with an unmapped local iovec",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	iv[0].addr = (uintptr_t)ro;
	a.flags = RDS_RDMA_NOTIFY_ME;	/* a READ into read-only memory */
	SEND_ERR(EFAULT, "RDMA READ into a read-only local iovec",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	iv[0].addr = (uintptr_t)buf;
	a = base;
	memset(&mr, 0, sizeof(mr));
	mr.vec.addr = (uintptr_t)buf + 65536;
	mr.vec.bytes = 4096;
	mr.cookie_addr = (uintptr_t)&c2;
	SEND_ERR(EINVAL, "RDMA_ARGS with RDMA_MAP",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) },
		 { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) });
	SEND_ERR(EINVAL, "RDMA_ARGS with RDMA_DEST",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) },
		 { RDS_CMSG_RDMA_DEST, &cookie, 8 });
	SEND_ERR(EINVAL, "RDMA_MAP then RDMA_ARGS",
		 { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) },
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	SEND_ERR(EINVAL, "two RDMA_ARGS",
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) },
		 { RDS_CMSG_RDMA_ARGS, &a, sizeof(a) });
	SEND_ERR(EINVAL, "RDMA_ARGS of 48 bytes",
		 { RDS_CMSG_RDMA_ARGS, &a, 48 });
	mr.vec.bytes = 0;
	SEND_ERR(EINVAL, "RDMA_MAP of 0 bytes",
		 { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) });
	mr.vec.bytes = MAX_MR + 1;
	SEND_ERR(EMSGSIZE, "RDMA_MAP of 1 MiB + 4097 bytes",
		 { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) });
	mr.vec.bytes = 4096;
	mr.cookie_addr = (uintptr_t)ro;
	SEND_ERR(EFAULT, "RDMA_MAP with a read-only cookie_addr",
		 { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) });
	memset(&at, 0, sizeof(at));
	at.cookie = cookie;
	at.local_addr = (uintptr_t)buf + 4;
	at.remote_addr = 0;
	at.fadd.add = 1;
	at.flags = RDS_RDMA_NOTIFY_ME;
	SEND_ERR(EFAULT, "ATOMIC_FADD with a local_addr not 8-aligned",
		 { RDS_CMSG_ATOMIC_FADD, &at, sizeof(at) });
	SEND_ERR(EFAULT, "ATOMIC_CSWP with a local_addr not 8-aligned",
		 { RDS_CMSG_ATOMIC_CSWP, &at, sizeof(at) });
#undef SEND_ERR

	/* over the loopback transport */
	lo = rds_bound("127.0.0.1", PORT_BASE + 51);
	if (lo < 0) {
		fail("bind 127.0.0.1: %s", strerror(errno));
	} else {
		struct sockaddr_in self_to = rds_sin("127.0.0.1",
						     PORT_BASE + 51);
		struct cm c1 = { RDS_CMSG_RDMA_ARGS, &base, sizeof(base) };
		struct cm c2m = { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) };
		struct cm c3 = { RDS_CMSG_ATOMIC_FADD, &at, sizeof(at) };
		ssize_t n;

		mr.cookie_addr = (uintptr_t)&c2;
		at.local_addr = (uintptr_t)buf;
		n = send_cm(lo, &self_to, &m, sizeof(m), &c1, 1);
		want_errno(n < 0 ? errno : 0, EOPNOTSUPP,
			   "RDMA_ARGS over the loopback transport");
		n = send_cm(lo, &self_to, &m, sizeof(m), &c2m, 1);
		want_errno(n < 0 ? errno : 0, EOPNOTSUPP,
			   "RDMA_MAP over the loopback transport");
		n = send_cm(lo, &self_to, &m, sizeof(m), &c3, 1);
		want_errno(n < 0 ? errno : 0, EOPNOTSUPP,
			   "ATOMIC_FADD over the loopback transport");
		if (recv(lo, buf, 64, MSG_DONTWAIT) >= 0)
			fail("a rejected loopback send delivered a message");
		close(lo);
	}
}

TEST_F_TIMEOUT(rdma, args, 120)
{
	if (!self->started)
		return;
	uint8_t *buf = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	struct peerio p;
	struct ctl m;
	struct rxmsg r;
	pid_t pid;
	int status;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_NE(MAP_FAILED, ro);
	memset(buf, 0x3c, 2 << 20);
	local_mr_checks(buf, ro);

	if (!mainline) {
		fflush(stdout);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(memlock_child());
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status) >= 100)
			note("host %d: RLIMIT_MEMLOCK sub-case not run (child status %d: cannot drop CAP_IPC_LOCK or set the limit)",
			     host, status);
		else if (WEXITSTATUS(status))
			fail("RLIMIT_MEMLOCK checks: failures 0x%x (see the child's lines)",
			     WEXITSTATUS(status));
	}

	if (sock_open(&p, addr, PORT_BASE + 50, PORT_BASE + 50))
		goto out_unmap;
	if (hello(&p))
		goto out;
	if (host == 1) {
		uint64_t cookie = 0;
		struct rds_get_mr_args mr = {
			.vec = { (uintptr_t)buf, 65536 },
			.cookie_addr = (uintptr_t)&cookie,
		};
		struct cm c = { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) };
		unsigned int got = 0;

		m = mk(M_OFFER, 0);
		if (send_ctl(&p, &m, &c, 1))
			goto out;
		/* only END may arrive: every check's send was refused */
		for (;;) {
			if (next_msg(&p, &r, 2 * WAIT_MS, "END"))
				break;
			if (r.m.type == M_END)
				break;
			got++;
			fail("a message (%s %u) arrived from a send host 2 expected refused",
			     mtype_name[r.m.type % 13], r.m.idx);
		}
		note("host 1: %u messages of refused sends arrived", got);
		want_errno(free_mr(p.fd, cookie), 0, "RDS_FREE_MR");
		m = mk(M_END, 1);
		send_ctl(&p, &m, NULL, 0);
	} else {
		if (!expect_msg(&p, M_OFFER, 0, &r)) {
			if (!r.has_cookie)
				fail("no RDS_CMSG_RDMA_DEST with the offer");
			send_checks(&p, r.cookie, buf, ro);
			m = mk(M_END, 0);
			if (!send_ctl(&p, &m, NULL, 0))
				expect_msg(&p, M_END, 1, &r);
		}
		expect_no_status(&p, "after the refused sends");
	}
out:
	close(p.fd);
out_unmap:
	munmap(buf, 2 << 20);
	munmap(ro, 4096);
}

/* ---- case 7: the MR pool runs out ---- */

#define POOL_MAX	8

struct waiter {
	int fd;
	void *buf;
	uint64_t cookie;
	int err;
	int64_t t0, t1;
	pthread_t th;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->t0 = now_ms();
	w->err = get_mr(w->fd, w->buf, 4096, &w->cookie, 0);
	w->t1 = now_ms();
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

static int write_param(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	if (fputs(v, f) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* Waits (up to 5 s) for counter key to exceed v; false if it does not. */
static bool counter_passes(const char *key, long long v)
{
	int64_t deadline = now_ms() + 5000;

	while (now_ms() < deadline) {
		if (ctr(key) > v)
			return true;
		poll(NULL, 0, 10);
	}
	return false;
}

/* A thread blocked in GET_MR (mr_waits counted, else 300 ms). */
static int start_waiter(struct waiter *w)
{
	long long w0 = ctr("mr_waits");

	if (pthread_create(&w->th, NULL, waiter_main, w)) {
		fail("pthread_create");
		return -1;
	}
	if (w0 < 0) {
		note("host 1: no mr_waits counter: giving the waiter 300 ms");
		poll(NULL, 0, 300);
	} else if (!counter_passes("mr_waits", w0)) {
		fail("mr_waits did not move within 5 s of a blocking RDS_GET_MR on an exhausted pool");
	}
	return 0;
}

static void pool_owner(struct peerio *p, const char *c0)
{
	uint8_t *buf = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t cookies[POOL_MAX + 1];
	long long base = ctr("mr_in_use"), ex0 = ctr("mr_exhausted");
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct timeval tv = { 0, 700000 };
	struct waiter w = { 0 };
	unsigned int n = 0;
	struct ctl m;
	struct rxmsg r;
	char old[32] = "";
	FILE *f;
	int nb = -1, bl = -1, bt = -1, e = 0;

	if (buf == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return;
	}
	pat_fill(buf, 64 * 4096, key_of(7, 0, 1), 0);
	f = fopen(MR_MAX_PARAM, "r");
	if (!f || !fgets(old, sizeof(old), f)) {
		fail("%s: cannot read (%s)", MR_MAX_PARAM, strerror(errno));
		if (f)
			fclose(f);
		goto out;
	}
	fclose(f);
	old[strcspn(old, "\n")] = 0;
	snprintf(mr_max_saved, sizeof(mr_max_saved), "%s", old);
	if (write_param(MR_MAX_PARAM, "8")) {
		fail("%s: cannot write 8: %s", MR_MAX_PARAM, strerror(errno));
		goto out;
	}
	note("host 1: ib_mr_max %s -> %d, mr_in_use %lld", old, POOL_MAX, base);

	nb = rds_bound(addr, 0);
	bl = rds_bound(addr, 0);	/* never given SO_SNDTIMEO */
	bt = rds_bound(addr, 0);	/* SO_SNDTIMEO 0.7 s */
	if (nb < 0 || bl < 0 || bt < 0) {
		fail("bind: %s", strerror(errno));
		goto out;
	}
	fcntl(nb, F_SETFL, fcntl(nb, F_GETFL) | O_NONBLOCK);
	for (n = 0; n <= POOL_MAX; n++) {
		e = get_mr(nb, buf + n * 4096, 4096, &cookies[n], 0);
		if (e)
			break;
	}
	if (e != EAGAIN)
		fail("RDS_GET_MR number %u on a non-blocking socket: %s, expected EAGAIN once the pool is exhausted",
		     n + 1, e ? strerror(e) : "success");
	note("host 1: %u MRs before the pool ran out", n);
	if (base >= 0 && n != POOL_MAX - base)
		fail("%u MRs fit in a pool of %d with %lld in use before",
		     n, POOL_MAX, base);
	if (ex0 >= 0 && ctr("mr_exhausted") <= ex0)
		fail("mr_exhausted did not move");

	/* RDMA_MAP on the exhausted pool: EAGAIN, nothing sent */
	{
		uint64_t c = 0;
		struct rds_get_mr_args mr = {
			.vec = { (uintptr_t)(buf + 40 * 4096), 4096 },
			.cookie_addr = (uintptr_t)&c,
		};
		struct cm cm = { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) };
		ssize_t s;

		fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) | O_NONBLOCK);
		m = mk(M_OFFER, 99);
		s = send_cm(p->fd, &p->to, &m, sizeof(m), &cm, 1);
		want_errno(s < 0 ? errno : 0, EAGAIN,
			   "sendmsg with RDMA_MAP on an exhausted pool (non-blocking)");
		fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) & ~O_NONBLOCK);
		m = mk(M_MARK, 0);
		send_ctl(p, &m, NULL, 0);
	}

	/* blocking, SO_SNDTIMEO 0.7 s: EAGAIN after it */
	setsockopt(bt, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	{
		int64_t t0 = now_ms(), dt;

		e = get_mr(bt, buf + 50 * 4096, 4096, &cookies[POOL_MAX], 0);
		dt = now_ms() - t0;
		want_errno(e, EAGAIN,
			   "blocking RDS_GET_MR with SO_SNDTIMEO 0.7 s on an exhausted pool");
		note("host 1: blocking RDS_GET_MR, SO_SNDTIMEO 0.7 s: %s after %.2f s",
		     e ? strerror(e) : "success", dt / 1000.0);
		if (dt < 600 || dt > 5000)
			fail("it returned after %.2f s, expected about 0.7 s",
			     dt / 1000.0);
	}

	/* blocking, no timeout: a free wakes it and it gets the MR */
	w.fd = bl;
	w.buf = buf + 51 * 4096;
	if (!start_waiter(&w)) {
		int64_t tf = now_ms();

		e = n ? free_mr(nb, cookies[n - 1]) : EINVAL;
		want_errno(e, 0, "RDS_FREE_MR to wake the waiter");
		pthread_join(w.th, NULL);
		note("host 1: the blocked RDS_GET_MR returned %s after %.2f s (the free came at %.2f s)",
		     w.err ? strerror(w.err) : "0", (w.t1 - w.t0) / 1000.0,
		     (tf - w.t0) / 1000.0);
		want_errno(w.err, 0, "blocking RDS_GET_MR woken by a free");
		if (w.t1 < tf)
			fail("the blocking RDS_GET_MR returned before the free: it did not wait");
		if (!w.err && n)
			n--;	/* that one is free, the waiter's is in use */
	}
	/* the waiter's MR works: host 2 writes into it */
	if (!w.err) {
		struct cm c = { RDS_CMSG_RDMA_DEST, &w.cookie, 8 };
		struct span sp = { 51 * 4096, 4096, key_of(7, 1, 2), 0 };
		struct area a = { buf, 64 * 4096, key_of(7, 0, 1) };

		m = mk(M_OFFER, 0);
		m.cookie = w.cookie;
		/* the waiter's socket has no connection: send on it */
		if (send_cm(bl, &p->to, &m, sizeof(m), &c, 1) != sizeof(m)) {
			fail("send of the waiter's cookie: %s", strerror(errno));
		} else if (!expect_msg(p, M_DO, 0, &r)) {
			area_verify(&a, &sp, 1, "the MR got after waiting");
		}
	} else {
		m = mk(M_OFFER, 0);
		m.a = 1;
		send_cm(bl, &p->to, &m, sizeof(m), NULL, 0);
	}

	/* blocking, no timeout, nobody frees: EAGAIN after 10 s */
	{
		struct waiter w2 = { .fd = bl, .buf = buf + 52 * 4096 };

		if (!pthread_create(&w2.th, NULL, waiter_main, &w2)) {
			pthread_join(w2.th, NULL);
			note("host 1: blocking RDS_GET_MR without SO_SNDTIMEO: %s after %.2f s",
			     w2.err ? strerror(w2.err) : "success",
			     (w2.t1 - w2.t0) / 1000.0);
			want_errno(w2.err, EAGAIN,
				   "blocking RDS_GET_MR without SO_SNDTIMEO on an exhausted pool");
			if (w2.t1 - w2.t0 < 9000 || w2.t1 - w2.t0 > 15000)
				fail("it returned after %.2f s, expected 10 s",
				     (w2.t1 - w2.t0) / 1000.0);
		}
	}

	/* a signal interrupts the wait */
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART */
	{
		struct waiter w3 = { .fd = bl, .buf = buf + 53 * 4096 };

		if (!start_waiter(&w3)) {
			pthread_kill(w3.th, SIGUSR1);
			pthread_join(w3.th, NULL);
			note("host 1: blocking RDS_GET_MR, SIGUSR1: %s after %.2f s",
			     w3.err ? strerror(w3.err) : "success",
			     (w3.t1 - w3.t0) / 1000.0);
			want_errno(w3.err, EINTR,
				   "blocking RDS_GET_MR interrupted by a signal");
		}
	}

	/* closing the sockets frees the lot */
	close(nb);
	close(bl);
	close(bt);
	nb = bl = bt = -1;
	if (base >= 0) {
		int64_t deadline = now_ms() + 5000;

		while (ctr("mr_in_use") != base && now_ms() < deadline)
			poll(NULL, 0, 20);
		if (ctr("mr_in_use") != base)
			fail("mr_in_use %lld after closing, was %lld",
			     ctr("mr_in_use"), base);
	}
	expect_delta_ge(c0, "mr_waits", 3);
	m = mk(M_END, 0);
	send_ctl(p, &m, NULL, 0);
out:
	if (nb >= 0)
		close(nb);
	if (bl >= 0)
		close(bl);
	if (bt >= 0)
		close(bt);
	mr_max_restore();
	munmap(buf, 64 * 4096);
}

static void pool_peer(struct peerio *p)
{
	struct rxmsg r;
	struct area a;
	struct rds_rdma_args args;
	struct rds_iovec iv;
	struct ctl m;

	/* the refused RDMA_MAP sent nothing: MARK comes first */
	if (expect_msg(p, M_MARK, 0, &r))
		return;
	if (expect_msg(p, M_OFFER, 0, &r))
		return;
	if (area_new(&a, 8192, key_of(7, 1, 2)))
		return;
	m = mk(M_DO, 0);
	if (!r.m.a && r.has_cookie) {
		struct cm c = { RDS_CMSG_RDMA_ARGS, &args, sizeof(args) };

		memset(&args, 0, sizeof(args));
		args.cookie = r.cookie;
		args.remote_vec.bytes = 4096;
		args.local_vec_addr = (uintptr_t)&iv;
		args.nr_local = 1;
		args.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME;
		args.user_token = 0x7001;
		iv.addr = (uintptr_t)a.map;
		iv.bytes = 4096;
		if (!send_ctl(p, &m, &c, 1))
			expect_status(p, 0x7001, RDS_RDMA_SUCCESS,
				      "WRITE into the MR got after waiting");
	} else if (!r.m.a) {
		fail("the waiter's cookie came without RDS_CMSG_RDMA_DEST");
	}
	area_free(&a);
	expect_msg(p, M_END, 0, &r);
}

TEST_F_TIMEOUT(rdma, mr_pool, 150)
{
	if (!self->started)
		return;
	struct peerio p;

	if (mainline)
		SKIP(return, "RDS_RDMA_MAINLINE: no GET_MR");
	if (sock_open(&p, addr, PORT_BASE + 60, PORT_BASE + 60))
		return;
	if (!hello(&p)) {
		if (host == 1)
			pool_owner(&p, self->c0);
		else
			pool_peer(&p);
	}
	close(p.fd);
}

/* ---- case 8: a process with MRs exits ---- */

/* Child: registers, offers both to host 2, waits for GOT, then dies. */
static int exit_child(int round)
{
	struct peerio p;
	uint8_t *buf = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t c0 = 0, c1 = 0;
	struct rds_get_mr_args mr = {
		.vec = { (uintptr_t)(buf + 2 * 4096 + 123), 4096 },
		.cookie_addr = (uintptr_t)&c1,
	};
	struct cm cd = { RDS_CMSG_RDMA_DEST, &c0, 8 };
	struct cm cmap = { RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) };
	struct ctl m;
	struct rxmsg r;

	if (buf == MAP_FAILED)
		return 1;
	memset(buf, 0x77, 4 * 4096);
	if (sock_open(&p, addr, PORT_BASE + 71 + round, PORT_BASE + 70))
		return 1;
	m = mk(M_OFFER, 0);
	if (!mainline) {
		if (get_mr(p.fd, buf, 8192, &c0, 0))
			return 2;
		if (send_ctl(&p, &m, &cd, 1))
			return 3;
	} else if (send_ctl(&p, &m, NULL, 0)) {
		return 3;
	}
	m = mk(M_OFFER, 1);
	if (send_ctl(&p, &m, &cmap, 1))
		return 4;
	if (expect_msg(&p, M_GOT, round, &r))
		return 5;
	if (round)
		raise(SIGKILL);
	_exit(0);		/* no FREE_MR, no close */
}

TEST_F_TIMEOUT(rdma, exit, 150)
{
	if (!self->started)
		return;
	struct peerio p;
	unsigned int round;

	if (sock_open(&p, addr, PORT_BASE + 70, PORT_BASE + 70))
		return;
	if (hello(&p))
		goto out;
	for (round = 0; round < 2; round++) {
		struct ctl m;
		struct rxmsg r;

		if (host == 1) {
			long long base = ctr("mr_in_use");
			pid_t pid;
			int status;

			fflush(stdout);
			pid = fork();
			if (pid < 0) {
				fail("fork: %s", strerror(errno));
				break;
			}
			if (!pid)
				_exit(exit_child(round));
			if (waitpid(pid, &status, 0) != pid)
				fail("waitpid: %s", strerror(errno));
			note("host 1: round %u: the child with 2 MRs %s", round,
			     round ? "was killed (SIGKILL)" : "exited (_exit)");
			if (round ? !WIFSIGNALED(status) :
			    !WIFEXITED(status) || WEXITSTATUS(status))
				fail("round %u: child status 0x%x", round,
				     status);
			if (base >= 0) {
				int64_t deadline = now_ms() + 10000;

				while (ctr("mr_in_use") > base &&
				       now_ms() < deadline)
					poll(NULL, 0, 20);
				if (ctr("mr_in_use") > base)
					fail("round %u: mr_in_use %lld 10 s after the child died, %lld before",
					     round, ctr("mr_in_use"), base);
			}
			m = mk(M_EXITED, round);
			if (send_ctl(&p, &m, NULL, 0))
				break;
			/*
			 * host 2's ops fail (their messages may or may not
			 * be delivered); its plain message arrives
			 */
			{
				unsigned int ndo = 0;

				for (;;) {
					if (next_msg(&p, &r, 2 * WAIT_MS,
						     "PLAIN")) {
						r.m.type = 0;
						break;
					}
					if (r.m.type != M_DO || ndo == 2)
						break;
					ndo++;
				}
				if (r.m.type != M_PLAIN || r.m.idx != round)
					fail("round %u: no plain message after the failed ops (got %s %u)",
					     round, mtype_name[r.m.type % 13],
					     r.m.idx);
				note("host 1: round %u: %u of the 2 failed ops' messages delivered",
				     round, ndo);
			}
			m = mk(M_RESULT, round);
			send_ctl(&p, &m, NULL, 0);
		} else {
			struct rxmsg o[2];
			struct area a;
			struct rds_rdma_args args;
			struct rds_iovec iv;
			struct cm c = { RDS_CMSG_RDMA_ARGS, &args, sizeof(args) };
			unsigned int k;

			if (expect_msg(&p, M_OFFER, 0, &o[0]) ||
			    expect_msg(&p, M_OFFER, 1, &o[1]))
				break;
			if (o[0].sport != PORT_BASE + 71 + round)
				fail("the offer came from port %u", o[0].sport);
			/* tell the child (its own port) it may die */
			m = mk(M_GOT, round);
			{
				struct sockaddr_in cto =
					rds_sin(peer, PORT_BASE + 71 + round);

				if (send_cm(p.fd, &cto, &m, sizeof(m), NULL, 0) !=
				    sizeof(m))
					fail("send GOT: %s", strerror(errno));
			}
			if (expect_msg(&p, M_EXITED, round, &r))
				break;
			if (area_new(&a, 8192, key_of(8, round, 2)))
				break;
			for (k = 0; k < 2; k++) {
				uint64_t tok = 0x8000 + round * 2 + k;
				int64_t t0 = now_ms();
				int s;

				m = mk(M_DO, k);
				if (!o[k].has_cookie) {
					if (!(k == 0 && mainline))
						fail("round %u: offer %u without a cookie",
						     round, k);
					send_ctl(&p, &m, NULL, 0);
					continue;
				}
				memset(&args, 0, sizeof(args));
				args.cookie = o[k].cookie;
				args.remote_vec.bytes = 4096;
				args.local_vec_addr = (uintptr_t)&iv;
				args.nr_local = 1;
				args.flags = RDS_RDMA_NOTIFY_ME |
					     (k ? 0 : RDS_RDMA_READWRITE);
				args.user_token = tok;
				iv.addr = (uintptr_t)a.map;
				iv.bytes = 4096;
				if (send_ctl(&p, &m, &c, 1))
					break;
				s = wait_status(&p, tok, 2 * WAIT_MS);
				note("host 2: round %u: %s on the dead process's %s MR: %s after %.2f s",
				     round, k ? "READ" : "WRITE",
				     k ? "RDMA_MAP" : "GET_MR", sname(s),
				     (now_ms() - t0) / 1000.0);
				if (s != -100 && s != RDS_RDMA_REMOTE_ERROR)
					fail("round %u: op %u on a dead process's MR: status %d (%s), expected REMOTE_ERROR",
					     round, k, s, sname(s));
			}
			area_verify(&a, NULL, 0, "local buffer of the failed ops");
			area_free(&a);
			m = mk(M_PLAIN, round);
			if (send_ctl(&p, &m, NULL, 0) ||
			    expect_msg(&p, M_RESULT, round, &r))
				break;
			expect_no_status(&p, "after the ops on dead MRs");
		}
	}
out:
	close(p.fd);
}

TEST_HARNESS_MAIN
