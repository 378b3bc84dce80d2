// SPDX-License-Identifier: GPL-2.0
/*
 * The driver of ib_scale.sh (two hosts): N = A x T RDS connections from
 * host 2's A address aliases (RDS_SCALE_NET.FIRST .. FIRST+A-1), each with
 * T types of service (1..T), to host 1, all carrying verified messages at
 * once.  Not a test by itself: ib_scale.sh adds the aliases, runs this on
 * both hosts and turns its exit status into a TAP result; the figures are
 * "# scale: WHAT VALUES" lines.
 *
 * Connection k (0 <= k < N) is alias k / T with TOS k % T + 1: on host 2
 * one socket bound to ALIAS:PORT2 + TOS, SIOCRDSSETTOS, whose first message
 * (round 0) to host 1's PORT sets the connection up.  The connections come
 * up in stages of 1, 100 and N (each stage sent at once, then waited for
 * in RDS_INFO_CONNECTIONS); after each stage both hosts read their memory
 * (mem_reading.h).  With all N up, host 2 sends rounds 1..R-1 on every
 * socket in turn, so that every connection carries messages at the same
 * time, and a thread of host 1 receives all N x R: each connection's in
 * order, from its alias, byte for byte.  Host 1 then answers every
 * connection once (from a socket per TOS, to ALIAS:PORT2 + TOS: the same
 * connections the other way), and host 2 checks each answer.  Last, host
 * 2 closes its N sockets (timed) and both hosts read their memory again.
 *
 * The hot/cold mix (RDS_SCALE_HOT=H, 0 by default: off): the first stage
 * is H connections instead of 1, and connections 0..H-1 are then "busy":
 * for RDS_SCALE_HOT_SECS (default 10) host 2 sends 8 KiB messages on each
 * as fast as they go, to host 1's PORT_HOT, where every one is checked
 * (in order per connection, byte for byte) and the throughput measured,
 * once with only them up ("alone") and once with all N up, the others
 * idle; the ratio is printed, not checked (emulation moves it by 30%).
 *
 * Environment: RDS_HOST, RDS_ADDR, RDS_PEER (two_host.h), RDS_SCALE_ALIASES
 * (A, default 16), RDS_SCALE_TOS (T, default 4), RDS_SCALE_ROUNDS (R,
 * default 4), RDS_SCALE_NET (default "10.0.0"), RDS_SCALE_FIRST (default
 * 3), RDS_SCALE_WAIT (seconds to wait for a stage or the messages,
 * default 600, times RDS_TIME_SCALE).
 *
 * Exit status 0 when every connection came up and every message of both
 * directions arrived once, in order and intact; 1 otherwise.
 */
#include <sys/ioctl.h>
#include <sys/resource.h>

#define TWO_HOST_NAME	"ib_scale"
#include "two_host.h"
#include "mem_reading.h"

#define PORT		7100		/* host 1's receiving socket */
#define PORT2		7200		/* host 2: PORT2 + TOS on each alias */
#define PORT_HOT	7101		/* host 1: the busy connections' */
#define HOT_LEN		8192		/* their messages */
#define HOT_END		0xffffffffU	/* seq of a busy connection's last */
#define MAX_ALIASES	250
#define MAX_TOS		8
#define MAX_ROUNDS	16
#define MSG_MAX		5000
#define MAGIC		0x5343414cU	/* "SCAL" */
#define REPLY_ROUND	MAX_ROUNDS	/* the answer's round number */
#define NSTAGES		3
#define TOP_CACHES	6

struct scale_hdr {
	uint32_t magic;
	uint32_t k;			/* connection index */
	uint32_t round;
	uint32_t len;
};

static unsigned int naliases = 16, ntos = 4, nrounds = 4, nconns;
static unsigned int first = 3, wait_s = 600, nhot, hot_secs = 10;
static const char *net = "10.0.0";
static const char *addr, *peer;
static int host;
static int failed;
static volatile bool rx_stop;	/* host 1: a stage failed */

/* Sizes by round: within a fragment, just over one, small and large. */
static const unsigned int sizes[] = { 64, 4097, 300, 1024 };

static unsigned int msg_len(unsigned int round)
{
	if (round == REPLY_ROUND)
		return 200;
	return sizes[round % (sizeof(sizes) / sizeof(sizes[0]))];
}

