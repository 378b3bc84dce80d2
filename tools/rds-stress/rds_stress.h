/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds-stress: a load tester for AF_RDS that verifies every message.
 *
 * Shared definitions: options, the message header carried by every
 * message, per-task state and statistics, and the functions each file
 * provides.
 */
#ifndef RDS_STRESS_H
#define RDS_STRESS_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <netinet/in.h>
#include <linux/rds.h>

#define EXIT_OK		0
#define EXIT_FAIL	1
#define EXIT_USAGE	2

/* RDS refuses messages above 1 MiB (RDS_MAX_MSG_SIZE). */
#define MAX_MSG_BYTES	(1U << 20)
#define MAX_TASKS	64
#define MAX_DEPTH	1024
#define MAX_SOCKETS	256	/* --sockets: RDS sockets per task */
#define MAX_PORTS	1024	/* tasks x sockets */
#define MAX_SIZES	64	/* --sizes: entries of the list */

enum rdma_mode { RDMA_ALTERNATE = 0, RDMA_READ_ONLY = 1, RDMA_WRITE_ONLY = 2 };

/*
 * An RDS (and control) address: IPv4, or IPv6 with the scope id of a
 * link-local one (addr.c).  A v4-mapped IPv6 address is taken as IPv4.
 */
struct rs_addr {
	sa_family_t family;	/* AF_INET or AF_INET6 */
	struct in_addr a4;
	struct in6_addr a6;
	uint32_t scope;		/* link-local IPv6: interface index */
};

/* the longest text of an address: IPv6, '%', a 32-bit scope id */
#define ADDR_STRLEN	(INET6_ADDRSTRLEN + 11)

int addr_parse(const char *s, struct rs_addr *a);
void addr_str(const struct rs_addr *a, char *buf, size_t len);
void addr_port_str(const struct rs_addr *a, unsigned int port, char *buf,
		   size_t len);
socklen_t addr_sockaddr(const struct rs_addr *a, unsigned int port,
			struct sockaddr_storage *ss);
int addr_of_sockaddr(const struct sockaddr *sa, struct rs_addr *a,
		     unsigned int *port);
int addr_equal(const struct rs_addr *a, const struct rs_addr *b);
int addr_linklocal(const struct rs_addr *a);

struct options {
	/* Addresses: local (-r), peer (-s); a peer makes this the active side. */
	struct rs_addr laddr;
	int have_laddr;
	struct rs_addr peer;
	int active;
	uint16_t port;

	uint32_t req_bytes;
	uint32_t ack_bytes;
	uint32_t depth;
	uint32_t tasks;
	uint32_t time_s;
	int one_way;
	uint8_t tos;
	int cong_monitor;
	int transport;		/* -1: kernel's choice, else SO_RDS_TRANSPORT */
	uint32_t sndbuf, rcvbuf;	/* 0: sized to what is in flight */
	uint32_t sockets;	/* RDS sockets per task (--sockets) */
	uint32_t slow_ms;	/* passive side: ms of each second unread */

	/*
	 * Request sizes: -q, or cycled from --sizes, or drawn by --size-mix
	 * from its seed (boundaries and uniform sizes up to -q).  mix[] is
	 * the boundary list the mix draws from (sizes_setup()).
	 */
	uint32_t sizes[MAX_SIZES];
	uint32_t nsizes;
	int size_mix;
	uint64_t mix_seed;
	uint32_t mix[MAX_SIZES];
	uint32_t nmix;
	uint32_t show_sizes;	/* print this many sizes of flow 0->0, exit */
	uint32_t drain_s;	/* after STOP, how long every REQ may take */
	int enomem_retry;	/* ENOMEM from sendmsg: count, try again */

	uint32_t rdma_bytes;
	uint32_t rdma_buffers;
	uint32_t rdma_mode;
	int rdma_use_once;
	int rdma_use_get_mr;
	int rdma_use_fence;

	int verify;
	int summary_only;
	int show_params;
	int show_perfdata;
	int show_histogram;
	const char *json;
	uint32_t connect_retries;

	uint64_t run_id;	/* chosen by the active side, part of every seed */
	/* What the kernel set (SO_SNDBUF/SO_RCVBUF read back): local only. */
	int eff_sndbuf, eff_rcvbuf;
};

/*
 * Every message of at least HDR_BYTES starts with this header, all fields
 * big-endian.  The
 * payload after it is filled from a pattern seeded by (run, sender side,
 * flow, op, seq), and hdr.csum is a 64-bit FNV-1a over that payload.
 * hdr.hcsum covers the header itself (with hcsum zero).
 */
#define MSG_MAGIC	0x52445353U	/* "RDSS" */
#define MSG_VERSION	2
#define OP_REQ		1
#define OP_ACK		2

