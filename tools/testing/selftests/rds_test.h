/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the AF_RDS selftests: sockets bound to loopback or
 * host addresses, send/receive wrappers that report errno, and reading an
 * RDS_INFO_* snapshot.
 */
#ifndef _RDS_TEST_H
#define _RDS_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif

/* What SO_RDS_TRANSPORT reports for a loopback-bound socket. */
#define RDS_TRANS_LOOP	3

/* The address of the guest's eth0 (one-host topology). */
#define HOST_ADDR	"10.0.0.1"

static inline struct sockaddr_in rds_sin(const char *addr, uint16_t port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	inet_pton(AF_INET, addr, &sin.sin_addr);
	return sin;
}

static inline struct sockaddr_in6 rds_sin6(const char *addr, uint16_t port,
					   uint32_t scope)
{
	struct sockaddr_in6 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	sin6.sin6_scope_id = scope;
	inet_pton(AF_INET6, addr, &sin6.sin6_addr);
	return sin6;
}

static inline int rds_socket(void)
{
	return socket(AF_RDS, SOCK_SEQPACKET, 0);
}

/*
 * addr:port in *ss, of either family: IPv4, or IPv6 with an optional
 * "%scope" (an interface name or index) after a link-local address.
 * Returns the address's length, 0 when addr is neither.
 */
static inline socklen_t rds_sa(const char *addr, uint16_t port,
			       struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char a[INET6_ADDRSTRLEN + IF_NAMESIZE + 2], *pct;

	memset(ss, 0, sizeof(*ss));
	if (!strchr(addr, ':')) {
		*(struct sockaddr_in *)ss = rds_sin(addr, port);
		return sizeof(struct sockaddr_in);
	}
	if (strlen(addr) >= sizeof(a))
		return 0;
	strcpy(a, addr);
	pct = strchr(a, '%');
	if (pct) {
		*pct++ = '\0';
		sin6->sin6_scope_id = if_nametoindex(pct);
		if (!sin6->sin6_scope_id)
			sin6->sin6_scope_id = strtoul(pct, NULL, 10);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	if (inet_pton(AF_INET6, a, &sin6->sin6_addr) != 1)
		return 0;
	return sizeof(*sin6);
}

/* addr (rds_sa()) and port of a socket address, as text. */
static inline const char *rds_sa_str(const struct sockaddr_storage *ss,
				     char *buf, size_t len)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s%%%u]:%u", a, sin6->sin6_scope_id,
			 ntohs(sin6->sin6_port));
	} else {
		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(sin->sin_port));
	}
	return buf;
}

/* Whether two socket addresses are the same (family, address, port, scope). */
static inline bool rds_sa_equal(const struct sockaddr_storage *x,
				const struct sockaddr_storage *y)
{
	const struct sockaddr_in6 *x6 = (const struct sockaddr_in6 *)x;
	const struct sockaddr_in6 *y6 = (const struct sockaddr_in6 *)y;
	const struct sockaddr_in *x4 = (const struct sockaddr_in *)x;
	const struct sockaddr_in *y4 = (const struct sockaddr_in *)y;

	if (x->ss_family != y->ss_family)
		return false;
	if (x->ss_family == AF_INET6)
		return !memcmp(&x6->sin6_addr, &y6->sin6_addr, 16) &&
		       x6->sin6_port == y6->sin6_port &&
		       x6->sin6_scope_id == y6->sin6_scope_id;
	return x4->sin_addr.s_addr == y4->sin_addr.s_addr &&
	       x4->sin_port == y4->sin_port;
}

/*
 * A socket bound to addr:port (port 0: ephemeral), addr of either family
 * (rds_sa()); -1 with errno set.
 */
static inline int rds_bound(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t sl = rds_sa(addr, port, &ss);
	int fd = rds_socket();

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&ss, sl)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The bound address of fd (IPv4). */
static inline struct sockaddr_in rds_name(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	memset(&sin, 0, sizeof(sin));
	getsockname(fd, (struct sockaddr *)&sin, &len);
	return sin;
}

static inline ssize_t rds_sendto(int fd, const void *buf, size_t len,
				 int flags, const struct sockaddr_in *to)
{
	return sendto(fd, buf, len, flags, (const struct sockaddr *)to,
		      sizeof(*to));
}

/* Returns the result of recvmsg; fills *from if given. */
static inline ssize_t rds_recvfrom(int fd, void *buf, size_t len, int flags,
				   struct sockaddr_in *from)
{
	socklen_t fl = sizeof(*from);

	return recvfrom(fd, buf, len, flags, (struct sockaddr *)from,
			from ? &fl : NULL);
}

static inline void rds_fill(unsigned char *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

/*
 * getsockopt(SOL_RDS, RDS_INFO_*) in rds-info's calling sequence: probe
 * with 0, then fetch.  Returns the item size, *buf (malloc'ed) and *len;
 * -1 on error.
 */
static inline int rds_info_get(int fd, int type, void **buf, socklen_t *len)
{
	int ret;

	*buf = NULL;
	*len = 0;
	for (;;) {
		ret = getsockopt(fd, SOL_RDS, type, *buf, len);
		if (ret >= 0 || errno != ENOSPC)
			return ret;
		free(*buf);
		*buf = malloc(*len + 1);
		if (!*buf)
			return -1;
	}
}

/* The RDS_INFO_COUNTERS value called name (e.g. send_rdma_dropped), -1 if
 * absent or on error.
 */
static inline long long rds_info_counter(int fd, const char *name)
{
	struct rds_info_counter *c;
	long long v = -1;
	socklen_t len;
	unsigned int i;
	void *buf;

	if (rds_info_get(fd, RDS_INFO_COUNTERS, &buf, &len) !=
	    (int)sizeof(*c)) {
		free(buf);
		return -1;
	}
	c = buf;
	for (i = 0; i < len / sizeof(*c); i++)
		if (!strncmp((char *)c[i].name, name, sizeof(c[i].name)))
			v = c[i].value;
	free(buf);
	return v;
}

#endif /* _RDS_TEST_H */
