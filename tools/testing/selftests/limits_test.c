// SPDX-License-Identifier: GPL-2.0
/*
 * What a local user can make the module hold, and a few limits (issue 15,
 * leads 6, 7 and 9).  One host: eth0 is HOST_ADDR with rxe0 on it, on a
 * hub port nobody else is on, so DEAD_PEER never answers and an IB
 * connection to it never comes up.
 *
 *   empty_to_nonreader      empty messages to a socket that never reads:
 *                           the receiver's buffer fills (every message
 *                           costs RDS_MSG_MIN_CHARGE at least) and the
 *                           sender gets ENOBUFS after a bounded count
 *   empty_to_dead_peer      empty messages to DEAD_PEER over IB: nothing
 *                           is acknowledged, the send buffer fills, EAGAIN
 *   rdma_only_to_dead_peer  RDMA-only messages (RDMA_ARGS, no payload) to
 *                           DEAD_PEER: the pages each one pins count in
 *                           the send buffer, EAGAIN after a few
 *   cong_map_merged         the congestion map of HOST_ADDR changes
 *                           thousands of times while a connection from it
 *                           to DEAD_PEER is down: maps wait on it, two at
 *                           most (and two on every other down connection
 *                           from HOST_ADDR), not one per change
 *                           (messages_live)
 *   heartbeat_ms_max        net.rds.ib.heartbeat_ms refuses values above
 *                           its documented maximum (EINVAL)
 *   connect_keeps_bound_scope
 *                           connect() to a link-local peer leaves the
 *                           scope the socket is bound with alone: it still
 *                           receives at its bound name, and that name
 *                           stays taken
 *
 * A test that needs the IB transport on HOST_ADDR skips without it.  The
 * connection to DEAD_PEER keeps a map queued until the module unloads:
 * run this last before "unload".
 */
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/uio.h>

#include "rds_test.h"
#include "rds_harness.h"

#define PARAMS		"/sys/module/rds/parameters/"
#define LIVE		PARAMS "messages_live"
#define HEARTBEAT	"/proc/sys/net/rds/ib/heartbeat_ms"
#define DEAD_PEER	"10.0.0.2"
#define DEAD_PORT	4000
#define RDS_TRANS_IB	0

/* Whatever the module charges a message, it is at least this much. */
#define MIN_CHARGE_FLOOR	32
#define MAX_SENDS		5000

static long read_long(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

/* 0, or the errno of writing s to path. */
static int write_str(const char *path, const char *s)
{
	int fd, err = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static int setbuf_get(int fd, int opt, int val)
{
	socklen_t len = sizeof(val);

	if (setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val)) ||
	    getsockopt(fd, SOL_SOCKET, opt, &val, &len))
		return -1;
	return val / 2;		/* what RDS uses */
}

/* A socket bound to HOST_ADDR over IB, or -1 (no IB transport there). */
static int ib_bound(void)
{
	socklen_t tl = sizeof(int);
	int fd, t;

	fd = rds_bound(HOST_ADDR, 0);
	if (fd < 0)
		return -1;
	if (getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &t, &tl) ||
	    t != RDS_TRANS_IB) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send msg until it fails (or MAX_SENDS went): the count, errno in *err. */
static int send_until_refused(int fd, struct msghdr *msg, int *err)
{
	int n;

	for (n = 0; n < MAX_SENDS; n++) {
		if (sendmsg(fd, msg, MSG_DONTWAIT) < 0) {
			*err = errno;
			return n;
		}
	}
	*err = 0;
	return n;
}

TEST(empty_to_nonreader)
{
	struct sockaddr_in to;
	struct msghdr msg = { 0 };
	int rx, tx, rcvbuf, n, err;

	rx = rds_bound("127.0.0.1", 0);
	tx = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, rx);
	ASSERT_LE(0, tx);
	rcvbuf = setbuf_get(rx, SO_RCVBUF, 16384);
	ASSERT_LT(0, rcvbuf);
	to = rds_name(rx);
	msg.msg_name = &to;
	msg.msg_namelen = sizeof(to);

	n = send_until_refused(tx, &msg, &err);
	TH_LOG("rcvbuf %d: %d empty messages queued, then %s", rcvbuf, n,
	       err ? strerror(err) : "no refusal");
	EXPECT_EQ(ENOBUFS, err);
	EXPECT_LE(n, rcvbuf / MIN_CHARGE_FLOOR + 1);
	EXPECT_LE(1, n);
	close(tx);
	close(rx);
}

