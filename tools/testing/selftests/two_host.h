/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the two-host selftests (ib_*_test.c): "# ..." notes
 * on stdout (a limited number per host for detailed errors), the
 * monotonic clock, a splitmix64 step for seeded data, single-host mode
 * detection (RDS_ADDR, RDS_PEER, RDS_LOOPBACK_SELF, RDS_HOST), barriers
 * between the hosts (the barrier tool, names prefixed with RDS_TEST),
 * small values handed from one host to the other in a file of RDS_SHARED,
 * receiving with the source and MSG_TRUNC, socket buffer sizes, the
 * RDS_INFO_CONNECTIONS snapshot, the IB transport's ib_counters and the
 * module's parameters.
 *
 * Define TWO_HOST_NAME (the test's name, used when RDS_TEST is unset)
 * before including this.
 */
#ifndef _TWO_HOST_H
#define _TWO_HOST_H

#include <inttypes.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "rds_test.h"

#ifndef TWO_HOST_NAME
#error "define TWO_HOST_NAME before including this header"
#endif

#define IB_COUNTERS	"/sys/module/rds/parameters/ib_counters"

extern char **environ;

static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;

/* One "# ..." line on stdout, flushed (the harness's child _exits). */
static inline void __attribute__((format(printf, 1, 2)))
note(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&note_lock);
	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
	pthread_mutex_unlock(&note_lock);
}

/*
 * Detailed error line n (counted from 0) of host: lines 0..max-1 print as
 * "# host H: ...", line max as "# host H: further WHAT not shown", later
 * ones not at all.
 */
static inline void __attribute__((format(printf, 5, 0)))
vnote_limited(int host, unsigned int n, unsigned int max, const char *what,
	      const char *fmt, va_list ap)
{
	char line[512];

	if (n >= max) {
		if (n == max)
			note("host %d: further %s not shown", host, what);
		return;
	}
	vsnprintf(line, sizeof(line), fmt, ap);
	note("host %d: %s", host, line);
}

static inline int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* inet_ntoa without its shared buffer */
static inline const char *ip(struct in_addr a, char buf[INET_ADDRSTRLEN])
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

static inline uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Single-host mode: RDS_LOOPBACK_SELF=1, or RDS_PEER unset, empty or equal
 * to RDS_ADDR.  Sets *addr (RDS_ADDR, default 127.0.0.1) and *peer
 * (RDS_PEER; *addr in single-host mode).
 */
static inline bool single_host(const char **addr, const char **peer)
{
	const char *self_env = getenv("RDS_LOOPBACK_SELF");

	*addr = getenv("RDS_ADDR");
	*peer = getenv("RDS_PEER");
	if (!*addr || !**addr)
		*addr = "127.0.0.1";
	if ((self_env && !strcmp(self_env, "1")) || !*peer || !**peer ||
	    !strcmp(*peer, *addr)) {
		*peer = *addr;
		return true;
	}
	return false;
}

/* RDS_TIME_SCALE (run-tests sets it for slow kernels): what a test's own
 * time limits are multiplied by; 1 when unset or out of range.
 */
static inline int time_scale(void)
{
	const char *e = getenv("RDS_TIME_SCALE");
	int scale = e ? atoi(e) : 1;

	return scale >= 1 && scale <= 100 ? scale : 1;
}

/* RDS_HOST: 1 or 2 in two-host mode; 1 when unset. */
static inline int this_host(void)
{
	const char *h = getenv("RDS_HOST");

	return h ? atoi(h) : 1;
}

/* RDS_TEST, else the test's own name. */
static inline const char *test_name(void)
{
	const char *test = getenv("RDS_TEST");

	return test ? test : TWO_HOST_NAME;
}

/* barrier NAME TIMEOUT_S, prefixed with RDS_TEST; 0 when all arrived. */
static inline int barrier(const char *name, int tmo)
{
	const char *top = getenv("RDS_TOP");
	char path[512], full[256], t[16];
	char *argv[] = { path, full, t, NULL };
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/tools/testing/selftests/barrier",
		 top ? top : ".");
	snprintf(full, sizeof(full), "%s.%s", test_name(), name);
	snprintf(t, sizeof(t), "%d", tmo);
	if (posix_spawn(&pid, path, NULL, NULL, argv, environ)) {
		note("barrier %s: cannot run %s", full, path);
		return -1;
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		note("barrier %s: failed (status %d)", full, status);
		return -1;
	}
	return 0;
}

/* RDS_SHARED/TEST.SUFFIX, the file one host hands to the other. */
static inline void shared_path(char *path, size_t len, const char *suffix)
{
	const char *dir = getenv("RDS_SHARED");

	snprintf(path, len, "%s/%s.%s", dir ? dir : ".", test_name(), suffix);
}

/*
 * Writes the shared file SUFFIX (through a .tmp file and rename, so the
 * peer never sees it half written); -1 when it cannot (noted).
 */
