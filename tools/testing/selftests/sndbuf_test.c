// SPDX-License-Identifier: GPL-2.0
/*
 * SO_SNDBUF accounting: a socket may have at most sndbuf bytes sent but
 * not yet acknowledged by the peer's RDS layer (mainline semantics: the
 * kernel stores twice the value set, RDS uses half of what it stores).
 * Loopback acknowledges on delivery, so the module's test-only parameter
 * loop_hold_acks holds acknowledgments back, as a slow network peer would.
 * Then: EAGAIN when full, no POLLOUT, SO_SNDTIMEO -> ETIMEDOUT, a signal
 * -> EINTR, receiving does not free space (only an ACK does), and
 * releasing the ACKs wakes a blocked sender and POLLOUT.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

#include "rds_test.h"
#include "rds_harness.h"

#define HOLD	"/sys/module/rds/parameters/loop_hold_acks"
#define MSG	1024

static int hold_acks(int on)
{
	int fd = open(HOLD, O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, on ? "1" : "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

FIXTURE(full) {
	int tx, rx;
	struct sockaddr_in to;
	int sndbuf;		/* what RDS uses */
	int sent;		/* messages accepted before EAGAIN */
};

FIXTURE_SETUP(full)
{
	int val = 16384;
	socklen_t len = sizeof(val);
	unsigned char buf[MSG];
	ssize_t r;

	ASSERT_EQ(0, hold_acks(1)) TH_LOG("cannot write %s", HOLD);
	self->rx = rds_bound("127.0.0.1", 0);
	self->tx = rds_bound("127.0.0.1", 0);
	ASSERT_LE(0, self->rx);
	ASSERT_LE(0, self->tx);
	self->to = rds_name(self->rx);
	ASSERT_EQ(0, setsockopt(self->tx, SOL_SOCKET, SO_SNDBUF, &val,
				sizeof(val)));
	ASSERT_EQ(0, getsockopt(self->tx, SOL_SOCKET, SO_SNDBUF, &val, &len));
	self->sndbuf = val / 2;
	rds_fill(buf, sizeof(buf), 1);
	for (self->sent = 0; self->sent < 1000; self->sent++) {
		r = rds_sendto(self->tx, buf, sizeof(buf), MSG_DONTWAIT,
			       &self->to);
		if (r < 0)
			break;
		ASSERT_EQ(MSG, r);
	}
	ASSERT_EQ(EAGAIN, errno) TH_LOG("send: %s", strerror(errno));
}

FIXTURE_TEARDOWN(full)
{
	hold_acks(0);
	close(self->tx);
	close(self->rx);
}

TEST_F(full, eagain_at_sndbuf)
{
	/* Full means sndbuf bytes unacknowledged, give or take a message. */
	TH_LOG("sndbuf %d: %d messages of %d bytes accepted", self->sndbuf,
	       self->sent, MSG);
	EXPECT_GE(self->sent * MSG, self->sndbuf - MSG);
	EXPECT_LE(self->sent * MSG, self->sndbuf + MSG);
}

TEST_F(full, no_pollout)
{
	struct pollfd p = { .fd = self->tx, .events = POLLOUT };

	EXPECT_EQ(0, poll(&p, 1, 200));
}

TEST_F(full, sndtimeo_etimedout)
{
	struct timeval tv = { 0, 200000 };
	unsigned char buf[MSG] = { 0 };

	ASSERT_EQ(0, setsockopt(self->tx, SOL_SOCKET, SO_SNDTIMEO, &tv,
				sizeof(tv)));
	EXPECT_EQ(-1, rds_sendto(self->tx, buf, sizeof(buf), 0, &self->to));
	EXPECT_EQ(ETIMEDOUT, errno);
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST_F(full, signal_eintr)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	unsigned char buf[MSG] = { 0 };

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));	/* no SA_RESTART */
	alarm(1);
	EXPECT_EQ(-1, rds_sendto(self->tx, buf, sizeof(buf), 0, &self->to));
	EXPECT_EQ(EINTR, errno);
}

TEST_F(full, receiving_frees_nothing)
{
	unsigned char buf[MSG], want[MSG];
	int i;

	/* Every message was delivered: the receiver gets them all... */
	rds_fill(want, sizeof(want), 1);
	for (i = 0; i < self->sent; i++) {
		ASSERT_EQ(MSG, rds_recvfrom(self->rx, buf, sizeof(buf),
					    MSG_DONTWAIT, NULL));
		ASSERT_EQ(0, memcmp(buf, want, MSG));
	}
	/* ...but without an acknowledgment the sender stays full. */
	EXPECT_EQ(-1, rds_sendto(self->tx, buf, sizeof(buf), MSG_DONTWAIT,
				 &self->to));
	EXPECT_EQ(EAGAIN, errno);
}

struct blocked {
	int fd;
	struct sockaddr_in to;
	ssize_t ret;
	int err;
};

static void *blocked_send(void *arg)
{
	struct blocked *b = arg;
	unsigned char buf[MSG] = { 0 };

	b->ret = rds_sendto(b->fd, buf, sizeof(buf), 0, &b->to);
	b->err = errno;
	return NULL;
}

TEST_F(full, ack_wakes_blocked_sender)
{
	struct blocked b = { .fd = self->tx, .to = self->to };
	struct pollfd p = { .fd = self->tx, .events = POLLOUT };
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_send, &b));
	/* Give the sender time to block (if it has not yet, the release below
	 * lets it through all the same); releasing the ACKs must free it.
	 */
	usleep(200000);
	ASSERT_EQ(0, hold_acks(0));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(MSG, b.ret) TH_LOG("blocked send: %s", strerror(b.err));
	EXPECT_EQ(1, poll(&p, 1, 2000));
	EXPECT_TRUE(p.revents & POLLOUT);
}

TEST_HARNESS_MAIN
