// SPDX-License-Identifier: GPL-2.0
/*
 * Two hosts over IB: what RDS_INFO_IB_CONNECTIONS (rds-info -I) and the IB
 * counters of RDS_INFO_COUNTERS (rds-info -c) show of real connections.
 *
 * Each host binds one socket per TOS (0 and TOS_B) to RDS_ADDR port
 * PORT + i; both send NMSG messages of MSG_LEN bytes (two frames each)
 * to the peer's socket of the same TOS and receive the peer's, so both
 * connections are up on both hosts.  Then each host checks:
 *
 *   probe     RDS_INFO_IB_CONNECTIONS with no buffer: ENOSPC and the
 *             needed length (a multiple of 68, two records at least); a
 *             buffer one byte short: ENOSPC again; the exact length: 68
 *             returned, that length written.
 *   records   exactly one record per TOS for RDS_ADDR -> RDS_PEER, whose
 *             fields match the connection: its addresses and TOS; SL 0
 *             (rdma_cm maps the TOS to an SL through the NIC's traffic
 *             classes, and the guests' NIC has none); the source GID is
 *             ::ffff:RDS_ADDR (RoCE v2) and one of the port's GIDs in
 *             /sys/class/infiniband/, the destination GID ::ffff:RDS_PEER
 *             and the peer's own source GID (handed over in a file of
 *             RDS_SHARED); the send queue at least what the module asks
 *             (SEND_WR_ASKED, 127; rxe rounds up to 2^k - 1) with 2..3
 *             SGEs; the receive side from ib_credits: with the shared
 *             receive queue exactly min(ib_credits, 128) + 1 buffers
 *             (unless grants ran short: then at most that), with a ring
 *             at least that many WRs and the drain's receive;
 *             rdma_mr_max the ib_mr_max parameter, rdma_mr_size 1 MiB in
 *             pages plus one; cache_allocs the receive buffers held, 8 KiB
 *             each (fewer when the pool took some back: grants_shrunk,
 *             or the peer gave idle credits back: credits_released; the
 *             v6 record's equal to the v4 one unless a give-back came
 *             between the two reads).
 *   v6        RDS6_INFO_IB_CONNECTIONS holds the same records, field for
 *             field, with v4-mapped addresses.
 *   counters  between before the traffic and after it, ib_tx_frames and
 *             ib_rx_frames of RDS_INFO_COUNTERS grew by 2 * NMSG at least
 *             (this host's and the peer's messages), no ib_bad_frames.
 *
 * Needs two hosts: skipped in single-host mode (the loopback transport
 * has no IB records; info_test checks the empty list on one host).
 */
#include <glob.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#define TWO_HOST_NAME	"ib_info_test"
#include "two_host.h"
#include "rds_harness.h"

#define PORT		7600
#define TOS_B		5
#define NMSG		20
#define MSG_LEN		5000		/* two frames: 4096 + 904 */
#define REC		68		/* sizeof(struct rds_info_rdma_connection) */
#define REC6		92
/* RDS_IB_SEND_RING + 1 + RDS_IB_EXTRA_WRS + 1 (net/ib/sendq.h): data
 * slots, the control slot, RDMA/atomic/REG_MR/LOCAL_INV requests, the
 * drain's request
 */
#define SEND_WR_ASKED	(64U + 1 + 61 + 1)
#define SEND_SGE_MAX	3U		/* RDS_IB_SEND_SGE */
#define RX_KIB		8U		/* a receive buffer's data: 8 KiB */
#define GIDS_GLOB	"/sys/class/infiniband/*/ports/*/gids/*"

static const unsigned char tos_of[2] = { 0, TOS_B };

/* ::ffff:a as a GID */
static void gid_v4(const char *a, unsigned char gid[16])
{
	struct in_addr in;

	inet_pton(AF_INET, a, &in);
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &in, 4);
}

static const char *gid_str(const unsigned char gid[16], char buf[64])
{
	return inet_ntop(AF_INET6, gid, buf, 64);
}

