// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: kernel and unmapped user pointers (EFAULT, never a copy into
 * or out of the kernel), bad control messages, flags and option values.
 */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "rds_test.h"
#include "rds_harness.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define KPTR	((void *)0xffffffff81000000UL)

FIXTURE(pair)
{
	int a, b;
	struct sockaddr_in bn;
	char *guard;		/* one RW page followed by a PROT_NONE page */
	long page;
};

FIXTURE_SETUP(pair)
{
	self->a = rds_bound("127.0.0.1", 0);
	self->b = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, self->a);
	ASSERT_LE(0, self->b);
	self->bn = rds_name(self->b);
	self->page = sysconf(_SC_PAGESIZE);
	self->guard = mmap(NULL, 2 * self->page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->guard);
	ASSERT_EQ(0, mprotect(self->guard + self->page, self->page,
			      PROT_NONE));
}

FIXTURE_TEARDOWN(pair)
{
	munmap(self->guard, 2 * self->page);
	close(self->a);
	close(self->b);
}

static ssize_t send_iov(int fd, void *base, size_t len,
			const struct sockaddr_in *to, void *ctl, size_t ctllen,
			int flags)
{
	struct iovec iov = { .iov_base = base, .iov_len = len };
	struct msghdr msg = {
		.msg_name = (void *)to, .msg_namelen = sizeof(*to),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = ctllen,
	};

	return sendmsg(fd, &msg, flags);
}

static ssize_t recv_iov(int fd, void *base, size_t len, int flags)
{
	struct iovec iov = { .iov_base = base, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	return recvmsg(fd, &msg, flags);
}

TEST_F(pair, send_from_kernel_pointer)
{
	char c;

	EXPECT_EQ(-1, send_iov(self->a, KPTR, 100, &self->bn, NULL, 0, 0));
	EXPECT_EQ(EFAULT, errno);
	/* nothing was delivered */
	EXPECT_EQ(-1, rds_recvfrom(self->b, &c, 1, MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(pair, send_past_mapping)
{
	char c;

	/* the first page is fine, the second is not mapped readable */
	EXPECT_EQ(-1, send_iov(self->a, self->guard, 2 * self->page,
			       &self->bn, NULL, 0, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, rds_recvfrom(self->b, &c, 1, MSG_DONTWAIT, NULL));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(pair, recv_into_kernel_pointer)
{
	char out[64], in[64];

	rds_fill((unsigned char *)out, sizeof(out), 2);
	ASSERT_EQ(64, rds_sendto(self->a, out, 64, 0, &self->bn));
	EXPECT_EQ(-1, recv_iov(self->b, KPTR, 64, 0));
	EXPECT_EQ(EFAULT, errno);
	/* the message is still there, intact */
	ASSERT_EQ(64, rds_recvfrom(self->b, in, 64, 0, NULL));
	EXPECT_EQ(0, memcmp(in, out, 64));
}

TEST_F(pair, recv_past_mapping)
{
	char *out = malloc(2 * self->page), *in = malloc(2 * self->page);

	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, in);
	rds_fill((unsigned char *)out, 2 * self->page, 3);
	ASSERT_EQ(2 * self->page, rds_sendto(self->a, out, 2 * self->page, 0,
					     &self->bn));
	EXPECT_EQ(-1, recv_iov(self->b, self->guard, 2 * self->page, 0));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(2 * self->page, rds_recvfrom(self->b, in, 2 * self->page,
					       0, NULL));
	EXPECT_EQ(0, memcmp(in, out, 2 * self->page));
	free(out);
	free(in);
}

TEST_F(pair, bad_control)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
	} u;
	char both[2 * CMSG_SPACE(sizeof(struct rds_rdma_args))];
	struct cmsghdr *cm = &u.hdr;
	char c = 0;

	memset(&u, 0, sizeof(u));
	cm->cmsg_level = SOL_RDS;
	cm->cmsg_type = 77;
	cm->cmsg_len = CMSG_LEN(8);
	EXPECT_EQ(-1, send_iov(self->a, &c, 1, &self->bn, &u, CMSG_SPACE(8),
			       0));
	EXPECT_EQ(EINVAL, errno);

	/* cmsg_len beyond the control buffer */
	cm->cmsg_type = RDS_CMSG_RDMA_DEST;
	cm->cmsg_len = 4096;
	EXPECT_EQ(-1, send_iov(self->a, &c, 1, &self->bn, &u, CMSG_SPACE(8),
			       0));
	EXPECT_EQ(EINVAL, errno);

	/* RDMA needs a transport that does RDMA: loopback does not */
	cm->cmsg_type = RDS_CMSG_RDMA_ARGS;
	cm->cmsg_len = CMSG_LEN(sizeof(struct rds_rdma_args));
	EXPECT_EQ(-1, send_iov(self->a, &c, 1, &self->bn, &u, sizeof(u), 0));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* DEST cannot go with ARGS */
	memset(both, 0, sizeof(both));
	cm = (struct cmsghdr *)both;
	cm->cmsg_level = SOL_RDS;
	cm->cmsg_type = RDS_CMSG_RDMA_ARGS;
	cm->cmsg_len = CMSG_LEN(sizeof(struct rds_rdma_args));
	cm = (struct cmsghdr *)(both + CMSG_SPACE(sizeof(struct rds_rdma_args)));
	cm->cmsg_level = SOL_RDS;
	cm->cmsg_type = RDS_CMSG_RDMA_DEST;
	cm->cmsg_len = CMSG_LEN(8);
	EXPECT_EQ(-1, send_iov(self->a, &c, 1, &self->bn, both,
			       CMSG_SPACE(sizeof(struct rds_rdma_args)) +
			       CMSG_SPACE(8), 0));
	EXPECT_EQ(EINVAL, errno);

	/* other levels are ignored */
	cm = &u.hdr;
	memset(&u, 0, sizeof(u));
	cm->cmsg_level = SOL_IP;
	cm->cmsg_type = 1234;
	cm->cmsg_len = CMSG_LEN(8);
	EXPECT_EQ(1, send_iov(self->a, &c, 1, &self->bn, &u, CMSG_SPACE(8),
			      0));

	/* control buffer in kernel space */
	EXPECT_EQ(-1, send_iov(self->a, &c, 1, &self->bn, KPTR, 64, 0));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(pair, zerocopy)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(uint32_t))];
	} u;
	int one = 1;
	char c = 0;

	memset(&u, 0, sizeof(u));
	/* MSG_ZEROCOPY without a cookie */
	EXPECT_EQ(-1, send_iov(self->a, &c, 1, &self->bn, NULL, 0,
			       MSG_ZEROCOPY));
	EXPECT_EQ(EINVAL, errno);
	/* a cookie without zerocopy */
	u.hdr.cmsg_level = SOL_RDS;
	u.hdr.cmsg_type = RDS_CMSG_ZCOPY_COOKIE;
	u.hdr.cmsg_len = CMSG_LEN(sizeof(uint32_t));
	EXPECT_EQ(-1, send_iov(self->a, &c, 1, &self->bn, &u, sizeof(u), 0));
	EXPECT_EQ(EINVAL, errno);
	/* zerocopy proper is TCP-only */
	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_ZEROCOPY, &one,
				sizeof(one)));
	EXPECT_EQ(-1, send_iov(self->a, &c, 1, &self->bn, &u, sizeof(u),
			       MSG_ZEROCOPY));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