static void fill(unsigned char *buf, unsigned int k, unsigned int round)
{
	struct scale_hdr h = {
		.magic = MAGIC, .k = k, .round = round, .len = msg_len(round),
	};

	rds_fill(buf, h.len, k * (MAX_ROUNDS + 1) + round);
	memcpy(buf, &h, sizeof(h));
}

static struct in_addr alias_of(unsigned int k)
{
	char a[32];
	struct in_addr in;

	snprintf(a, sizeof(a), "%s.%u", net, first + k / ntos);
	inet_pton(AF_INET, a, &in);
	return in;
}

static unsigned int tos_of(unsigned int k)
{
	return k % ntos + 1;
}

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	static unsigned int n;
	va_list ap;

	failed = 1;
	va_start(ap, fmt);
	vnote_limited(host, n++, 20, "errors", fmt, ap);
	va_end(ap);
}

static unsigned int env_uint(const char *name, unsigned int def,
			     unsigned int lo, unsigned int hi)
{
	const char *e = getenv(name);
	unsigned long v;
	char *end;

	if (!e || !*e)
		return def;
	v = strtoul(e, &end, 0);
	if (*end || v < lo || v > hi) {
		note("%s=%s: not in %u..%u", name, e, lo, hi);
		exit(1);
	}
	return v;
}

/* Connections from the aliases to peer with a TOS in 1..T that are up. */
static int count_up(int info)
{
	struct rds_info_connection *c;
	in_addr_t f = inet_addr(peer);
	uint32_t lo = ntohl(alias_of(0).s_addr);
	int i, n, up = 0;

	n = info_conns(info, &c);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		uint32_t l = ntohl(c[i].laddr);

		if (c[i].faddr != f || l < lo || l - lo >= naliases ||
		    c[i].tos < 1 || c[i].tos > ntos)
			continue;
		if (c[i].flags & RDS_INFO_CONNECTION_FLAG_CONNECTED)
			up++;
	}
	free(c);
	return up;
}

/* The most attempts ib_gate showed in flight (host 2), -1: unreadable. */
static long long gate_max = -1;

static void gate_sample(void)
{
	char buf[128] = "";
	long long v;
	FILE *f = fopen("/sys/module/rds/parameters/ib_gate", "r");

	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) &&
	    sscanf(buf, "in_flight=%lld", &v) == 1 && v > gate_max)
		gate_max = v;
	fclose(f);
}

/* Wait until n connections are up; 0, or -1 (noted) at the deadline. */
static int wait_up(int info, unsigned int n)
{
	int64_t deadline = now_ms() + (int64_t)wait_s * 1000 * time_scale();
	int up;

	for (;;) {
		gate_sample();
		up = count_up(info);
		if (up < 0)
			return -1;
		if ((unsigned int)up >= n)
			return 0;
		if (now_ms() >= deadline)
			break;
		poll(NULL, 0, 100);
	}
	fail("%d of %u connections up after %u s", up, n,
	     wait_s * time_scale());
	printf("# scale: stopped %d of %u up\n", up, n);
	return -1;
}

/* Send message round of connection k on fd; retried while the send
 * buffer is full or the port congested, up to the deadline.
 */
static int send_one(int fd, unsigned int k, unsigned int round,
		    const struct sockaddr_in *to)
{
	static unsigned char buf[MSG_MAX];
	int64_t deadline = now_ms() + (int64_t)wait_s * 1000 * time_scale();
	unsigned int len = msg_len(round);
	ssize_t n;

	fill(buf, k, round);
	n = send_until(fd, buf, len, to, deadline);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		fail("connection %u round %u: sent %zd of %u", k, round, n,
		     len);
	else
		fail("connection %u round %u: send: %s%s", k, round,
		     strerror(errno), errno == EAGAIN || errno == ENOBUFS ?
		     " at the deadline" : "");
	return -1;
}

