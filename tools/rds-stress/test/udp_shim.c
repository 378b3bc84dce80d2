// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for host-side tests of rds-stress where AF_RDS is not
 * available: socket(AF_RDS, SOCK_SEQPACKET) becomes a UDP socket and
 * SOL_RDS options succeed (RDS_GET_MR fails with EOPNOTSUPP).  Datagrams
 * on loopback keep the tool's control protocol, flow control, reporting
 * and verification honest; it is not RDS (no congestion, no RDMA).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>

#define AF_RDS_	21
#define SOL_RDS_	276
#define RDS_GET_MR_	2

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);

	if (!real)
		real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	if (domain == AF_RDS_)
		return real(AF_INET, SOCK_DGRAM | (type & SOCK_CLOEXEC), 0);
	return real(domain, type, protocol);
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int (*real)(int, int, int, const void *, socklen_t);

	if (!real)
		real = (int (*)(int, int, int, const void *, socklen_t))
			dlsym(RTLD_NEXT, "setsockopt");
	if (level == SOL_RDS_) {
		if (name == RDS_GET_MR_) {
			errno = EOPNOTSUPP;
			return -1;
		}
		return 0;
	}
	return real(fd, level, name, val, len);
}
