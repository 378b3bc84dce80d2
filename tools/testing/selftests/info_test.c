// SPDX-License-Identifier: GPL-2.0
/*
 * getsockopt(SOL_RDS, RDS_INFO_*): the probe convention and the contents
 * of the counter, socket, connection and message snapshots.
 */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "rds_test.h"
#include "rds_harness.h"

static uint64_t counter(int fd, const char *name)
{
	struct rds_info_counter *c;
	socklen_t len;
	void *buf;
	uint64_t v = ~0ULL;
	unsigned int i;

	if (rds_info_get(fd, RDS_INFO_COUNTERS, &buf, &len) != sizeof(*c))
		return v;
	c = buf;
	for (i = 0; i < len / sizeof(*c); i++)
		if (!strcmp((char *)c[i].name, name))
			v = c[i].value;
	free(buf);
	return v;
}

TEST(counters_probe)
{
	int fd = rds_socket();
	socklen_t len = 0, total;
	char *buf;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, NULL, &len));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_LT(0, (int)len);
	EXPECT_EQ(0U, len % 40);
	total = len;

	buf = malloc(total + 3);
	ASSERT_NE(NULL, buf);
	/* one item too small */
	len = 40;
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(total, len);
	/* exact, and unaligned larger */
	len = total;
	EXPECT_EQ(40, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len));
	EXPECT_EQ(total, len);
	len = total + 3;
	EXPECT_EQ(40, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len));
	EXPECT_EQ(total, len);
	EXPECT_STREQ("conn_reset", buf);
	free(buf);
	close(fd);
}

TEST(counters_count)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct sockaddr_in bn;
	uint64_t before, after;
	char c = 0;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	before = counter(a, "recv_delivered");
	ASSERT_NE(~0ULL, before);
	ASSERT_EQ(1, rds_sendto(a, &c, 1, 0, &bn));
	ASSERT_EQ(1, rds_recvfrom(b, &c, 1, 0, NULL));
	after = counter(a, "recv_delivered");
	EXPECT_LE(before + 1, after);
	close(a);
	close(b);
}

TEST(bad_lengths)
{
	int fd = rds_socket();
	socklen_t len = -1;
	char buf[64];

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len));
	EXPECT_EQ(EINVAL, errno);
	/* a kernel address: mainline fails to pin it, EAGAIN */
	len = 4096;
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS,
				 (void *)0xffffffff81000000UL, &len));
	EXPECT_EQ(EAGAIN, errno);
	len = 4096;
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, (void *)8,
				 &len));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf,
				 (socklen_t *)8));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

TEST(no_handler)
{
	static const int types[] = { 10002, RDS_INFO_TCP_SOCKETS,
		RDS_INFO_IB_CONNECTIONS, RDS_INFO_CONNECTION_STATS,
		RDS_INFO_IWARP_CONNECTIONS, RDS6_INFO_TCP_SOCKETS,
		RDS6_INFO_IB_CONNECTIONS };
	int fd = rds_socket();
	unsigned int i;
	socklen_t len;

	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		len = 0;
		EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, types[i], NULL, &len));
		EXPECT_EQ(ENOPROTOOPT, errno) TH_LOG("type %d", types[i]);
	}
	close(fd);
}

TEST(empty_send_queue)
{
	int fd = rds_socket();
	socklen_t len = 0;

	ASSERT_LE(0, fd);
	/* loopback acks on delivery: nothing waits for an ack */
	EXPECT_EQ(26, getsockopt(fd, SOL_RDS, RDS_INFO_SEND_MESSAGES, NULL,
				 &len));
	EXPECT_EQ(0U, len);
	EXPECT_EQ(50, getsockopt(fd, SOL_RDS, RDS6_INFO_RETRANS_MESSAGES, NULL,
				 &len));
	EXPECT_EQ(0U, len);
	close(fd);
}

