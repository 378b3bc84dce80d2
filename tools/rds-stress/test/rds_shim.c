// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for host-side tests of rds-stress where AF_RDS is not
 * available: socket(AF_RDS, SOCK_SEQPACKET) becomes an AF_UNIX datagram
 * socket, an RDS address a.b.c.d:port the abstract name
 * "rds-shim/a.b.c.d:port", and SOL_RDS options succeed (RDS_GET_MR fails
 * with EOPNOTSUPP).  Unix datagrams, unlike UDP, carry messages of 0 to
 * 1 MiB (up to the send buffer) and are never dropped on a full receiver:
 * the sender gets EAGAIN, as it gets it from RDS.  It keeps the tool's
 * control protocol, flow control, reporting and verification honest; it
 * is not RDS (no congestion, no RDMA).  A message to a name nobody holds
 * (the peer has exited) vanishes, as a UDP datagram would.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#define AF_RDS_	21
#define SOL_RDS_	276
#define RDS_GET_MR_	2

static unsigned char ours[65536];	/* fds that stand for RDS sockets */

typedef int (*socket_fn)(int, int, int);
typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);
typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);

/* static name_fn real_name, looked up once */
#define REAL(name) \
	static name##_fn real_##name; \
	if (!real_##name) \
		real_##name = (name##_fn)dlsym(RTLD_NEXT, #name)

static int is_ours(int fd)
{
	return fd >= 0 && fd < (int)sizeof(ours) && ours[fd];
}

static socklen_t to_un(const struct sockaddr_in *in, struct sockaddr_un *un)
{
	char a[INET_ADDRSTRLEN];
	int n;

	inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	n = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1,
		     "rds-shim/%s:%u", a, ntohs(in->sin_port));
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

static int to_in(const struct sockaddr_un *un, socklen_t len,
		 struct sockaddr_in *in)
{
	char path[sizeof(un->sun_path)], a[INET_ADDRSTRLEN];
	size_t off = offsetof(struct sockaddr_un, sun_path) + 1;
	unsigned int port;

	memset(in, 0, sizeof(*in));
	if (len <= off || un->sun_path[0])
		return -1;
	memcpy(path, un->sun_path + 1, len - off);
	path[len - off] = 0;
	if (sscanf(path, "rds-shim/%15[0-9.]:%u", a, &port) != 2 ||
	    inet_pton(AF_INET, a, &in->sin_addr) != 1)
		return -1;
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	return 0;
}

int socket(int domain, int type, int protocol)
{
	int fd;

	REAL(socket);
	if (domain != AF_RDS_)
		return real_socket(domain, type, protocol);
	fd = real_socket(AF_UNIX, SOCK_DGRAM | (type & SOCK_CLOEXEC), 0);
	if (fd >= 0 && fd < (int)sizeof(ours))
		ours[fd] = 1;
	return fd;
}

int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr_un un;

	REAL(bind);
	if (!is_ours(fd) || len < sizeof(struct sockaddr_in) ||
	    sa->sa_family != AF_INET)
		return real_bind(fd, sa, len);
	len = to_un((const struct sockaddr_in *)sa, &un);
	return real_bind(fd, (struct sockaddr *)&un, len);
}

/* RDS_SHIM_ENOMEM=N: every Nth send of ours fails ENOMEM. */
static int shim_enomem(void)
{
	static __thread unsigned long calls;
	static long every = -1;

	if (every < 0) {
		const char *e = getenv("RDS_SHIM_ENOMEM");

		every = e ? strtol(e, NULL, 10) : 0;
	}
	return every > 0 && ++calls % every == 0;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct sockaddr_un un;
	struct msghdr m;
	ssize_t n;
	size_t i, len = 0;

	REAL(sendmsg);
	if (!is_ours(fd) || !msg->msg_name ||
	    msg->msg_namelen < sizeof(struct sockaddr_in))
		return real_sendmsg(fd, msg, flags);
	if (shim_enomem()) {
		errno = ENOMEM;	/* RDS_SHIM_ENOMEM: as a kernel out of memory */
		return -1;
	}
	m = *msg;
	m.msg_name = &un;
	m.msg_namelen = to_un(msg->msg_name, &un);
	m.msg_control = NULL;	/* RDS cmsgs mean nothing here */
	m.msg_controllen = 0;
	n = real_sendmsg(fd, &m, flags);
	if (n < 0 && (errno == ECONNREFUSED || errno == ENOENT)) {
		for (i = 0; i < msg->msg_iovlen; i++)
			len += msg->msg_iov[i].iov_len;
		return len;	/* nobody there: gone, like a datagram */
	}
	if (n < 0 && errno == EAGAIN)
		usleep(500);	/* a full peer does not wake POLLOUT */
	return n;
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct sockaddr_un un;
	struct sockaddr_in in;
	void *name = msg->msg_name;
	socklen_t namelen = msg->msg_namelen;
	ssize_t n;

	REAL(recvmsg);
	if (!is_ours(fd) || !name)
		return real_recvmsg(fd, msg, flags);
	msg->msg_name = &un;
	msg->msg_namelen = sizeof(un);
	msg->msg_controllen = 0;
	n = real_recvmsg(fd, msg, flags);
	if (n >= 0 && !to_in(&un, msg->msg_namelen, &in)) {
		memcpy(name, &in, namelen < sizeof(in) ? namelen : sizeof(in));
		msg->msg_namelen = sizeof(in);
	} else {
		msg->msg_namelen = 0;
	}
	msg->msg_name = name;
	return n;
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	REAL(setsockopt);
	if (level == SOL_RDS_) {
		if (name == RDS_GET_MR_) {
			errno = EOPNOTSUPP;
			return -1;
		}
		return 0;
	}
	return real_setsockopt(fd, level, name, val, len);
}
