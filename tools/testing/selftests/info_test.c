// SPDX-License-Identifier: GPL-2.0
/*
 * getsockopt(SOL_RDS, RDS_INFO_*): the probe convention and the contents
 * of the counter, socket, connection and message snapshots.
 */
#include <stddef.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "rds_test.h"
#include "rds_harness.h"

static uint64_t counter(int fd, const char *name)
{
	struct rds_info_counter *c;
	socklen_t len;
	void *buf;
	uint64_t v = ~0ULL;
	unsigned int i;

	if (rds_info_get(fd, RDS_INFO_COUNTERS, &buf, &len) != sizeof(*c))
		return v;
	c = buf;
	for (i = 0; i < len / sizeof(*c); i++)
		if (!strcmp((char *)c[i].name, name))
			v = c[i].value;
	free(buf);
	return v;
}

TEST(counters_probe)
{
	int fd = rds_socket();
	socklen_t len = 0, total;
	char *buf;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, NULL, &len));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_LT(0, (int)len);
	EXPECT_EQ(0U, len % 40);
	total = len;

	buf = malloc(total + 3);
	ASSERT_NE(NULL, buf);
	/* one item too small */
	len = 40;
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(total, len);
	/* exact, and unaligned larger */
	len = total;
	EXPECT_EQ(40, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len));
	EXPECT_EQ(total, len);
	len = total + 3;
	EXPECT_EQ(40, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len));
	EXPECT_EQ(total, len);
	EXPECT_STREQ("conn_reset", buf);
	free(buf);
	close(fd);
}

TEST(counters_count)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct sockaddr_in bn;
	uint64_t before, after;
	char c = 0;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	before = counter(a, "recv_delivered");
	ASSERT_NE(~0ULL, before);
	ASSERT_EQ(1, rds_sendto(a, &c, 1, 0, &bn));
	ASSERT_EQ(1, rds_recvfrom(b, &c, 1, 0, NULL));
	after = counter(a, "recv_delivered");
	EXPECT_LE(before + 1, after);
	close(a);
	close(b);
}

/* A key=value listing of a module parameter (ib_counters, ib_handshakes)
 * in buf; the number of pairs, -1 if it cannot be read.
 */
static int param_pairs(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	int n = 0;
	char *p;

	snprintf(path, sizeof(path), "/sys/module/rds/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	for (p = buf; (p = strchr(p, '=')); p++)
		n++;
	return n;
}

/* The value of key in a key=value listing, -1 if absent. */
static long long pair_value(const char *line, const char *key)
{
	size_t kl = strlen(key);
	const char *p;

	for (p = line; p && *p; p = strchr(p, ' '), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == '=')
			return strtoll(p + kl + 1, NULL, 10);
	return -1;
}

/*
 * The IB transport's counters follow the core's in RDS_INFO_COUNTERS:
 * every ib_counters key as ib_KEY (credit_waits as mainline's
 * ib_tx_throttle), every ib_handshakes key as ib_hs_KEY, then
 * ib_rx_pages; each name NUL-terminated and padded, once; each value
 * between the parameter's before and after the snapshot.
 */
TEST(counters_ib)
{
	char before[4096], after[4096], hs[1024], key[64], name[80];
	int fd = rds_socket(), nc, nh, found = 0;
	struct rds_info_counter *c;
	unsigned int i, j, n;
	socklen_t len;
	const char *p;
	void *buf;

	ASSERT_LE(0, fd);
	nc = param_pairs("ib_counters", before, sizeof(before));
	nh = param_pairs("ib_handshakes", hs, sizeof(hs));
	ASSERT_LT(0, nc);
	ASSERT_LT(0, nh);
	ASSERT_EQ(40, rds_info_get(fd, RDS_INFO_COUNTERS, &buf, &len));
	ASSERT_EQ(nc, param_pairs("ib_counters", after, sizeof(after)));
	c = buf;
	n = len / sizeof(*c);
	/* the core's 39, then ours */
	ASSERT_EQ(39U + nc + nh + 1, n);
	EXPECT_STREQ("recv_notice_ctrunc", (char *)c[38].name);
	for (i = 0; i < n; i++) {
		size_t l = strnlen((char *)c[i].name, sizeof(c[i].name));

		ASSERT_GT(sizeof(c[i].name), l) TH_LOG("counter %u", i);
		for (j = l; j < sizeof(c[i].name); j++) {
			EXPECT_EQ(0, c[i].name[j]) TH_LOG("counter %u", i);
		}
		for (j = 0; j < i; j++) {
			EXPECT_STRNE((char *)c[j].name, (char *)c[i].name);
		}
	}
	/* ib_counters, in its order */
	for (i = 39, p = before; *p; i++) {
		long long v0, v1;

		ASSERT_EQ(1, sscanf(p, "%63[^=]", key));
		snprintf(name, sizeof(name), "ib_%s",
			 strcmp(key, "credit_waits") ? key : "tx_throttle");
		EXPECT_STREQ(name, (char *)c[i].name);
		v0 = pair_value(before, key);
		v1 = pair_value(after, key);
		/* credits_peak, mr_in_use and pack_copies are levels, the
		 * rest counts
		 */
		if (v0 <= v1) {
			EXPECT_LE((unsigned long long)v0, c[i].value) TH_LOG("%s", name);
			EXPECT_GE((unsigned long long)v1, c[i].value) TH_LOG("%s", name);
		}
		found++;
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
	}
	EXPECT_EQ(nc, found);
	/* ib_handshakes, then ib_rx_pages */
	for (i = 39 + nc, p = hs; *p; i++) {
		ASSERT_EQ(1, sscanf(p, "%63[^=]", key));
		snprintf(name, sizeof(name), "ib_hs_%s", key);
		EXPECT_STREQ(name, (char *)c[i].name);
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
	}
	EXPECT_STREQ("ib_rx_pages", (char *)c[n - 1].name);
	free(buf);
	close(fd);
}

TEST(bad_lengths)
{
	int fd = rds_socket();
	socklen_t len = -1;
	char buf[64];

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len));
	EXPECT_EQ(EINVAL, errno);
	/* a kernel address: mainline fails to pin it, EAGAIN */
	len = 4096;
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS,
				 (void *)0xffffffff81000000UL, &len));
	EXPECT_EQ(EAGAIN, errno);
	len = 4096;
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, (void *)8,
				 &len));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf,
				 (socklen_t *)8));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

