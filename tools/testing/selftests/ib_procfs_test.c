// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts over IB: what /proc/net/rds shows of a real connection and of
 * the device under it.
 *
 * Each host binds a socket to RDS_ADDR port PORT with TOS (a TOS no other
 * test uses: the connection is new); host 1 sends NMSG messages of MSG_LEN
 * bytes (two frames each) to host 2's socket, which receives them and then
 * sends as many back (one side connects: no race, no attempt ends).  Then:
 *
 *   connections  exactly one line RDS_ADDR -> RDS_PEER with TOS: transport
 *                infiniband, state up for no longer than the test has
 *                run, credits "avail/granted" with 0 < granted <= 255 and
 *                avail <= granted, a generation of 8 hex digits (not 0),
 *                no retransmission, no reset; queued and unacked reach 0
 *                (the peer acknowledges everything).
 *   stats        between before and after the traffic, ib_tx_frames and
 *                ib_rx_frames grew by 2 * NMSG and recv_delivered and
 *                send_queued by NMSG at least.
 *   devices      a line for rxe0: with the shared receive queue (unless
 *                ib_no_srq) 0 < buffers <= max, the pool (buffers less
 *                the retiring ones) ib_srq_size at least (the SRQ may have
 *                grown), max ib_srq_max (0: 4 x ib_srq_size), at least
 *                ib_srq_size, stranded 0..retiring (no column without
 *                the SRQ), every buffer posted again once the traffic
 *                is over, and buffers times the pages of one buffer equal
 *                to ib_rx_pages (the only device); free equal to the pool
 *                less what the connections hold (RDS_INFO_IB_CONNECTIONS'
 *                cache_allocs, 8 KiB a buffer); grants at most what they
 *                hold; mr_max equal to
 *                ib_mr_max, mr_used at most mr_max; connections the number
 *                of infiniband lines up in connections; accepting (passive
 *                attempts in flight) 0..ib_accept_max (no upper bound
 *                with 0).
 *
 * Needs two hosts: skipped in single-host mode.
 */
#include <sys/ioctl.h>
#include <sys/time.h>

#define TWO_HOST_NAME	"ib_procfs_test"
#include "two_host.h"
#include "rds_harness.h"
#include "rds_proc.h"

#define PORT		7640
#define TOS		11
#define NMSG		16
#define MSG_LEN		5000		/* two frames: 4096 + 904 */
#define RX_BYTES	8192		/* a receive buffer's data */
#define DEV		"rxe0"

/* The stats value of name in a fresh read; -1 if absent. */
static long long stat_now(const char *name)
{
	char *text = proc_read(PROC_STATS);
	long long v = text ? proc_stat(text, name) : -1;

	free(text);
	return v;
}

/* Infiniband lines in state up. */
static int ib_up_lines(const char *text)
{
	const char *line = strchr(text, '\n');
	struct proc_conn c;
	int n = 0;

	while (line && line[1]) {
		line++;
		if (proc_conn_parse(line, &c) &&
		    !strcmp(c.transport, "infiniband") && !strcmp(c.state, "up"))
			n++;
		line = strchr(line, '\n');
	}
	return n;
}

/* KiB of receive buffers the IB connections hold (cache_allocs). */
static long long held_kib(int fd)
{
	struct rds_info_rdma_connection *r;
	long long kib = 0;
	socklen_t len;
	unsigned int i;
	void *buf;

	if (rds_info_get(fd, RDS_INFO_IB_CONNECTIONS, &buf, &len) !=
	    (int)sizeof(*r)) {
		free(buf);
		return -1;
	}
	r = buf;
	for (i = 0; i < len / sizeof(*r); i++)
		kib += r[i].cache_allocs;
	free(buf);
	return kib;
}

FIXTURE(ib)
{
	int fd;
};

FIXTURE_SETUP(ib)
{
	self->fd = -1;
}

