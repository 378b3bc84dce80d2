// SPDX-License-Identifier: GPL-2.0
/*
 * net.rds.ib.* sysctls and SO_RDS_MSG_RXPATH_LATENCY over IB (issue 19,
 * parts 5 and 6).  Both hosts run it.
 *
 *   ranges    every writable net.rds.ib sysctl: a value below its
 *             minimum, above its maximum and a negative or non-numeric
 *             one fail with EINVAL and leave the value as it was; its
 *             bounds are taken; max_recv_allocation is read-only (EACCES)
 *             and shows ib_srq_size, max_recv_wr shows ib_credits,
 *             accept_max ib_accept_max.  On one
 *             host too (no IB needed).
 *   new_conn  both hosts set max_send_wr 128, max_recv_wr 8,
 *             max_unsignaled_wr 4 and flow_control 0, then open a
 *             connection of a TOS (TOS_NEW) that did not exist and move
 *             NMSG messages of MSG_LEN bytes each way over it, every byte
 *             checked; its RDS_INFO_IB_CONNECTIONS record has the send
 *             queue asked for now (128 + 1 + 61 + 1 = 191 at least, above
 *             what the TOS 0 connection, set up before with the default,
 *             has: 64 + 1 + 61 + 1 = 127 at least; a value below the
 *             default could not be told from it: rxe rounds every queue
 *             of 64..127 up to 127) and 8 + 1 SRQ buffers (the TOS 0 one
 *             min(ib_credits, 128) + 1), and the kernel log says once
 *             that flow_control 0 has no effect.  The sysctls are put back
 *             whatever happens.
 *   rxpath    each host in turn receives NMSG messages of each of 100,
 *             3000 and 20000 bytes (one frame, one frame, five fragments)
 *             with SO_RDS_MSG_RXPATH_LATENCY for the three intervals:
 *             header seen -> delivery started is above 0 for every one
 *             (the two were one moment before), and every interval is
 *             below a second (a negative one would be huge, unsigned).
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/time.h>

#define TWO_HOST_NAME	"ib_sysctl_test"
#include "two_host.h"
#include "rds_harness.h"

#define PORT		7700
#define TOS_NEW		200	/* beyond the TOS values of the other tests */
#define NMSG		40
#define MSG_LEN		9000		/* three frames */
#define REC		68		/* sizeof(struct rds_info_rdma_connection) */
#define SYS		"/proc/sys/net/rds/ib/"
#define NSEC		1000000000ULL

/* A sysctl of net.rds.ib as a number; -1 (noted) when it cannot be read. */
static long long sysctl_get(const char *name)
{
	char path[256], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), SYS "%s", name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		note("cannot read %s: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	return strtoll(buf, NULL, 10);
}

/* Write text to the sysctl: 0, or the errno of the open or the write. */
static int sysctl_put(const char *name, const char *text)
{
	char path[256];
	int fd, err = 0;

	snprintf(path, sizeof(path), SYS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, text, strlen(text)) < 0)
		err = errno;
	close(fd);
	return err;
}

static int sysctl_set(const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	return sysctl_put(name, buf);
}

static const struct {
	const char *name;
	long long min, max;
} ranged[] = {
	{ "heartbeat_ms", 0, 3600000 },
	{ "heartbeat_idle_ms", 0, 3600000 },
	{ "credit_return_ms", 0, 3600000 },
	{ "max_send_wr", 16, 1024 },
	{ "max_recv_wr", 1, 128 },
	{ "max_unsignaled_wr", 1, 64 },
	{ "flow_control", 0, 1 },
	{ "idle_secs", 0, 7 * 24 * 3600 },
	{ "accept_max", 0, 65536 },
	{ "mr_max", 1, 1 << 20 },
};

#define NRANGED	(sizeof(ranged) / sizeof(ranged[0]))