TEST_F(pair, recv_flags)
{
	char c;

	EXPECT_EQ(0, rds_recvfrom(self->b, &c, 1, MSG_OOB, NULL));
	EXPECT_EQ(-1, rds_recvfrom(self->b, &c, 1, MSG_ERRQUEUE, NULL));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(pair, option_pointers)
{
	unsigned char tos = 1;
	socklen_t len = sizeof(int);

	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_RECVERR, KPTR,
				 sizeof(int)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, getsockopt(self->a, SOL_RDS, RDS_RECVERR, KPTR, &len));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, getsockopt(self->a, SOL_RDS, RDS_RECVERR, &tos, KPTR));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_CONG_MONITOR, KPTR,
				 sizeof(int)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY,
				 KPTR, sizeof(struct rds_rx_trace_so)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->a, SIOCRDSSETTOS, KPTR));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->a, SIOCRDSGETTOS, KPTR));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, bind(self->a, KPTR, sizeof(struct sockaddr_in)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, sendto(self->a, &tos, 1, 0, KPTR,
			     sizeof(struct sockaddr_in)));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(pair, rdma_options_unsupported)
{
	struct rds_get_mr_for_dest_args md = { 0 };
	struct rds_get_mr_args mr = { 0 };
	struct rds_free_mr_args fr = { 0 };
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, setsockopt(fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr)));
	EXPECT_EQ(ENOTCONN, errno);
	close(fd);
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_GET_MR, &mr,
				 sizeof(mr) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_GET_MR, KPTR,
				 sizeof(mr)));
	EXPECT_EQ(EFAULT, errno);
	/* RDMA needs an RDMA transport: loopback has none */
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_GET_MR, &mr,
				 sizeof(mr)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_GET_MR_FOR_DEST, &md,
				 sizeof(md)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_GET_MR_FOR_DEST, &md,
				 sizeof(mr)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_FREE_MR, &fr,
				 sizeof(fr)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->a, SOL_RDS, RDS_FREE_MR, &fr, 8));
	EXPECT_EQ(EINVAL, errno);
}

TEST_HARNESS_MAIN
