// SPDX-License-Identifier: GPL-2.0
/*
 * sendmsg()/recvmsg() over the loopback transport: payloads byte for byte,
 * message boundaries, sizes, flags, timeouts, signals, poll and ordering.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>

#include "rds_test.h"
#include "rds_harness.h"

FIXTURE(pair)
{
	int a, b;			/* a sends to b */
	struct sockaddr_in aname, bname;
};

FIXTURE_SETUP(pair)
{
	self->a = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, self->a);
	self->b = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, self->b);
	self->aname = rds_name(self->a);
	self->bname = rds_name(self->b);
}

FIXTURE_TEARDOWN(pair)
{
	close(self->a);
	close(self->b);
}

TEST_F(pair, payload_and_name)
{
	unsigned char out[3000], in[4000];
	struct sockaddr_in from;

	rds_fill(out, sizeof(out), 1);
	ASSERT_EQ((ssize_t)sizeof(out), rds_sendto(self->a, out, sizeof(out), 0,
					  &self->bname));
	memset(&from, 0xaa, sizeof(from));
	ASSERT_EQ((ssize_t)sizeof(out), rds_recvfrom(self->b, in, sizeof(in), 0, &from));
	EXPECT_EQ(0, memcmp(in, out, sizeof(out)));
	EXPECT_EQ(AF_INET, from.sin_family);
	EXPECT_EQ(self->aname.sin_port, from.sin_port);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), from.sin_addr.s_addr);
}

TEST_F(pair, boundaries)
{
	static const size_t sizes[] = { 1, 1000, 4096, 4097, 5000, 65536 };
	unsigned char *out = malloc(70000), *in = malloc(70000);
	unsigned int i;

	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	for (i = 0; i < 6; i++) {
		rds_fill(out, sizes[i], i);
		ASSERT_EQ((ssize_t)sizes[i], rds_sendto(self->a, out, sizes[i], 0,
					       &self->bname));
	}
	for (i = 0; i < 6; i++) {
		rds_fill(out, sizes[i], i);
		ASSERT_EQ((ssize_t)sizes[i], rds_recvfrom(self->b, in, 70000, 0, NULL));
		EXPECT_EQ(0, memcmp(in, out, sizes[i])) TH_LOG("msg %u", i);
	}
	EXPECT_EQ(-1, rds_recvfrom(self->b, in, 70000, MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
	free(out);
	free(in);
}

TEST_F(pair, zero_length)
{
	struct sockaddr_in from;
	char c = 'x';

	ASSERT_EQ(0, rds_sendto(self->a, NULL, 0, 0, &self->bname));
	ASSERT_EQ(1, rds_sendto(self->a, &c, 1, 0, &self->bname));
	ASSERT_EQ(0, rds_recvfrom(self->b, &c, 1, 0, &from));
	EXPECT_EQ(self->aname.sin_port, from.sin_port);
	c = 0;
	ASSERT_EQ(1, rds_recvfrom(self->b, &c, 1, 0, NULL));
	EXPECT_EQ('x', c);
}

TEST_F(pair, max_size)
{
	size_t max = 1 << 20;
	unsigned char *out = malloc(max + 1), *in = malloc(max + 1);
	int big = 4 << 20;

	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_SNDBUFFORCE, &big,
				sizeof(big)));
	ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVBUFFORCE, &big,
				sizeof(big)));
	rds_fill(out, max + 1, 7);
	ASSERT_EQ((ssize_t)max, rds_sendto(self->a, out, max, 0, &self->bname));
	ASSERT_EQ((ssize_t)max, rds_recvfrom(self->b, in, max + 1, 0, NULL));
	EXPECT_EQ(0, memcmp(in, out, max));
	EXPECT_EQ(-1, rds_sendto(self->a, out, max + 1, 0, &self->bname));
	EXPECT_EQ(EMSGSIZE, errno);
	free(out);
	free(in);
}