/* Check one received message against connection k's next round. */
static int check_msg(const unsigned char *got, ssize_t n, int flags,
		     struct in_addr from, unsigned int *next, bool reply,
		     unsigned int want_k)
{
	static unsigned char exp[MSG_MAX];
	char a[INET_ADDRSTRLEN];
	struct scale_hdr h;
	unsigned int want_round;

	if (n < (ssize_t)sizeof(h) || (flags & MSG_TRUNC)) {
		fail("message of %zd bytes%s", n,
		     flags & MSG_TRUNC ? ", truncated" : "");
		return -1;
	}
	memcpy(&h, got, sizeof(h));
	if (h.magic != MAGIC || h.k >= nconns || (reply && h.k != want_k) ||
	    h.len != msg_len(h.round) || n != (ssize_t)h.len) {
		fail("bad header: magic 0x%08x k %u round %u len %u, %zd bytes",
		     h.magic, h.k, h.round, h.len, n);
		return -1;
	}
	if (from.s_addr != (reply ? inet_addr(peer) : alias_of(h.k).s_addr)) {
		fail("connection %u: message from %s", h.k, ip(from, a));
		return -1;
	}
	want_round = reply ? REPLY_ROUND : next[h.k];
	if (h.round != want_round) {
		fail("connection %u: round %u, expected %u", h.k, h.round,
		     want_round);
		return -1;
	}
	fill(exp, h.k, h.round);
	if (memcmp(got, exp, h.len)) {
		fail("connection %u round %u: payload differs", h.k, h.round);
		return -1;
	}
	next[h.k]++;
	return 0;
}

struct rx_state {
	int fd;
	unsigned int rcvd, bad;
	int64_t last_ms;		/* when the last one came */
};

/* Host 1's receiver: N x R messages from the aliases. */
static void *receiver(void *arg)
{
	struct rx_state *rx = arg;
	static unsigned char got[MSG_MAX + 1];
	unsigned int total = nconns * nrounds, *next;
	int64_t deadline = -1;

	next = calloc(nconns, sizeof(*next));
	if (!next) {
		fail("receiver: out of memory");
		return NULL;
	}
	while (rx->rcvd + rx->bad < total && !rx_stop) {
		struct pollfd pfd = { .fd = rx->fd, .events = POLLIN };
		struct sockaddr_in from;
		int flags;
		ssize_t n;

		/* no deadline before the first message: the stages take
		 * as long as they take (host 2 times them)
		 */
		if (deadline >= 0 && now_ms() >= deadline) {
			fail("receiver: %u of %u messages (%u bad) at the deadline",
			     rx->rcvd, total, rx->bad);
			break;
		}
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		n = recv_msg(rx->fd, got, sizeof(got), MSG_DONTWAIT, &from,
			     &flags);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fail("receiver: recvmsg: %s", strerror(errno));
			break;
		}
		if (deadline < 0)
			deadline = now_ms() +
				   (int64_t)3 * wait_s * 1000 * time_scale();
		if (check_msg(got, n, flags, from.sin_addr, next, false, 0))
			rx->bad++;
		else
			rx->rcvd++;
		rx->last_ms = now_ms();
	}
	free(next);
	return NULL;
}

/* Memory per connection from a to b, n connections (sockets: with n
 * sockets of host 2 open).
 */
static void report_mem(const char *what, const struct reading *a,
		       const struct reading *b, unsigned int n)
{
	long long dobj = 0, dsock = 0;
	char p[6][32], top[512] = "";
	size_t off = 0;
	unsigned int i, shown = 0;

	for (i = 0; i < b->ncaches; i++) {
		const struct cache *cb = &b->caches[i];
		const struct cache *ca = find_cache(a, cb->name);
		long long d = cb->objs - (ca ? ca->objs : 0);
		long long bytes = d * object_size(cb);

		if (!strcmp(cb->name, "RDS") ||
		    !strcmp(cb->name, "sock_inode_cache"))
			dsock += bytes;
		else
			dobj += bytes;
		/* the caches that grew by at least 1 KiB per connection */
		if (n && bytes >= 1024LL * n && shown < TOP_CACHES &&
		    off < sizeof(top)) {
			off += snprintf(top + off, sizeof(top) - off,
					"%s%s %+lld x %lld B", shown ? ", " : "",
					cb->name, d, object_size(cb));
			shown++;
		}
	}
	note("memory: host %d, %s, %u connections: MemFree %+lld KiB (%s KiB/conn), Slab %+lld KiB (%s KiB/conn), Vmalloc %+lld KiB (%s KiB/conn), slab objects %+lld KiB (%s KiB/conn, own size, sockets apart: %+lld KiB), receive pages %+lld",
	     host, what, n, b->memfree - a->memfree,
	     per(b->memfree - a->memfree, n, p[0], 32), b->slab - a->slab,
	     per(b->slab - a->slab, n, p[1], 32), b->vmalloc - a->vmalloc,
	     per(b->vmalloc - a->vmalloc, n, p[2], 32), dobj / 1024,
	     per(dobj / 1024, n, p[3], 32), dsock / 1024,
	     b->rx_pages - a->rx_pages);
	printf("# scale: mem %s %u memfree_kib_per_conn %s slab_kib_per_conn %s vmalloc_kib_per_conn %s slab_obj_kib_per_conn %s\n",
	       what, n, p[0], p[1], p[2], p[3]);
	if (*top)
		note("memory: host %d, %s: caches grown by 1 KiB/conn or more: %s",
		     host, what, top);
	fflush(stdout);
}

