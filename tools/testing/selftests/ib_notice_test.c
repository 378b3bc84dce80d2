// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA status notices against recvmsg's control buffer, on one host's rxe
 * device (RDS_ADDR), no peer needed.  A notice is made by sending a
 * message with an RDS_CMSG_RDMA_ARGS op (NOTIFY_ME) to an address nobody
 * answers in the guest's subnet, then cancelling it with
 * RDS_CANCEL_SENT_TO: its op was never posted, so it ends CANCELED.
 *
 *   no_room    recvmsg without a control buffer, and with one a byte too
 *              short for a notice, blocking (SO_RCVTIMEO 100 ms) and
 *              MSG_DONTWAIT: each returns 0 with MSG_CTRUNC at once and
 *              the notice stays (the fuzz test found the blocking call
 *              spinning forever, unkillable: the socket was ready, yet
 *              nothing could be given); one the kernel cannot write
 *              fails EFAULT; a buffer with room gets it (its token,
 *              CANCELED); then the socket is empty: MSG_DONTWAIT gives
 *              EAGAIN, a blocking call ETIMEDOUT (as mainline's) after
 *              the timeout.  recv_notice_ctrunc counts the 0 returns.
 *   with_data  a message from a second socket is queued too: recvmsg
 *              without room gets the message, every byte checked, with
 *              MSG_CTRUNC (a notice is still there); then the notice.
 *
 * A blocking call runs in a child process: one that does not return
 * within 5 s fails the case instead of hanging the test.
 */
#include <signal.h>
#include <sys/wait.h>

#define TWO_HOST_NAME	"ib_notice_test"
#include "two_host.h"
#include "rds_harness.h"

#define NOBODY		"10.0.0.99"	/* in the subnet, never answers */
#define PORT		7300
#define TOKEN		0x5eed0123456789abULL
#define CALL_MS		5000

static const char *addr, *peer;

/* Queue one CANCELED notice (token TOKEN) on fd: 0 or an errno. */
static int make_notice(int fd, unsigned char *local, size_t len)
{
	struct sockaddr_in to = rds_sin(NOBODY, PORT);
	struct rds_iovec lv = { .addr = (uintptr_t)local, .bytes = len };
	struct rds_rdma_args args = {
		.cookie = 0x1234,		/* never used: never posted */
		.remote_vec = { .addr = 0, .bytes = len },
		.local_vec_addr = (uintptr_t)&lv,
		.nr_local = 1,
		.flags = RDS_RDMA_NOTIFY_ME | RDS_RDMA_READWRITE,
		.user_token = TOKEN,
	};
	union {
		char b[CMSG_SPACE(sizeof(args))];
		struct cmsghdr align;
	} u;
	struct cmsghdr *cm = (struct cmsghdr *)u.b;
	struct iovec iov = { .iov_base = local, .iov_len = 8 };
	struct msghdr msg = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.b, .msg_controllen = sizeof(u.b),
	};
	struct pollfd p = { .fd = fd, .events = POLLIN };

	memset(&u, 0, sizeof(u));
	cm->cmsg_level = SOL_RDS;
	cm->cmsg_type = RDS_CMSG_RDMA_ARGS;
	cm->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(cm), &args, sizeof(args));
	if (sendmsg(fd, &msg, MSG_DONTWAIT) != 8)
		return errno ? errno : EIO;
	if (setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to, sizeof(to)))
		return errno;
	if (poll(&p, 1, CALL_MS) != 1)
		return ETIMEDOUT;
	return 0;
}

/* One recvmsg; *flags gets msg_flags, *nctl the notices it carried (the
 * last one in *nt).
 */
static ssize_t recv_ctl(int fd, int flags, size_t ctllen, void *buf,
			size_t len, int *mflags, int *nctl,
			struct rds_rdma_notify *nt)
{
	union {
		char b[CMSG_SPACE(sizeof(*nt)) * 4];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctllen ? u.b : NULL, .msg_controllen = ctllen,
	};
	struct cmsghdr *cm;
	ssize_t n;

	*nctl = 0;
	n = recvmsg(fd, &msg, flags);
	*mflags = msg.msg_flags;
	if (n < 0 || !ctllen)
		return n;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_RDS &&
		    cm->cmsg_type == RDS_CMSG_RDMA_STATUS) {
			memcpy(nt, CMSG_DATA(cm), sizeof(*nt));
			(*nctl)++;
		}
	}
	return n;
}

/* recvmsg in a child (a stuck call must not hang the test): its return,
 * msg_flags and time, or -2 if it did not return within CALL_MS.
 */
static ssize_t recv_child(int fd, int flags, size_t ctllen, int *mflags,
			  int64_t *ms)
{
	int pfd[2], st;
	struct { ssize_t n; int flags, err; } r = { -3, 0, 0 };
	int64_t t0 = now_ms();
	pid_t pid;

	if (pipe(pfd))
		return -3;
	pid = fork();
	if (pid < 0)
		return -3;
	if (!pid) {
		struct rds_rdma_notify nt;
		unsigned char b[64];
		int nctl;

		close(pfd[0]);
		r.n = recv_ctl(fd, flags, ctllen, b, sizeof(b), &r.flags,
			       &nctl, &nt);
		r.err = errno;
		if (write(pfd[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ms() - t0 > CALL_MS) {
			kill(pid, SIGKILL);
			close(pfd[0]);
			*ms = now_ms() - t0;
			return -2;
		}
		poll(NULL, 0, 10);
	}
	*ms = now_ms() - t0;
	if (read(pfd[0], &r, sizeof(r)) != sizeof(r))
		r.n = -3;
	close(pfd[0]);
	*mflags = r.flags;
	errno = r.err;
	return r.n;
}

FIXTURE(notice)
{
	int fd;
	unsigned char local[4096];
	long long ctr0;
};

FIXTURE_SETUP(notice)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };

	single_host(&addr, &peer);
	if (access(IB_COUNTERS, R_OK))
		SKIP(return, "no IB transport");
	self->fd = rds_bound(addr, PORT);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	self->ctr0 = rds_info_counter(self->fd, "recv_notice_ctrunc");
	ASSERT_LE(0, self->ctr0) TH_LOG("no counter recv_notice_ctrunc");
	memset(self->local, 0x5a, sizeof(self->local));
	ASSERT_EQ(0, make_notice(self->fd, self->local,
				 sizeof(self->local)));
}