TEST_F(pair, beyond_sndbuf_emsgsize)
{
	int sb = 8192, got = 0;
	socklen_t len = sizeof(got);
	unsigned char buf[8192];

	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_SNDBUF, &sb,
				sizeof(sb)));
	ASSERT_EQ(0, getsockopt(self->a, SOL_SOCKET, SO_SNDBUF, &got, &len));
	/* the kernel doubles it; RDS uses half, i.e. what was asked */
	ASSERT_EQ(2 * sb, got);
	EXPECT_EQ(sb, rds_sendto(self->a, buf, sb, 0, &self->bname));
	EXPECT_EQ(-1, rds_sendto(self->a, buf, sb + 1, 0, &self->bname));
	EXPECT_EQ(EMSGSIZE, errno);
}

TEST_F(pair, peek)
{
	char out[100], in[100];

	rds_fill((unsigned char *)out, sizeof(out), 3);
	ASSERT_EQ(100, rds_sendto(self->a, out, 100, 0, &self->bname));
	memset(in, 0, sizeof(in));
	ASSERT_EQ(100, rds_recvfrom(self->b, in, 100, MSG_PEEK, NULL));
	EXPECT_EQ(0, memcmp(in, out, 100));
	memset(in, 0, sizeof(in));
	ASSERT_EQ(50, rds_recvfrom(self->b, in, 50, MSG_PEEK, NULL));
	EXPECT_EQ(0, memcmp(in, out, 50));
	memset(in, 0, sizeof(in));
	ASSERT_EQ(100, rds_recvfrom(self->b, in, 100, 0, NULL));
	EXPECT_EQ(0, memcmp(in, out, 100));
	EXPECT_EQ(-1, rds_recvfrom(self->b, in, 100, MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(pair, trunc)
{
	char out[100], in[100];
	struct iovec iov = { .iov_base = in, .iov_len = 10 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	rds_fill((unsigned char *)out, sizeof(out), 4);
	ASSERT_EQ(100, rds_sendto(self->a, out, 100, 0, &self->bname));
	ASSERT_EQ(100, rds_sendto(self->a, out, 100, 0, &self->bname));

	/* without MSG_TRUNC: the copied length, and the flag */
	ASSERT_EQ(10, recvmsg(self->b, &msg, 0));
	EXPECT_TRUE(msg.msg_flags & MSG_TRUNC);
	EXPECT_EQ(0, memcmp(in, out, 10));

	/* with MSG_TRUNC: the real length */
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	ASSERT_EQ(100, recvmsg(self->b, &msg, MSG_TRUNC));
	EXPECT_TRUE(msg.msg_flags & MSG_TRUNC);
	EXPECT_EQ(0, memcmp(in, out, 10));

	/* both were consumed */
	EXPECT_EQ(-1, rds_recvfrom(self->b, in, 100, MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(pair, rcvtimeo_etimedout)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	char c;

	ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	EXPECT_EQ(-1, rds_recvfrom(self->b, &c, 1, 0, NULL));
	EXPECT_EQ(ETIMEDOUT, errno);
}

static void on_alarm(int sig)
{
}

TEST_F(pair, signal_interrupts_recv)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	char c;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	alarm(1);
	EXPECT_EQ(-1, rds_recvfrom(self->b, &c, 1, 0, NULL));
	EXPECT_EQ(EINTR, errno);
	alarm(0);
}

TEST_F(pair, ordering)
{
	enum { N = 2000 };
	unsigned int i, v;

	for (i = 0; i < N; i++) {
		ASSERT_EQ((ssize_t)sizeof(i), rds_sendto(self->a, &i, sizeof(i), 0,
						&self->bname));
		/* keep well under the receive buffer */
		if (i % 100 == 99) {
			unsigned int j;

			for (j = i - 99; j <= i; j++) {
				ASSERT_EQ((ssize_t)sizeof(v),
					  rds_recvfrom(self->b, &v, sizeof(v),
						       0, NULL));
				ASSERT_EQ(j, v);
			}
		}
	}
}

TEST_F(pair, poll_in_out)
{
	struct pollfd p = { .fd = self->b, .events = POLLIN | POLLOUT };
	char c = 1;

	ASSERT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLOUT, p.revents & (POLLIN | POLLOUT));
	ASSERT_EQ(1, rds_sendto(self->a, &c, 1, 0, &self->bname));
	ASSERT_EQ(1, poll(&p, 1, 1000));
	EXPECT_EQ(POLLIN | POLLOUT, p.revents & (POLLIN | POLLOUT));
	ASSERT_EQ(1, rds_recvfrom(self->b, &c, 1, 0, NULL));
	ASSERT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLOUT, p.revents & (POLLIN | POLLOUT));
}

TEST_F(pair, connected_send)
{
	char c = 'q';

	ASSERT_EQ(0, connect(self->a, (struct sockaddr *)&self->bname,
			     sizeof(self->bname)));
	ASSERT_EQ(1, send(self->a, &c, 1, 0));
	c = 0;
	ASSERT_EQ(1, recv(self->b, &c, 1, 0));
	EXPECT_EQ('q', c);
}

TEST_F(pair, bad_flags_eopnotsupp)
{
	char c = 0;

	EXPECT_EQ(-1, rds_sendto(self->a, &c, 1, MSG_OOB, &self->bname));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-1, rds_sendto(self->a, &c, 1, MSG_MORE, &self->bname));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

TEST_F(pair, no_listener_is_dropped)
{
	struct sockaddr_in nobody = rds_sin("127.0.0.1", 4999);
	char c = 0;

	ASSERT_EQ(1, rds_sendto(self->a, &c, 1, 0, &nobody));
}

TEST(unbound_enotconn)
{
	struct sockaddr_in to = rds_sin("127.0.0.1", 4100);
	int fd = rds_socket();
	char c = 0;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, rds_sendto(fd, &c, 1, 0, &to));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
	fd = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, fd);
	/* bound but no destination */
	EXPECT_EQ(-1, send(fd, &c, 1, 0));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
}

TEST(bad_names)
{
	struct sockaddr_in to = rds_sin("127.0.0.1", 4101);
	struct sockaddr_in6 to6 = rds_sin6("::1", 4101, 0);
	int fd = rds_bound("127.0.0.1", 0);
	char c = 0;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, sendto(fd, &c, 1, 0, (struct sockaddr *)&to, 4));
	EXPECT_EQ(EINVAL, errno);
	to.sin_family = AF_UNIX;
	EXPECT_EQ(-1, rds_sendto(fd, &c, 1, 0, &to));
	EXPECT_EQ(EINVAL, errno);
	to = rds_sin("255.255.255.255", 4101);
	EXPECT_EQ(-1, rds_sendto(fd, &c, 1, 0, &to));
	EXPECT_EQ(EINVAL, errno);
	/* v4 source, v6 destination */
	EXPECT_EQ(-1, sendto(fd, &c, 1, 0, (struct sockaddr *)&to6,
			     sizeof(to6)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-1, sendto(fd, &c, 1, 0, (struct sockaddr *)&to6,
			     sizeof(to6) - 1));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(ipv6_loopback)
{
	struct sockaddr_in6 an = rds_sin6("::1", 4102, 0);
	struct sockaddr_in6 bn = rds_sin6("::1", 4103, 0), from;
	socklen_t fl = sizeof(from);
	int a = rds_socket(), b = rds_socket();
	char out[200], in[200];

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, bind(a, (struct sockaddr *)&an, sizeof(an)));
	ASSERT_EQ(0, bind(b, (struct sockaddr *)&bn, sizeof(bn)));
	rds_fill((unsigned char *)out, sizeof(out), 9);
	ASSERT_EQ(200, sendto(a, out, 200, 0, (struct sockaddr *)&bn,
			      sizeof(bn)));
	ASSERT_EQ(200, recvfrom(b, in, 200, 0, (struct sockaddr *)&from, &fl));
	EXPECT_EQ(0, memcmp(in, out, 200));
	EXPECT_EQ(sizeof(from), fl);
	EXPECT_EQ(AF_INET6, from.sin6_family);
	EXPECT_EQ(htons(4102), from.sin6_port);
	EXPECT_EQ(0, memcmp(&from.sin6_addr, &in6addr_loopback, 16));
	close(a);
	close(b);
}

TEST(loopback_to_host_address)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound(HOST_ADDR, 4104);
	struct sockaddr_in to = rds_sin(HOST_ADDR, 4104), from;
	struct sockaddr_in back;
	char c = 'h';

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(1, rds_sendto(a, &c, 1, 0, &to));
	c = 0;
	ASSERT_EQ(1, rds_recvfrom(b, &c, 1, 0, &from));
	EXPECT_EQ('h', c);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), from.sin_addr.s_addr);
	EXPECT_EQ(rds_name(a).sin_port, from.sin_port);
	/* and the answer finds its way back */
	back = from;
	ASSERT_EQ(1, rds_sendto(b, &c, 1, 0, &back));
	c = 0;
	ASSERT_EQ(1, rds_recvfrom(a, &c, 1, 0, &from));
	EXPECT_EQ('h', c);
	EXPECT_EQ(inet_addr(HOST_ADDR), from.sin_addr.s_addr);
	close(a);
	close(b);
}

