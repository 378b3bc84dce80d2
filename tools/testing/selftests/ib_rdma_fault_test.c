// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts over IB: RDMA ops through a connection loss.  No op is lost
 * silently, none is executed twice, and an op and its message are kept or
 * dropped together.
 *
 * Two cases: the link cut, and host 1's rxe device deleted for CUT_S
 * seconds and added back (connections torn down by the device's removal).
 *
 * Host 2 (the target) registers one region (RDS_GET_MR): an 8-byte counter
 * followed by one 8-byte slot per op, and sends its cookie to host 1.
 * Host 1 (the issuer) sends NMSG numbered messages to host 2: message i
 * carries an RDMA WRITE of pattern(i) into slot i (i % 3 == 0), an atomic
 * FADD of 1 to the counter (i % 3 == 1), or nothing (i % 3 == 2), each op
 * with RDS_RDMA_NOTIFY_ME and token i.  Half way it asks the VM host to cut
 * its link for CUT_S seconds (QMP set_link), so the connection is lost with
 * messages and ops in flight and queued, and re-forms.
 *
 * Host 2 records which messages it received (each at most once) and, at
 * the end, the counter and the slots, and hands them to host 1 in a file
 * of RDS_SHARED.  Host 1 checks:
 *  - every op got exactly one status, SUCCESS or DROPPED;
 *  - SUCCESS: its message was delivered, and a WRITE's slot holds its
 *    pattern (the op ran before the message);
 *  - DROPPED: its message was not delivered (an op posted before the loss
 *    is never posted again, and its message goes with it; one the peer
 *    delivered is acknowledged by the new handshake and is a SUCCESS);
 *    the slot of a dropped WRITE holds 0 or its pattern;
 *  - counter: #SUCCESS FADDs <= counter <= #SUCCESS + #DROPPED FADDs;
 *  - every message without an op was delivered, exactly once;
 *  - the connection really was formed again (ib_counters connects moved).
 * The seed of the patterns is printed.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>

#define TWO_HOST_NAME	"ib_rdma_fault_test"
#include "two_host.h"
#include "rds_harness.h"

#define PORT		6100
#define NMSG		360
#define CUT_AT		150		/* messages sent before the cut */
#define CUT_S		14
#define PACE_MS		15
#define STATUS_WAIT_MS	180000
#define MAGIC		0x46414d52U	/* "RMAF" */

enum { K_WRITE, K_FADD, K_PLAIN };

struct fmsg {
	uint32_t magic;
	uint32_t idx;			/* NMSG: the end */
	uint64_t cookie;		/* host 2's first message */
};

static uint64_t seed;
/* the fault of the running case: "cut" (link) or "rxe" (device) */
static const char *fault = "cut";

/* Barrier and shared-file names of the running case. */
static const char *nm(const char *what)
{
	static char buf[4][64];
	static unsigned int i;
	char *b = buf[i++ % 4];

	snprintf(b, 64, "%s-%s", fault, what);
	return b;
}

static int kind(unsigned int i)
{
	return i % 3;
}

static uint64_t pattern(unsigned int i)
{
	uint64_t x = seed + i;

	return splitmix64(&x) | 1;	/* never 0 */
}

static size_t region_len(void)
{
	return (1 + NMSG) * sizeof(uint64_t);
}

/* Ask the VM host for a link change; 0 when it was done. */
static int host_request(const char *what)
{
	const char *ctl = getenv("RDS_CTL");
	char tmp[512], req[512], done[512], status[64] = "";
	static unsigned int n;
	int64_t deadline;
	FILE *f;

	if (!ctl)
		return -1;
	n++;
	snprintf(tmp, sizeof(tmp), "%s/.req.%s.%d.%u", ctl, test_name(),
		 getpid(), n);
	snprintf(req, sizeof(req), "%s/req.%s.%d.%u", ctl, test_name(),
		 getpid(), n);
	snprintf(done, sizeof(done), "%s/done.%s.%d.%u", ctl, test_name(),
		 getpid(), n);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%s\n", what);
	if (fclose(f) || rename(tmp, req))
		return -1;
	deadline = now_ms() + 30000;
	while (access(done, F_OK)) {
		if (now_ms() > deadline)
			return -1;
		usleep(100000);
	}
	f = fopen(done, "r");
	if (!f || !fgets(status, sizeof(status), f))
		status[0] = 0;
	if (f)
		fclose(f);
	return strncmp(status, "ok", 2) ? -1 : 0;
}

/* The fault, from its own thread while host 1 keeps sending: the link
 * cut at the QEMU level, or host 1's rxe device deleted and added back.
 */
static void *cutter(void *arg)
{
	int *rc = arg;

	if (!strcmp(fault, "cut")) {
		note("host 1: link off for %d s", CUT_S);
		*rc = host_request("link off");
		sleep(CUT_S);
		if (host_request("link on"))
			*rc = -1;
		note("host 1: link on");
	} else {
		const char *rxe = getenv("RDS_RXE"), *ifc = getenv("RDS_IFACE");
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rdma link delete %s",
			 rxe ? rxe : "rxe0");
		note("host 1: %s, for %d s", cmd, CUT_S);
		*rc = system(cmd);
		sleep(CUT_S);
		snprintf(cmd, sizeof(cmd), "rdma link add %s type rxe netdev %s",
			 rxe ? rxe : "rxe0", ifc ? ifc : "eth0");
		if (system(cmd))
			*rc = -1;
		note("host 1: %s", cmd);
	}
	return NULL;
}

