// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts, IPv6 over IB (rxe): bind() of every IPv6 address class,
 * data both ways between global and between link-local addresses, and
 * what RDS6_INFO_IB_CONNECTIONS, RDS6_INFO_CONNECTIONS, their IPv4 forms
 * and /proc/net/rds/connections show of those connections.  ib_ipv6.sh
 * sets the addresses up and passes them in:
 *
 *   RDS6_ADDR, RDS6_PEER      this host's and the peer's global address
 *                             on the rxe netdev (fd00::H)
 *   RDS6_LL, RDS6_PEER_LL     the link-local addresses of the same
 *   RDS6_IFINDEX              the rxe netdev's index (their scope id)
 *   RDS6_OTHER                a global address of this host on a netdev
 *                             no RDMA device serves (a veth)
 *
 * Tests:
 *   bind_classes  mainline's errno for each class: local RDMA global and
 *                 link-local with its scope id bind (transport IB); a
 *                 link-local one without scope id: EINVAL (rds_bind());
 *                 with the scope id of another netdev (lo): EADDRNOTAVAIL;
 *                 local non-RDMA, the peer's (remote): EADDRNOTAVAIL; the
 *                 v4-mapped form of this host's IB IPv4 address binds to
 *                 IB and getsockname() gives it back as AF_INET; it
 *                 cannot send to an IPv6 peer, nor an IPv6 socket to an
 *                 IPv4 one (EOPNOTSUPP, as mainline).
 *   global        host 2 connect()s to host 1 and send()s NMSG messages of
 *                 SIZES bytes (seeded content), host 1 checks each one's
 *                 content and source (RDS6_PEER, scope 0) and echoes it by
 *                 sendto() to that source; host 2 checks the echoes.
 *   linklocal     the same between the link-local addresses: the source
 *                 carries the scope id RDS6_IFINDEX.
 *   info          after both: RDS6_INFO_IB_CONNECTIONS has one record per
 *                 pair (global, link-local) whose GIDs are the addresses
 *                 themselves (RoCE v2), RDS6_INFO_CONNECTIONS records them
 *                 over "infiniband"; the IPv4 forms hold as many records
 *                 as the IPv6 ones have v4-mapped (IPv6 ones left out); the
 *                 connections file has both lines, the link-local one
 *                 with %scope, state "up".
 */
#include <net/if.h>
#include <sys/time.h>

#define TWO_HOST_NAME	"ib_ipv6_test"
#include "two_host.h"
#include "rds_harness.h"

#define PORT		7700
#define NMSG		8
#define TRANS_IB	0		/* RDS_TRANS_IB */
#define PROC_CONNS	"/proc/net/rds/connections"

static const unsigned int sizes[NMSG] = {
	1, 100, 4095, 4096, 4097, 9000, 65536, 300000
};

struct v6env {
	const char *addr, *peer, *ll, *peer_ll, *other, *addr4;
	uint32_t ifindex;
};

/* The environment ib_ipv6.sh sets, or false (noted) when incomplete. */
static bool v6env_get(struct v6env *e)
{
	const char *ifi = getenv("RDS6_IFINDEX");

	e->addr = getenv("RDS6_ADDR");
	e->peer = getenv("RDS6_PEER");
	e->ll = getenv("RDS6_LL");
	e->peer_ll = getenv("RDS6_PEER_LL");
	e->other = getenv("RDS6_OTHER");
	e->addr4 = getenv("RDS_ADDR");
	e->ifindex = ifi ? (uint32_t)atoi(ifi) : 0;
	if (!e->addr || !e->peer || !e->ll || !e->peer_ll || !e->other ||
	    !e->addr4 || !e->ifindex) {
		note("RDS6_* unset: run through ib_ipv6.sh");
		return false;
	}
	return true;
}

FIXTURE(v6)
{
	struct v6env e;
	bool ok;
};

FIXTURE_SETUP(v6)
{
	self->ok = v6env_get(&self->e);
}

FIXTURE_TEARDOWN(v6)
{
}