struct msg_hdr {
	uint32_t magic;
	uint8_t version;
	uint8_t op;
	uint8_t from_active;	/* 1: sent by the active side */
	uint8_t pad0;
	uint16_t src_task;
	uint16_t dst_task;
	uint32_t msg_bytes;	/* total length, header included */
	uint64_t seq;		/* per-flow, from 1; an ACK carries its REQ's */
	uint64_t run_id;
	uint64_t ts_ns;		/* REQ: sender's clock; ACK: echoed */
	uint32_t req_bytes;	/* the run's -q and -a */
	uint32_t ack_bytes;
	uint64_t csum;		/* FNV-1a 64 over the payload */
	uint64_t rdma_cookie;	/* --rdma-use-get-mr: the REQ's MR */
	uint32_t rdma_bytes;	/* -D of an RDMA REQ and its ACK, else 0 */
	uint8_t rdma_op;	/* RDMA_OP_* the responder performs */
	uint8_t pad1[3];
	uint32_t sock;		/* socket index of both ends (--sockets) */
	uint32_t hcsum;		/* over the header with hcsum = 0 */
};

_Static_assert(sizeof(struct msg_hdr) == 80, "header is 80 bytes");

/*
 * A REQ shorter than the header (--sizes, --size-mix: 0 to 79 bytes) has
 * none: it is all pattern, seeded by (run, side, flow, socket, SHORT, seq,
 * length).  Only REQs are ever that short (acks are at least HDR_BYTES),
 * so the receiver takes it for the next REQ of the flow its source port
 * names, and checks its length against the schedule and every byte.
 */
#define OP_SHORT	3

/* The RDMA the responder performs on the requester's buffer. */
#define RDMA_OP_NONE	0
#define RDMA_OP_READ	1	/* requester's pattern -> responder */
#define RDMA_OP_WRITE	2	/* responder's pattern -> requester */
#define HDR_BYTES	((uint32_t)sizeof(struct msg_hdr))

/* Statistics of one task, each field written only by its task thread. */
#define HIST_FINE	1024
#define HIST_LOG2	40
struct stats {
	uint64_t tx_req, rx_req, tx_ack, rx_ack;
	uint64_t tx_bytes, rx_bytes;
	uint64_t send_calls, send_ns;
	uint64_t rtt_n, rtt_ns;
	uint64_t eagain, enobufs, enomem, cong_updates, cong_timeouts;
	uint64_t mbi, mbo, rdma_ops, rdma_eagain, rdma_getmr_eagain;
	uint64_t rdma_dropped;	/* ACK + op dropped by RDS (reconnect): resent */
	uint64_t acks_overtaking;	/* ACKs past one dropped and resent */
	uint64_t rx_zero, rx_short;	/* REQs of 0 / below HDR_BYTES bytes */
	uint64_t rx_max, tx_max;	/* longest message received / sent */
	uint64_t slow_pauses;	/* --slow-reader: seconds with a pause */
	uint64_t hist[HIST_FINE];	/* RTT, log-linear buckets of ns */
};

struct ackq_ent {
	uint64_t seq;
	uint64_t ts_ns;
	uint64_t cookie;	/* RDMA: the requester's MR */
	uint8_t rdma_op;
};

/*
 * An RDMA buffer: on the requester, the memory it exposes for one
 * outstanding REQ; on the responder, the local memory of one RDMA op.
 * Indexed by seq % (depth + 2).
 */
struct rslot {
	uint8_t *buf;
	struct rds_iovec *iov;	/* responder: -I pieces of buf */
	uint64_t cookie;
	uint64_t seq;
	uint64_t ts_ns;		/* responder: the REQ's, to resend its ACK */
	uint8_t op;
	int busy;
};

/* Local task's view of one remote task j (flows i->j and j->i). */
struct flow {
	uint64_t next_tx_seq;	/* our next REQ to j */
	uint64_t next_ack_seq;	/* the ACK from j we expect next */
	uint32_t outstanding;	/* REQs to j not yet acked */
	uint64_t next_rx_seq;	/* the REQ from j we expect next */
	struct ackq_ent *ackq;	/* ACKs owed to j, in order */
	uint32_t ackq_head, ackq_len, ackq_cap;
	int congested;
	uint64_t congested_ns;
	/*
	 * A REQ arrived ahead of its turn: wait a moment to tell a drop from
	 * a reordering, then fail either way.
	 */
	int gap;
	uint64_t gap_expected, gap_arrived, gap_ns;
	struct rslot *rq, *rs;	/* RDMA: as requester, as responder */
	uint32_t nslots;
	uint64_t *tx_ts;	/* send time of REQ seq, at seq % depth */
};

struct run;

/*
 * With --sockets N, task i has N RDS sockets, socket k bound to port
 * p + 1 + i * N + k; socket k of task i talks to socket k of every remote
 * task j: flow k * tasks + j.  fd is socket 0 (the only one with -D).
 */
struct task {
	int idx;
	int fd;
	int *fds;		/* o.sockets of them */
	pthread_t thread;
	struct run *run;
	struct flow *flows;	/* sockets x remote tasks */
	uint8_t *txbuf, *rxbuf;
	struct stats st;
	int drained;		/* stopping and every own REQ acked */
	int rdma_backoff;	/* an RDMA REQ met EAGAIN: retry in a while */
	uint64_t paused_sec;	/* --slow-reader: the last second paused */
	int done;
};