static long long ib_counter(const char *key)
{
	char line[2048];

	if (read_counters(line, sizeof(line)) <= 0)
		return -1;
	return counter(line, key);
}

/* Send message i (with its op) to host 2, waiting for room. */
static int send_one(int fd, const struct sockaddr_in *to, unsigned int i,
		    uint64_t cookie, uint64_t *local)
{
	char cbuf[CMSG_SPACE(sizeof(struct rds_atomic_args))];
	struct fmsg m = { .magic = MAGIC, .idx = i };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr msg = {
		.msg_name = (void *)to, .msg_namelen = sizeof(*to),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	struct rds_iovec lv;
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	if (kind(i) == K_WRITE) {
		struct rds_rdma_args a = { 0 };

		local[i] = pattern(i);
		lv.addr = (uintptr_t)&local[i];
		lv.bytes = sizeof(uint64_t);
		a.cookie = cookie;
		a.remote_vec.addr = (1 + i) * sizeof(uint64_t);
		a.remote_vec.bytes = sizeof(uint64_t);
		a.local_vec_addr = (uintptr_t)&lv;
		a.nr_local = 1;
		a.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME;
		a.user_token = i;
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(a));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_RDMA_ARGS;
		c->cmsg_len = CMSG_LEN(sizeof(a));
		memcpy(CMSG_DATA(c), &a, sizeof(a));
	} else if (kind(i) == K_FADD) {
		struct rds_atomic_args a = { 0 };

		a.cookie = cookie;
		a.local_addr = (uintptr_t)&local[i];
		a.remote_addr = 0;
		a.fadd.add = 1;
		a.flags = RDS_RDMA_NOTIFY_ME;
		a.user_token = i;
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(a));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_ATOMIC_FADD;
		c->cmsg_len = CMSG_LEN(sizeof(a));
		memcpy(CMSG_DATA(c), &a, sizeof(a));
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (sendmsg(fd, &msg, 0) >= 0)
			return 0;
		if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
			note("host 1: sendmsg %u: %s", i, strerror(errno));
			return -1;
		}
		poll(&p, 1, 100);
	}
}

/* Collect RDMA status notices (recvmsg returning 0 with cmsgs only). */
static int take_notices(int fd, int *status, unsigned int *got,
			unsigned int *dups, unsigned int *bogus)
{
	char cbuf[CMSG_SPACE(sizeof(struct rds_rdma_notify)) * 16];
	char data[64];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	ssize_t n;

	n = recvmsg(fd, &msg, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		struct rds_rdma_notify nt;

		if (c->cmsg_level != SOL_RDS || c->cmsg_type != RDS_CMSG_RDMA_STATUS)
			continue;
		memcpy(&nt, CMSG_DATA(c), sizeof(nt));
		if (nt.user_token >= NMSG || kind(nt.user_token) == K_PLAIN) {
			(*bogus)++;
			continue;
		}
		if (status[nt.user_token] >= 0) {
			(*dups)++;
			continue;
		}
		status[nt.user_token] = nt.status;
		(*got)++;
	}
	return 1;
}

struct h2_result {
	uint64_t counter;
	unsigned int delivered, dups;
	char bits[NMSG + 1];		/* '1': message i was delivered */
	char slot_ok[NMSG + 1];		/* WRITE slots: 'p' pattern, '0' zero, 'x' else */
};

