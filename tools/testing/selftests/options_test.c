// SPDX-License-Identifier: GPL-2.0
/*
 * AF_RDS socket options, ioctls and congestion handling on one host.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#include "rds_test.h"
#include "rds_harness.h"

#ifndef SO_TIMESTAMP_OLD
#define SO_TIMESTAMP_OLD 29
#endif

static int geti(int fd, int opt, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(fd, SOL_RDS, opt, val, &len);
}

static int seti(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val));
}

TEST(recverr)
{
	int fd = rds_socket(), v = -1;
	socklen_t len = 2;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, geti(fd, RDS_RECVERR, &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, seti(fd, SOL_RDS, RDS_RECVERR, 5));
	ASSERT_EQ(0, geti(fd, RDS_RECVERR, &v));
	EXPECT_EQ(1, v);
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_RECVERR, &v, &len));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(fd, SOL_RDS, RDS_RECVERR, &v, 2));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(transport_option)
{
	int fd = rds_socket(), v = 0;
	int bad = 2;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, geti(fd, SO_RDS_TRANSPORT, &v));
	EXPECT_EQ(-1, v);		/* RDS_TRANS_NONE */
	EXPECT_EQ(-1, seti(fd, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_TCP));
	EXPECT_EQ(ENOPROTOOPT, errno);
	EXPECT_EQ(-1, seti(fd, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_GAP));
	EXPECT_EQ(ENOPROTOOPT, errno);
	EXPECT_EQ(-1, seti(fd, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_COUNT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, seti(fd, SOL_RDS, SO_RDS_TRANSPORT, -1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &bad, 2));
	EXPECT_EQ(EINVAL, errno);
	close(fd);

	fd = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, geti(fd, SO_RDS_TRANSPORT, &v));
	EXPECT_EQ(RDS_TRANS_LOOP, v);
	EXPECT_EQ(-1, seti(fd, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_TCP));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(fd);
}

TEST(unknown_options)
{
	int fd = rds_socket(), v = 1;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, seti(fd, SOL_IP, RDS_RECVERR, 1));
	EXPECT_EQ(ENOPROTOOPT, errno);
	EXPECT_EQ(-1, seti(fd, SOL_RDS, 4, 1));		/* RDS_BARRIER */
	EXPECT_EQ(ENOPROTOOPT, errno);
	EXPECT_EQ(-1, seti(fd, SOL_RDS, 9999, 1));
	EXPECT_EQ(ENOPROTOOPT, errno);
	EXPECT_EQ(-1, geti(fd, RDS_CONG_MONITOR, &v));
	EXPECT_EQ(ENOPROTOOPT, errno);
	close(fd);
}

TEST(timestamp)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct sockaddr_in bn;
	char c = 1, cbuf[256];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct timeval now, *tv = NULL;
	struct cmsghdr *cm;
	int one = 1;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	EXPECT_EQ(-1, setsockopt(b, SOL_RDS, SO_TIMESTAMP_OLD, &one, 2));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, seti(b, SOL_RDS, SO_TIMESTAMP_OLD, 1));

	ASSERT_EQ(1, rds_sendto(a, &c, 1, 0, &bn));
	ASSERT_EQ(1, recvmsg(b, &msg, 0));
	gettimeofday(&now, NULL);
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SO_TIMESTAMP_OLD)
			tv = (struct timeval *)CMSG_DATA(cm);
	ASSERT_NE(NULL, tv);
	EXPECT_LE(labs(now.tv_sec - tv->tv_sec), 2);

	/* off again: no cmsg */
	ASSERT_EQ(0, seti(b, SOL_RDS, SO_TIMESTAMP_OLD, 0));
	ASSERT_EQ(1, rds_sendto(a, &c, 1, 0, &bn));
	msg.msg_controllen = sizeof(cbuf);
	ASSERT_EQ(1, recvmsg(b, &msg, 0));
	EXPECT_EQ((size_t)0, msg.msg_controllen);
	close(a);
	close(b);
}

TEST(timestamp_new)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct sockaddr_in bn;
	char c = 1, cbuf[256];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int64_t sec = 0, usec = -1;
	struct timeval now;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	ASSERT_EQ(0, seti(b, SOL_RDS, 63 /* SO_TIMESTAMP_NEW */, 1));
	ASSERT_EQ(1, rds_sendto(a, &c, 1, 0, &bn));
	ASSERT_EQ(1, recvmsg(b, &msg, 0));
	gettimeofday(&now, NULL);
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == 63) {
			ASSERT_EQ(CMSG_LEN(16), cm->cmsg_len);
			memcpy(&sec, CMSG_DATA(cm), 8);
			memcpy(&usec, CMSG_DATA(cm) + 8, 8);
		}
	}
	EXPECT_LE(llabs(now.tv_sec - sec), 2);
	EXPECT_LE(0, usec);
	EXPECT_GT(1000000, usec);
	close(a);
	close(b);
}