TEST(no_handler)
{
	static const int types[] = { 10002, RDS_INFO_TCP_SOCKETS,
		RDS_INFO_CONNECTION_STATS, RDS_INFO_IWARP_CONNECTIONS,
		RDS6_INFO_TCP_SOCKETS };
	int fd = rds_socket();
	unsigned int i;
	socklen_t len;

	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		len = 0;
		EXPECT_EQ(-1, getsockopt(fd, SOL_RDS, types[i], NULL, &len));
		EXPECT_EQ(ENOPROTOOPT, errno) TH_LOG("type %d", types[i]);
	}
	close(fd);
}

/* IB connections among fd's RDS_INFO_CONNECTIONS (v6: RDS6_). */
static int ib_conns(int fd, bool v6)
{
	size_t each = v6 ? sizeof(struct rds6_info_connection) :
			   sizeof(struct rds_info_connection);
	size_t off = v6 ? offsetof(struct rds6_info_connection, transport) :
			  offsetof(struct rds_info_connection, transport);
	socklen_t len, i;
	char *buf;
	int n = 0;

	if (rds_info_get(fd, v6 ? RDS6_INFO_CONNECTIONS : RDS_INFO_CONNECTIONS,
			 (void **)&buf, &len) != (int)each)
		return -1;
	for (i = 0; i + each <= len; i += each)
		n += !strcmp(buf + i + off, "infiniband");
	free(buf);
	return n;
}

/* One record per IB connection (none here but those of the case below,
 * if any: loopback connections have none), each 68 bytes (v6: 92), even
 * with no IB device at all.
 */
TEST(ib_connections_count)
{
	int fd = rds_socket(), v6;

	ASSERT_LE(0, fd);
	for (v6 = 0; v6 < 2; v6++) {
		int type = v6 ? RDS6_INFO_IB_CONNECTIONS :
				RDS_INFO_IB_CONNECTIONS;
		int each = v6 ? 92 : 68, n = ib_conns(fd, v6);
		socklen_t len = 0;

		ASSERT_LE(0, n);
		errno = 0;
		EXPECT_EQ(n ? -1 : each, getsockopt(fd, SOL_RDS, type, NULL,
						    &len))
			TH_LOG("type %d: %s", type, strerror(errno));
		if (n)
			EXPECT_EQ(ENOSPC, errno);
		EXPECT_EQ((socklen_t)(n * each), len);
	}
	close(fd);
}