static void role2(struct __test_metadata *_metadata, const char *addr,
		  const char *peer)
{
	struct sockaddr_in to = rds_sin(peer, PORT), from;
	struct rds_get_mr_args mr = { 0 };
	struct h2_result r = { 0 };
	struct fmsg m;
	uint64_t *region, cookie = 0;
	int fd, fl, i;
	ssize_t n;

	fd = rds_bound(addr, PORT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_sockbufs(fd, 1 << 20));
	region = mmap(NULL, 4096 * 2, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, region);
	memset(region, 0, region_len());
	mr.vec.addr = (uintptr_t)region;
	mr.vec.bytes = region_len();
	mr.cookie_addr = (uintptr_t)&cookie;
	ASSERT_EQ(0, setsockopt(fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr)))
		TH_LOG("RDS_GET_MR: %s", strerror(errno));
	memset(r.bits, '0', NMSG);
	memset(r.slot_ok, '-', NMSG);
	ASSERT_EQ(0, barrier(nm("bound"), 120));
	m.magic = MAGIC;
	m.idx = NMSG + 1;
	m.cookie = cookie;
	ASSERT_EQ((ssize_t)sizeof(m), rds_sendto(fd, &m, sizeof(m), 0, &to));

	for (;;) {
		n = recv_msg(fd, &m, sizeof(m), 0, &from, &fl);
		ASSERT_EQ((ssize_t)sizeof(m), n) TH_LOG("recv: %s", strerror(errno));
		ASSERT_EQ(MAGIC, m.magic);
		if (m.idx == NMSG)
			break;
		ASSERT_GT((uint32_t)NMSG, m.idx);
		if (r.bits[m.idx] == '1')
			r.dups++;
		r.bits[m.idx] = '1';
		r.delivered++;
	}
	r.counter = __atomic_load_n(&region[0], __ATOMIC_SEQ_CST);
	for (i = 0; i < NMSG; i++) {
		uint64_t v = region[1 + i];

		if (kind(i) != K_WRITE)
			continue;
		r.slot_ok[i] = v == pattern(i) ? 'p' : v ? 'x' : '0';
	}
	note("host 2: %u messages delivered (%u twice), counter %llu",
	     r.delivered, r.dups, (unsigned long long)r.counter);
	ASSERT_EQ(0, shared_publish(nm("h2"), "%llu %u %u %s %s\n",
				    (unsigned long long)r.counter, r.delivered,
				    r.dups, r.bits, r.slot_ok));
	EXPECT_EQ(0U, r.dups);
	ASSERT_EQ(0, barrier(nm("published"), 120));
	close(fd);
}