TEST(rxpath_latency)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct rds_rx_trace_so so = { .rx_traces = 2, .rx_trace_pos = { 0, 1 } };
	struct rds_cmsg_rx_trace *t = NULL;
	struct sockaddr_in bn;
	char c = 1, cbuf[256];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	EXPECT_EQ(-1, setsockopt(b, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &so, 3));
	EXPECT_EQ(EFAULT, errno);
	so.rx_traces = 4;
	EXPECT_EQ(-1, setsockopt(b, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &so,
				 sizeof(so)));
	EXPECT_EQ(EFAULT, errno);
	so.rx_traces = 1;
	so.rx_trace_pos[0] = 3;		/* CVE-2024-23849 */
	EXPECT_EQ(-1, setsockopt(b, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &so,
				 sizeof(so)));
	EXPECT_EQ(EFAULT, errno);
	so.rx_traces = 2;
	so.rx_trace_pos[0] = 0;
	so.rx_trace_pos[1] = 1;
	ASSERT_EQ(0, setsockopt(b, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &so,
				sizeof(so)));

	ASSERT_EQ(1, rds_sendto(a, &c, 1, 0, &bn));
	ASSERT_EQ(1, recvmsg(b, &msg, 0));
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_RDS &&
		    cm->cmsg_type == RDS_CMSG_RXPATH_LATENCY)
			t = (struct rds_cmsg_rx_trace *)CMSG_DATA(cm);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(2, t->rx_traces);
	EXPECT_EQ(0, t->rx_trace_pos[0]);
	EXPECT_EQ(1, t->rx_trace_pos[1]);
	EXPECT_EQ(0, t->rx_trace_pos[2]);
	close(a);
	close(b);
}

TEST(tos_ioctl)
{
	int fd = rds_socket(), peer;
	unsigned char tos = 3, got = 0xff;
	struct sockaddr_in pn;

	ASSERT_LE(0, fd);
	/* unbound: no transport to map the TOS */
	EXPECT_EQ(-1, ioctl(fd, SIOCRDSSETTOS, &tos));
	EXPECT_EQ(ENOTTY, errno);
	ASSERT_EQ(0, ioctl(fd, SIOCRDSGETTOS, &got));
	EXPECT_EQ(0, got);
	close(fd);

	fd = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, SIOCRDSSETTOS, &tos));
	ASSERT_EQ(0, ioctl(fd, SIOCRDSGETTOS, &got));
	EXPECT_EQ(3, got);
	tos = 4;
	EXPECT_EQ(-1, ioctl(fd, SIOCRDSSETTOS, &tos));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, SIOCRDSGETTOS, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	close(fd);

	/* once a connection is cached the TOS is fixed */
	fd = rds_bound("127.0.0.1", 0);
	peer = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, peer);
	pn = rds_name(peer);
	ASSERT_EQ(1, rds_sendto(fd, &tos, 1, 0, &pn));
	EXPECT_EQ(-1, ioctl(fd, SIOCRDSSETTOS, &tos));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
	close(peer);
}

TEST(cancel_sent_to)
{
	struct sockaddr_in to = rds_sin("127.0.0.1", 4200);
	struct sockaddr_in6 to6 = rds_sin6("::ffff:127.0.0.1", 4200, 0);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				 sizeof(to)));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
	fd = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to, 8));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				sizeof(to)));
	EXPECT_EQ(0, setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to6,
				sizeof(to6)));
	EXPECT_EQ(-1, setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, (void *)8,
				 sizeof(to)));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

/* A receiver with a 4 KiB receive buffer and a sender to it. */
FIXTURE(cong)
{
	int a, b;
	struct sockaddr_in an, bn;
};

FIXTURE_SETUP(cong)
{
	self->a = rds_bound("127.0.0.1", 0);
	self->b = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, self->a);
	ASSERT_LE(0, self->b);
	ASSERT_EQ(0, seti(self->b, SOL_SOCKET, SO_RCVBUF, 4096));
	self->an = rds_name(self->a);
	self->bn = rds_name(self->b);
}

FIXTURE_TEARDOWN(cong)
{
	close(self->a);
	close(self->b);
}

/* Send 1000-byte messages until refused; returns how many went. */
static int fill(int a, const struct sockaddr_in *to, int *err)
{
	char buf[1000] = { 0 };
	int n;

	for (n = 0; n < 100; n++) {
		if (rds_sendto(a, buf, sizeof(buf), MSG_DONTWAIT, to) < 0) {
			*err = errno;
			return n;
		}
	}
	*err = 0;
	return n;
}