struct run {
	struct options o;
	struct rs_addr local;	/* RDS address used locally */
	struct rs_addr remote;	/* peer's RDS address */
	struct task *tasks;
	volatile int stopping;
	volatile int finish;
	volatile int failed;
	pthread_mutex_t lock;
	char fail_msg[512];
	struct {
		const char *mode;	/* RDS_STRESS_CORRUPT, or NULL */
		uint64_t seq;		/* the REQ seq of flow 0->0 it hits */
		int done;
		uint64_t hit;		/* the seq it hit */
	} corrupt;
	volatile int rdma_unsupported;	/* set with failed */
};

/* options.c */
int options_parse(struct options *o, int argc, char **argv);
void options_show(const struct options *o, FILE *f);
int options_to_text(const struct options *o, const struct rs_addr *addr,
		    char *buf, size_t len);
int options_from_text(struct options *o, struct rs_addr *addr,
		      const char *text);
int parse_size(const char *s, uint32_t *out);
int parse_sizes(const char *s, uint32_t *v, uint32_t *n);
void sizes_setup(struct options *o);
uint32_t max_msg(const struct options *o);

/* control.c */
enum ctl_type {
	CTL_OPTS = 1, CTL_READY, CTL_GO, CTL_STOP, CTL_DRAINED, CTL_RESULT,
	CTL_ABORT,
};
int ctl_listen(const struct options *o);
/* Signals (SIGINT, SIGTERM) received; once one came, blocking waits of
 * the control connection give up instead of restarting.
 */
extern volatile sig_atomic_t stress_signals;
int stress_interrupted(void);
int ctl_accept(int lfd);
int ctl_connect(const struct options *o);
int ctl_send(int fd, int type, const void *buf, uint32_t len);
/* Returns the type, 0 on EOF, -1 on error; *buf is malloc'ed, NUL-ended. */
int ctl_recv(int fd, char **buf, uint32_t *len);
const char *ctl_name(int type);

/* task.c */
int task_open(struct run *r, struct task *t);
void *task_main(void *arg);
void run_fail(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
uint64_t now_ns(void);

/* rdma.c */
int rdma_op_for(const struct run *r, uint64_t seq);
int rdma_setup(struct run *r, struct task *t);
int rdma_probe(struct run *r, struct task *t);
/* Builds the REQ's cmsg into ctl; returns its length, or -1 (failed). */
int rdma_req_cmsg(struct task *t, unsigned int j, uint64_t seq, void *ctl,
		  size_t len);
void rdma_req_unsent(struct task *t, unsigned int j, uint64_t seq);
int rdma_req_acked(struct task *t, unsigned int j, const struct msg_hdr *h);
/* 0 and ctl filled, -EBUSY when the slot's last op is not done, -1. */
int rdma_ack_cmsg(struct task *t, unsigned int j, const struct ackq_ent *e,
		  void *ctl, size_t len);
void rdma_ack_sent(struct task *t, unsigned int j, const struct ackq_ent *e);
int rdma_status(struct task *t, const struct rds_rdma_notify *n);
unsigned int rdma_busy(const struct task *t);
void rdma_fail_send(struct task *t, const char *what, int err);

/* verify.c */
uint64_t msg_seed(const struct run *r, int from_active, unsigned int src,
		  unsigned int dst, int op, uint64_t seq);
/* The length of REQ seq of a flow (-q, --sizes or --size-mix). */
uint32_t req_len(const struct options *o, int from_active, unsigned int src,
		 unsigned int dst, unsigned int sock, uint64_t seq);
void msg_build(const struct run *r, uint8_t *buf, uint32_t len, int op,
	       unsigned int src, unsigned int dst, unsigned int sock,
	       uint64_t seq, uint64_t ts_ns, int rdma_op, uint64_t cookie);
/* A REQ below HDR_BYTES: 0 when it is REQ seq of that flow, else why. */
int short_check(const struct run *r, const uint8_t *buf, uint32_t len,
		unsigned int src, unsigned int dst, unsigned int sock,
		uint64_t seq, char *why, size_t whylen);
void pattern_fill(uint8_t *p, size_t n, uint64_t seed);
long pattern_find(const uint8_t *p, size_t n, uint64_t seed, uint8_t *want,
		  uint8_t *got);
/* 0 when the message is what was expected; otherwise fills why. */
int msg_check(const struct run *r, const uint8_t *buf, uint32_t len,
	      unsigned int dst, unsigned int sock, char *why, size_t whylen,
	      struct msg_hdr *out);
uint64_t fnv64(const uint8_t *p, size_t n);

/* report.c */
void report_header(const struct run *r);
void report_tick(struct run *r, double secs);
void report_final(struct run *r, double secs, const char *result);
void hist_add(struct stats *st, uint64_t ns);

#endif
