// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded syscall fuzzer for AF_RDS: threads issue random socket calls
 * with random sizes, flags, addresses, options and control messages on a
 * shared pool of sockets that are closed and reopened under them.  The
 * guest's splat detection is the oracle; the seed is printed so that a
 * failure can be replayed (RDS_FUZZ_SEED=..., RDS_FUZZ_SECS=...).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>

#include "rds_test.h"
#include "rds_harness.h"

#define POOL		8
#define THREADS		4
#define BUFSZ		((1 << 20) + 8192)
#define KPTR		((void *)0xffffffff81000000UL)
/* Every call is bounded (MSG_DONTWAIT or 10 ms socket timeouts, at most
 * about 1 MiB copied): a thread still in one this long after the stop is
 * stuck, a finding (its call and kernel stack are printed).
 */
#define STUCK_SECS	15
#define MAX_SECS	60

static int pool[POOL];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static int stop;
static unsigned long ops_done[THREADS], sends_ok[THREADS], recvs_ok[THREADS];
static int cur_op[THREADS];		/* the call a thread is in, or -1 */
static pid_t tids[THREADS];
static const char *const op_names[] = {
	"close+socket", "bind", "connect", "sendmsg", "sendmsg", "sendmsg",
	"recvmsg", "recvmsg", "sockopt", "sockopt", "ioctl TOS", "poll/name",
};
static unsigned char *guard;	/* a PROT_NONE page */
static long pagesz;

static unsigned int rnd(unsigned int *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Most sockets start bound, so that traffic actually flows. */
static int new_socket(unsigned int *s)
{
	static const char *const addrs[] = { "127.0.0.1", "127.0.0.2",
					     HOST_ADDR };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 10000 };
	int fd = rds_socket();

	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (rnd(s) % 4) {
		struct sockaddr_in sin = rds_sin(addrs[rnd(s) % 3],
						 rnd(s) % 2 ? 0 :
						 4600 + rnd(s) % 4);

		bind(fd, (struct sockaddr *)&sin, sizeof(sin));
	}
	return fd;
}

static int pick_fd(unsigned int *s)
{
	return pool[rnd(s) % POOL];
}

/* A random, sometimes valid, socket address; returns its length. */
static socklen_t rand_addr(unsigned int *s, struct sockaddr_in6 *out)
{
	static const char *const v4[] = {
		"127.0.0.1", "127.0.0.2", HOST_ADDR, "0.0.0.0",
		"255.255.255.255", "224.0.0.1", "192.0.2.1",
	};
	static const char *const v6[] = {
		"::1", "::ffff:127.0.0.1", "fe80::1", "::", "ff02::1",
		"2001:db8::1",
	};
	static const uint16_t ports[] = { 0, 1, 4600, 4601, 4602, 4603 };
	uint16_t port = ports[rnd(s) % 6];

	memset(out, 0, sizeof(*out));
	switch (rnd(s) % 8) {
	case 0 ... 4: {
		struct sockaddr_in *sin = (struct sockaddr_in *)out;

		/* mostly usable destinations */
		*sin = rds_sin(v4[rnd(s) % 2 ? rnd(s) % 3 : rnd(s) % 7], port);
		return rnd(s) % 16 ? sizeof(*sin) : rnd(s) % 32;
	}
	case 5 ... 6:
		*out = rds_sin6(v6[rnd(s) % 6], port, rnd(s) % 3);
		return rnd(s) % 16 ? sizeof(*out) : rnd(s) % 32;
	default: {
		unsigned int i;

		for (i = 0; i < sizeof(*out); i++)
			((unsigned char *)out)[i] = rnd(s);
		return rnd(s) % 32;
	}
	}
}

static void *pick_buf(unsigned int *s, unsigned char *buf)
{
	switch (rnd(s) % 16) {
	case 0:
		return NULL;
	case 1:
		return KPTR;
	case 2:
		return guard;
	case 3:
		return guard - 100;	/* straddles into the guard page */
	default:
		return buf;
	}
}

static size_t pick_len(unsigned int *s)
{
	static const size_t lens[] = {
		0, 1, 48, 4095, 4096, 4097, 65536, 1 << 20, (1 << 20) + 1,
	};

	if (rnd(s) % 4 == 0)
		return rnd(s) % 200000;
	if (rnd(s) % 2)
		return rnd(s) % 2000;
	return lens[rnd(s) % 9];
}

