// SPDX-License-Identifier: GPL-2.0
/*
 * rds-ping: a message to port 0 is answered by the kernel from port 0
 * while net.rds.ping_enable is 1; the net.rds.* sysctls exist.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "rds_test.h"
#include "rds_harness.h"

static long sysctl_get(const char *name)
{
	char path[128], buf[64] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/rds/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) <= 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return strtol(buf, NULL, 10);
}

static int sysctl_set(const char *name, const char *val)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/sys/net/rds/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

TEST(sysctls)
{
	EXPECT_EQ(1, sysctl_get("ping_enable"));
	EXPECT_EQ(8, sysctl_get("max_unacked_packets"));
	EXPECT_EQ(16 << 20, sysctl_get("max_unacked_bytes"));
	EXPECT_EQ(1000, sysctl_get("reconnect_max_delay_ms"));
	EXPECT_LE(0, sysctl_get("reconnect_min_delay_ms"));
	EXPECT_EQ(-1, sysctl_set("ping_enable", "2"));
	EXPECT_EQ(1, sysctl_get("ping_enable"));
}

static void ping_once(struct __test_metadata *_metadata, const char *src,
		      const char *dst)
{
	struct sockaddr_in to = rds_sin(dst, 0), from;
	int fd = rds_bound(src, 0);
	char buf[16];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rds_sendto(fd, NULL, 0, 0, &to));
	memset(&from, 0xaa, sizeof(from));
	ASSERT_EQ(0, rds_recvfrom(fd, buf, sizeof(buf), 0, &from));
	EXPECT_EQ(AF_INET, from.sin_family);
	EXPECT_EQ(0, from.sin_port);
	EXPECT_EQ(inet_addr(dst), from.sin_addr.s_addr);
	close(fd);
}

TEST(ping_loopback)
{
	ping_once(_metadata, "127.0.0.1", "127.0.0.1");
}

TEST(ping_other_loopback_address)
{
	ping_once(_metadata, "127.0.0.1", "127.0.0.2");
}

TEST(ping_host_address)
{
	ping_once(_metadata, "127.0.0.1", HOST_ADDR);
	ping_once(_metadata, HOST_ADDR, HOST_ADDR);
}

TEST(ping_v6)
{
	struct sockaddr_in6 me = rds_sin6("::1", 0, 0), to = me, from;
	socklen_t fl = sizeof(from);
	int fd = rds_socket();
	char buf[4];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&me, sizeof(me)));
	ASSERT_EQ(0, sendto(fd, NULL, 0, 0, (struct sockaddr *)&to,
			    sizeof(to)));
	ASSERT_EQ(0, recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			      &fl));
	EXPECT_EQ(AF_INET6, from.sin6_family);
	EXPECT_EQ(0, from.sin6_port);
	close(fd);
}

TEST(many_pings_in_order)
{
	struct sockaddr_in to = rds_sin("127.0.0.1", 0);
	int fd = rds_bound("127.0.0.1", 0), i;
	char buf[4];

	ASSERT_LE(0, fd);
	for (i = 0; i < 200; i++)
		ASSERT_EQ(0, rds_sendto(fd, NULL, 0, 0, &to));
	for (i = 0; i < 200; i++)
		ASSERT_EQ(0, rds_recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
					  NULL));
	EXPECT_EQ(-1, rds_recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
	close(fd);
}

TEST(ping_disabled)
{
	struct sockaddr_in to = rds_sin("127.0.0.1", 0);
	int fd = rds_bound("127.0.0.1", 0);
	char buf[4];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sysctl_set("ping_enable", "0"));
	ASSERT_EQ(0, rds_sendto(fd, NULL, 0, 0, &to));
	usleep(100000);
	EXPECT_EQ(-1, rds_recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, sysctl_set("ping_enable", "1"));
	ASSERT_EQ(0, rds_sendto(fd, NULL, 0, 0, &to));
	ASSERT_EQ(0, rds_recvfrom(fd, buf, sizeof(buf), 0, NULL));
	close(fd);
}

TEST_HARNESS_MAIN
