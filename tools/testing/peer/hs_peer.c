// SPDX-License-Identifier: GPL-2.0
/*
 * hs_peer: a user-space peer (librdmacm/libibverbs) that connects to the
 * module's IB listener with a handcrafted handshake and reports the
 * answer.  It encodes and decodes with the module's own net/ib/hs.c, so
 * the two cannot drift.
 *
 *   hs_peer -s SRC -d DST [-p PORT] [-m MODE] [-q TOS] [-r RETRIES]
 *           [-H SECONDS | -N SECONDS]
 *
 * -q: the TOS of the request (default 0).
 * -H: once accepted, stay connected up to SECONDS and report the first
 * connection event the module causes ("held: RDMA_CM_EVENT_DISCONNECTED
 * from the module") or "held: still connected".
 * -N: half-open: send the request from a queue pair that is not the id's
 * (librdmacm then hands the module's answer over as CONNECT_RESPONSE
 * instead of sending the RTU that completes the connection), print
 * "half-open: answered, not completing" when the answer comes, and stay
 * SECONDS (or until killed) without ever completing; exit 0.  A refusal
 * is reported, and retried, as without -N.
 * MODE: valid, magic, major, flags, gen0, frag, credits, short, empty,
 * old (a build of minor 1: its accept must carry no flag), giveback
 * (minor 2 asking for give-back), oldflags (a flag at minor 1: refused).
 * flags sets a flag no build knows.
 * Prints "accepted ..." (exit 0) or "refused: REASON" (exit 3); exit 1 on
 * errors, 2 on usage.  rdma_cm over emulated rxe sometimes rejects a first
 * attempt with "no listener"; such attempts are retried with backoff.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "../../../net/ib/hs.h"

static struct rdma_event_channel *ec;
static int hold;	/* -H: seconds to stay connected after the accept */
static int halfopen;	/* -N: seconds to leave the answer unanswered */
static unsigned char tos;	/* -q */

static int wait_event(enum rdma_cm_event_type want, struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ec, &ev))
		return -1;
	if (ev->event != want) {
		*out = ev;
		return 1;
	}
	*out = ev;
	return 0;
}

static int parse_addr(const char *s, struct sockaddr_in *sin, int port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return inet_pton(AF_INET, s, &sin->sin_addr) == 1 ? 0 : -1;
}

static size_t build(const char *mode, unsigned char *buf)
{
	struct rds_ib_hs hs = {
		.major = RDS_IB_HS_MAJOR,
		.minor = RDS_IB_HS_MINOR,
		.frag_shift = 12,
		.credits = 16,
		.hello = { .gen = 0x5ee12, .peer_gen = 0, .rx_next = 1,
			   .tx_first = 1 },
		.tos = tos,
	};

	memset(buf, 0, 56);
	rds_ib_hs_encode(&hs, buf);
	if (!strcmp(mode, "valid"))
		return 40;
	if (!strcmp(mode, "magic"))
		buf[0] ^= 0xff;
	else if (!strcmp(mode, "major"))
		buf[4] = RDS_IB_HS_MAJOR + 1;
	else if (!strcmp(mode, "flags"))
		buf[6] = 0x80;
	else if (!strcmp(mode, "old"))
		buf[5] = 1;
	else if (!strcmp(mode, "giveback"))
		buf[7] = RDS_IB_HS_F_GIVEBACK;
	else if (!strcmp(mode, "oldflags")) {
		buf[5] = 1;
		buf[7] = RDS_IB_HS_F_GIVEBACK;
	}
	else if (!strcmp(mode, "gen0"))
		memset(buf + 8, 0, 4);
	else if (!strcmp(mode, "frag"))
		buf[36] = 20;
	else if (!strcmp(mode, "credits"))
		buf[33] = 0x10;		/* 0x00100010: past the maximum */
	else if (!strcmp(mode, "short"))
		return 8;
	else if (!strcmp(mode, "empty"))
		return 0;
	else
		return (size_t)-1;
	return 40;
}

