/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libpeer: a user-space end of the module's IB wire protocol, on
 * librdmacm/libibverbs, for conformance, hostile-input and fuzz tests.
 *
 * It speaks the protocol with the module's own pure code: the handshake
 * codec (net/ib/hs.c), the packed-frame walker (net/ib/frame.c) and the
 * credit rules (net/ib/credit.c), compiled in through kshim.h, and the
 * header layout of net/wire.h (mirrored in struct rds_header, whose offsets
 * are checked against frame.h's).  What the module sends is checked with
 * the same rules the module applies to us: a data frame beyond our grant
 * or a grant beyond what the module could give back is counted in
 * st.violations.
 *
 * One struct peer is one RC connection.  Frames can be handcrafted
 * (peer_send_frame: any header, any bytes) or made by the library
 * (peer_send_msg: sequence, fragments, ACK, credits, checksum).
 */
#ifndef _RDS_PEER_H
#define _RDS_PEER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <rdma/rdma_cma.h>

#include "kshim.h"
#include "../../../net/wire.h"
#include "../../../net/ib/hs.h"
#include "../../../net/ib/frame.h"
#include "../../../net/ib/credit.h"
#include "../../../net/ib/mlhs.h"

#define PEER_FRAG		4096	/* frag_shift 12 */
#define PEER_BUF		(RDS_IB_HDR_LEN + PEER_FRAG)
#define PEER_RDS_PORT		18634
#define PEER_RDS_PORT6		16385	/* the kernel's RDS over IPv6 */
#define PEER_MAX_MSG		(1u << 20)
#define PEER_PACK_MAX		4	/* messages in the packed frames we send */

/* A frame as received. */
struct peer_frame {
	struct rds_header	hdr;
	u8		data[PEER_FRAG];
	u32		data_len;	/* bytes after the header */
	bool		csum_ok;
};

/* A whole message as received. */
struct peer_msg {
	struct rds_header	hdr;
	u64		seq;
	u32		len;
	u16		sport, dport;
	u8		flags;
	u8		*data;		/* malloc'ed, len bytes; peer_msg_free */
	u32		frags;		/* frames it came in (mainline mode) */
	bool		dup;		/* rds_rdma would drop it: flagged
					 * RETRANSMITTED, below its window
					 */
};

struct peer_stats {
	u64	frames;		/* everything received */
	u64	data_frames;
	u64	ctrl_frames;	/* ACK / credit updates */
	u64	hb_asked;	/* control frames flagged HB */
	u64	packed_frames;
	u64	msgs;		/* whole messages */
	u64	cong_maps;
	u64	retrans_msgs;	/* messages flagged RETRANSMITTED */
	u64	ack_req;	/* messages flagged ACK_REQUIRED */
	u64	bad_csum;	/* module frames with a wrong checksum */
	u64	violations;	/* module broke a credit rule */
	u64	ack_back;	/* module's h_ack went backwards */
	u64	grants;		/* credits the module granted us */
	u64	inflight_peak;	/* most data frames of the module unrefunded */
	u64	tx_frames, tx_ctrl, tx_msgs;
	/* mainline mode (mlpeer.c) */
	u64	ml_acks;	/* ACK-only frames of the module */
	u64	ml_bad_ack;	/* ... not as the kernel's RDS makes one */
	u64	ml_bad_flags;	/* frames with a flag the kernel's RDS never sets */
	u64	ml_credit;	/* frames with h_credit (it grants none) */
	u64	ml_bad_frag;	/* fragments of a wrong length */
	u64	ml_bad_map;	/* maps not 8192 bytes, seq 0, ports 0 */
	u64	ml_map_flags;	/* maps with another flag (taken for messages) */
	u64	ml_dups;	/* RETRANSMITTED below the window (m.dup) */
};

struct peer {
	struct rdma_event_channel *ec;
	struct rdma_cm_id	*id;
	struct rdma_cm_id	*listen_id;
	struct rdma_cm_event	*pending;	/* a request not yet taken */
	int			accept_tos;	/* peer_accept() takes requests
						 * of this TOS only (the module
						 * may reconnect others to our
						 * port meanwhile); -1: any
						 */
	struct ibv_pd		*pd;
	struct ibv_comp_channel	*ch;
	struct ibv_cq		*scq, *rcq;
	struct ibv_mr		*rmr, *smr;
	u8			*rbuf, *sbuf;
	unsigned int		nrx, ntx, tx_head, tx_busy;

	struct rds_ib_hs	mine, theirs;
	bool			v6;	/* the connection (or listener) is
					 * IPv6 (AF_INET6, port 16385 in
					 * mainline mode)
					 */
	bool			up, gone;	/* established / lost */
	const char		*gone_why;
	u8			tos;

	struct rds_ib_credit	cr;	/* module's rules, our side */
	u32			grant0;	/* what our handshake granted */
	u32			inflight; /* module data frames not re-granted */
	bool			withhold;  /* do not grant credits back */
	bool			no_ack;	   /* do not acknowledge */
	bool			no_hb;	   /* do not answer heartbeats */
	bool			quiet;

	u64			tx_next;   /* our next sequence */
	u64			rx_last;   /* last module sequence delivered */
	u64			ack_sent;  /* the ACK we last sent */
	u64			ack_seen;  /* module's last h_ack */
	bool			ack_seen_valid;

	/* reassembly */
	struct peer_msg		part;
	u32			part_off;
	bool			part_busy;

	/* complete messages waiting for peer_recv_msg */
	struct peer_msg		*q;
	unsigned int		qn, qcap;

	/* our one-sided op in flight (peer_rdma) */
	bool			rdma_busy;
	int			rdma_status;	/* its completion's status */

	/* Mainline mode (peer_ml_init, mlpeer.c): the kernel's RDS protocol
	 * (rds_rdma) instead of ours.  Its sequence numbers and receive
	 * window outlive a connection, its ACK state does not.
	 */
	bool			ml;
	u16			ml_ver;	   /* version we request, or answer */
	u16			ml_proto;  /* the connection's version */
	struct rds_ib_mlhs	ml_theirs; /* its private data, decoded */
	bool			ml_offer;  /* the request was an offer of ours */
	int			ml_rej;	   /* the int of a refusal, or -1 */
	u32			ml_refused; /* requests we refused with the
					     * int 1 (mainline mode, passive)
					     */
	u64			ml_req_ack; /* ack_seq of our requests (the
					     * kernel's RDS: 0; mlforge)
					     */
	u64			ml_next_rx; /* next sequence expected */
	bool			ml_ack_asked; /* an ACK-only frame is due */
	bool			ml_no_rule;   /* no ACK_REQUIRED but ours */
	u32			ml_unacked_pkts;
	u32			ml_unacked_bytes;

	struct peer_stats	st;
};

/* A handshake with our defaults (protocol 1.1, frag 4 KiB, credits). */
void peer_hs_default(struct rds_ib_hs *hs, u32 gen, u32 credits, u8 tos);

int peer_init(struct peer *p, u32 credits);
void peer_fini(struct peer *p);

/* Whether addr (a numeric address) is IPv6; the RDS port of its family
 * (the kernel's RDS listens on 16385 for IPv6, 18634 for IPv4).
 */
bool peer_is_v6(const char *addr);
int peer_rds_port(const char *addr);

/* Active: connect src -> dst:port with len bytes of private data pd.
 * 0: accepted (p->theirs decoded), 3: refused (*reason), 1: error.
 * Retries rdma_cm's spurious "no listener" up to retries times.
 */
int peer_connect(struct peer *p, const char *src, const char *dst, int port,
		 const void *pd, size_t len, int retries, int *reason);
/* Active with a valid handshake p->mine (peer_hs_default first). */
int peer_connect_hs(struct peer *p, const char *src, const char *dst,
		    int retries);

/* Passive: listen on addr:port, accept the next request within tmo_ms
 * answering with p->mine (its rx_next/peer_gen as the caller set them);
 * the request's handshake lands in p->theirs.  0 or -1.
 */
int peer_listen(struct peer *p, const char *addr, int port);
int peer_accept(struct peer *p, int tmo_ms);
/* The same, answering with len bytes of pd instead (any private data). */
int peer_accept_pd(struct peer *p, int tmo_ms, const void *pd, size_t len);

void peer_disconnect(struct peer *p);

/* The Internet checksum of a header (h_csum taken as 0). */
u16 peer_csum(const struct rds_header *h);
void peer_hdr_fill(struct peer *p, struct rds_header *h, u64 seq, u32 len,
		   u16 sport, u16 dport, u8 flags);

/* Post one SEND of hdr + len bytes of data as they are (no checksum or
 * credit taken): 0 or -1.  wait: until its completion.
 */
int peer_send_frame(struct peer *p, const struct rds_header *hdr,
		    const void *data, u32 len, bool wait);
/* A SEND of the first len (at most 48) bytes of buf: a cut header. */
int peer_send_bytes(struct peer *p, const void *buf, u32 len, bool wait);
/* Wait for every posted SEND: 0, or -1 on an error completion. */
int peer_send_drain(struct peer *p, int tmo_ms);

/* A data frame made by the library: takes a credit (waits for one up to
 * tmo_ms), carries our ACK and grant, checksummed.  0, -1.
 */
int peer_send_data(struct peer *p, struct rds_header *hdr, const void *data,
		   u32 len, int tmo_ms);
/* A whole message, fragmented, with the next sequence number: 0, -1. */
int peer_send_msg(struct peer *p, u16 sport, u16 dport, u8 flags,
		  const void *data, u32 len, int tmo_ms);
/* The same with sequence number seq (any value: 0 is one too). */
int peer_send_msg_at(struct peer *p, u64 seq, u16 sport, u16 dport, u8 flags,
		     const void *data, u32 len, int tmo_ms);
/* A packed frame of n messages (lens[i] bytes of data[i]). */
int peer_send_packed(struct peer *p, u16 sport, u16 dport, unsigned int n,
		     const u8 *const *data, const u32 *lens, int tmo_ms);
/* A control frame: our ACK and grant, extra flags (HB). */
int peer_send_ctrl(struct peer *p, u8 flags);

/* Process what arrives for up to tmo_ms (or until a message is queued
 * when want_msg): 1 something arrived, 0 timeout, -1 connection gone.
 */
int peer_poll(struct peer *p, int tmo_ms, bool want_msg);
/* The next whole message within tmo_ms: 0, or -1 (timeout or gone). */
int peer_recv_msg(struct peer *p, struct peer_msg *m, int tmo_ms);
void peer_msg_free(struct peer_msg *m);
/* Wait until the connection is gone: 0, or -1 after tmo_ms. */
int peer_wait_gone(struct peer *p, int tmo_ms);
/* Grant back what was withheld (and stop withholding). */
int peer_release_credits(struct peer *p);

/* Mainline mode: p (after peer_init) speaks the kernel's RDS protocol,
 * requesting (and answering with) version ver (RDS_IB_MLHS_3_1 or _4_1):
 * its private data (mlhs.c), a header and at most 4 KiB per frame, ACK
 * frames only when asked (ACK_REQUIRED) or on data, its ACK_REQUIRED
 * rule, congestion maps of sequence 0 never acknowledged, no credits.
 * peer_accept(), peer_poll(), peer_recv_msg() and peer_send_ctrl() (an
 * ACK-only frame) then work in it; a congestion map arrives as a message
 * flagged exactly RDS_FLAG_CONG_BITMAP.  Over IPv6 (addresses of that
 * family) the private data is its 56-byte layout and the port 16385; a
 * request it cannot speak is refused with its int 1 (p->ml_refused) and
 * peer_accept() waits on for the next.
 */
void peer_ml_init(struct peer *p, u16 ver);
/* a (16 bytes) the address s as its private data carries it: IPv6, or
 * IPv4-mapped; an IPv6 scope (%eth0) left out.
 */
void peer_ml_addr(u8 *a, const char *s);
/* Connect src -> dst on TOS tos: 0, or -1 (p->ml_rej: a refusal's int). */
int peer_ml_connect(struct peer *p, const char *src, const char *dst, u8 tos,
		    int retries);
/* A message with the next sequence number, or with seq (a resend):
 * flags plus what mainline's rule adds (ACK_REQUIRED every 8 messages or
 * 16 MiB, unless p->ml_no_rule); a congestion map (flags exactly
 * RDS_FLAG_CONG_BITMAP) goes with sequence 0 and ports 0, outside it.
 * 0, or -1.
 */
int peer_ml_send_msg(struct peer *p, u16 sport, u16 dport, u8 flags,
		     const void *data, u32 len);
int peer_ml_send_msg_at(struct peer *p, u64 seq, u16 sport, u16 dport,
			u8 flags, const void *data, u32 len);
/* A congestion map of len bytes (8192 unless hostile). */
int peer_ml_send_map(struct peer *p, const void *map, u32 len);
/* An ACK-only frame: ports 0, no data, sequence 0, flags 0. */
int peer_ml_send_ack(struct peer *p);

/* One-sided ops of the peer (tests of the module's memory regions).
 * peer_reg_mr: a region of ours in the connection's protection domain
 * (gone with the connection: deregister it before peer_disconnect), at
 * iova when iova is not PEER_NO_IOVA.  NULL on failure.
 */
#define PEER_NO_IOVA	(~0ull)
struct ibv_mr *peer_reg_mr(struct peer *p, void *buf, size_t len, u64 iova,
			   int access);
/* An RDMA WRITE (write) or READ of len bytes between local (inside mr)
 * and the module's addr under rkey; waits up to tmo_ms for its completion
 * while taking what arrives.  Its status (IBV_WC_SUCCESS = 0, or an error
 * such as IBV_WC_REM_ACCESS_ERR, after which the connection is gone), or
 * -1 when it could not be posted or did not complete.
 */
int peer_rdma(struct peer *p, bool write, struct ibv_mr *mr, void *local,
	      u32 len, u32 rkey, u64 addr, int tmo_ms);

/* The payload pattern shared with peer_host.py. */
static inline u8 peer_pattern(u32 idx, u32 i)
{
	return (u8)(idx * 31 + i * 7 + (i >> 9));
}

void peer_log(struct peer *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

u64 peer_now_ms(void);
unsigned int peer_time_scale(void);
u64 peer_deadline(u64 ms);

#endif /* _RDS_PEER_H */
