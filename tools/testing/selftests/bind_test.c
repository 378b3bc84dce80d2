// SPDX-License-Identifier: GPL-2.0
/*
 * bind(), connect() and getsockname()/getpeername() of AF_RDS sockets:
 * address families, ephemeral ports, conflicts and the errno rules.
 *
 * A bind succeeds only where a transport can carry the socket's traffic:
 * the loopback transport on 127/8 and ::1, the IB transport on an address
 * of an RDMA device (HOST_ADDR, rxe0 on eth0).  Every other address class
 * (local but on no RDMA device, v4 or v6, link-local included; remote;
 * any address in another namespace, see netns_test) is refused with
 * EADDRNOTAVAIL, as the kernel's RDS with only rds_rdma loaded refuses
 * it, with one log line.
 */
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>

#include "rds_test.h"
#include "rds_harness.h"

/* Addresses put on lo for a test: local, but on no RDMA device. */
#define NONRDMA_V4	"198.51.100.77"
#define NONRDMA_V6	"2001:db8::77"

static int ip(const char *args)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "ip %s >/dev/null 2>&1", args);
	return system(cmd);
}

/* The first kernel log line from fd (at the end of /dev/kmsg when opened)
 * that contains what; 0 if none is there.
 */
static int kmsg_has(int fd, const char *what)
{
	static char rec[8192];	/* the longest record /dev/kmsg gives */
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: read on */
		if (n <= 0)
			return 0;	/* EAGAIN: no more records */
		rec[n] = 0;
		if (strstr(rec, what))
			return 1;
	}
}

/* First in the file: the refusal's log line is rate limited (10 lines in
 * 5 s, shared by every bind), and no bind of this program has been
 * refused yet; in the one-host plan family_test, just before, refuses
 * none.
 */
TEST(refusal_is_logged)
{
	int kmsg, fd;

	/* "replace": a failed earlier run may have left it there */
	ASSERT_EQ(0, ip("addr replace " NONRDMA_V4 "/32 dev lo"));
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));
	fd = rds_bound(NONRDMA_V4, 4030);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	EXPECT_TRUE(kmsg_has(kmsg, "cannot bind to " NONRDMA_V4
			     ": no RDMA device has this address"));
	close(kmsg);
	ip("addr del " NONRDMA_V4 "/32 dev lo");
}

TEST(local_non_rdma_v4_refused)
{
	struct sockaddr_in sin = rds_sin(NONRDMA_V4, 4031);
	int fd, v = RDS_TRANS_IB;

	ASSERT_EQ(0, ip("addr replace " NONRDMA_V4 "/32 dev lo"));
	EXPECT_EQ(-1, rds_bound(NONRDMA_V4, 4031));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	/* pinned to IB: the transport cannot serve it */
	fd = rds_socket();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &v, sizeof(v)));
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	EXPECT_EQ(ENOPROTOOPT, errno);
	close(fd);
	ip("addr del " NONRDMA_V4 "/32 dev lo");
}

TEST(local_non_rdma_v6_refused)
{
	struct sockaddr_in6 sin6 = rds_sin6(NONRDMA_V6, 4032, 0);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	if (ip("-6 addr replace " NONRDMA_V6 "/128 dev lo nodad"))
		SKIP(return, "cannot add %s to lo (IPv6 off?)", NONRDMA_V6);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	close(fd);
	ip("-6 addr del " NONRDMA_V6 "/128 dev lo");
}

TEST(remote_refused)
{
	/* in HOST_ADDR's subnet, on no host of the one-host topology */
	EXPECT_EQ(-1, rds_bound("10.0.0.2", 4033));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
}

/* The IB transport on HOST_ADDR; a local destination goes over loopback
 * whatever the sender is bound to, a remote one never does.
 */