static int sync_point(const char *name)
{
	if (barrier(name, wait_s + 120)) {
		fail("barrier %s", name);
		return -1;
	}
	return 0;
}

/* Host 2: open sockets [from, to) and send round 0 on each. */
static int open_range(int *fds, unsigned int from, unsigned int to)
{
	struct sockaddr_in dst = rds_sin(peer, PORT);
	unsigned int k;

	for (k = from; k < to; k++) {
		struct sockaddr_in sin = {
			.sin_family = AF_INET,
			.sin_port = htons(PORT2 + tos_of(k)),
			.sin_addr = alias_of(k),
		};
		rds_tos_t tos = tos_of(k);

		fds[k] = rds_socket();
		if (fds[k] < 0 ||
		    bind(fds[k], (struct sockaddr *)&sin, sizeof(sin))) {
			char a[INET_ADDRSTRLEN];

			fail("socket/bind %s:%u: %s", ip(sin.sin_addr, a),
			     PORT2 + tos, strerror(errno));
			return -1;
		}
		if (ioctl(fds[k], SIOCRDSSETTOS, &tos)) {
			fail("SIOCRDSSETTOS %u: %s", tos, strerror(errno));
			return -1;
		}
		if (send_one(fds[k], k, 0, &dst))
			return -1;
		gate_sample();
	}
	return 0;
}

/* Host 2: one answer on each of the N sockets. */
static int receive_replies(int *fds)
{
	int64_t deadline = now_ms() + (int64_t)wait_s * 1000 * time_scale();
	static unsigned char got[MSG_MAX + 1];
	unsigned int k, left = nconns, *next;
	struct pollfd *pfd;

	pfd = calloc(nconns, sizeof(*pfd));
	next = calloc(nconns, sizeof(*next));
	if (!pfd || !next) {
		fail("out of memory");
		free(pfd);
		free(next);
		return -1;
	}
	for (k = 0; k < nconns; k++) {
		pfd[k].fd = fds[k];
		pfd[k].events = POLLIN;
	}
	while (left && now_ms() < deadline) {
		if (poll(pfd, nconns, 1000) <= 0)
			continue;
		for (k = 0; k < nconns; k++) {
			struct sockaddr_in from;
			int flags;
			ssize_t n;

			if (!(pfd[k].revents & POLLIN))
				continue;
			n = recv_msg(fds[k], got, sizeof(got), MSG_DONTWAIT,
				     &from, &flags);
			if (n < 0)
				continue;
			check_msg(got, n, flags, from.sin_addr, next, true, k);
			if (next[k] != 1) {
				if (next[k] > 1)
					fail("connection %u: a second answer",
					     k);
				continue;
			}
			pfd[k].fd = -1;
			left--;
		}
	}
	if (left)
		fail("%u of %u answers missing at the deadline", left, nconns);
	free(pfd);
	free(next);
	return left ? -1 : 0;
}

/* Host 1: one answer to each connection, from a socket per TOS. */
static int send_replies(void)
{
	int fds[MAX_TOS + 1], ret = 0;
	unsigned int t, k;

	for (t = 1; t <= ntos; t++) {
		rds_tos_t tos = t;

		fds[t] = rds_bound(addr, 0);
		if (fds[t] < 0 || ioctl(fds[t], SIOCRDSSETTOS, &tos)) {
			fail("answer socket, TOS %u: %s", t, strerror(errno));
			while (--t >= 1)
				close(fds[t]);
			return -1;
		}
	}
	for (k = 0; k < nconns && !ret; k++) {
		struct sockaddr_in to = {
			.sin_family = AF_INET,
			.sin_port = htons(PORT2 + tos_of(k)),
			.sin_addr = alias_of(k),
		};

		ret = send_one(fds[tos_of(k)], k, REPLY_ROUND, &to);
	}
	for (t = 1; t <= ntos; t++)
		close(fds[t]);
	return ret;
}