TEST(ranges)
{
	long long v0, v;
	unsigned int i;
	int err;

	ASSERT_EQ(0, access(SYS "max_send_wr", R_OK))
		TH_LOG("no " SYS "max_send_wr: %s", strerror(errno));
	for (i = 0; i < NRANGED; i++) {
		const char *n = ranged[i].name;
		const char *bad[] = { "-1", "abc" };
		unsigned int b;

		v0 = sysctl_get(n);
		ASSERT_LE(0, v0) TH_LOG("%s", n);
		if (ranged[i].min > 0) {
			EXPECT_EQ(EINVAL, sysctl_set(n, ranged[i].min - 1))
				TH_LOG("%s = %lld", n, ranged[i].min - 1);
			EXPECT_EQ(v0, sysctl_get(n)) TH_LOG("%s changed", n);
		}
		EXPECT_EQ(EINVAL, sysctl_set(n, ranged[i].max + 1))
			TH_LOG("%s = %lld", n, ranged[i].max + 1);
		EXPECT_EQ(v0, sysctl_get(n)) TH_LOG("%s changed", n);
		for (b = 0; b < 2; b++) {
			EXPECT_EQ(EINVAL, sysctl_put(n, bad[b]))
				TH_LOG("%s = %s", n, bad[b]);
			EXPECT_EQ(v0, sysctl_get(n)) TH_LOG("%s changed", n);
		}
		/* the bounds themselves are taken */
		EXPECT_EQ(0, sysctl_set(n, ranged[i].max)) TH_LOG("%s", n);
		EXPECT_EQ(ranged[i].max, sysctl_get(n)) TH_LOG("%s", n);
		EXPECT_EQ(0, sysctl_set(n, ranged[i].min)) TH_LOG("%s", n);
		EXPECT_EQ(ranged[i].min, sysctl_get(n)) TH_LOG("%s", n);
		ASSERT_EQ(0, sysctl_set(n, v0)) TH_LOG("%s put back", n);
		EXPECT_EQ(v0, sysctl_get(n)) TH_LOG("%s put back", n);
	}
	/* the same variables as the module parameters */
	EXPECT_EQ(rds_param("ib_credits"), sysctl_get("max_recv_wr"));
	EXPECT_EQ(rds_param("ib_idle_secs"), sysctl_get("idle_secs"));
	EXPECT_EQ(rds_param("ib_credit_return_ms"),
		  sysctl_get("credit_return_ms"));
	EXPECT_EQ(rds_param("ib_mr_max"), sysctl_get("mr_max"));
	EXPECT_EQ(rds_param("ib_accept_max"), sysctl_get("accept_max"));
	v = sysctl_get("max_recv_allocation");
	EXPECT_EQ(rds_param("ib_srq_size"), v);
	err = sysctl_set("max_recv_allocation", v + 1);
	EXPECT_EQ(EACCES, err) TH_LOG("max_recv_allocation written: %s",
				      strerror(err));
	EXPECT_EQ(v, sysctl_get("max_recv_allocation"));
}

/* The one record of addr -> peer with tos in RDS_INFO_IB_CONNECTIONS, in
 * *out: how many there were (-1 on error).
 */
static int ib_rec(int fd, const char *addr, const char *peer,
		  unsigned char tos, struct rds_info_rdma_connection *out)
{
	struct rds_info_rdma_connection *r;
	unsigned int i;
	socklen_t len;
	int found = 0;
	void *buf;

	if (rds_info_get(fd, RDS_INFO_IB_CONNECTIONS, &buf, &len) != REC) {
		free(buf);
		return -1;
	}
	r = buf;
	for (i = 0; i < len / REC; i++)
		if (r[i].src_addr == inet_addr(addr) &&
		    r[i].dst_addr == inet_addr(peer) && r[i].tos == tos) {
			*out = r[i];
			found++;
		}
	free(buf);
	return found;
}

/* Send NMSG numbered messages on fd to peer:port and take as many back,
 * each checked byte for byte; 0 when all went well.
 */
static int exchange(int fd, const char *peer, uint16_t port, unsigned int seed)
{
	static unsigned char out[MSG_LEN], in[MSG_LEN + 1], want[MSG_LEN];
	struct sockaddr_in to = rds_sin(peer, port);
	int k;

	for (k = 0; k < NMSG; k++) {
		rds_fill(out, MSG_LEN, seed * 1000 + k);
		if (rds_sendto(fd, out, MSG_LEN, 0, &to) != MSG_LEN) {
			note("send %d: %s", k, strerror(errno));
			return -1;
		}
	}
	for (k = 0; k < NMSG; k++) {
		/* the peer's seed is the other host's */
		rds_fill(want, MSG_LEN, (3 - seed) * 1000 + k);
		if (rds_recvfrom(fd, in, sizeof(in), 0, NULL) != MSG_LEN) {
			note("receive %d: %s", k, strerror(errno));
			return -1;
		}
		if (memcmp(in, want, MSG_LEN)) {
			note("message %d: content differs", k);
			return -1;
		}
	}
	return 0;
}

