// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency: many threads on one socket, close racing with senders,
 * receivers and pollers, bind racing with sendmsg, and module unload with
 * sockets open.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "rds_test.h"
#include "rds_harness.h"

#define THREADS		8
#define PER_THREAD	2000

struct tagged {
	uint32_t thread;
	uint32_t seq;
	unsigned char pad[56];
};

struct sender_arg {
	int fd;
	int id;
	struct sockaddr_in to;
	int err;
};

static void *sender(void *p)
{
	struct sender_arg *s = p;
	struct tagged t;
	int i;

	memset(&t, 0, sizeof(t));
	t.thread = s->id;
	for (i = 0; i < PER_THREAD; i++) {
		t.seq = i;
		/* blocks while the receiver is congested */
		if (rds_sendto(s->fd, &t, sizeof(t), 0, &s->to) != sizeof(t)) {
			s->err = errno;
			break;
		}
	}
	return NULL;
}

/* Many threads share one sending socket; per-thread order holds. */
TEST(many_threads_one_socket)
{
	struct sender_arg args[THREADS];
	pthread_t th[THREADS];
	uint32_t next[THREADS] = { 0 };
	struct timeval tv = { .tv_sec = 10 };
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct sockaddr_in bn;
	struct tagged t;
	int i;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	ASSERT_EQ(0, setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	for (i = 0; i < THREADS; i++) {
		args[i] = (struct sender_arg){ .fd = a, .id = i, .to = bn };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, sender, &args[i]));
	}
	for (i = 0; i < THREADS * PER_THREAD; i++) {
		ASSERT_EQ((ssize_t)sizeof(t),
			  rds_recvfrom(b, &t, sizeof(t), 0, NULL));
		ASSERT_GT(THREADS, (int)t.thread);
		ASSERT_EQ(next[t.thread], t.seq);
		next[t.thread]++;
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, args[i].err);
	}
	close(a);
	close(b);
}

struct receiver_arg {
	int fd;
	unsigned char *seen;	/* [THREADS * PER_THREAD], shared */
	int got;
	int dup;
};

static void *receiver(void *p)
{
	struct receiver_arg *r = p;
	struct tagged t;

	/* SO_RCVTIMEO ends the loop once everything was taken */
	while (rds_recvfrom(r->fd, &t, sizeof(t), 0, NULL) == sizeof(t)) {
		unsigned int i = t.thread * PER_THREAD + t.seq;

		if (t.thread >= THREADS || t.seq >= PER_THREAD ||
		    __atomic_exchange_n(&r->seen[i], 1, __ATOMIC_RELAXED))
			r->dup++;
		r->got++;
	}
	return NULL;
}

/* Several receivers on one socket: every message is taken exactly once. */
TEST(many_receivers_one_socket)
{
	struct sender_arg sargs[THREADS];
	struct receiver_arg rargs[4];
	pthread_t st[THREADS], rt[4];
	struct timeval tv = { .tv_sec = 2 };
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	unsigned char *seen = calloc(THREADS * PER_THREAD, 1);
	struct sockaddr_in bn;
	int i, got = 0, dup = 0;

	ASSERT_NE(NULL, seen);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	ASSERT_EQ(0, setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	for (i = 0; i < 4; i++) {
		rargs[i] = (struct receiver_arg){ .fd = b, .seen = seen };
		ASSERT_EQ(0, pthread_create(&rt[i], NULL, receiver, &rargs[i]));
	}
	for (i = 0; i < THREADS; i++) {
		sargs[i] = (struct sender_arg){ .fd = a, .id = i, .to = bn };
		ASSERT_EQ(0, pthread_create(&st[i], NULL, sender, &sargs[i]));
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(st[i], NULL);
		EXPECT_EQ(0, sargs[i].err);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(rt[i], NULL);
		got += rargs[i].got;
		dup += rargs[i].dup;
	}
	EXPECT_EQ(THREADS * PER_THREAD, got);
	EXPECT_EQ(0, dup);
	free(seen);
	close(a);
	close(b);
}

struct racer {
	int fd;
	struct sockaddr_in to;
	int *stop;
	int kind;
};

static void *race(void *p)
{
	struct racer *r = p;
	char buf[2048] = { 0 };
	struct pollfd pfd;
	int n = 0;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		switch (r->kind) {
		case 0:
			rds_sendto(r->fd, buf, 1 + n % 2000, MSG_DONTWAIT,
				   &r->to);
			break;
		case 1:
			rds_recvfrom(r->fd, buf, sizeof(buf), MSG_DONTWAIT,
				     NULL);
			break;
		case 2:
			pfd.fd = r->fd;
			pfd.events = POLLIN | POLLOUT;
			poll(&pfd, 1, 1);
			break;
		}
		n++;
	}
	return NULL;
}