TEST(v4_mapped_endpoints)
{
	struct sockaddr_in6 an = rds_sin6("::ffff:127.0.0.1", 4105, 0);
	struct sockaddr_in6 bn = rds_sin6("::ffff:127.0.0.1", 4106, 0);
	struct sockaddr_in from;
	int a = rds_socket(), b = rds_bound("127.0.0.1", 4106);
	char c = 'm';

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, bind(a, (struct sockaddr *)&an, sizeof(an)));
	/* a v4-mapped destination is an IPv4 destination */
	ASSERT_EQ(1, sendto(a, &c, 1, 0, (struct sockaddr *)&bn, sizeof(bn)));
	c = 0;
	ASSERT_EQ(1, rds_recvfrom(b, &c, 1, 0, &from));
	EXPECT_EQ('m', c);
	EXPECT_EQ(AF_INET, from.sin_family);
	EXPECT_EQ(htons(4105), from.sin_port);
	close(a);
	close(b);
}

/* Interleaved sends to several destinations keep order per destination. */
TEST(ordering_per_destination)
{
	enum { D = 4, N = 300 };
	int a = rds_bound("127.0.0.1", 0), b[D], i, d;
	struct sockaddr_in bn[D];
	static const char *const addrs[D] = {
		"127.0.0.1", "127.0.0.2", "127.0.0.3", HOST_ADDR,
	};
	unsigned int v;

	ASSERT_LE(0, a);
	for (d = 0; d < D; d++) {
		b[d] = rds_bound(addrs[d], 0);
		ASSERT_LE(0, b[d]);
		bn[d] = rds_name(b[d]);
	}
	for (i = 0; i < N; i++)
		for (d = 0; d < D; d++) {
			v = i * D + d;
			ASSERT_EQ((ssize_t)sizeof(v),
				  rds_sendto(a, &v, sizeof(v), 0, &bn[d]));
		}
	for (d = 0; d < D; d++) {
		for (i = 0; i < N; i++) {
			ASSERT_EQ((ssize_t)sizeof(v),
				  rds_recvfrom(b[d], &v, sizeof(v), 0, NULL));
			ASSERT_EQ((unsigned int)(i * D + d), v);
		}
		close(b[d]);
	}
	close(a);
}

TEST(send_to_self)
{
	int a = rds_bound("127.0.0.1", 0);
	struct sockaddr_in me;
	char c = 's';

	ASSERT_LE(0, a);
	me = rds_name(a);
	ASSERT_EQ(1, rds_sendto(a, &c, 1, 0, &me));
	c = 0;
	ASSERT_EQ(1, rds_recvfrom(a, &c, 1, 0, NULL));
	EXPECT_EQ('s', c);
	close(a);
}

/* Queued data is freed when the receiver closes without reading. */
TEST(close_with_queued_data)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct sockaddr_in bn;
	char buf[1000] = { 0 };
	int i;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	for (i = 0; i < 50; i++)
		ASSERT_EQ(1000, rds_sendto(a, buf, 1000, 0, &bn));
	close(b);
	close(a);
}

TEST_HARNESS_MAIN