TEST(loopback_carries_local_only)
{
	struct sockaddr_in to = rds_sin(HOST_ADDR, 4034), from;
	socklen_t fl = sizeof(from);
	int rx, tx, t = -1;
	socklen_t tl = sizeof(t);
	char c = 'x';

	rx = rds_bound(HOST_ADDR, 4034);
	ASSERT_LE(0, rx) TH_LOG("bind %s: %s", HOST_ADDR, strerror(errno));
	ASSERT_EQ(0, getsockopt(rx, SOL_RDS, SO_RDS_TRANSPORT, &t, &tl));
	EXPECT_EQ(RDS_TRANS_IB, t);
	tx = rds_bound("127.0.0.1", 4035);
	ASSERT_LE(0, tx);
	ASSERT_EQ(1, sendto(tx, &c, 1, 0, (struct sockaddr *)&to, sizeof(to)));
	c = 0;
	ASSERT_EQ(1, recvfrom(rx, &c, 1, 0, (struct sockaddr *)&from, &fl));
	EXPECT_EQ('x', c);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), from.sin_addr.s_addr);
	/* from loopback, a remote destination is unreachable (it used to be
	 * "sent" and dropped on this host)
	 */
	to = rds_sin("192.0.2.1", 4034);
	EXPECT_EQ(-1, sendto(tx, &c, 1, 0, (struct sockaddr *)&to,
			     sizeof(to)));
	EXPECT_EQ(ENETUNREACH, errno);
	close(tx);
	close(rx);
}

TEST(bind_loopback_v4)
{
	struct sockaddr_in sin = rds_sin("127.0.0.1", 4000), got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(sizeof(got), len);
	EXPECT_EQ(AF_INET, got.sin_family);
	EXPECT_EQ(htons(4000), got.sin_port);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), got.sin_addr.s_addr);
	close(fd);
}

TEST(bind_any_127_8)
{
	int fd = rds_bound("127.1.2.3", 4001);

	ASSERT_LE(0, fd) TH_LOG("bind 127.1.2.3: %s", strerror(errno));
	close(fd);
}

TEST(bind_host_address)
{
	int fd = rds_bound(HOST_ADDR, 4002);

	ASSERT_LE(0, fd) TH_LOG("bind %s: %s", HOST_ADDR, strerror(errno));
	close(fd);
}

TEST(ephemeral_port)
{
	struct sockaddr_in a, b;
	int fa = rds_bound("127.0.0.1", 0);
	int fb = rds_bound("127.0.0.1", 0);

	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	a = rds_name(fa);
	b = rds_name(fb);
	EXPECT_LE(2, ntohs(a.sin_port));
	EXPECT_LE(2, ntohs(b.sin_port));
	EXPECT_NE(a.sin_port, b.sin_port);
	close(fa);
	close(fb);
}

TEST(eaddrinuse)
{
	int fa = rds_bound("127.0.0.1", 4003);
	int fb;

	ASSERT_LE(0, fa);
	fb = rds_bound("127.0.0.1", 4003);
	EXPECT_EQ(-1, fb);
	EXPECT_EQ(EADDRINUSE, errno);
	/* another address, same port: fine */
	fb = rds_bound("127.0.0.2", 4003);
	EXPECT_LE(0, fb);
	close(fb);
	close(fa);
	/* released on close */
	fa = rds_bound("127.0.0.1", 4003);
	EXPECT_LE(0, fa);
	close(fa);
}

TEST(port_1_einval)
{
	EXPECT_EQ(-1, rds_bound("127.0.0.1", 1));
	EXPECT_EQ(EINVAL, errno);
}

TEST(any_bcast_mcast_einval)
{
	EXPECT_EQ(-1, rds_bound("0.0.0.0", 4004));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, rds_bound("255.255.255.255", 4004));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, rds_bound("224.0.0.1", 4004));
	EXPECT_EQ(EINVAL, errno);
}

TEST(nonlocal_eaddrnotavail)
{
	EXPECT_EQ(-1, rds_bound("192.0.2.1", 4005));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
}