/*
 * Threads send, receive and poll on sockets that get closed and reopened
 * under them; deliveries race with the receiver's close.
 */
TEST(close_while_busy)
{
	enum { ROUNDS = 30, R = 6 };
	int stop = 0;
	struct racer rs[R];
	pthread_t th[R];
	int round, i;

	for (round = 0; round < ROUNDS; round++) {
		int a = rds_bound("127.0.0.1", 0);
		int b = rds_bound("127.0.0.1", 0);
		struct sockaddr_in bn;

		ASSERT_LE(0, a);
		ASSERT_LE(0, b);
		bn = rds_name(b);
		__atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
		for (i = 0; i < R; i++) {
			rs[i] = (struct racer){
				.fd = (i % 3 == 0) ? a : b,
				.to = bn, .stop = &stop, .kind = i % 3,
			};
			ASSERT_EQ(0, pthread_create(&th[i], NULL, race,
						    &rs[i]));
		}
		usleep(20000);
		close(b);	/* in-flight deliveries meet a dead socket */
		usleep(5000);
		close(a);
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		for (i = 0; i < R; i++)
			pthread_join(th[i], NULL);
	}
}

struct binder {
	int fd;
	int port;
};

static void *do_bind(void *p)
{
	struct binder *b = p;
	struct sockaddr_in sin = rds_sin("127.0.0.1", b->port);

	bind(b->fd, (struct sockaddr *)&sin, sizeof(sin));
	return NULL;
}

/* sendmsg racing bind on the same socket (CVE-2015-7990). */
TEST(send_races_bind)
{
	struct sockaddr_in to = rds_sin("127.0.0.1", 4400);
	int sink = rds_bound("127.0.0.1", 4400);
	int i;

	ASSERT_LE(0, sink);
	for (i = 0; i < 300; i++) {
		struct binder b = { .fd = rds_socket(), .port = 0 };
		pthread_t th;
		char c = 0;
		ssize_t r;

		ASSERT_LE(0, b.fd);
		ASSERT_EQ(0, pthread_create(&th, NULL, do_bind, &b));
		r = rds_sendto(b.fd, &c, 1, MSG_DONTWAIT, &to);
		if (r < 0)
			EXPECT_TRUE(errno == ENOTCONN || errno == ENOBUFS)
				TH_LOG("errno %d", errno);
		pthread_join(th, NULL);
		close(b.fd);
		while (rds_recvfrom(sink, &c, 1, MSG_DONTWAIT, NULL) >= 0)
			;
	}
	close(sink);
}

struct churner {
	int *stop;
	int base;
};

static void *churn(void *p)
{
	struct churner *c = p;
	int n = 0;

	while (!__atomic_load_n(c->stop, __ATOMIC_ACQUIRE)) {
		int fd = rds_bound("127.0.0.1", c->base + n % 16);

		if (fd >= 0)
			close(fd);
		n++;
	}
	return NULL;
}

/* Sockets bound and closed while a sender targets their ports. */
TEST(bind_churn_with_traffic)
{
	int stop = 0;
	struct churner cs[2] = {
		{ .stop = &stop, .base = 4500 }, { .stop = &stop, .base = 4500 },
	};
	pthread_t th[2];
	int a = rds_bound("127.0.0.1", 0), i, n;
	char buf[100] = { 0 };

	ASSERT_LE(0, a);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, churn, &cs[i]));
	for (n = 0; n < 20000; n++) {
		struct sockaddr_in to = rds_sin("127.0.0.1", 4500 + n % 16);

		rds_sendto(a, buf, sizeof(buf), MSG_DONTWAIT, &to);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	close(a);
}

/* A blocked receiver is woken by data from another thread. */
static void *late_send(void *p)
{
	struct racer *r = p;
	char c = 'w';

	usleep(100000);
	rds_sendto(r->fd, &c, 1, 0, &r->to);
	return NULL;
}

TEST(blocked_recv_woken)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct racer r;
	pthread_t th;
	char c = 0;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	r = (struct racer){ .fd = a, .to = rds_name(b) };
	ASSERT_EQ(0, pthread_create(&th, NULL, late_send, &r));
	ASSERT_EQ(1, rds_recvfrom(b, &c, 1, 0, NULL));
	EXPECT_EQ('w', c);
	pthread_join(th, NULL);
	close(a);
	close(b);
}

/* With a socket open the module cannot go away. */
TEST(unload_refused_while_open)
{
	int fd = rds_bound("127.0.0.1", 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, syscall(SYS_delete_module, "rds", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY)
		TH_LOG("errno %d", errno);
	/* still working */
	EXPECT_EQ(0, rds_sendto(fd, NULL, 0, 0,
				&(struct sockaddr_in){ .sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK) }));
	close(fd);
}

TEST_HARNESS_MAIN