TEST(sockets)
{
	struct sockaddr_in to = rds_sin("127.0.0.9", 4301);
	struct sockaddr_in6 six = rds_sin6("::1", 4302, 0);
	int fd = rds_bound("127.0.0.1", 4300), fd6 = rds_socket();
	struct rds_info_socket *s;
	struct rds6_info_socket *s6;
	int found = 0, found6 = 0, v4_in_v6 = 0;
	struct stat st;
	socklen_t len;
	unsigned int i;
	void *buf;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd6);
	ASSERT_EQ(0, bind(fd6, (struct sockaddr *)&six, sizeof(six)));
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&to, sizeof(to)));
	ASSERT_EQ(0, fstat(fd, &st));

	ASSERT_EQ((int)sizeof(*s), rds_info_get(fd, RDS_INFO_SOCKETS, &buf, &len));
	s = buf;
	for (i = 0; i < len / sizeof(*s); i++) {
		EXPECT_NE(0U, s[i].bound_addr);	/* v4-bound only */
		if (s[i].bound_port != htons(4300))
			continue;
		found++;
		EXPECT_EQ(htonl(INADDR_LOOPBACK), s[i].bound_addr);
		EXPECT_EQ(inet_addr("127.0.0.9"), s[i].connected_addr);
		EXPECT_EQ(htons(4301), s[i].connected_port);
		EXPECT_EQ(106496U, s[i].sndbuf);
		EXPECT_EQ(st.st_ino, s[i].inum);
	}
	EXPECT_EQ(1, found);
	free(buf);

	ASSERT_EQ((int)sizeof(*s6), rds_info_get(fd, RDS6_INFO_SOCKETS, &buf, &len));
	s6 = buf;
	for (i = 0; i < len / sizeof(*s6); i++) {
		if (s6[i].bound_port == htons(4302)) {
			found6++;
			EXPECT_EQ(0, memcmp(&s6[i].bound_addr,
					    &in6addr_loopback, 16));
		}
		if (s6[i].bound_port == htons(4300))
			v4_in_v6++;
	}
	EXPECT_EQ(1, found6);
	EXPECT_EQ(1, v4_in_v6);
	free(buf);
	close(fd);
	close(fd6);
}

TEST(connections)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.7", 0);
	unsigned char tos = 5;
	struct rds_info_connection *c;
	struct sockaddr_in bn;
	socklen_t len;
	unsigned int i;
	int found = 0;
	void *buf;
	char x = 0;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	ASSERT_EQ(0, ioctl(a, SIOCRDSSETTOS, &tos));
	ASSERT_EQ(1, rds_sendto(a, &x, 1, 0, &bn));
	ASSERT_EQ(1, rds_sendto(a, &x, 1, 0, &bn));

	ASSERT_EQ((int)sizeof(*c), rds_info_get(a, RDS_INFO_CONNECTIONS, &buf, &len));
	c = buf;
	for (i = 0; i < len / sizeof(*c); i++) {
		if (c[i].laddr != htonl(INADDR_LOOPBACK) ||
		    c[i].faddr != inet_addr("127.0.0.7") || c[i].tos != 5)
			continue;
		found++;
		EXPECT_STREQ("loopback", (char *)c[i].transport);
		EXPECT_EQ(RDS_INFO_CONNECTION_FLAG_CONNECTED, c[i].flags);
		EXPECT_EQ(3U, c[i].next_tx_seq);
	}
	EXPECT_EQ(1, found);
	free(buf);
	ASSERT_EQ(65, rds_info_get(a, RDS6_INFO_CONNECTIONS, &buf, &len));
	EXPECT_LE(65U, len);
	free(buf);
	close(a);
	close(b);
}

TEST(recv_messages)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct sockaddr_in an, bn;
	struct rds_info_message *m;
	char out[300] = { 0 };
	socklen_t len;
	unsigned int i;
	int found = 0;
	void *buf;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	an = rds_name(a);
	bn = rds_name(b);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(100 * (i + 1), rds_sendto(a, out, 100 * (i + 1), 0,
						    &bn));

	ASSERT_EQ((int)sizeof(*m), rds_info_get(a, RDS_INFO_RECV_MESSAGES, &buf, &len));
	m = buf;
	for (i = 0; i < len / sizeof(*m); i++) {
		if (m[i].lport != bn.sin_port)
			continue;
		EXPECT_EQ(100U * (found + 1), m[i].len);
		EXPECT_EQ(an.sin_port, m[i].fport);
		EXPECT_EQ(htonl(INADDR_LOOPBACK), m[i].laddr);
		EXPECT_EQ(htonl(INADDR_LOOPBACK), m[i].faddr);
		found++;
	}
	EXPECT_EQ(3, found);
	free(buf);

	for (i = 0; i < 3; i++)
		ASSERT_LT(0, rds_recvfrom(b, out, sizeof(out), 0, NULL));
	ASSERT_EQ((int)sizeof(*m), rds_info_get(a, RDS_INFO_RECV_MESSAGES, &buf, &len));
	m = buf;
	for (i = 0; i < len / sizeof(*m); i++)
		EXPECT_NE(bn.sin_port, m[i].lport);
	free(buf);
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