/* Whether gid is one of the GIDs of this host's RDMA ports. */
static bool gid_listed(const unsigned char gid[16])
{
	unsigned char g[16];
	char line[64];
	bool found = false;
	glob_t gl;
	size_t i;

	if (glob(GIDS_GLOB, 0, NULL, &gl))
		return false;
	for (i = 0; i < gl.gl_pathc && !found; i++) {
		FILE *f = fopen(gl.gl_pathv[i], "r");

		if (!f)
			continue;
		if (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			found = inet_pton(AF_INET6, line, g) == 1 &&
				!memcmp(g, gid, 16);
		}
		fclose(f);
	}
	globfree(&gl);
	return found;
}

/* The one record of fd's list for addr -> peer with tos, copied to *out:
 * how many there were.
 */
static int find_rec(const struct rds_info_rdma_connection *r, unsigned int n,
		    in_addr_t addr, in_addr_t peer, unsigned char tos,
		    struct rds_info_rdma_connection *out)
{
	unsigned int i;
	int found = 0;

	for (i = 0; i < n; i++)
		if (r[i].src_addr == addr && r[i].dst_addr == peer &&
		    r[i].tos == tos) {
			*out = r[i];
			found++;
		}
	return found;
}

FIXTURE(ib)
{
	int fd[2];
};

FIXTURE_SETUP(ib)
{
	self->fd[0] = self->fd[1] = -1;
}

FIXTURE_TEARDOWN(ib)
{
	if (self->fd[0] >= 0)
		close(self->fd[0]);
	if (self->fd[1] >= 0)
		close(self->fd[1]);
}