TEST(rebind_einval)
{
	struct sockaddr_in sin = rds_sin("127.0.0.1", 4007);
	int fd = rds_bound("127.0.0.1", 4006);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(short_len_and_family)
{
	struct sockaddr_in sin = rds_sin("127.0.0.1", 4008);
	struct sockaddr_in6 sin6 = rds_sin6("::1", 4008, 0);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin, sizeof(sin) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6) - 1));
	EXPECT_EQ(EINVAL, errno);
	sin.sin_family = AF_UNIX;
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(bind_v6_loopback)
{
	struct sockaddr_in6 sin6 = rds_sin6("::1", 4009, 0), got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();
	int t = 0;
	socklen_t tl = sizeof(t);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(sizeof(got), len);
	EXPECT_EQ(AF_INET6, got.sin6_family);
	EXPECT_EQ(htons(4009), got.sin6_port);
	EXPECT_EQ(0, memcmp(&got.sin6_addr, &in6addr_loopback, 16));
	ASSERT_EQ(0, getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &t, &tl));
	EXPECT_EQ(RDS_TRANS_LOOP, t);
	close(fd);
}

TEST(bind_v4_mapped)
{
	struct sockaddr_in6 sin6 = rds_sin6("::ffff:127.0.0.1", 4010, 0);
	struct sockaddr_in got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	/* a v4-mapped binding reads back as IPv4 */
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(sizeof(got), len);
	EXPECT_EQ(AF_INET, got.sin_family);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), got.sin_addr.s_addr);
	/* and conflicts with the same IPv4 binding */
	EXPECT_EQ(-1, rds_bound("127.0.0.1", 4010));
	EXPECT_EQ(EADDRINUSE, errno);
	close(fd);
}

TEST(bind_v6_mapped_any_einval)
{
	struct sockaddr_in6 sin6 = rds_sin6("::ffff:0.0.0.0", 4011, 0);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	EXPECT_EQ(EINVAL, errno);
	sin6 = rds_sin6("::", 4011, 0);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	EXPECT_EQ(EINVAL, errno);
	sin6 = rds_sin6("ff02::1", 4011, 0);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST(link_local_needs_scope)
{
	struct sockaddr_in6 sin6 = rds_sin6("fe80::1", 4012, 0);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	EXPECT_EQ(EINVAL, errno);
	/* with a scope, but not an address of that link */
	sin6.sin6_scope_id = if_nametoindex("lo");
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	close(fd);
}

/* Whether an RDMA device has a port on netdev name (its GID table names
 * the netdevs it serves: /sys/class/infiniband/DEV/ports/P/gid_attrs/
 * ndevs/N).
 */
static int rdma_serves(const char *name)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd),
		 "grep -qsx '%s' /sys/class/infiniband/*/ports/*/gid_attrs/ndevs/*",
		 name);
	return system(cmd) == 0;
}

/* The first IPv6 link-local address of a netdev that an RDMA device
 * serves (rdma 1) or that none serves (rdma 0), with its scope id.
 */
static int find_link_local(struct sockaddr_in6 *out, int rdma)
{
	struct ifaddrs *ifa, *i;
	int found = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i && !found; i = i->ifa_next) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)i->ifa_addr;

		if (!a || a->sin6_family != AF_INET6 ||
		    !IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr) ||
		    rdma_serves(i->ifa_name) != rdma)
			continue;
		*out = *a;
		out->sin6_scope_id = if_nametoindex(i->ifa_name);
		found = 1;
	}
	freeifaddrs(ifa);
	return found;
}

/* The link-local address of the RDMA netdev (rxe0's eth0) binds, with
 * its scope id: IPv6 over IB.
 */