/* A connection over IB that is not up (its peer never answers): listed,
 * its addresses and TOS filled, everything of the queue pair zero.
 */
#define IB_NOBODY	"10.0.0.99"	/* ib_notice_test's silent peer */
TEST(ib_connection_down)
{
	const char *addr = getenv("RDS_ADDR");
	struct sockaddr_in to = rds_sin(IB_NOBODY, 7300);
	struct rds_info_rdma_connection *r, zero;
	struct rds6_info_rdma_connection *r6;
	unsigned char tos = 0;
	unsigned int i, found = 0, found6 = 0;
	socklen_t len;
	void *buf;
	char x = 0;
	int fd;

	if (!addr || !*addr)
		SKIP(return, "no RDS_ADDR: no IB device to use");
	fd = rds_bound(addr, 0);
	if (fd < 0)
		SKIP(return, "%s does not bind over IB: %s", addr,
		     strerror(errno));
	ASSERT_EQ(0, ioctl(fd, SIOCRDSSETTOS, &tos));
	ASSERT_EQ(1, sendto(fd, &x, 1, MSG_DONTWAIT, (struct sockaddr *)&to,
			    sizeof(to)));

	ASSERT_EQ(68, rds_info_get(fd, RDS_INFO_IB_CONNECTIONS, &buf, &len));
	EXPECT_EQ((socklen_t)(68 * ib_conns(fd, false)), len);
	r = buf;
	memset(&zero, 0, sizeof(zero));
	for (i = 0; i < len / sizeof(*r); i++) {
		if (r[i].src_addr != inet_addr(addr) ||
		    r[i].dst_addr != inet_addr(IB_NOBODY) || r[i].tos != tos)
			continue;
		found++;
		/* all but the addresses: zero (tos is, too) */
		zero.src_addr = r[i].src_addr;
		zero.dst_addr = r[i].dst_addr;
		EXPECT_EQ(0, memcmp(&zero, &r[i], sizeof(zero)));
	}
	EXPECT_EQ(1U, found);
	free(buf);

	ASSERT_EQ(92, rds_info_get(fd, RDS6_INFO_IB_CONNECTIONS, &buf, &len));
	EXPECT_EQ((socklen_t)(92 * ib_conns(fd, true)), len);
	r6 = buf;
	for (i = 0; i < len / sizeof(*r6); i++)
		if (r6[i].src_addr.s6_addr32[3] == inet_addr(addr) &&
		    r6[i].dst_addr.s6_addr32[3] == inet_addr(IB_NOBODY) &&
		    r6[i].src_addr.s6_addr16[5] == 0xffff &&
		    !r6[i].max_send_wr && !r6[i].src_gid[15])
			found6++;
	EXPECT_EQ(1U, found6);
	free(buf);

	/* nothing left queued to the silent peer */
	EXPECT_EQ(0, setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				sizeof(to)));
	close(fd);
}

TEST(empty_send_queue)
{
	int fd = rds_socket();
	socklen_t len = 0;

	ASSERT_LE(0, fd);
	/* loopback acks on delivery: nothing waits for an ack */
	EXPECT_EQ(26, getsockopt(fd, SOL_RDS, RDS_INFO_SEND_MESSAGES, NULL,
				 &len));
	EXPECT_EQ(0U, len);
	EXPECT_EQ(50, getsockopt(fd, SOL_RDS, RDS6_INFO_RETRANS_MESSAGES, NULL,
				 &len));
	EXPECT_EQ(0U, len);
	close(fd);
}