/* Host 2: 8 KiB messages on connections 0..nhot-1 for hot_secs, then an
 * end marker on each; returns the bytes sent, -1 on an error.
 */
static long long hot_send(int *fds)
{
	struct sockaddr_in dst = rds_sin(peer, PORT_HOT);
	static unsigned char buf[HOT_LEN];
	int64_t end = now_ms() + (int64_t)hot_secs * 1000;
	uint32_t seq[MAX_TOS * 2] = { 0 };
	long long bytes = 0;
	unsigned int k;

	while (now_ms() < end) {
		struct pollfd pfd[MAX_TOS * 2];
		bool sent = false;

		for (k = 0; k < nhot; k++) {
			struct scale_hdr h = {
				.magic = MAGIC, .k = k, .round = seq[k],
				.len = HOT_LEN,
			};
			ssize_t n;

			rds_fill(buf, HOT_LEN, k * 7919 + seq[k]);
			memcpy(buf, &h, sizeof(h));
			n = rds_sendto(fds[k], buf, HOT_LEN, MSG_DONTWAIT, &dst);
			if (n == HOT_LEN) {
				seq[k]++;
				bytes += n;
				sent = true;
			} else if (n >= 0 || (errno != EAGAIN &&
					      errno != ENOBUFS)) {
				fail("busy connection %u: send: %s", k,
				     n >= 0 ? "short" : strerror(errno));
				return -1;
			}
			pfd[k].fd = fds[k];
			pfd[k].events = POLLOUT;
		}
		if (!sent)
			poll(pfd, nhot, 10);
	}
	for (k = 0; k < nhot; k++) {
		struct scale_hdr h = {
			.magic = MAGIC, .k = k, .round = HOT_END,
			.len = sizeof(h),
		};
		int64_t deadline = now_ms() + (int64_t)wait_s * 1000;

		if (send_until(fds[k], &h, sizeof(h), &dst, deadline) !=
		    (ssize_t)sizeof(h)) {
			fail("busy connection %u: end marker: %s", k,
			     strerror(errno));
			return -1;
		}
	}
	return bytes;
}

/* Host 1: the busy connections' messages until each one's end marker;
 * returns the throughput in KB/s (first to last message), -1 on an error.
 */
static long long hot_receive(int fd)
{
	static unsigned char got[HOT_LEN + 1], exp[HOT_LEN];
	int64_t deadline = now_ms() +
			   (int64_t)(hot_secs + wait_s) * 1000 * time_scale();
	int64_t t0 = -1, t1 = 0;
	uint32_t next[MAX_TOS * 2] = { 0 };
	unsigned int ends = 0;
	long long bytes = 0;

	while (ends < nhot && now_ms() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_in from;
		struct scale_hdr h;
		int flags;
		ssize_t n;

		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		n = recv_msg(fd, got, sizeof(got), MSG_DONTWAIT, &from, &flags);
		if (n < (ssize_t)sizeof(h))
			continue;
		memcpy(&h, got, sizeof(h));
		if (h.magic != MAGIC || h.k >= nhot ||
		    from.sin_addr.s_addr != alias_of(h.k).s_addr) {
			fail("busy: a message that is not one (k %u)", h.k);
			return -1;
		}
		if (h.round == HOT_END) {
			ends++;
			continue;
		}
		rds_fill(exp, HOT_LEN, h.k * 7919 + h.round);
		memcpy(exp, &h, sizeof(h));
		if (n != HOT_LEN || (flags & MSG_TRUNC) ||
		    h.round != next[h.k] || memcmp(got, exp, HOT_LEN)) {
			fail("busy connection %u: message %u (expected %u), %zd bytes, %s",
			     h.k, h.round, next[h.k], n,
			     memcmp(got, exp, HOT_LEN) ? "differs" : "intact");
			return -1;
		}
		next[h.k]++;
		if (t0 < 0)
			t0 = now_ms();
		t1 = now_ms();
		bytes += n;
	}
	if (ends < nhot) {
		fail("busy: %u of %u end markers at the deadline", ends, nhot);
		return -1;
	}
	return t1 > t0 ? bytes / (t1 - t0) : 0;
}