/* One attempt: 0 accepted, 3 refused by RDS, 4 retry, 1 error. */
static int attempt(struct sockaddr_in *src, struct sockaddr_in *dst,
		   const unsigned char *pd, size_t pdlen)
{
	struct rdma_cm_id *id = NULL;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct ibv_pd *ibpd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *own = NULL;	/* -N: not the id's */
	struct rds_ib_hs hs;
	int ret = 1, r;

	if (rdma_create_id(ec, &id, NULL, RDMA_PS_TCP))
		return 1;
	if (rdma_resolve_addr(id, (struct sockaddr *)src,
			      (struct sockaddr *)dst, 2000))
		goto out;
	r = wait_event(RDMA_CM_EVENT_ADDR_RESOLVED, &ev);
	if (r < 0)
		goto out;
	rdma_ack_cm_event(ev);
	if (r) {
		ret = 4;
		goto out;
	}
	if (rdma_resolve_route(id, 2000))
		goto out;
	r = wait_event(RDMA_CM_EVENT_ROUTE_RESOLVED, &ev);
	if (r < 0)
		goto out;
	rdma_ack_cm_event(ev);
	if (r) {
		ret = 4;
		goto out;
	}
	ibpd = ibv_alloc_pd(id->verbs);
	cq = ibpd ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	if (!cq)
		goto out;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (halfopen > 0) {
		own = ibv_create_qp(ibpd, &qa);
		if (!own)
			goto out;
		cp.qp_num = own->qp_num;
	} else if (rdma_create_qp(id, ibpd, &qa)) {
		goto out;
	}
	cp.private_data = pd;
	cp.private_data_len = pdlen;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(id, &cp))
		goto out;
	if (rdma_get_cm_event(ec, &ev))
		goto out;
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* -N: the module's answer, left without our RTU */
		rdma_ack_cm_event(ev);
		printf("half-open: answered, not completing\n");
		fflush(stdout);
		sleep(halfopen);
		ret = 0;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		r = rds_ib_hs_decode(ev->param.conn.private_data,
				     ev->param.conn.private_data_len, &hs);
		if (r)
			printf("accepted, but the answer is malformed: %s\n",
			       rds_ib_hs_reason_name(r));
		else
			printf("accepted: protocol %u.%u, gen 0x%x, frag %u, "
			       "credits %u, flags 0x%x\n", hs.major, hs.minor,
			       hs.hello.gen, 1u << hs.frag_shift, hs.credits,
			       hs.flags);
		ret = r ? 1 : 0;
		rdma_ack_cm_event(ev);
		fflush(stdout);
		if (hold > 0) {
			struct pollfd p = { .fd = ec->fd, .events = POLLIN };

			if (poll(&p, 1, hold * 1000) > 0 &&
			    !rdma_get_cm_event(ec, &ev)) {
				printf("held: %s from the module\n",
				       rdma_event_str(ev->event));
				rdma_ack_cm_event(ev);
				break;
			}
			printf("held: still connected after %d s\n", hold);
		}
		rdma_disconnect(id);
		if (!rdma_get_cm_event(ec, &ev))
			rdma_ack_cm_event(ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		r = rds_ib_hs_decode(ev->param.conn.private_data,
				     ev->param.conn.private_data_len, &hs);
		if (ev->status == 28 && r == RDS_IB_HS_OK) {
			printf("refused: %s (their protocol %u.%u)\n",
			       rds_ib_hs_reason_name(hs.reason), hs.major,
			       hs.minor);
			ret = 3;
		} else {
			fprintf(stderr, "# rejected, status %d: retrying\n",
				ev->status);
			ret = 4;
		}
		rdma_ack_cm_event(ev);
		break;
	default:
		fprintf(stderr, "# connect: %s (status %d): retrying\n",
			rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		ret = 4;
		break;
	}
out:
	if (id && id->qp)
		rdma_destroy_qp(id);
	if (own)
		ibv_destroy_qp(own);
	if (cq)
		ibv_destroy_cq(cq);
	if (ibpd)
		ibv_dealloc_pd(ibpd);
	if (id)
		rdma_destroy_id(id);
	return ret;
}

int main(int argc, char **argv)
{
	struct sockaddr_in src, dst;
	const char *s = NULL, *d = NULL, *mode = "valid";
	int port = 18634, retries = 8, c, i, ret = 1;
	unsigned char pd[56];
	size_t pdlen;

	while ((c = getopt(argc, argv, "s:d:p:m:q:r:H:N:")) != -1) {
		switch (c) {
		case 's': s = optarg; break;
		case 'd': d = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'r': retries = atoi(optarg); break;
		case 'H': hold = atoi(optarg); break;
		case 'N': halfopen = atoi(optarg); break;
		case 'q': tos = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!s || !d || parse_addr(s, &src, 0) || parse_addr(d, &dst, port))
		goto usage;
	pdlen = build(mode, pd);
	if (pdlen == (size_t)-1)
		goto usage;
	ec = rdma_create_event_channel();
	if (!ec) {
		perror("rdma_create_event_channel");
		return 1;
	}
	for (i = 0; i <= retries; i++) {
		ret = attempt(&src, &dst, pd, pdlen);
		if (ret != 4)
			break;
		usleep((100000u << (i < 4 ? i : 4)));
	}
	rdma_destroy_event_channel(ec);
	if (ret == 4)
		fprintf(stderr, "hs_peer: no answer after %d attempts\n", i);
	return ret == 4 ? 1 : ret;
usage:
	fprintf(stderr, "usage: %s -s SRC -d DST [-p PORT] [-m MODE] [-q TOS] [-r N] [-H S | -N S]\n"
		"MODE: valid magic major flags gen0 frag credits short empty old giveback oldflags\n",
		argv[0]);
	return 2;
}
