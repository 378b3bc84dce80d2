// SPDX-License-Identifier: GPL-2.0
/*
 * PF_RDS is registered by our module and accepts exactly one socket type.
 */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/rds.h>

#include "rds_harness.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

TEST(seqpacket_ok)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	ASSERT_LE(0, fd) TH_LOG("socket: %s", strerror(errno));
	EXPECT_EQ(0, close(fd));
}

TEST(many_sockets)
{
	int fds[256];
	int i;

	for (i = 0; i < 256; i++) {
		fds[i] = socket(AF_RDS, SOCK_SEQPACKET, 0);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < 256; i++)
		EXPECT_EQ(0, close(fds[i]));
}

TEST(other_types_refused)
{
	static const int types[] = {
		SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_RDM,
	};
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		errno = 0;
		EXPECT_EQ(-1, socket(AF_RDS, types[i], 0));
		EXPECT_EQ(ESOCKTNOSUPPORT, errno) TH_LOG("type %d", types[i]);
	}
}

TEST(nonzero_protocol_refused)
{
	errno = 0;
	EXPECT_EQ(-1, socket(AF_RDS, SOCK_SEQPACKET, 1));
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
}

TEST(flags_accepted)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));
}

TEST_HARNESS_MAIN