FIXTURE_TEARDOWN(ib)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* the barriers wait up to 120 s each, the ACKs 30 s */
TEST_F_TIMEOUT(ib, procfs, 290)
{
	static unsigned char msg[MSG_LEN + 1];
	const char *addr, *peer;
	struct timeval tv = { .tv_sec = 60 * time_scale() };
	unsigned char tos = TOS;
	long long tx0, rx0, dl0, sq0, pages, srq_size, srq_max, mr_max, no_srq;
	long long acc_max;
	long long kib;
	unsigned int avail, granted, gen, k;
	int64_t t0 = now_ms(), deadline;
	int host = this_host(), fd;
	struct sockaddr_in to;
	struct proc_conn c;
	struct proc_dev d;
	char *text = NULL;

	if (single_host(&addr, &peer))
		SKIP(return, "needs two hosts (RDS_PEER)");
	fd = self->fd = rds_bound(addr, PORT);
	ASSERT_LE(0, fd) TH_LOG("bind %s:%d: %s", addr, PORT, strerror(errno));
	ASSERT_EQ(0, ioctl(fd, SIOCRDSSETTOS, &tos));
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	tx0 = stat_now("ib_tx_frames");
	rx0 = stat_now("ib_rx_frames");
	dl0 = stat_now("recv_delivered");
	sq0 = stat_now("send_queued");
	ASSERT_LE(0, tx0) TH_LOG("no ib_tx_frames in %s", PROC_STATS);
	ASSERT_LE(0, rx0);
	ASSERT_LE(0, dl0);
	ASSERT_LE(0, sq0);
	ASSERT_EQ(0, barrier("bound", 120));

	/* host 1 connects, host 2 answers on the connection it accepted: no
	 * race of two attempts, so no attempt ends and nothing is reset
	 */
	to = rds_sin(peer, PORT);
	for (k = 0; host == 2 && k < NMSG; k++)
		ASSERT_EQ(MSG_LEN, rds_recvfrom(fd, msg, sizeof(msg), 0, NULL))
			TH_LOG("receive %u: %s", k, strerror(errno));
	for (k = 0; k < NMSG; k++)
		ASSERT_EQ(MSG_LEN, rds_sendto(fd, msg, MSG_LEN, 0, &to))
			TH_LOG("send %u: %s", k, strerror(errno));
	for (k = 0; host == 1 && k < NMSG; k++)
		ASSERT_EQ(MSG_LEN, rds_recvfrom(fd, msg, sizeof(msg), 0, NULL))
			TH_LOG("receive %u: %s", k, strerror(errno));
	ASSERT_EQ(0, barrier("exchanged", 120));

	/* connections: wait for the peer's ACKs of everything */
	deadline = now_ms() + 30000LL * time_scale();
	for (;;) {
		free(text);
		text = proc_read(PROC_CONNS);
		ASSERT_NE(NULL, text) TH_LOG("%s: %s", PROC_CONNS,
					     strerror(errno));
		ASSERT_EQ(1, proc_conn_find(text, addr, peer, TOS, NULL, &c))
			TH_LOG("no single line %s -> %s tos %u:\n%s", addr,
			       peer, TOS, text);
		if ((!c.queued && !c.unacked) || now_ms() > deadline)
			break;
		usleep(100000);
	}
	note("host %d: %s %s %u %s %s %lus credits %s queued %u unacked %u retransmitted %llu generation %s last_reset %s",
	     host, c.local, c.remote, c.tos, c.transport, c.state, c.secs,
	     c.credits, c.queued, c.unacked, c.retransmitted, c.generation,
	     c.last_reset);
	EXPECT_TRUE(proc_header_is(text, PROC_CONNS_HDR));
	EXPECT_STREQ("infiniband", c.transport);
	EXPECT_STREQ("up", c.state);
	EXPECT_GE((unsigned long)((now_ms() - t0) / 1000 + 1), c.secs);
	avail = 1;
	granted = 0;	/* fail the range checks too if it does not parse */
	EXPECT_EQ(2, sscanf(c.credits, "%u/%u", &avail, &granted))
		TH_LOG("credits %s", c.credits);
	EXPECT_LT(0U, granted);
	EXPECT_GE(255U, granted);
	EXPECT_GE(granted, avail);
	EXPECT_EQ(0U, c.queued);
	EXPECT_EQ(0U, c.unacked);
	EXPECT_EQ(0ULL, c.retransmitted);
	EXPECT_EQ(8U, strlen(c.generation));
	gen = 0;
	EXPECT_EQ(1, sscanf(c.generation, "%x", &gen));
	EXPECT_NE(0U, gen);
	EXPECT_STREQ("-", c.last_reset);

	/* stats: this host's messages and the peer's */
	EXPECT_LE(tx0 + 2 * NMSG, stat_now("ib_tx_frames"));
	EXPECT_LE(rx0 + 2 * NMSG, stat_now("ib_rx_frames"));
	EXPECT_LE(dl0 + NMSG, stat_now("recv_delivered"));
	EXPECT_LE(sq0 + NMSG, stat_now("send_queued"));

	/* devices: the receive buffers all posted again once it is quiet */
	pages = rds_param("ib_rx_pages");
	srq_size = rds_param("ib_srq_size");
	srq_max = rds_param("ib_srq_max");
	mr_max = rds_param("ib_mr_max");
	no_srq = rds_param("ib_no_srq");
	acc_max = rds_param("ib_accept_max");
	ASSERT_LE(0, pages);
	ASSERT_LE(0, srq_size);
	ASSERT_LE(0, srq_max);
	ASSERT_LE(0, mr_max);
	ASSERT_LE(0, no_srq);
	ASSERT_LE(0, acc_max);
	deadline = now_ms() + 10000LL * time_scale();
	for (;;) {
		char *dev = proc_read(PROC_DEVICES);

		ASSERT_NE(NULL, dev);
		EXPECT_TRUE(proc_header_is(dev, PROC_DEVICES_HDR));
		ASSERT_EQ(1, proc_dev_find(dev, DEV, &d))
			TH_LOG("no line for %s:\n%s", DEV, dev);
		free(dev);
		if (no_srq || d.posted == d.buffers || now_ms() > deadline)
			break;
		usleep(100000);
	}
	/* what the connections hold, as close to the devices read as can be */
	kib = held_kib(fd);
	free(text);
	text = proc_read(PROC_CONNS);
	ASSERT_NE(NULL, text);
	note("host %d: %s %s buffers %lld posted %lld free %lld retiring %lld max %lld stranded %lld grants %llu mr %lld/%llu connections %u accepting %d; ib_rx_pages %lld, held %lld KiB",
	     host, d.name, d.receive, d.buffers, d.posted, d.free, d.retiring,
	     d.max, d.stranded, d.grants,
	     d.mr_used, d.mr_max, d.conns, d.accepting, pages, kib);
	EXPECT_LE(0, d.accepting);
	if (acc_max)
		EXPECT_GE(acc_max, (long long)d.accepting);
	EXPECT_EQ((unsigned long long)mr_max, d.mr_max);
	EXPECT_LE(0, d.mr_used);
	EXPECT_GE((long long)d.mr_max, d.mr_used);
	EXPECT_EQ(ib_up_lines(text), (int)d.conns);
	if (no_srq) {
		EXPECT_STREQ("per-connection-ring", d.receive);
		EXPECT_EQ(-1, d.buffers);
		EXPECT_EQ(-1, d.max);
		EXPECT_EQ(-1, d.stranded);
	} else {
		/* rxe caps neither at these sizes (2^20 receives an SRQ,
		 * 2^15 entries a CQ: ib_srq_max up to 32766)
		 */
		long long want_max = srq_max ?: 4 * srq_size;

		EXPECT_STREQ("shared-queue", d.receive);
		EXPECT_LT(0, d.buffers);
		EXPECT_LE(0, d.retiring);
		EXPECT_LE(0, d.stranded);
		EXPECT_GE(d.retiring, d.stranded);
		EXPECT_GE(d.max, d.buffers);
		EXPECT_EQ(want_max > srq_size ? want_max : srq_size, d.max);
		EXPECT_LE(srq_size, d.buffers - d.retiring);
		EXPECT_EQ(d.buffers, d.posted);
		EXPECT_EQ(d.buffers * (RX_BYTES / sysconf(_SC_PAGESIZE)),
			  pages);
		ASSERT_LE(0, kib);
		EXPECT_EQ(d.buffers - d.retiring - kib / (RX_BYTES / 1024),
			  d.free);
		EXPECT_GE((unsigned long long)(d.buffers - d.retiring - d.free),
			  d.grants);
	}
	free(text);
	EXPECT_EQ(0, barrier("checked", 120));
}

TEST_HARNESS_MAIN
