// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP control connection between the two sides: the active side
 * connects (with retries and backoff), sends the run's options, and both
 * sides exchange small framed messages: a 32-bit type and a 32-bit length,
 * big-endian, then the payload.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "rds_stress.h"

#define CTL_MAX_LEN	(1U << 20)

const char *ctl_name(int type)
{
	static const char *const names[] = {
		[CTL_OPTS] = "OPTS", [CTL_READY] = "READY", [CTL_GO] = "GO",
		[CTL_STOP] = "STOP", [CTL_DRAINED] = "DRAINED",
		[CTL_RESULT] = "RESULT", [CTL_ABORT] = "ABORT",
	};

	if (type > 0 && type <= CTL_ABORT)
		return names[type];
	return "?";
}

int ctl_listen(const struct options *o)
{
	struct rs_addr any = { .family = AF_INET6, .a6 = IN6ADDR_ANY_INIT };
	const struct rs_addr *a = o->have_laddr ? &o->laddr : &any;
	struct sockaddr_storage ss;
	char where[ADDR_STRLEN + 8];
	int fd, one = 1;
	socklen_t sl;

	/* Without -r: every address of both families (IPv4 ones come as
	 * v4-mapped), or of IPv4 alone on a host without IPv6.
	 */
	fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && !o->have_laddr && errno == EAFNOSUPPORT) {
		any.family = AF_INET;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0) {
		fprintf(stderr, "rds-stress: TCP socket: %s\n", strerror(errno));
		return -1;
	}
	sl = addr_sockaddr(a, o->port, &ss);
	addr_port_str(a, o->port, where, sizeof(where));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		int e = errno;

		if (e == EADDRNOTAVAIL)
			fprintf(stderr,
				"rds-stress: address %s is not local to this host (-r)\n",
				where);
		else if (e == EADDRINUSE)
			fprintf(stderr,
				"rds-stress: control port %s is in use (another rds-stress? use -p)\n",
				where);
		else
			fprintf(stderr, "rds-stress: cannot bind control socket to %s: %s\n",
				where, strerror(e));
		close(fd);
		return -1;
	}
	if (listen(fd, 1) < 0) {
		fprintf(stderr, "rds-stress: listen on %s: %s\n", where,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

volatile sig_atomic_t stress_signals;

int stress_interrupted(void)
{
	return stress_signals != 0;
}

int ctl_accept(int lfd)
{
	int fd, one = 1;

	do {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR && !stress_interrupted());
	if (fd < 0) {
		fprintf(stderr, "rds-stress: accepting the control connection: %s\n",
			strerror(errno));
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int ctl_connect(const struct options *o)
{
	struct sockaddr_storage sin, me;
	char where[ADDR_STRLEN + 8];
	unsigned int attempt;
	int fd = -1, one = 1, e = 0;
	socklen_t sl, ml = 0;

	sl = addr_sockaddr(&o->peer, o->port, &sin);
	if (o->have_laddr)
		ml = addr_sockaddr(&o->laddr, 0, &me);
	addr_port_str(&o->peer, o->port, where, sizeof(where));
	for (attempt = 0; attempt <= o->connect_retries; attempt++) {
		if (attempt) {
			unsigned int ms = 100U << (attempt < 5 ? attempt : 5);
			struct timespec ts;

			if (ms > 2000)
				ms = 2000;
			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (ms % 1000) * 1000000L;
			nanosleep(&ts, NULL);
		}
		fd = socket(o->peer.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			fprintf(stderr, "rds-stress: TCP socket: %s\n",
				strerror(errno));
			return -1;
		}
		if (o->have_laddr) {
			if (bind(fd, (struct sockaddr *)&me, ml) < 0) {
				char l[ADDR_STRLEN];

				addr_str(&o->laddr, l, sizeof(l));
				if (errno == EADDRNOTAVAIL)
					fprintf(stderr,
						"rds-stress: address %s is not local to this host (-r)\n",
						l);
				else
					fprintf(stderr,
						"rds-stress: cannot bind control socket to %s: %s\n",
						l, strerror(errno));
				close(fd);
				return -1;
			}
		}
		if (connect(fd, (struct sockaddr *)&sin, sl) == 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			return fd;
		}
		e = errno;
		close(fd);
		if (e != ECONNREFUSED && e != ETIMEDOUT && e != EHOSTUNREACH &&
		    e != ENETUNREACH && e != EINTR && e != ECONNRESET &&
		    e != EADDRNOTAVAIL)
			break;
	}
	fprintf(stderr,
		"rds-stress: peer %s unreachable: %s (%u attempt%s; is the passive side running? --connect-retries waits for it)\n",
		where, strerror(e), attempt > o->connect_retries ? attempt :
		attempt + 1, attempt == 1 ? "" : "s");
	return -1;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR && !stress_interrupted())
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

int ctl_send(int fd, int type, const void *buf, uint32_t len)
{
	uint32_t h[2] = { htonl(type), htonl(len) };

	if (write_all(fd, h, sizeof(h)) || (len && write_all(fd, buf, len)))
		return -1;
	return 0;
}

int ctl_recv(int fd, char **buf, uint32_t *len)
{
	uint32_t h[2];
	char *b;
	int r;

	*buf = NULL;
	*len = 0;
	r = read_all(fd, h, sizeof(h));
	if (r <= 0)
		return r;
	h[0] = ntohl(h[0]);
	h[1] = ntohl(h[1]);
	if (!h[0] || h[0] > CTL_ABORT || h[1] > CTL_MAX_LEN) {
		errno = EPROTO;
		return -1;
	}
	b = malloc(h[1] + 1);
	if (!b)
		return -1;
	if (h[1] && read_all(fd, b, h[1]) <= 0) {
		free(b);
		errno = EPROTO;
		return -1;
	}
	b[h[1]] = 0;
	*buf = b;
	*len = h[1];
	return h[0];
}
