/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wire_peer: what its files share.  wire_peer.c holds main(), the options,
 * the checks and the helpers below; the tests are in wire_conform.c (rx,
 * tx, retrans, cong, ping0), wire_hostile.c (hostile, active, ackahead),
 * wire_fuzz.c (fuzz), wire_rdma.c (rdma), and toward the module's side of
 * the kernel's RDS protocol wire_ml.c (mlrx, mltx, mlaccept, mlcong,
 * mlforge) and wire_mlhostile.c (mlhostile).
 */
#ifndef _RDS_WIRE_PEER_H
#define _RDS_WIRE_PEER_H

#include "peer.h"

/* The options (see the usage in wire_peer.c). */
extern const char *src, *dst;
extern int tos, wtos, count, keep, secs, dport;
extern u32 credits;
extern u16 mlver;		/* -V: the kernel's RDS version we speak */
extern bool withhold;
extern unsigned long long seed;
extern u32 sizes[128];		/* -z, cycled */
extern unsigned int nsizes;

/* The witness connection (TOS -w) of hostile, fuzz and rdma: sync_with()
 * keeps answering it while it waits.
 */
extern struct peer witness;

/* One check: "ok N ..." or "not ok N ...", counted for the result line. */
void check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A check of a module bug already reported: TAP "TODO" until fixed. */
void known(bool ok, const char *bug, const char *what);

u32 gen_new(void);
void stats(struct peer *p, const char *what);
/* Connect to the module as a new peer on TOS t, granting cr credits. */
int up(struct peer *p, u8 t, u32 cr);
void withheld_grant_used(struct peer *p);
/* m is len bytes of peer_pattern(idx, ...). */
bool pattern_ok(const struct peer_msg *m, u32 idx, u32 len);
void fill(u8 *b, u32 idx, u32 len);
/* Until the module acknowledged seq: 0, or -1 (gone, or after tmo_ms). */
int wait_acked(struct peer *p, u64 seq, int tmo_ms);
/* A barrier with host 1, answering p and the witness meanwhile. */
bool sync_with(struct peer *p, const char *name);
/* A ping on the witness connection (on p), answered within 20 s. */
bool witness_ping(void);
bool ping_on(struct peer *p);
/* wire_conform.c: the next congestion map within tmo_ms whose bit for
 * port is set (or clear): 0, or -1.
 */
int cong_wait(struct peer *p, u16 port, bool set, int tmo_ms);
/* Host 1's message "after" to port within 60 s. */
bool recv_after(struct peer *p, u16 port);

int t_rx(void);
int t_tx(void);
int t_retrans(void);
int t_cong(void);
int t_ping0(void);
int t_hostile(void);
int t_active(void);
int t_ackahead(void);
int t_fuzz(void);
int t_rdma(void);
int t_mlrx(void);
int t_mltx(void);
int t_mlaccept(void);
int t_mlcong(void);
int t_mlhostile(void);
int t_mlforge(void);

/* 1 under WIRE_PEER_NEG=1 (every check of the mainline tests and of
 * cong expects what the module must not do: the negative run), else 0.
 */
int wire_neg(void);
/* A wait that must time out in the negative run: shorter there. */
static inline int neg_tmo(int ms)
{
	return wire_neg() ? ms / 10 : ms;
}
/* t_cong's body on a connected p, in either protocol. */
int cong_both_ways(struct peer *p);
/* The mainline mode's count of the module's departures is 0. */
void ml_check_clean(struct peer *p, const char *what);
/* Connect p to the module as the kernel's RDS, version ver, on TOS t. */
int ml_up(struct peer *p, u8 t, u16 ver);


#endif /* _RDS_WIRE_PEER_H */