/* The busy connections' phase: both hosts, after a barrier. */
static long long hot_phase(const char *what, int *fds, int hot_fd)
{
	static char c0[2048], c1[2048], moved[1024];
	char name[32];
	long long v = 0;
	int64_t t0;

	snprintf(name, sizeof(name), "hot.%s", what);
	if (sync_point(name))
		return -1;
	read_counters(c0, sizeof(c0));
	t0 = now_ms();
	if (host == 2) {
		v = hot_send(fds);
		if (v >= 0)
			note("host 2: busy (%s): %lld bytes in %u s on %u connections",
			     what, v, hot_secs, nhot);
	} else {
		v = hot_receive(hot_fd);
		if (v >= 0) {
			note("host 1: busy (%s): %lld KB/s on %u connections, every message checked",
			     what, v, nhot);
			printf("# scale: hot %s %u %lld\n", what, nhot, v);
		}
	}
	/* What the phase cost besides its data: control frames, heartbeats,
	 * credit waits of every connection, busy or idle.
	 */
	read_counters(c1, sizeof(c1));
	counters_moved(c0, c1, moved, sizeof(moved));
	note("host %d: busy (%s): %lld ms, ib_counters moved:%s", host, what,
	     (long long)(now_ms() - t0), *moved ? moved : " none");
	snprintf(name, sizeof(name), "hot.%s.done", what);
	if (sync_point(name))
		return -1;
	return v;
}