TEST(sockets)
{
	struct sockaddr_in to = rds_sin("127.0.0.9", 4301);
	struct sockaddr_in6 six = rds_sin6("::1", 4302, 0);
	int fd = rds_bound("127.0.0.1", 4300), fd6 = rds_socket();
	struct rds_info_socket *s;
	struct rds6_info_socket *s6;
	int found = 0, found6 = 0, v4_in_v6 = 0;
	struct stat st;
	socklen_t len;
	unsigned int i;
	void *buf;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd6);
	ASSERT_EQ(0, bind(fd6, (struct sockaddr *)&six, sizeof(six)));
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&to, sizeof(to)));
	ASSERT_EQ(0, fstat(fd, &st));

	ASSERT_EQ((int)sizeof(*s), rds_info_get(fd, RDS_INFO_SOCKETS, &buf, &len));
	s = buf;
	for (i = 0; i < len / sizeof(*s); i++) {
		EXPECT_NE(0U, s[i].bound_addr);	/* v4-bound only */
		if (s[i].bound_port != htons(4300))
			continue;
		found++;
		EXPECT_EQ(htonl(INADDR_LOOPBACK), s[i].bound_addr);
		EXPECT_EQ(inet_addr("127.0.0.9"), s[i].connected_addr);
		EXPECT_EQ(htons(4301), s[i].connected_port);
		EXPECT_EQ(106496U, s[i].sndbuf);
		EXPECT_EQ(st.st_ino, s[i].inum);
	}
	EXPECT_EQ(1, found);
	free(buf);

	ASSERT_EQ((int)sizeof(*s6), rds_info_get(fd, RDS6_INFO_SOCKETS, &buf, &len));
	s6 = buf;
	for (i = 0; i < len / sizeof(*s6); i++) {
		if (s6[i].bound_port == htons(4302)) {
			found6++;
			EXPECT_EQ(0, memcmp(&s6[i].bound_addr,
					    &in6addr_loopback, 16));
		}
		if (s6[i].bound_port == htons(4300))
			v4_in_v6++;
	}
	EXPECT_EQ(1, found6);
	EXPECT_EQ(1, v4_in_v6);
	free(buf);
	close(fd);
	close(fd6);
}

TEST(connections)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.7", 0);
	unsigned char tos = 5;
	struct rds_info_connection *c;
	struct sockaddr_in bn;
	socklen_t len;
	unsigned int i;
	int found = 0;
	void *buf;
	char x = 0;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	bn = rds_name(b);
	ASSERT_EQ(0, ioctl(a, SIOCRDSSETTOS, &tos));
	ASSERT_EQ(1, rds_sendto(a, &x, 1, 0, &bn));
	ASSERT_EQ(1, rds_sendto(a, &x, 1, 0, &bn));

	ASSERT_EQ((int)sizeof(*c), rds_info_get(a, RDS_INFO_CONNECTIONS, &buf, &len));
	c = buf;
	for (i = 0; i < len / sizeof(*c); i++) {
		if (c[i].laddr != htonl(INADDR_LOOPBACK) ||
		    c[i].faddr != inet_addr("127.0.0.7") || c[i].tos != 5)
			continue;
		found++;
		EXPECT_STREQ("loopback", (char *)c[i].transport);
		EXPECT_EQ(RDS_INFO_CONNECTION_FLAG_CONNECTED, c[i].flags);
		EXPECT_EQ(3U, c[i].next_tx_seq);
	}
	EXPECT_EQ(1, found);
	free(buf);
	ASSERT_EQ(65, rds_info_get(a, RDS6_INFO_CONNECTIONS, &buf, &len));
	EXPECT_LE(65U, len);
	free(buf);
	close(a);
	close(b);
}

TEST(recv_messages)
{
	int a = rds_bound("127.0.0.1", 0), b = rds_bound("127.0.0.1", 0);
	struct sockaddr_in an, bn;
	struct rds_info_message *m;
	char out[300] = { 0 };
	socklen_t len;
	unsigned int i;
	int found = 0;
	void *buf;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	an = rds_name(a);
	bn = rds_name(b);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(100 * (i + 1), rds_sendto(a, out, 100 * (i + 1), 0,
						    &bn));

	ASSERT_EQ((int)sizeof(*m), rds_info_get(a, RDS_INFO_RECV_MESSAGES, &buf, &len));
	m = buf;
	for (i = 0; i < len / sizeof(*m); i++) {
		if (m[i].lport != bn.sin_port)
			continue;
		EXPECT_EQ(100U * (found + 1), m[i].len);
		EXPECT_EQ(an.sin_port, m[i].fport);
		EXPECT_EQ(htonl(INADDR_LOOPBACK), m[i].laddr);
		EXPECT_EQ(htonl(INADDR_LOOPBACK), m[i].faddr);
		found++;
	}
	EXPECT_EQ(3, found);
	free(buf);

	for (i = 0; i < 3; i++)
		ASSERT_LT(0, rds_recvfrom(b, out, sizeof(out), 0, NULL));
	ASSERT_EQ((int)sizeof(*m), rds_info_get(a, RDS_INFO_RECV_MESSAGES, &buf, &len));
	m = buf;
	for (i = 0; i < len / sizeof(*m); i++)
		EXPECT_NE(bn.sin_port, m[i].lport);
	free(buf);
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