static const char *const saved_names[] = {
	"max_send_wr", "max_recv_wr", "max_unsignaled_wr", "flow_control",
};
#define NSAVED	(sizeof(saved_names) / sizeof(saved_names[0]))

FIXTURE(conn)
{
	int fd[2];
	long long saved[NSAVED];
};

FIXTURE_SETUP(conn)
{
	unsigned int i;

	self->fd[0] = self->fd[1] = -1;
	for (i = 0; i < NSAVED; i++)
		self->saved[i] = sysctl_get(saved_names[i]);
}

FIXTURE_TEARDOWN(conn)
{
	unsigned int i;

	for (i = 0; i < NSAVED; i++)
		if (self->saved[i] >= 0 &&
		    sysctl_set(saved_names[i], self->saved[i]))
			note("could not put %s back to %lld", saved_names[i],
			     self->saved[i]);
	if (self->fd[0] >= 0)
		close(self->fd[0]);
	if (self->fd[1] >= 0)
		close(self->fd[1]);
}

/* The kernel log holds line (klogctl: the whole ring buffer). */
static bool klog_has(const char *line)
{
	int n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	bool found;
	char *buf;

	if (n <= 0)
		return false;
	buf = malloc(n + 1);
	if (!buf)
		return false;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, n);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	found = strstr(buf, line);
	free(buf);
	return found;
}

TEST_F_TIMEOUT(conn, new_conn, 290)
{
	static const unsigned char tos[2] = { 0, TOS_NEW };
	struct timeval tv = { .tv_sec = 60 * time_scale() };
	struct rds_info_rdma_connection old, cur;
	const char *addr, *peer;
	int host = this_host(), i;
	long long credits, short0;

	if (single_host(&addr, &peer))
		SKIP(return, "needs two hosts (RDS_PEER)");
	for (i = 0; i < 2; i++) {
		self->fd[i] = rds_bound(addr, PORT + i);
		ASSERT_LE(0, self->fd[i]);
		ASSERT_EQ(0, ioctl(self->fd[i], SIOCRDSSETTOS, &tos[i]));
		ASSERT_EQ(0, setsockopt(self->fd[i], SOL_SOCKET, SO_RCVTIMEO,
					&tv, sizeof(tv)));
		/* both hosts send all before they receive: room for it */
		ASSERT_EQ(0, set_sockbufs(self->fd[i], 4 << 20));
	}
	/* The TOS 0 connection with the sysctls as they were. */
	ASSERT_EQ(0, barrier("bound", 120));
	ASSERT_EQ(0, exchange(self->fd[0], peer, PORT, host));
	ASSERT_EQ(1, ib_rec(self->fd[0], addr, peer, 0, &old));
	ASSERT_EQ(0, ib_rec(self->fd[0], addr, peer, TOS_NEW, &cur))
		TH_LOG("a TOS %d connection exists already", TOS_NEW);
	ASSERT_EQ(0, sysctl_set("max_send_wr", 128));
	ASSERT_EQ(0, sysctl_set("max_recv_wr", 8));
	ASSERT_EQ(0, sysctl_set("max_unsignaled_wr", 4));
	ASSERT_EQ(0, sysctl_set("flow_control", 0));
	short0 = rds_info_counter(self->fd[0], "ib_grants_short");
	ASSERT_EQ(0, barrier("set", 120));

	/* A new connection, on both hosts set up with the new values. */
	ASSERT_EQ(0, exchange(self->fd[1], peer, PORT + 1, host));
	ASSERT_EQ(1, ib_rec(self->fd[1], addr, peer, TOS_NEW, &cur));
	note("host %d: TOS 0: send_wr %u recv_wr %u; TOS %d: send_wr %u recv_wr %u",
	     host, old.max_send_wr, old.max_recv_wr, TOS_NEW, cur.max_send_wr,
	     cur.max_recv_wr);
	EXPECT_LE(128U + 1 + 61 + 1, cur.max_send_wr);
	EXPECT_LT(old.max_send_wr, cur.max_send_wr);
	EXPECT_LE(64U + 1 + 61 + 1, old.max_send_wr);
	credits = rds_param("ib_credits");
	if (rds_param("ib_no_srq") == 1) {
		EXPECT_LE(8U + 1, cur.max_recv_wr);
	} else if (rds_info_counter(self->fd[0], "ib_grants_short") == short0) {
		EXPECT_EQ(8U + 1, cur.max_recv_wr);
		EXPECT_NE(old.max_recv_wr, cur.max_recv_wr);
	}
	EXPECT_EQ(8, credits);
	EXPECT_TRUE(klog_has("net.rds.ib.flow_control=0 has no effect"));
	/* The old connection keeps what it was set up with. */
	ASSERT_EQ(1, ib_rec(self->fd[0], addr, peer, 0, &cur));
	EXPECT_EQ(old.max_send_wr, cur.max_send_wr);
	EXPECT_EQ(0, barrier("checked", 120));
}