static inline int __attribute__((format(printf, 2, 3)))
shared_publish(const char *suffix, const char *fmt, ...)
{
	char path[512], tmp[520];
	va_list ap;
	FILE *f;

	shared_path(path, sizeof(path), suffix);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		note("cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) || rename(tmp, path)) {
		note("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Reads the shared file SUFFIX with fscanf(fmt), leaving its name in path.
 * 0 when that converted nitems items; 1 when not (the caller says so);
 * -1 when the file cannot be opened ("WHAT PATH: error" noted).
 */
static inline int __attribute__((format(scanf, 6, 7)))
shared_fetch(char *path, size_t len, const char *suffix, const char *what,
	     int nitems, const char *fmt, ...)
{
	va_list ap;
	FILE *f;
	int ok;

	shared_path(path, len, suffix);
	f = fopen(path, "r");
	if (!f) {
		note("%s %s: %s", what, path, strerror(errno));
		return -1;
	}
	va_start(ap, fmt);
	ok = vfscanf(f, fmt, ap) == nitems;
	va_end(ap);
	fclose(f);
	return ok ? 0 : 1;
}

/*
 * recvmsg(flags) of one message into buf: its source in *from (fromlen
 * bytes), its msg_flags (MSG_TRUNC) in *msg_flags.  Returns its length,
 * -1 on error.
 */
static inline ssize_t recv_msg_sa(int fd, void *buf, size_t len, int flags,
				  void *from, socklen_t fromlen,
				  int *msg_flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = from, .msg_namelen = fromlen,
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	ssize_t n;

	memset(from, 0, fromlen);
	n = recvmsg(fd, &msg, flags);
	*msg_flags = msg.msg_flags;
	return n;
}

/* recv_msg_sa() from an IPv4 peer. */
static inline ssize_t recv_msg(int fd, void *buf, size_t len, int flags,
			       struct sockaddr_in *from, int *msg_flags)
{
	return recv_msg_sa(fd, buf, len, flags, from, sizeof(*from),
			   msg_flags);
}

/*
 * sendto(MSG_DONTWAIT) of one message, again while the send buffer is full
 * or the destination port congested (EAGAIN, ENOBUFS; EINTR), until
 * deadline (now_ms()).  Returns what sendto returned last: the length,
 * or -1 with errno set (EAGAIN or ENOBUFS at the deadline).
 */
static inline ssize_t send_until(int fd, const void *buf, size_t len,
				 const struct sockaddr_in *to, int64_t deadline)
{
	ssize_t n;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };

		n = rds_sendto(fd, buf, len, MSG_DONTWAIT, to);
		if (n >= 0 ||
		    (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) ||
		    now_ms() >= deadline)
			return n;
		poll(&pfd, 1, 100);
	}
}

/* SO_SNDBUF and SO_RCVBUF of v, forced past the sysctl maximum if allowed. */
static inline int set_sockbufs(int fd, int v)
{
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)))
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)))
		return -1;
	return 0;
}

/*
 * The RDS_INFO_CONNECTIONS snapshot of fd: *conns (malloc'ed) and the
 * number of connections; -1 (noted) when the info failed.
 */
static inline int info_conns(int fd, struct rds_info_connection **conns)
{
	socklen_t len;
	void *buf;
	int ret;

	ret = rds_info_get(fd, RDS_INFO_CONNECTIONS, &buf, &len);
	if (ret != (int)sizeof(**conns)) {
		note("RDS_INFO_CONNECTIONS returned %d (%s), expected item size %zu",
		     ret, ret < 0 ? strerror(errno) : "", sizeof(**conns));
		free(buf);
		*conns = NULL;
		return -1;
	}
	*conns = buf;
	return len / sizeof(**conns);
}

/*
 * The ib_counters line, without its newline, in buf ("" when there is
 * none).  1 when a line was read, 0 when the file is empty, -1 with errno
 * set when it cannot be opened.
 */
static inline int read_counters(char *buf, size_t len)
{
	FILE *f = fopen(IB_COUNTERS, "r");
	int ret;

	buf[0] = 0;
	if (!f)
		return -1;
	ret = fgets(buf, len, f) != NULL;
	if (!ret)
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ret;
}

/* Value of key in an ib_counters line, -1 when absent. */
static inline long long counter(const char *line, const char *key)
{
	size_t kl = strlen(key);
	const char *p = line;

	while (*p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == '=')
			return strtoll(p + kl + 1, NULL, 10);
		while (*p && *p != ' ')
			p++;
	}
	return -1;
}

/* A module parameter as a number; -1 (noted) when it cannot be read. */
static inline long long rds_param(const char *name)
{
	char path[256], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/rds/parameters/%s", name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		note("cannot read %s", path);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	if (buf[0] == 'Y' || buf[0] == 'N')	/* bool */
		return buf[0] == 'Y';
	return strtoll(buf, NULL, 0);
}

#endif /* _TWO_HOST_H */
