/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libpeer's own: what its files (peer.c: frames; peer_cm.c: connections;
 * mlpeer.c: the kernel's RDS protocol) share and its users do not see.
 */
#ifndef _RDS_PEER_INT_H
#define _RDS_PEER_INT_H

#include "peer.h"

#define PEER_SLOT	(3 * PEER_FRAG)	/* a send slot: room for oversize */
#define PEER_NTX	64

/* peer_cm.c */
int peer_post_recv(struct peer *p, unsigned int i);
void peer_cm_events(struct peer *p);

/* peer.c */
void peer_lost(struct peer *p, const char *why);
void peer_queue(struct peer *p, struct peer_msg *m);
void peer_bad(struct peer *p, const char *why);
u64 peer_ack_value(struct peer *p);
/* A frame's header into h, its checksum checked (st.bad_csum), and the
 * bytes after it: false if shorter than a header.
 */
bool peer_frame_head(struct peer *p, const u8 *b, u32 len,
		     struct rds_header *h, u32 *dlen);
/* The module's h_ack (st.ack_back if it went back). */
void peer_ack_take(struct peer *p, const struct rds_header *h);
/* A fragment of a message (p->part): the whole message in *m when done. */
enum peer_part {
	PEER_PART_MORE,
	PEER_PART_DONE,
	PEER_PART_BAD,		/* another message's, or too long: dropped */
	PEER_PART_BAD_LEN,	/* not 4 KiB nor the rest: dropped */
};
enum peer_part peer_part_add(struct peer *p, const struct rds_header *h,
			     const u8 *data, u32 dlen, struct peer_msg *m);

/* mlpeer.c: the mainline mode's side of the connection and of each frame */
/* The answer to our request (active side): 0, or -1 malformed. */
int peer_ml_answer(struct peer *p, const void *pd, size_t len);
/* A request (passive side): 0, or -1 not one the kernel's RDS accepts. */
int peer_ml_request(struct peer *p, const void *pd, size_t len);
/* Refuse the request ev (not acknowledged yet) as rds_rdma refuses one
 * it cannot speak: ev acknowledged, its id rejected and destroyed.
 */
void peer_ml_refuse(struct peer *p, struct rdma_cm_event *ev);
/* Our accept of the request just read, into buf (56 bytes): its length. */
size_t peer_ml_accept_pd(struct peer *p, u8 *buf);
/* The connection is up: the kernel's RDS state of a new connection. */
void peer_ml_start(struct peer *p);
/* One frame of the module, len bytes at b. */
void peer_ml_frame(struct peer *p, const u8 *b, u32 len);

#endif /* _RDS_PEER_INT_H */