TEST(empty_to_dead_peer)
{
	struct sockaddr_in to = rds_sin(DEAD_PEER, DEAD_PORT);
	struct msghdr msg = { 0 };
	int tx, sndbuf, n, err;

	tx = ib_bound();
	if (tx < 0)
		SKIP(return, "no IB transport on %s", HOST_ADDR);
	sndbuf = setbuf_get(tx, SO_SNDBUF, 16384);
	ASSERT_LT(0, sndbuf);
	msg.msg_name = &to;
	msg.msg_namelen = sizeof(to);

	n = send_until_refused(tx, &msg, &err);
	TH_LOG("sndbuf %d: %d empty messages queued for %s, then %s", sndbuf,
	       n, DEAD_PEER, err ? strerror(err) : "no refusal");
	EXPECT_EQ(EAGAIN, err);
	EXPECT_LE(n, sndbuf / MIN_CHARGE_FLOOR + 1);
	EXPECT_LE(1, n);
	close(tx);
}

#define RDMA_PAGES	16

TEST(rdma_only_to_dead_peer)
{
	struct sockaddr_in to = rds_sin(DEAD_PEER, DEAD_PORT);
	char cbuf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
	long page = sysconf(_SC_PAGESIZE);
	struct rds_rdma_args *args;
	struct msghdr msg = { 0 };
	struct rds_iovec local;
	struct cmsghdr *cmsg;
	int tx, sndbuf, n, err;
	void *mem;

	tx = ib_bound();
	if (tx < 0)
		SKIP(return, "no IB transport on %s", HOST_ADDR);
	sndbuf = setbuf_get(tx, SO_SNDBUF, 4 * RDMA_PAGES * page);
	ASSERT_LT(0, sndbuf);
	ASSERT_EQ(0, posix_memalign(&mem, page, RDMA_PAGES * page));
	memset(mem, 0x5a, RDMA_PAGES * page);

	local.addr = (uintptr_t)mem;
	local.bytes = RDMA_PAGES * page;
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_name = &to;
	msg.msg_namelen = sizeof(to);
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_RDS;
	cmsg->cmsg_type = RDS_CMSG_RDMA_ARGS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(*args));
	args = (struct rds_rdma_args *)CMSG_DATA(cmsg);
	/* A key the peer never gave: the op is never posted anyway. */
	args->cookie = 0x1234;
	args->remote_vec.addr = 0;
	args->remote_vec.bytes = local.bytes;
	args->local_vec_addr = (uintptr_t)&local;
	args->nr_local = 1;
	args->flags = RDS_RDMA_READWRITE;

	n = send_until_refused(tx, &msg, &err);
	TH_LOG("sndbuf %d: %d RDMA-only messages of %d pinned pages queued for %s, then %s",
	       sndbuf, n, RDMA_PAGES, DEAD_PEER,
	       err ? strerror(err) : "no refusal");
	EXPECT_EQ(EAGAIN, err);
	/* Each one holds RDMA_PAGES pages: that is what fills the buffer. */
	EXPECT_LE(n, sndbuf / (RDMA_PAGES * page) + 1);
	EXPECT_LE(1, n);
	close(tx);
	free(mem);
}

#define FLIPS		2000
#define FLIP_LEN	6000
#define FLIP_RCVBUF	4096
/* Maps a down connection may hold: one copied when it first tried to
 * leave (the transport said "not now"; it keeps the bits of that moment)
 * and one that takes every later change.
 */
#define MAPS_PER_CONN	2
/* messages the test itself may have live at once besides the maps */
#define OWN_LIVE	2

/* How many IB connections from HOST_ADDR /proc/net/rds/connections
 * lists: each may hold maps of HOST_ADDR.  Earlier tests of the suite
 * leave some (to addresses nobody answers): the bound is per connection.
 */
static int ib_conns_from_host(void)
{
	char line[256], laddr[64], trans[32];
	int n = 0;
	FILE *f;

	f = fopen("/proc/net/rds/connections", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %*s %*s %31s", laddr, trans) == 2 &&
		    !strcmp(laddr, HOST_ADDR) && !strcmp(trans, "infiniband"))
			n++;
	fclose(f);
	return n;
}