TEST_F(cong, enobufs_and_update)
{
	char cbuf[128], c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct pollfd p = { .fd = self->a, .events = POLLIN };
	char buf[1000];
	struct cmsghdr *cm;
	uint64_t mask = 0;
	int err, n, i;

	ASSERT_EQ(0, seti(self->a, SOL_RDS, RDS_CONG_MONITOR, 1));
	n = fill(self->a, &self->bn, &err);
	/* congested once more than rcvbuf (4096) is queued: 5 fit */
	EXPECT_EQ(5, n);
	EXPECT_EQ(ENOBUFS, err);
	/* nothing to report yet */
	EXPECT_EQ(0, poll(&p, 1, 0));

	/* drain below rcvbuf/2 */
	for (i = 0; i < n; i++)
		ASSERT_EQ(1000, rds_recvfrom(self->b, buf, sizeof(buf), 0,
					     NULL));
	ASSERT_EQ(1, poll(&p, 1, 1000));
	EXPECT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(0, recvmsg(self->a, &msg, MSG_DONTWAIT));
	cm = CMSG_FIRSTHDR(&msg);
	ASSERT_NE(NULL, cm);
	EXPECT_EQ(SOL_RDS, cm->cmsg_level);
	EXPECT_EQ(RDS_CMSG_CONG_UPDATE, cm->cmsg_type);
	memcpy(&mask, CMSG_DATA(cm), sizeof(mask));
	EXPECT_EQ(RDS_CONG_MONITOR_MASK(ntohs(self->bn.sin_port)), mask);
	/* reported once */
	EXPECT_EQ(-1, recvmsg(self->a, &msg, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	/* and sending works again */
	EXPECT_EQ(1000, rds_sendto(self->a, buf, 1000, 0, &self->bn));
}

TEST_F(cong, blocking_sndtimeo)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	char buf[1000] = { 0 };
	int err;

	fill(self->a, &self->bn, &err);
	ASSERT_EQ(ENOBUFS, err);
	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_SNDTIMEO, &tv,
				sizeof(tv)));
	EXPECT_EQ(-1, rds_sendto(self->a, buf, 1000, 0, &self->bn));
	EXPECT_EQ(ETIMEDOUT, errno);
	/* other ports are not congested */
	EXPECT_EQ(1000, rds_sendto(self->a, buf, 1000, MSG_DONTWAIT,
				   &self->an));
}

struct drainer {
	int fd;
	int n;
};

static void *drain(void *arg)
{
	struct drainer *d = arg;
	char buf[1000];
	int i;

	usleep(200000);
	for (i = 0; i < d->n; i++)
		if (rds_recvfrom(d->fd, buf, sizeof(buf), 0, NULL) < 0)
			break;
	return NULL;
}

TEST_F(cong, blocked_sender_released)
{
	struct drainer d = { .fd = self->b };
	char buf[1000] = { 0 };
	pthread_t th;
	int err;

	d.n = fill(self->a, &self->bn, &err);
	ASSERT_EQ(ENOBUFS, err);
	ASSERT_EQ(0, pthread_create(&th, NULL, drain, &d));
	/* blocks until the drainer frees the port */
	EXPECT_EQ(1000, rds_sendto(self->a, buf, 1000, 0, &self->bn));
	pthread_join(th, NULL);
	EXPECT_EQ(1000, rds_recvfrom(self->b, buf, sizeof(buf), 0, NULL));
}

static void on_alarm(int sig)
{
}

TEST_F(cong, signal_interrupts_blocked_send)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	char buf[1000] = { 0 };
	int err;

	fill(self->a, &self->bn, &err);
	ASSERT_EQ(ENOBUFS, err);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	alarm(1);
	EXPECT_EQ(-1, rds_sendto(self->a, buf, 1000, 0, &self->bn));
	EXPECT_EQ(EINTR, errno);
	alarm(0);
}

TEST_F(cong, close_uncongests)
{
	char buf[1000] = { 0 };
	int err, b2;

	fill(self->a, &self->bn, &err);
	ASSERT_EQ(ENOBUFS, err);
	close(self->b);
	/* rebinding the port starts uncongested */
	b2 = rds_bound("127.0.0.1", ntohs(self->bn.sin_port));
	ASSERT_LE(0, b2);
	EXPECT_EQ(1000, rds_sendto(self->a, buf, 1000, MSG_DONTWAIT,
				   &self->bn));
	self->b = b2;
}

TEST_HARNESS_MAIN