/* bind() of a fresh socket to (addr, scope): 0 or the errno. */
static int bind6_errno(const char *addr, uint32_t scope, int *fd_out)
{
	struct sockaddr_in6 sin6 = rds_sin6(addr, 0, scope);
	int fd = rds_socket(), e = 0;

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)))
		e = errno;
	if (fd_out && !e)
		*fd_out = fd;
	else
		close(fd);
	return e;
}

static int transport_of(int fd)
{
	int t = -1;
	socklen_t l = sizeof(t);

	if (getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &t, &l))
		return -1;
	return t;
}

TEST_F_TIMEOUT(v6, bind_classes, 30)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 to6;
	struct sockaddr_in to4;
	socklen_t l = sizeof(ss);
	char mapped[64];
	struct v6env e;
	int fd = -1;

	if (!self->ok)
		SKIP(return, "needs ib_ipv6.sh's addresses");
	e = self->e;
	ASSERT_EQ(0, bind6_errno(e.addr, 0, &fd)) TH_LOG("local RDMA global");
	EXPECT_EQ(TRANS_IB, transport_of(fd));
	close(fd);
	fd = -1;
	ASSERT_EQ(0, bind6_errno(e.ll, e.ifindex, &fd))
		TH_LOG("local RDMA link-local %%%u", e.ifindex);
	EXPECT_EQ(TRANS_IB, transport_of(fd));
	close(fd);
	EXPECT_EQ(EINVAL, bind6_errno(e.ll, 0, NULL))
		TH_LOG("link-local without scope id");
	EXPECT_EQ(EADDRNOTAVAIL, bind6_errno(e.ll, if_nametoindex("lo"), NULL))
		TH_LOG("link-local with another netdev's scope id");
	EXPECT_EQ(EADDRNOTAVAIL, bind6_errno(e.other, 0, NULL))
		TH_LOG("local non-RDMA %s", e.other);
	EXPECT_EQ(EADDRNOTAVAIL, bind6_errno(e.peer, 0, NULL))
		TH_LOG("remote %s", e.peer);
	EXPECT_EQ(EADDRNOTAVAIL, bind6_errno(e.peer_ll, e.ifindex, NULL))
		TH_LOG("remote link-local %s", e.peer_ll);

	snprintf(mapped, sizeof(mapped), "::ffff:%s", e.addr4);
	fd = -1;
	ASSERT_EQ(0, bind6_errno(mapped, 0, &fd)) TH_LOG("%s", mapped);
	EXPECT_EQ(TRANS_IB, transport_of(fd));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&ss, &l));
	EXPECT_EQ(AF_INET, ss.ss_family);
	/* an IPv4 socket sends to IPv4 peers only (mainline: EOPNOTSUPP) */
	to6 = rds_sin6(e.peer, PORT, 0);
	EXPECT_EQ(-1, sendto(fd, "x", 1, 0, (struct sockaddr *)&to6,
			     sizeof(to6)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(fd);
	fd = -1;
	ASSERT_EQ(0, bind6_errno(e.addr, 0, &fd));
	to4 = rds_sin(e.addr4, PORT);
	EXPECT_EQ(-1, sendto(fd, "x", 1, 0, (struct sockaddr *)&to4,
			     sizeof(to4)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(fd);
}

static void fill(unsigned char *b, unsigned int len, uint64_t seed)
{
	unsigned int i;

	for (i = 0; i < len; i++) {
		if (!(i % 8))
			seed = splitmix64(&seed);
		b[i] = (unsigned char)(seed >> (8 * (i % 8)));
	}
}

/*
 * One exchange between (me, scope) and (peer, scope) on PORT + off: see
 * the header.  Returns the number of problems (noted).
 */
static int exchange(const char *me, const char *peer, uint32_t scope,
		    int off, const char *tag)
{
	struct sockaddr_in6 sa = rds_sin6(me, PORT + off, scope);
	struct sockaddr_in6 pa = rds_sin6(peer, PORT + off, scope);
	unsigned char *buf = malloc(1 << 20), *want = malloc(1 << 20);
	int fd = rds_socket(), bad = 0, i, host = this_host(), v = 4 << 20;
	struct timeval tv = { .tv_sec = 60L * time_scale() };
	char bname[32];

	if (!buf || !want || fd < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		note("%s: socket/bind %s: %s", tag, me, strerror(errno));
		bad++;
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	set_sockbufs(fd, v);
	snprintf(bname, sizeof(bname), "%s-bound", tag);
	if (barrier(bname, 60)) {
		bad++;
		goto out;
	}
	if (host == 2 && connect(fd, (struct sockaddr *)&pa, sizeof(pa))) {
		note("%s: connect %s: %s", tag, peer, strerror(errno));
		bad++;
		goto out;
	}
	for (i = 0; i < NMSG; i++) {
		struct sockaddr_in6 from;
		socklen_t fl = sizeof(from);
		unsigned int len = sizes[i];
		char fs[INET6_ADDRSTRLEN];
		ssize_t n;

		fill(want, len, 1000 + i + off);
		if (host == 2 && send(fd, want, len, 0) != (ssize_t)len) {
			note("%s: send %u: %s", tag, len, strerror(errno));
			bad++;
			break;
		}
		memset(&from, 0, sizeof(from));
		n = recvfrom(fd, buf, 1 << 20, 0, (struct sockaddr *)&from,
			     &fl);
		if (n < 0) {
			note("%s: message %d: recvfrom: %s", tag, i,
			     strerror(errno));
			bad++;
			break;
		}
		inet_ntop(AF_INET6, &from.sin6_addr, fs, sizeof(fs));
		if (n != (ssize_t)len || memcmp(buf, want, len)) {
			note("%s: message %d: %zd bytes, want %u, content %s",
			     tag, i, n, len,
			     n == (ssize_t)len ? "differs" : "-");
			bad++;
		}
		if (from.sin6_family != AF_INET6 || strcmp(fs, peer) ||
		    ntohs(from.sin6_port) != PORT + off ||
		    from.sin6_scope_id != scope) {
			note("%s: message %d from %u %s%%%u port %u, want %s%%%u port %u",
			     tag, i, from.sin6_family, fs, from.sin6_scope_id,
			     ntohs(from.sin6_port), peer, scope, PORT + off);
			bad++;
		}
		/* host 1 echoes to the source it was given */
		if (host == 1 &&
		    sendto(fd, buf, n, 0, (struct sockaddr *)&from, fl) != n) {
			note("%s: echo %d: %s", tag, i, strerror(errno));
			bad++;
			break;
		}
	}
	snprintf(bname, sizeof(bname), "%s-done", tag);
	if (barrier(bname, 120))
		bad++;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(want);
	return bad;
}

TEST_F_TIMEOUT(v6, global, 180)
{
	struct v6env e;

	if (!self->ok)
		SKIP(return, "needs ib_ipv6.sh's addresses");
	e = self->e;
	EXPECT_EQ(0, exchange(e.addr, e.peer, 0, 0, "global"));
}

TEST_F_TIMEOUT(v6, linklocal, 180)
{
	struct v6env e;

	if (!self->ok)
		SKIP(return, "needs ib_ipv6.sh's addresses");
	e = self->e;
	EXPECT_EQ(0, exchange(e.ll, e.peer_ll, e.ifindex, 1, "linklocal"));
}

static bool same6(const struct in6_addr *a, const char *s)
{
	struct in6_addr b;

	return inet_pton(AF_INET6, s, &b) == 1 && !memcmp(a, &b, sizeof(b));
}

/* Whether PROC_CONNS has a line "local remote tos infiniband up ...". */
static bool proc_line(const char *local, const char *remote)
{
	char line[512], l[80], r[80], tr[32], st[32];
	bool found = false;
	FILE *f = fopen(PROC_CONNS, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%79s %79s %*u %31s %31s", l, r, tr, st) == 4 &&
		    !strcmp(l, local) && !strcmp(r, remote) &&
		    !strcmp(tr, "infiniband") && !strcmp(st, "up"))
			found = true;
	fclose(f);
	return found;
}

TEST_F_TIMEOUT(v6, info, 30)
{
	struct rds6_info_rdma_connection *r6;
	struct rds_info_rdma_connection *r4;
	struct rds6_info_connection *c6;
	struct rds_info_connection *c4;
	char lls[96], plls[96];
	int fd = rds_socket(), n, found_g = 0, found_ll = 0, i;
	unsigned int mapped = 0;
	struct v6env e;
	socklen_t len;
	void *buf;

	if (!self->ok)
		SKIP(return, "needs ib_ipv6.sh's addresses");
	e = self->e;
	ASSERT_LE(0, fd);

	n = rds_info_get(fd, RDS6_INFO_IB_CONNECTIONS, &buf, &len);
	ASSERT_EQ((int)sizeof(*r6), n);
	r6 = buf;
	for (i = 0; i < (int)(len / sizeof(*r6)); i++) {
		bool g = same6(&r6[i].src_addr, e.addr) &&
			 same6(&r6[i].dst_addr, e.peer);
		bool ll = same6(&r6[i].src_addr, e.ll) &&
			  same6(&r6[i].dst_addr, e.peer_ll);
		const char *sa = g ? e.addr : e.ll, *da = g ? e.peer : e.peer_ll;
		struct in6_addr sg, dg;

		mapped += IN6_IS_ADDR_V4MAPPED(&r6[i].src_addr);
		if (!g && !ll)
			continue;
		found_g += g;
		found_ll += ll;
		inet_pton(AF_INET6, sa, &sg);
		inet_pton(AF_INET6, da, &dg);
		/* RoCE v2: the GID of an IPv6 address is the address */
		EXPECT_EQ(0, memcmp(r6[i].src_gid, &sg, 16))
			TH_LOG("source GID of %s", sa);
		EXPECT_EQ(0, memcmp(r6[i].dst_gid, &dg, 16))
			TH_LOG("destination GID of %s", da);
		EXPECT_LT(0U, r6[i].max_send_wr);
		EXPECT_LT(0U, r6[i].max_recv_wr);
	}
	free(buf);
	EXPECT_EQ(1, found_g) TH_LOG("RDS6_INFO_IB_CONNECTIONS %s -> %s",
				     e.addr, e.peer);
	EXPECT_EQ(1, found_ll) TH_LOG("RDS6_INFO_IB_CONNECTIONS %s -> %s",
				      e.ll, e.peer_ll);

	/* the IPv4 list holds the v4-mapped records of the IPv6 one only */
	n = rds_info_get(fd, RDS_INFO_IB_CONNECTIONS, &buf, &len);
	ASSERT_EQ((int)sizeof(*r4), n);
	r4 = buf;
	EXPECT_EQ(mapped, len / sizeof(*r4));
	free(buf);

	n = rds_info_get(fd, RDS6_INFO_CONNECTIONS, &buf, &len);
	ASSERT_EQ((int)sizeof(*c6), n);
	c6 = buf;
	found_g = found_ll = 0;
	mapped = 0;
	for (i = 0; i < (int)(len / sizeof(*c6)); i++) {
		struct in6_addr la, fa;

		/* packed records: copied out before use */
		memcpy(&la, &c6[i].laddr, sizeof(la));
		memcpy(&fa, &c6[i].faddr, sizeof(fa));
		mapped += IN6_IS_ADDR_V4MAPPED(&la);
		if (strcmp((char *)c6[i].transport, "infiniband"))
			continue;
		found_g += same6(&la, e.addr) && same6(&fa, e.peer);
		found_ll += same6(&la, e.ll) && same6(&fa, e.peer_ll);
	}
	free(buf);
	EXPECT_EQ(1, found_g) TH_LOG("RDS6_INFO_CONNECTIONS global");
	EXPECT_EQ(1, found_ll) TH_LOG("RDS6_INFO_CONNECTIONS link-local");

	n = rds_info_get(fd, RDS_INFO_CONNECTIONS, &buf, &len);
	ASSERT_EQ((int)sizeof(*c4), n);
	c4 = buf;
	EXPECT_EQ(mapped, len / sizeof(*c4));
	free(buf);

	snprintf(lls, sizeof(lls), "%s%%%u", e.ll, e.ifindex);
	snprintf(plls, sizeof(plls), "%s%%%u", e.peer_ll, e.ifindex);
	EXPECT_TRUE(proc_line(e.addr, e.peer)) TH_LOG(PROC_CONNS " global");
	EXPECT_TRUE(proc_line(lls, plls)) TH_LOG(PROC_CONNS " %s", lls);
	close(fd);
}

TEST_HARNESS_MAIN