static int do_sendmsg(unsigned int *s, unsigned char *buf)
{
	union {
		struct cmsghdr hdr;
		unsigned char b[256];
	} ctl;
	struct sockaddr_in6 to;
	struct iovec iov[2];
	struct msghdr msg = { 0 };
	int flags = MSG_DONTWAIT;
	unsigned int i;

	msg.msg_namelen = rand_addr(s, &to);
	msg.msg_name = rnd(s) % 8 ? &to : NULL;
	if (!msg.msg_name)
		msg.msg_namelen = 0;
	iov[0].iov_base = pick_buf(s, buf);
	iov[0].iov_len = pick_len(s);
	if (iov[0].iov_base == guard || iov[0].iov_base == guard - 100)
		iov[0].iov_len = iov[0].iov_len % 8192;
	iov[1].iov_base = buf;
	iov[1].iov_len = rnd(s) % 5000;
	msg.msg_iov = iov;
	msg.msg_iovlen = 1 + rnd(s) % 2;

	if (rnd(s) % 8 == 0) {
		for (i = 0; i < sizeof(ctl); i++)
			ctl.b[i] = rnd(s);
		ctl.hdr.cmsg_level = rnd(s) % 3 ? SOL_RDS : SOL_SOCKET;
		ctl.hdr.cmsg_type = rnd(s) % 16;
		ctl.hdr.cmsg_len = CMSG_LEN(rnd(s) % 80);
		msg.msg_control = rnd(s) % 16 ? (void *)&ctl : KPTR;
		msg.msg_controllen = CMSG_SPACE(rnd(s) % 100);
		if (msg.msg_controllen > sizeof(ctl))
			msg.msg_controllen = sizeof(ctl);
	}
	if (rnd(s) % 16 == 0)
		flags |= 1 << (rnd(s) % 31);
	if (rnd(s) % 8 == 0)
		flags &= ~MSG_DONTWAIT;		/* SO_SNDTIMEO bounds it */
	return sendmsg(pick_fd(s), &msg, flags) >= 0;
}

static int do_recvmsg(unsigned int *s, unsigned char *buf)
{
	static const int fl[] = { MSG_PEEK, MSG_TRUNC, MSG_OOB, MSG_ERRQUEUE,
				  MSG_WAITALL, MSG_CMSG_CLOEXEC };
	unsigned char ctl[128];
	struct sockaddr_in6 from;
	struct iovec iov;
	struct msghdr msg = { 0 };
	int flags = rnd(s) % 8 ? MSG_DONTWAIT : 0;

	if (rnd(s) % 3 == 0)
		flags |= fl[rnd(s) % 6];
	iov.iov_base = pick_buf(s, buf);
	iov.iov_len = pick_len(s);
	if (iov.iov_base == guard || iov.iov_base == guard - 100)
		iov.iov_len %= 8192;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (rnd(s) % 2) {
		msg.msg_name = rnd(s) % 16 ? (void *)&from : KPTR;
		msg.msg_namelen = rnd(s) % (sizeof(from) + 1);
	}
	if (rnd(s) % 2) {
		msg.msg_control = ctl;
		msg.msg_controllen = rnd(s) % sizeof(ctl);
	}
	return recvmsg(pick_fd(s), &msg, flags) >= 0;
}

static void do_sockopt(unsigned int *s, unsigned char *buf)
{
	static const int sol_socket[] = { SO_SNDBUF, SO_RCVBUF, SO_TIMESTAMP,
					  SO_ZEROCOPY, SO_PRIORITY };
	socklen_t len;
	int fd = pick_fd(s), opt;
	unsigned int i;

	for (i = 0; i < 256; i++)
		buf[i] = rnd(s) % 4 ? rnd(s) % 3 : rnd(s);
	if (rnd(s) % 2) {
		if (rnd(s) % 5 == 0) {
			opt = sol_socket[rnd(s) % 5];
			/* keep buffers sane: small positive ints */
			*(int *)buf = rnd(s) % 300000;
			setsockopt(fd, SOL_SOCKET, opt, buf, sizeof(int));
			return;
		}
		opt = rnd(s) % 12;
		if (rnd(s) % 8 == 0)
			opt = 29 + (rnd(s) % 2) * 34;	/* SO_TIMESTAMP */
		setsockopt(fd, SOL_RDS, opt, pick_buf(s, buf) == buf ? buf :
			   KPTR, rnd(s) % 200);
	} else {
		opt = rnd(s) % 2 ? rnd(s) % 12 : 10000 + rnd(s) % 20;
		len = rnd(s) % 4 ? rnd(s) % 65536 : 0;
		if (rnd(s) % 16 == 0)
			len = -1;
		getsockopt(fd, SOL_RDS, opt, rnd(s) % 16 ? (void *)buf : KPTR,
			   &len);
	}
}