static void role1(struct __test_metadata *_metadata, const char *addr,
		  const char *peer)
{
	struct sockaddr_in to = rds_sin(peer, PORT), from;
	unsigned int i, got = 0, dups = 0, bogus = 0;
	unsigned int succ[3] = { 0 }, drop[3] = { 0 }, other = 0;
	unsigned int lost_plain = 0, bad = 0;
	long long conn0, conn1;
	struct h2_result r = { 0 };
	int status[NMSG], fl, cut_rc = 0;
	unsigned long long counter;
	uint64_t *local, cookie;
	pthread_t th = 0;
	char path[512];
	struct fmsg m;
	int64_t deadline;
	int fd;

	fd = rds_bound(addr, PORT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_sockbufs(fd, 1 << 20));
	local = calloc(NMSG, sizeof(*local));
	ASSERT_NE(NULL, local);
	for (i = 0; i < NMSG; i++)
		status[i] = -1;
	ASSERT_EQ(0, barrier(nm("bound"), 120));
	ASSERT_EQ((ssize_t)sizeof(m), recv_msg(fd, &m, sizeof(m), 0, &from, &fl));
	ASSERT_EQ(MAGIC, m.magic);
	cookie = m.cookie;
	conn0 = ib_counter("connects");	/* the connection is up */
	note("host 1: cookie 0x%llx, %d messages, %s after %d",
	     (unsigned long long)cookie, NMSG, fault, CUT_AT);

	for (i = 0; i < NMSG; i++) {
		if (i == CUT_AT)
			ASSERT_EQ(0, pthread_create(&th, NULL, cutter, &cut_rc));
		ASSERT_EQ(0, send_one(fd, &to, i, cookie, local));
		while (take_notices(fd, status, &got, &dups, &bogus) > 0)
			;
		usleep(PACE_MS * 1000);
	}
	if (th)
		pthread_join(th, NULL);
	EXPECT_EQ(0, cut_rc) TH_LOG("the %s was not done", fault);

	deadline = now_ms() + STATUS_WAIT_MS;
	while (got < NMSG / 3 * 2 && now_ms() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		poll(&p, 1, 200);
		take_notices(fd, status, &got, &dups, &bogus);
	}
	/* The end marker, after every op was decided. */
	m.magic = MAGIC;
	m.idx = NMSG;
	m.cookie = 0;
	ASSERT_EQ((ssize_t)sizeof(m), rds_sendto(fd, &m, sizeof(m), 0, &to));
	ASSERT_EQ(0, barrier(nm("published"), 300));
	conn1 = ib_counter("connects");

	ASSERT_EQ(0, shared_fetch(path, sizeof(path), nm("h2"), "host 2's result",
				  5, "%llu %u %u %360s %360s", &counter,
				  &r.delivered, &r.dups, r.bits, r.slot_ok));
	for (i = 0; i < NMSG; i++) {
		bool dl = r.bits[i] == '1';
		int k = kind(i);

		if (k == K_PLAIN) {
			if (!dl)
				lost_plain++;
			continue;
		}
		if (status[i] == RDS_RDMA_SUCCESS) {
			succ[k]++;
			if (!dl || (k == K_WRITE && r.slot_ok[i] != 'p')) {
				if (bad++ < 10)
					note("op %u: SUCCESS but delivered %d slot %c",
					     i, dl, r.slot_ok[i]);
			}
		} else if (status[i] == RDS_RDMA_DROPPED) {
			drop[k]++;
			if (dl || (k == K_WRITE && r.slot_ok[i] == 'x')) {
				if (bad++ < 10)
					note("op %u: DROPPED but delivered %d slot %c",
					     i, dl, r.slot_ok[i]);
			}
		} else {
			other++;
			if (bad++ < 10)
				note("op %u: status %d", i, status[i]);
		}
	}
	note("%s: seed %llu: %u ops: WRITE %u success %u dropped, FADD %u success %u dropped, %u other, %u without status",
	     fault, (unsigned long long)seed, NMSG / 3 * 2, succ[K_WRITE],
	     drop[K_WRITE], succ[K_FADD], drop[K_FADD], other,
	     NMSG / 3 * 2 - got);
	note("counter %llu (FADD success %u, dropped %u); plain messages lost %u; new connections %lld",
	     counter, succ[K_FADD], drop[K_FADD], lost_plain, conn1 - conn0);
	EXPECT_EQ((unsigned int)(NMSG / 3 * 2), got) TH_LOG("ops without status");
	EXPECT_EQ(0U, dups) TH_LOG("an op told twice");
	EXPECT_EQ(0U, bogus) TH_LOG("a notice for no op");
	EXPECT_EQ(0U, other);
	EXPECT_EQ(0U, bad);
	EXPECT_LE(succ[K_FADD], counter);
	EXPECT_GE(succ[K_FADD] + drop[K_FADD], counter) TH_LOG("an op ran twice");
	EXPECT_EQ(0U, lost_plain);
	EXPECT_EQ(0U, r.dups);
	EXPECT_LT(conn0, conn1) TH_LOG("the %s did not make a new connection",
					   fault);
	free(local);
	close(fd);
}

FIXTURE(ib) {
};

FIXTURE_SETUP(ib)
{
}

FIXTURE_TEARDOWN(ib)
{
}

static void run_case(struct __test_metadata *_metadata, const char *which)
{
	const char *addr, *peer;
	char path[512];
	unsigned long long s;

	if (single_host(&addr, &peer))
		SKIP(return, "two hosts needed (a link is cut)");
	fault = which;
	if (this_host() == 1) {
		seed = getenv("RDS_SEED") ?
		       strtoull(getenv("RDS_SEED"), NULL, 0) :
		       (uint64_t)time(NULL);
		note("%s: seed %llu (RDS_SEED replays)", fault,
		     (unsigned long long)seed);
		ASSERT_EQ(0, shared_publish(nm("seed"), "%llu\n",
					    (unsigned long long)seed));
		ASSERT_EQ(0, barrier(nm("seeded"), 120));
		role1(_metadata, addr, peer);
	} else {
		/* host 2 checks the slots against host 1's patterns */
		ASSERT_EQ(0, barrier(nm("seeded"), 120));
		ASSERT_EQ(0, shared_fetch(path, sizeof(path), nm("seed"), "seed",
					  1, "%llu", &s));
		seed = s;
		role2(_metadata, addr, peer);
	}
}

TEST_F_TIMEOUT(ib, rdma_through_link_cut, 560)
{
	run_case(_metadata, "cut");
}

TEST_F_TIMEOUT(ib, rdma_through_rxe_readd, 560)
{
	run_case(_metadata, "rxe");
}

TEST_HARNESS_MAIN
