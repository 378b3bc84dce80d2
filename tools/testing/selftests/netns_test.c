// SPDX-License-Identifier: GPL-2.0
/*
 * Network namespaces: bindings, deliveries and RDS_INFO snapshots are per
 * namespace, and a namespace with RDS connections can go away.
 */
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "rds_test.h"
#include "rds_harness.h"

static int socket_count(int fd, int type, size_t each)
{
	socklen_t len = 0;

	if (getsockopt(fd, SOL_RDS, type, NULL, &len) == -1 && errno != ENOSPC)
		return -1;
	return len / each;
}

TEST(bindings_are_per_netns)
{
	int outer = rds_bound("127.0.0.1", 4700), inner, inner2;
	struct sockaddr_in to = rds_sin("127.0.0.1", 4700);
	char c = 'n';

	ASSERT_LE(0, outer);
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	/* the same address and port is free in the new namespace */
	inner = rds_bound("127.0.0.1", 4700);
	ASSERT_LE(0, inner) TH_LOG("bind: %s", strerror(errno));
	inner2 = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, inner2);

	/* a message sent inside reaches the inner socket only */
	ASSERT_EQ(1, rds_sendto(inner2, &c, 1, 0, &to));
	c = 0;
	ASSERT_EQ(1, rds_recvfrom(inner, &c, 1, 0, NULL));
	EXPECT_EQ('n', c);
	EXPECT_EQ(-1, rds_recvfrom(outer, &c, 1, MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);

	/* and one sent from outside reaches the outer socket only */
	ASSERT_EQ(1, rds_sendto(outer, &c, 1, 0, &to));
	ASSERT_EQ(1, rds_recvfrom(outer, &c, 1, 0, NULL));
	EXPECT_EQ(-1, rds_recvfrom(inner, &c, 1, MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);

	/* snapshots see their own namespace */
	EXPECT_EQ(2, socket_count(inner, RDS_INFO_SOCKETS,
				  sizeof(struct rds_info_socket)));
	close(inner);
	close(inner2);
	close(outer);
}

TEST(transport_outside_init_net)
{
	int fd, v = RDS_TRANS_IB;

	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	fd = rds_socket();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &v,
				 sizeof(v)));
	EXPECT_EQ(EPROTOTYPE, errno);
	/* loopback works in any namespace, even with lo down */
	close(fd);
	fd = rds_bound("127.0.0.1", 0);
	EXPECT_LE(0, fd);
	close(fd);
}

/* Outside the initial namespace only loopback addresses bind: the IB
 * transport serves init_net alone, and the loopback transport takes no
 * other address (the host's own address, configured in the namespace,
 * used to bind to loopback and black-hole what was sent to other hosts).
 */
TEST(other_netns_binds_loopback_only)
{
	int fd;

	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, system("ip link set lo up && ip addr add " HOST_ADDR
			    "/32 dev lo"));
	EXPECT_EQ(-1, rds_bound(HOST_ADDR, 4702));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	EXPECT_EQ(-1, rds_bound("192.0.2.1", 4702));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	fd = rds_bound("127.0.0.1", 4702);
	EXPECT_LE(0, fd);
	close(fd);
}

/* Namespaces with connections and queued data die; repeat a few times. */
TEST(netns_teardown)
{
	int i;

	for (i = 0; i < 10; i++) {
		pid_t pid = fork();
		int status;

		ASSERT_LE(0, pid);
		if (pid == 0) {
			struct sockaddr_in to = rds_sin("127.0.0.1", 4701);
			char buf[500] = { 0 };
			int a, b, j;

			if (unshare(CLONE_NEWNET))
				_exit(1);
			a = rds_bound("127.0.0.1", 0);
			b = rds_bound("127.0.0.1", 4701);
			if (a < 0 || b < 0)
				_exit(2);
			for (j = 0; j < 20; j++)
				rds_sendto(a, buf, sizeof(buf), MSG_DONTWAIT,
					   &to);
			rds_sendto(a, NULL, 0, 0, &(struct sockaddr_in){
				.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK) });
			_exit(0);	/* b still holds unread messages */
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
	/* give the namespace cleanup work a moment to run */
	sleep(2);
}

TEST_HARNESS_MAIN