TEST(cong_map_merged)
{
	struct sockaddr_in dead = rds_sin(DEAD_PEER, DEAD_PORT), to;
	static unsigned char buf[FLIP_LEN];
	long live0, live, peak = 0;
	int dead_tx, rx, tx, i, rcvbuf, conns;

	ASSERT_LE(0, read_long(LIVE)) TH_LOG("no %s", LIVE);
	dead_tx = ib_bound();
	if (dead_tx < 0)
		SKIP(return, "no IB transport on %s", HOST_ADDR);
	/* The connection HOST_ADDR -> DEAD_PEER: it never comes up. */
	ASSERT_EQ(1, rds_sendto(dead_tx, "x", 1, MSG_DONTWAIT, &dead));

	/* rx on HOST_ADDR too: its port is in the map that goes there. */
	rx = rds_bound(HOST_ADDR, 0);
	tx = rds_bound(HOST_ADDR, 0);
	ASSERT_LE(0, rx);
	ASSERT_LE(0, tx);
	rcvbuf = setbuf_get(rx, SO_RCVBUF, FLIP_RCVBUF);
	ASSERT_LT(0, rcvbuf);
	ASSERT_LT(rcvbuf, FLIP_LEN);
	to = rds_name(rx);
	live0 = read_long(LIVE);

	for (i = 0; i < FLIPS; i++) {
		/* One message above rcvbuf congests the port... */
		ASSERT_EQ(FLIP_LEN, rds_sendto(tx, buf, FLIP_LEN, MSG_DONTWAIT,
					       &to))
			TH_LOG("flip %d: %s", i, strerror(errno));
		/* ...and reading it frees the port again. */
		ASSERT_EQ(FLIP_LEN, rds_recvfrom(rx, buf, FLIP_LEN,
						 MSG_DONTWAIT, NULL))
			TH_LOG("flip %d: %s", i, strerror(errno));
		if (i % 50 == 49) {
			live = read_long(LIVE) - live0;
			if (live > peak)
				peak = live;
		}
	}
	live = read_long(LIVE) - live0;
	if (live > peak)
		peak = live;
	conns = ib_conns_from_host();
	TH_LOG("%d congestion flips: messages_live rose by %ld at most, %ld at the end; %d IB connections from %s",
	       FLIPS, peak, live, conns, HOST_ADDR);
	ASSERT_LE(1, conns);
	/* One map per change would be about FLIPS. */
	EXPECT_LE(peak, MAPS_PER_CONN * conns + OWN_LIVE);
	close(tx);
	close(rx);
	close(dead_tx);
}

TEST(heartbeat_ms_max)
{
	long old = read_long(HEARTBEAT);
	char buf[32];

	if (old < 0)
		SKIP(return, "no %s", HEARTBEAT);
	/* 5 * 10^9 ms does not fit in 32 bits: was taken and wrapped. */
	EXPECT_EQ(EINVAL, write_str(HEARTBEAT, "1000000000"));
	EXPECT_EQ(EINVAL, write_str(HEARTBEAT, "3600001"));
	EXPECT_EQ(old, read_long(HEARTBEAT));
	EXPECT_EQ(0, write_str(HEARTBEAT, "3600000"));
	EXPECT_EQ(3600000, read_long(HEARTBEAT));
	EXPECT_EQ(EINVAL, write_str(HEARTBEAT, "-1"));
	snprintf(buf, sizeof(buf), "%ld", old);
	EXPECT_EQ(0, write_str(HEARTBEAT, buf));
	EXPECT_EQ(old, read_long(HEARTBEAT));
}

TEST(connect_keeps_bound_scope)
{
	struct sockaddr_in6 me, got, ll = rds_sin6("fe80::1", 4999, 0);
	socklen_t len = sizeof(me);
	struct pollfd p;
	char c = 0;
	int a, b, dup;

	ll.sin6_scope_id = if_nametoindex("lo");
	ASSERT_NE(0U, ll.sin6_scope_id);
	me = rds_sin6("::1", 0, 0);
	a = rds_socket();
	b = rds_socket();
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	if (bind(a, (struct sockaddr *)&me, sizeof(me)))
		SKIP(return, "no IPv6 loopback: %s", strerror(errno));
	ASSERT_EQ(0, bind(b, (struct sockaddr *)&me, sizeof(me)));
	ASSERT_EQ(0, getsockname(a, (struct sockaddr *)&me, &len));

	/* A link-local peer: its scope is the peer's, not the binding's. */
	ASSERT_EQ(0, connect(a, (struct sockaddr *)&ll, sizeof(ll)));
	len = sizeof(got);
	ASSERT_EQ(0, getsockname(a, (struct sockaddr *)&got, &len));
	EXPECT_EQ(0U, got.sin6_scope_id);
	len = sizeof(got);
	ASSERT_EQ(0, getpeername(a, (struct sockaddr *)&got, &len));
	EXPECT_EQ(ll.sin6_scope_id, got.sin6_scope_id);

	/* a still owns [::1]:port... */
	dup = rds_socket();
	ASSERT_LE(0, dup);
	EXPECT_EQ(-1, bind(dup, (struct sockaddr *)&me, sizeof(me)));
	EXPECT_EQ(EADDRINUSE, errno);
	close(dup);

	/* ...and what is sent there reaches it. */
	ASSERT_EQ(1, sendto(b, "s", 1, MSG_DONTWAIT, (struct sockaddr *)&me,
			    sizeof(me)));
	p.fd = a;
	p.events = POLLIN;
	EXPECT_EQ(1, poll(&p, 1, 5000));
	EXPECT_EQ(1, recv(a, &c, 1, MSG_DONTWAIT));
	EXPECT_EQ('s', c);
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