TEST(link_local_of_rdma_binds)
{
	struct sockaddr_in6 ll;
	int fd, tries;

	/* DAD may still be running on a fresh boot */
	for (tries = 0; tries < 50 && !find_link_local(&ll, 1); tries++)
		usleep(100000);
	if (tries == 50)
		SKIP(return, "no link-local address on a netdev of an RDMA device");
	fd = rds_socket();
	ASSERT_LE(0, fd);
	ll.sin6_port = htons(4015);
	EXPECT_EQ(0, bind(fd, (struct sockaddr *)&ll, sizeof(ll)))
		TH_LOG("bind: %s", strerror(errno));
	close(fd);
}

/* A link-local address of a netdev that no RDMA device serves (one end
 * of a veth pair made for the test) is refused: EADDRNOTAVAIL.
 */
TEST(link_local_of_non_rdma_refused)
{
	struct sockaddr_in6 ll = { .sin6_family = AF_INET6 };
	int fd;

	ip("link del rdsbind0");
	if (ip("link add rdsbind0 type veth peer name rdsbind1") ||
	    ip("link set rdsbind1 up") || ip("link set rdsbind0 up") ||
	    ip("-6 addr add fe80::5d5/64 dev rdsbind0 nodad"))
		SKIP(ip("link del rdsbind0"); return, "no veth netdev");
	inet_pton(AF_INET6, "fe80::5d5", &ll.sin6_addr);
	ll.sin6_scope_id = if_nametoindex("rdsbind0");
	ll.sin6_port = htons(4015);
	fd = rds_socket();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, bind(fd, (struct sockaddr *)&ll, sizeof(ll)));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	close(fd);
	ip("link del rdsbind0");
}

TEST(connect_and_getpeername)
{
	struct sockaddr_in to = rds_sin("127.0.0.1", 4013), got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, getpeername(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(ENOTCONN, errno);
	/* unbound, unconnected: AF_UNSPEC */
	len = sizeof(got);
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(AF_UNSPEC, got.sin_family);

	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&to, sizeof(to)));
	len = sizeof(got);
	ASSERT_EQ(0, getpeername(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(AF_INET, got.sin_family);
	EXPECT_EQ(htons(4013), got.sin_port);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), got.sin_addr.s_addr);
	/* unbound but connected: empty address of the peer's family */
	len = sizeof(got);
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(AF_INET, got.sin_family);
	EXPECT_EQ(0, got.sin_port);
	close(fd);
}

TEST(connect_errors)
{
	struct sockaddr_in to = rds_sin("0.0.0.0", 4014);
	struct sockaddr_in6 to6 = rds_sin6("ff02::1", 4014, 0);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&to, sizeof(to)));
	EXPECT_EQ(EDESTADDRREQ, errno);
	to = rds_sin("224.0.0.1", 4014);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&to, sizeof(to)));
	EXPECT_EQ(EINVAL, errno);
	to = rds_sin("127.0.0.1", 4014);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&to, sizeof(to) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&to6, sizeof(to6)));
	EXPECT_EQ(EPROTOTYPE, errno);
	to.sin_family = AF_UNIX;
	EXPECT_EQ(-1, connect(fd, (struct sockaddr *)&to, sizeof(to)));
	EXPECT_EQ(EAFNOSUPPORT, errno);
	close(fd);
}

TEST(unsupported_ops)
{
	int fd = rds_bound("127.0.0.1", 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, listen(fd, 1));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-1, shutdown(fd, SHUT_RDWR));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(fd);
}

TEST(many_ephemeral)
{
	enum { N = 512 };
	int *fds = calloc(N, sizeof(int));
	int i, j;

	ASSERT_NE(NULL, fds);
	for (i = 0; i < N; i++) {
		fds[i] = rds_bound("127.0.0.1", 0);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < N; i += 37)
		for (j = i + 1; j < N; j++)
			ASSERT_NE(rds_name(fds[i]).sin_port,
				  rds_name(fds[j]).sin_port);
	for (i = 0; i < N; i++)
		close(fds[i]);
	free(fds);
}

TEST_HARNESS_MAIN