FIXTURE_TEARDOWN(notice)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* The notice, taken with room for it; then nothing is left. */
static void take_notice(struct __test_metadata *_metadata, int fd)
{
	struct rds_rdma_notify nt = { 0 };
	unsigned char b[64];
	int mflags, nctl;
	int64_t ms, t0;

	EXPECT_EQ(0, recv_ctl(fd, MSG_DONTWAIT, CMSG_SPACE(sizeof(nt)) * 4,
			      b, sizeof(b), &mflags, &nctl, &nt));
	EXPECT_EQ(1, nctl);
	EXPECT_EQ(TOKEN, nt.user_token);
	EXPECT_EQ(RDS_RDMA_CANCELED, nt.status);
	EXPECT_EQ(0, mflags & MSG_CTRUNC);

	EXPECT_EQ(-1, recv_ctl(fd, MSG_DONTWAIT, 0, b, sizeof(b), &mflags,
			       &nctl, &nt));
	EXPECT_EQ(EAGAIN, errno);
	/* A timed-out blocking recvmsg fails ETIMEDOUT, as mainline's */
	t0 = now_ms();
	EXPECT_EQ(-1, recv_child(fd, 0, 0, &mflags, &ms));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_LE(90, now_ms() - t0) TH_LOG("SO_RCVTIMEO is 100 ms");
}

TEST_F_TIMEOUT(notice, no_room, 60)
{
	static const struct {
		const char *what;
		int flags;
		size_t ctl;
	} calls[] = {
		{ "blocking, no control buffer", 0, 0 },
		{ "blocking, a byte short", 0,
		  CMSG_SPACE(sizeof(struct rds_rdma_notify)) - 1 },
		{ "MSG_DONTWAIT, no control buffer", MSG_DONTWAIT, 0 },
		{ "MSG_DONTWAIT, a byte short", MSG_DONTWAIT,
		  CMSG_SPACE(sizeof(struct rds_rdma_notify)) - 1 },
	};
	unsigned int i;
	int mflags;
	int64_t ms;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		ssize_t n = recv_child(self->fd, calls[i].flags, calls[i].ctl,
				       &mflags, &ms);

		note("%s: returned %zd (%s) after %lld ms, flags 0x%x",
		     calls[i].what, n, n == -2 ? "stuck" :
		     n < 0 ? strerror(errno) : "-",
		     (long long)ms, mflags);
		EXPECT_NE(-2, n) TH_LOG("%s: still in recvmsg after %d ms",
					calls[i].what, CALL_MS);
		EXPECT_EQ(0, n) TH_LOG("%s", calls[i].what);
		EXPECT_EQ(MSG_CTRUNC, mflags & MSG_CTRUNC)
			TH_LOG("%s", calls[i].what);
	}
	EXPECT_EQ(self->ctr0 + 4,
		  rds_info_counter(self->fd, "recv_notice_ctrunc"));

	/* A control buffer the kernel cannot write: EFAULT, notice kept */
	{
		unsigned char b[64];
		struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = (void *)8,
			.msg_controllen = CMSG_SPACE(sizeof(struct rds_rdma_notify)),
		};

		EXPECT_EQ(-1, recvmsg(self->fd, &msg, MSG_DONTWAIT));
		EXPECT_EQ(EFAULT, errno);
	}
	take_notice(_metadata, self->fd);
}

TEST_F_TIMEOUT(notice, with_data, 60)
{
	struct sockaddr_in dst = rds_sin(addr, PORT);
	unsigned char out[1000], in[2000];
	struct rds_rdma_notify nt;
	int src, mflags, nctl;
	long long peeks;
	int64_t t0;
	ssize_t n;

	src = rds_bound(addr, PORT + 1);
	ASSERT_LE(0, src);
	rds_fill(out, sizeof(out), 77);
	ASSERT_EQ((ssize_t)sizeof(out), rds_sendto(src, out, sizeof(out), 0,
						   &dst));
	/* Until it is queued, a peek without room returns 0 (the notice) */
	t0 = now_ms();
	do {
		n = recv_ctl(self->fd, MSG_PEEK | MSG_DONTWAIT, 0, in,
			     sizeof(in), &mflags, &nctl, &nt);
		if (n == 0)
			poll(NULL, 0, 10);
	} while (n == 0 && now_ms() - t0 < CALL_MS);
	ASSERT_EQ((ssize_t)sizeof(out), n) TH_LOG("the message did not come");
	peeks = rds_info_counter(self->fd, "recv_notice_ctrunc") - self->ctr0;
	n = recv_ctl(self->fd, 0, 0, in, sizeof(in), &mflags, &nctl, &nt);
	EXPECT_EQ((ssize_t)sizeof(out), n);
	EXPECT_EQ(0, memcmp(in, out, sizeof(out)));
	EXPECT_EQ(MSG_CTRUNC, mflags & MSG_CTRUNC);
	/* the peeks that found only the notice were counted, not this */
	EXPECT_EQ(self->ctr0 + peeks,
		  rds_info_counter(self->fd, "recv_notice_ctrunc"));
	close(src);
	take_notice(_metadata, self->fd);
}

TEST_HARNESS_MAIN