/* Receive n messages of len bytes on fd with the three RXPATH intervals;
 * 0 when every one is sane and the first is above 0.
 */
static int rxpath_recv(int fd, unsigned int len, int n)
{
	static unsigned char buf[20001];
	char cbuf[CMSG_SPACE(sizeof(struct rds_cmsg_rx_trace))];
	uint64_t most[3] = { 0 }, least0 = ~0ULL;
	int k, i, bad = 0;

	for (k = 0; k < n; k++) {
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct rds_cmsg_rx_trace *t = NULL;
		struct cmsghdr *cm;

		if (recvmsg(fd, &msg, 0) != (ssize_t)len) {
			note("%u bytes, message %d: %s", len, k,
			     strerror(errno));
			return -1;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_RDS &&
			    cm->cmsg_type == RDS_CMSG_RXPATH_LATENCY)
				t = (struct rds_cmsg_rx_trace *)CMSG_DATA(cm);
		if (!t || t->rx_traces != 3) {
			note("%u bytes, message %d: no RXPATH trace", len, k);
			return -1;
		}
		if (!t->rx_trace[0])
			bad++;
		if (t->rx_trace[0] < least0)
			least0 = t->rx_trace[0];
		for (i = 0; i < 3; i++) {
			if (t->rx_trace[i] >= NSEC)
				bad++;
			if (t->rx_trace[i] > most[i])
				most[i] = t->rx_trace[i];
		}
	}
	note("%u bytes x %d: header -> start %" PRIu64 "..%" PRIu64 " ns, start -> queued <= %" PRIu64 " ns, queued -> recvmsg <= %" PRIu64 " ns",
	     len, n, least0, most[0], most[1], most[2]);
	return bad;
}

TEST_F_TIMEOUT(conn, rxpath, 200)
{
	static const unsigned int sizes[] = { 100, 3000, 20000 };
	struct timeval tv = { .tv_sec = 60 * time_scale() };
	struct rds_rx_trace_so so = {
		.rx_traces = 3, .rx_trace_pos = { 0, 1, 2 },
	};
	static unsigned char buf[20000];
	const char *addr, *peer;
	int host = this_host(), round, k;
	unsigned int s;

	if (single_host(&addr, &peer))
		SKIP(return, "needs two hosts (RDS_PEER)");
	self->fd[0] = rds_bound(addr, PORT + 2);
	ASSERT_LE(0, self->fd[0]);
	ASSERT_EQ(0, setsockopt(self->fd[0], SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	ASSERT_EQ(0, setsockopt(self->fd[0], SOL_RDS,
				SO_RDS_MSG_RXPATH_LATENCY, &so, sizeof(so)));
	ASSERT_EQ(0, set_sockbufs(self->fd[0], 4 << 20));
	/* the connection up first: its setup is no message's latency */
	ASSERT_EQ(0, barrier("rx-bound", 120));
	if (host == 1) {
		struct sockaddr_in to = rds_sin(peer, PORT + 2);

		ASSERT_EQ(1, rds_sendto(self->fd[0], buf, 1, 0, &to));
	} else {
		ASSERT_EQ(0, rxpath_recv(self->fd[0], 1, 1));
	}
	for (round = 1; round <= 2; round++) {
		ASSERT_EQ(0, barrier(round == 1 ? "round1" : "round2", 120));
		for (s = 0; s < 3; s++) {
			if (host == round) {
				EXPECT_EQ(0, rxpath_recv(self->fd[0], sizes[s],
							 NMSG))
					TH_LOG("%u bytes: an interval out of bounds",
					       sizes[s]);
				continue;
			}
			{
				struct sockaddr_in to = rds_sin(peer, PORT + 2);

				for (k = 0; k < NMSG; k++)
					ASSERT_EQ((ssize_t)sizes[s],
						  rds_sendto(self->fd[0], buf,
							     sizes[s], 0,
							     &to));
			}
		}
	}
	EXPECT_EQ(0, barrier("rx-done", 120));
}

TEST_HARNESS_MAIN