int main(void)
{
	static struct reading before, at[NSTAGES], after;
	unsigned int stage_n[NSTAGES], nstages = 0, s, k, opened = 0, r;
	struct rlimit rl = { 8192, 8192 };
	struct rx_state rx = { .fd = -1 };
	bool rx_started = false;
	pthread_t rx_thread;
	int info, *fds = NULL, hot_fd = -1;
	long long hot_alone = 0, hot_mixed = 0;
	char name[32];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (single_host(&addr, &peer)) {
		note("two hosts only: RDS_ADDR and RDS_PEER must differ");
		return 1;
	}
	host = this_host();
	naliases = env_uint("RDS_SCALE_ALIASES", naliases, 1, MAX_ALIASES);
	ntos = env_uint("RDS_SCALE_TOS", ntos, 1, MAX_TOS);
	nrounds = env_uint("RDS_SCALE_ROUNDS", nrounds, 1, MAX_ROUNDS);
	first = env_uint("RDS_SCALE_FIRST", first, 1, 254);
	wait_s = env_uint("RDS_SCALE_WAIT", wait_s, 10, 7200);
	nhot = env_uint("RDS_SCALE_HOT", 0, 0, MAX_TOS * 2);
	hot_secs = env_uint("RDS_SCALE_HOT_SECS", hot_secs, 1, 600);
	if (getenv("RDS_SCALE_NET"))
		net = getenv("RDS_SCALE_NET");
	nconns = naliases * ntos;
	if (first + naliases - 1 > 254) {
		note("aliases %s.%u..%u: past .254", net, first,
		     first + naliases - 1);
		return 1;
	}
	if (setrlimit(RLIMIT_NOFILE, &rl))
		note("setrlimit NOFILE 8192: %s", strerror(errno));
	/* stages: 1, 100 and N connections (those below N) */
	if (nhot > nconns) {
		note("RDS_SCALE_HOT=%u: more than the %u connections", nhot,
		     nconns);
		return 1;
	}
	stage_n[nstages++] = nhot ? nhot : 1;
	if (nconns > 100)
		stage_n[nstages++] = 100;
	if (nconns > stage_n[nstages - 1])
		stage_n[nstages++] = nconns;

	info = rds_socket();
	if (info < 0) {
		note("socket: %s", strerror(errno));
		return 1;
	}
	if (host == 1) {
		rx.fd = rds_bound(addr, PORT);
		if (rx.fd < 0 || set_sockbufs(rx.fd, 16 << 20)) {
			note("receiving socket %s:%u: %s", addr, PORT,
			     strerror(errno));
			return 1;
		}
		hot_fd = nhot ? rds_bound(addr, PORT_HOT) : -1;
		if (nhot && (hot_fd < 0 || set_sockbufs(hot_fd, 16 << 20))) {
			note("busy socket %s:%u: %s", addr, PORT_HOT,
			     strerror(errno));
			return 1;
		}
	} else {
		fds = calloc(nconns, sizeof(*fds));
		if (!fds)
			return 1;
		for (k = 0; k < nconns; k++)
			fds[k] = -1;
	}
	note("host %d: %u connections: %u aliases %s.%u..%u x TOS 1..%u to %s, %u rounds",
	     host, nconns, naliases, net, first, first + naliases - 1, ntos,
	     host == 1 ? addr : peer, nrounds);
	if (sync_point("start"))
		return 1;
	take_reading(&before);
	if (host == 1) {
		if (pthread_create(&rx_thread, NULL, receiver, &rx)) {
			note("pthread_create failed");
			return 1;
		}
		rx_started = true;
	}
	if (sync_point("before"))
		goto out;

	for (s = 0; s < nstages; s++) {
		if (host == 2) {
			int64_t t0 = now_ms();

			if (open_range(fds, opened, stage_n[s]) ||
			    wait_up(info, stage_n[s]))
				goto out;
			printf("# scale: setup %u %u %lld\n", opened + 1,
			       stage_n[s], (long long)(now_ms() - t0));
			note("host 2: connections %u..%u up in %lld ms",
			     opened + 1, stage_n[s],
			     (long long)(now_ms() - t0));
			opened = stage_n[s];
			printf("# scale: gate_max_in_flight %lld\n", gate_max);
		}
		snprintf(name, sizeof(name), "stage%u", s);
		if (sync_point(name))
			goto out;
		take_reading(&at[s]);
		report_mem("sockets open", &before, &at[s], stage_n[s]);
		snprintf(name, sizeof(name), "stage%u.read", s);
		if (sync_point(name))
			goto out;
		if (nhot && !s) {
			hot_alone = hot_phase("alone", fds, hot_fd);
			if (hot_alone < 0)
				goto out;
		}
	}

	if (host == 2) {
		struct sockaddr_in dst = rds_sin(peer, PORT);
		int64_t t0 = now_ms();

		for (r = 1; r < nrounds; r++)
			for (k = 0; k < nconns; k++)
				if (send_one(fds[k], k, r, &dst))
					goto out;
		note("host 2: rounds 1..%u sent on %u connections in %lld ms",
		     nrounds - 1, nconns, (long long)(now_ms() - t0));
		if (receive_replies(fds))
			goto out;
		note("host 2: %u answers, each from its connection, intact",
		     nconns);
	} else {
		pthread_join(rx_thread, NULL);
		rx_started = false;
		note("host 1: %u of %u messages received in order and intact, %u bad",
		     rx.rcvd, nconns * nrounds, rx.bad);
		printf("# scale: received %u of %u bad %u\n", rx.rcvd,
		       nconns * nrounds, rx.bad);
		if (rx.rcvd != nconns * nrounds || rx.bad)
			failed = 1;
		else if (send_replies())
			goto out;
	}
	if (wait_up(info, host == 2 ? nconns : 0))
		goto out;
	if (sync_point("verified"))
		goto out;
	if (nhot) {
		hot_mixed = hot_phase("mixed", fds, hot_fd);
		if (hot_mixed < 0)
			goto out;
		if (host == 1)
			printf("# scale: hot ratio %u busy with %u idle: %lld%% of alone\n",
			       nhot, nconns - nhot,
			       hot_alone ? hot_mixed * 100 / hot_alone : 0);
	}

	if (host == 2) {
		int64_t t0 = now_ms();

		for (k = 0; k < nconns; k++) {
			close(fds[k]);
			fds[k] = -1;
		}
		printf("# scale: close %u %lld\n", nconns,
		       (long long)(now_ms() - t0));
		note("host 2: %u sockets closed in %lld ms", nconns,
		     (long long)(now_ms() - t0));
		wait_socks_freed(&before);
	} else {
		close(rx.fd);
		rx.fd = -1;
		if (hot_fd >= 0)
			close(hot_fd);
	}
	if (sync_point("closed"))
		goto out;
	take_reading(&after);
	report_mem("sockets closed", &before, &after, nconns);
	report_counters(host, &before, &after, nconns);
	if (host == 2 && count_up(info) != (int)nconns)
		fail("%d of %u connections up after the sockets closed",
		     count_up(info), nconns);
	sync_point("done");
out:
	if (rx_started) {
		/* a stage failed before the receiver was done */
		failed = 1;
		rx_stop = true;
		pthread_join(rx_thread, NULL);
	}
	if (fds)
		for (k = 0; k < nconns; k++)
			if (fds[k] >= 0)
				close(fds[k]);
	free(fds);
	close(info);
	note("host %d: %s", host, failed ? "FAILED" : "all checks passed");
	return failed;
}