static void *fuzz_worker(void *arg)
{
	unsigned int s = *(unsigned int *)arg;
	int id = (int)(s & 0xff) % THREADS;
	unsigned char *buf = malloc(BUFSZ);
	struct sockaddr_in6 a;
	struct pollfd p;
	unsigned char tos;
	socklen_t alen;
	int fd, slot;

	if (!buf)
		return NULL;
	memset(buf, 0x5a, BUFSZ);
	__atomic_store_n(&tids[id], (pid_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int op = rnd(&s) % 12;

		__atomic_store_n(&cur_op[id], op, __ATOMIC_RELAXED);
		switch (op) {
		case 0:
			slot = rnd(&s) % POOL;
			fd = new_socket(&s);
			if (fd < 0)
				break;
			pthread_mutex_lock(&pool_lock);
			close(pool[slot]);
			pool[slot] = fd;
			pthread_mutex_unlock(&pool_lock);
			break;
		case 1:
			alen = rand_addr(&s, &a);
			bind(pick_fd(&s), (struct sockaddr *)&a, alen);
			break;
		case 2:
			alen = rand_addr(&s, &a);
			connect(pick_fd(&s), (struct sockaddr *)&a, alen);
			break;
		case 3 ... 5:
			sends_ok[id] += do_sendmsg(&s, buf);
			break;
		case 6 ... 7:
			recvs_ok[id] += do_recvmsg(&s, buf);
			break;
		case 8 ... 9:
			do_sockopt(&s, buf);
			break;
		case 10:
			tos = rnd(&s);
			ioctl(pick_fd(&s), rnd(&s) % 2 ? SIOCRDSSETTOS :
			      SIOCRDSGETTOS, rnd(&s) % 16 ? (void *)&tos : KPTR);
			break;
		case 11:
			p.fd = pick_fd(&s);
			p.events = POLLIN | POLLOUT;
			poll(&p, 1, 0);
			alen = sizeof(a);
			getsockname(p.fd, (struct sockaddr *)&a, &alen);
			alen = sizeof(a);
			getpeername(p.fd, (struct sockaddr *)&a, &alen);
			break;
		}
		ops_done[id]++;
	}
	__atomic_store_n(&cur_op[id], -1, __ATOMIC_RELAXED);
	free(buf);
	return NULL;
}

/* Print what a stuck thread is doing: its call, its kernel stack. */
static void show_stuck(int i)
{
	char path[64], line[256];
	int op = __atomic_load_n(&cur_op[i], __ATOMIC_RELAXED);
	FILE *f;

	printf("# thread %d stuck for more than %d s in %s\n", i, STUCK_SECS,
	       op >= 0 ? op_names[op] : "(no call)");
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", tids[i]);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("#   %s", line);
	fclose(f);
}

FIXTURE(fuzz) {};
FIXTURE_SETUP(fuzz) {}
FIXTURE_TEARDOWN(fuzz) {}

/* MAX_SECS of calls, STUCK_SECS for the threads to stop, and room. */
TEST_F_TIMEOUT(fuzz, run, MAX_SECS + STUCK_SECS + 30)
{
	const char *e = getenv("RDS_FUZZ_SEED");
	const char *t = getenv("RDS_FUZZ_SECS");
	unsigned int seed = e ? strtoul(e, NULL, 0) : (unsigned int)time(NULL);
	unsigned int secs = t ? strtoul(t, NULL, 0) : 20;
	unsigned int seeds[THREADS];
	pthread_t th[THREADS];
	int i, stuck = 0;

	if (secs > MAX_SECS) {
		printf("# fuzz: RDS_FUZZ_SECS=%u is more than the test's %u\n",
		       secs, MAX_SECS);
		secs = MAX_SECS;
	}
	printf("# fuzz: RDS_FUZZ_SEED=%u RDS_FUZZ_SECS=%u\n", seed, secs);
	fflush(stdout);
	pagesz = sysconf(_SC_PAGESIZE);
	guard = mmap(NULL, pagesz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	ASSERT_NE(MAP_FAILED, guard);
	for (i = 0; i < POOL; i++) {
		unsigned int ps = seed * 31 + i + 1;

		pool[i] = new_socket(&ps);
		ASSERT_LE(0, pool[i]);
	}
	for (i = 0; i < THREADS; i++) {
		/* the low byte names the thread's counter slot */
		seeds[i] = ((seed * 2654435761u) & ~0xffu) | (0x10 + i);
		ASSERT_EQ(0, pthread_create(&th[i], NULL, fuzz_worker, &seeds[i]));
	}
	sleep(secs);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < THREADS; i++) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += STUCK_SECS;
		if (pthread_timedjoin_np(th[i], NULL, &until) == ETIMEDOUT) {
			show_stuck(i);
			stuck++;
			continue;
		}
		printf("# thread %d: %lu calls, %lu sends and %lu receives succeeded\n",
		       i, ops_done[i], sends_ok[i], recvs_ok[i]);
	}
	fflush(stdout);
	ASSERT_EQ(0, stuck);
	for (i = 0; i < POOL; i++)
		close(pool[i]);
	munmap(guard, pagesz);
}

TEST_HARNESS_MAIN