TEST_F_TIMEOUT(ib, info, 290)
{
	struct rds_info_rdma_connection rec[2], *r4;
	struct rds6_info_rdma_connection *r6;
	unsigned char want_sgid[16], want_dgid[16], peer_sgid[2][16];
	const char *addr, *peer;
	int host = this_host(), i, k, ret;
	long long credits, mr_max, no_srq, grant, short0, shrunk, released;
	long long tx0, rx0, tx1, rx1, bad0, bad1;
	struct timeval tv = { .tv_sec = 60 * time_scale() };
	static unsigned char msg[MSG_LEN + 1];
	socklen_t len, total;
	unsigned int n, n6;
	char g1[64], g2[64], path[512];
	void *buf;

	if (single_host(&addr, &peer))
		SKIP(return, "needs two hosts (RDS_PEER)");
	ASSERT_TRUE(host == 1 || host == 2);

	for (i = 0; i < 2; i++) {
		self->fd[i] = rds_bound(addr, PORT + i);
		ASSERT_LE(0, self->fd[i]) TH_LOG("bind %s:%d: %s", addr,
						 PORT + i, strerror(errno));
		ASSERT_EQ(0, ioctl(self->fd[i], SIOCRDSSETTOS, &tos_of[i]));
		ASSERT_EQ(0, setsockopt(self->fd[i], SOL_SOCKET, SO_RCVTIMEO,
					&tv, sizeof(tv)));
	}
	tx0 = rds_info_counter(self->fd[0], "ib_tx_frames");
	rx0 = rds_info_counter(self->fd[0], "ib_rx_frames");
	bad0 = rds_info_counter(self->fd[0], "ib_bad_frames");
	ASSERT_LE(0, tx0) TH_LOG("no ib_tx_frames in RDS_INFO_COUNTERS");
	ASSERT_LE(0, rx0) TH_LOG("no ib_rx_frames in RDS_INFO_COUNTERS");
	ASSERT_LE(0, bad0) TH_LOG("no ib_bad_frames in RDS_INFO_COUNTERS");
	ASSERT_EQ(0, barrier("bound", 120));

	/* both connections up on both hosts: each got the peer's messages */
	for (i = 0; i < 2; i++) {
		struct sockaddr_in to = rds_sin(peer, PORT + i);

		for (k = 0; k < NMSG; k++) {
			ASSERT_EQ(MSG_LEN, rds_sendto(self->fd[i], msg, MSG_LEN,
						      0, &to))
				TH_LOG("send %d on TOS %u: %s", k, tos_of[i],
				       strerror(errno));
		}
	}
	for (i = 0; i < 2; i++) {
		for (k = 0; k < NMSG; k++) {
			ASSERT_EQ(MSG_LEN, rds_recvfrom(self->fd[i], msg,
							sizeof(msg), 0, NULL))
				TH_LOG("receive %d on TOS %u: %s", k,
				       tos_of[i], strerror(errno));
		}
	}
	ASSERT_EQ(0, barrier("exchanged", 120));
	/* before the records: a give-back after it shows in the v6 check */
	released = rds_info_counter(self->fd[0], "ib_credits_released");

	/* probe: no buffer, one byte short, exact */
	len = 0;
	ASSERT_EQ(-1, getsockopt(self->fd[0], SOL_RDS, RDS_INFO_IB_CONNECTIONS,
				 NULL, &len));
	ASSERT_EQ(ENOSPC, errno);
	EXPECT_EQ(0U, len % REC);
	ASSERT_LE(2U * REC, len);
	total = len;
	buf = malloc(total);
	ASSERT_NE(NULL, buf);
	len = total - 1;
	EXPECT_EQ(-1, getsockopt(self->fd[0], SOL_RDS, RDS_INFO_IB_CONNECTIONS,
				 buf, &len));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(total, len);
	len = total;
	ret = getsockopt(self->fd[0], SOL_RDS, RDS_INFO_IB_CONNECTIONS, buf,
			 &len);
	if (ret < 0 && errno == ENOSPC) {
		/* a connection came meanwhile: take it as rds-info would */
		free(buf);
		ret = rds_info_get(self->fd[0], RDS_INFO_IB_CONNECTIONS, &buf,
				   &len);
	}
	ASSERT_EQ(REC, ret);
	r4 = buf;
	n = len / REC;
	note("host %d: %u IB connection records", host, n);

	credits = rds_param("ib_credits");
	mr_max = rds_param("ib_mr_max");
	no_srq = rds_param("ib_no_srq");
	short0 = rds_info_counter(self->fd[0], "ib_grants_short");
	shrunk = rds_info_counter(self->fd[0], "ib_grants_shrunk");
	ASSERT_LE(0, credits);
	ASSERT_LE(0, mr_max);
	ASSERT_LE(0, no_srq);
	grant = (credits ? (credits < 128 ? credits : 128) : 1) + 1;
	gid_v4(addr, want_sgid);
	gid_v4(peer, want_dgid);

	for (i = 0; i < 2; i++) {
		struct rds_info_rdma_connection *c = &rec[i];

		ASSERT_EQ(1, find_rec(r4, n, inet_addr(addr), inet_addr(peer),
				      tos_of[i], c))
			TH_LOG("records for %s -> %s TOS %u", addr, peer,
			       tos_of[i]);
		note("host %d: TOS %u: gids %s -> %s, sl %u, send_wr %u sge %u, recv_wr %u, mr %u x %u pages, cache_allocs %u",
		     host, c->tos, gid_str(c->src_gid, g1),
		     gid_str(c->dst_gid, g2), c->sl, c->max_send_wr,
		     c->max_send_sge, c->max_recv_wr, c->rdma_mr_max,
		     c->rdma_mr_size, c->cache_allocs);
		EXPECT_EQ(0, memcmp(c->src_gid, want_sgid, 16))
			TH_LOG("TOS %u: source GID %s", c->tos,
			       gid_str(c->src_gid, g1));
		EXPECT_TRUE(gid_listed(c->src_gid))
			TH_LOG("TOS %u: source GID %s is none of %s", c->tos,
			       gid_str(c->src_gid, g1), GIDS_GLOB);
		EXPECT_EQ(0, memcmp(c->dst_gid, want_dgid, 16))
			TH_LOG("TOS %u: destination GID %s", c->tos,
			       gid_str(c->dst_gid, g1));
		EXPECT_EQ(0, c->sl);
		EXPECT_LE(SEND_WR_ASKED, c->max_send_wr);
		EXPECT_LE(2U, c->max_send_sge);
		EXPECT_GE(SEND_SGE_MAX, c->max_send_sge);
		if (no_srq) {
			EXPECT_LE(grant + 1, c->max_recv_wr);
			EXPECT_EQ(grant * RX_KIB, c->cache_allocs);
		} else if (short0) {
			EXPECT_GE(grant, c->max_recv_wr);
		} else {
			EXPECT_EQ(grant, c->max_recv_wr);
		}
		if (!no_srq && (shrunk || released)) {
			EXPECT_GE(c->max_recv_wr * RX_KIB, c->cache_allocs);
		} else if (!no_srq) {
			EXPECT_EQ(c->max_recv_wr * RX_KIB, c->cache_allocs);
		}
		EXPECT_EQ(mr_max, c->rdma_mr_max);
		EXPECT_EQ((unsigned int)((1 << 20) / sysconf(_SC_PAGESIZE) + 1),
			  c->rdma_mr_size);
	}

	/* the v6 list: the same records, v4-mapped */
	ASSERT_EQ(REC6, rds_info_get(self->fd[0], RDS6_INFO_IB_CONNECTIONS,
				     &buf, &len));
	r6 = buf;
	n6 = len / REC6;
	for (i = 0; i < 2; i++) {
		struct rds_info_rdma_connection *c = &rec[i];
		unsigned char s6[16], d6[16];
		unsigned int j;
		int found = 0;

		gid_v4(addr, s6);	/* ::ffff:a, as the GIDs */
		gid_v4(peer, d6);
		for (j = 0; j < n6; j++) {
			struct rds6_info_rdma_connection *x = &r6[j];

			if (memcmp(&x->src_addr, s6, 16) ||
			    memcmp(&x->dst_addr, d6, 16) || x->tos != c->tos)
				continue;
			found++;
			EXPECT_EQ(0, memcmp(x->src_gid, c->src_gid, 16));
			EXPECT_EQ(0, memcmp(x->dst_gid, c->dst_gid, 16));
			EXPECT_EQ(c->max_send_wr, x->max_send_wr);
			EXPECT_EQ(c->max_recv_wr, x->max_recv_wr);
			EXPECT_EQ(c->max_send_sge, x->max_send_sge);
			EXPECT_EQ(c->rdma_mr_max, x->rdma_mr_max);
			EXPECT_EQ(c->rdma_mr_size, x->rdma_mr_size);
			EXPECT_EQ(c->sl, x->sl);
			if (released == rds_info_counter(self->fd[0],
							 "ib_credits_released"))
				EXPECT_EQ(c->cache_allocs, x->cache_allocs);
		}
		EXPECT_EQ(1, found) TH_LOG("v6 records for TOS %u", c->tos);
	}
	free(r4);
	free(r6);

	/* the peer's source GIDs are our destination GIDs */
	ASSERT_EQ(0, shared_publish(host == 1 ? "gid1" : "gid2",
				    "%s %s\n", gid_str(rec[0].src_gid, g1),
				    gid_str(rec[1].src_gid, g2)));
	ASSERT_EQ(0, barrier("gids", 120));
	ASSERT_EQ(0, shared_fetch(path, sizeof(path),
				  host == 1 ? "gid2" : "gid1",
				  "the peer's GIDs", 2, "%63s %63s", g1, g2));
	ASSERT_EQ(1, inet_pton(AF_INET6, g1, peer_sgid[0]));
	ASSERT_EQ(1, inet_pton(AF_INET6, g2, peer_sgid[1]));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, memcmp(rec[i].dst_gid, peer_sgid[i], 16))
			TH_LOG("TOS %u: destination GID %s, the peer's source GID %s",
			       tos_of[i], gid_str(rec[i].dst_gid, g1),
			       gid_str(peer_sgid[i], g2));
	}

	/* the IB counters moved with the traffic */
	tx1 = rds_info_counter(self->fd[0], "ib_tx_frames");
	rx1 = rds_info_counter(self->fd[0], "ib_rx_frames");
	bad1 = rds_info_counter(self->fd[0], "ib_bad_frames");
	note("host %d: ib_tx_frames +%lld, ib_rx_frames +%lld", host,
	     tx1 - tx0, rx1 - rx0);
	EXPECT_LE(tx0 + 2 * NMSG, tx1);
	EXPECT_LE(rx0 + 2 * NMSG, rx1);
	EXPECT_EQ(bad0, bad1);

	EXPECT_EQ(0, barrier("closing", 120));
}

TEST_HARNESS_MAIN
