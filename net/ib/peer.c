// SPDX-License-Identifier: GPL-2.0
/*
 * Connections per peer address (limit.h): every IB connection belongs to
 * the entry of its peer address (c_faddr), made with the first of them
 * and freed with the last, which counts those of them that hold an
 * attempt.  A request of the peer that would add one beyond
 * ib_peer_conn_max (net.rds.ib.peer_conn_max) is refused (cm.c); the
 * peer can then not make this host hold a queue pair, a send ring and
 * receive buffers for each of the 256 TOS values.
 *
 * A connection takes its place when it gets an attempt (i_cur set) and
 * gives it back when the attempt ends (rds_ib_attempt_end()).  A request
 * of the peer that replaces the current attempt, and every attempt of
 * ours, takes it back whatever the count (the limit is on what the peer
 * adds).  Bounded takes are exact among themselves (a compare and
 * exchange); an unbounded one racing with them (a replacement on another
 * CPU) may push the count above the bound, and every new request of the
 * peer is then refused until it is below again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "ib.h"
#include "limit.h"

/* A default of half the TOS values: twice the 64 connections that
 * ib_memory_test opens from one peer, at most 128 x (about 22 KiB of ours
 * and rxe's 168 KiB) = 24 MiB per peer address, against 48 MiB for all
 * 256.  Set it to what the applications use (ib_scale: 4 per address).
 */
unsigned int rds_ib_peer_conn_max = 128;
module_param_named(ib_peer_conn_max, rds_ib_peer_conn_max, uint, 0644);
MODULE_PARM_DESC(ib_peer_conn_max,
		 "Connections one peer address may have with this host (0: no bound; default 128)");

/* A peer is its address and, for a link-local one, the interface
 * (c_bound_if: 0 for any other): two hosts may use the same link-local
 * address on two links.
 */
struct rds_ib_peer {
	struct hlist_node	p_node;		/* rds_ib_peers */
	struct in6_addr		p_addr;
	u32			p_scope;
	unsigned int		p_refs;		/* connections of the peer */
	atomic_t		p_conns;	/* of them, those holding a place */
};

#define RDS_IB_PEER_BITS	8

/* protects rds_ib_peers and each entry's p_refs; a leaf, taken in
 * process context only (connection allocation and freeing, the accept
 * handler), with no other lock of ours held or with i_cm_mutex
 */
static DEFINE_SPINLOCK(rds_ib_peer_lock);
static DEFINE_HASHTABLE(rds_ib_peers, RDS_IB_PEER_BITS);
/* random: the addresses are the peers' choice */
static u32 rds_ib_peer_seed __read_mostly;

static u32 rds_ib_peer_hash(const struct in6_addr *addr, u32 scope)
{
	return jhash_2words(ipv6_addr_hash(addr), scope, rds_ib_peer_seed);
}

static struct rds_ib_peer *rds_ib_peer_find(const struct in6_addr *addr,
					    u32 scope)
{
	struct rds_ib_peer *p;

	lockdep_assert_held(&rds_ib_peer_lock);
	hash_for_each_possible(rds_ib_peers, p, p_node,
			       rds_ib_peer_hash(addr, scope))
		if (ipv6_addr_equal(&p->p_addr, addr) && p->p_scope == scope)
			return p;
	return NULL;
}

void rds_ib_peer_init(void)
{
	rds_ib_peer_seed = get_random_u32();
}

/* Module exit, every connection freed: no entry may be left. */
void rds_ib_peer_exit(void)
{
	struct rds_ib_peer *p;
	unsigned int bkt;

	spin_lock(&rds_ib_peer_lock);
	hash_for_each(rds_ib_peers, bkt, p, p_node)
		WARN_ONCE(1, "peer %pI6c left with %u connections\n",
			  &p->p_addr, p->p_refs);
	spin_unlock(&rds_ib_peer_lock);
}

/* Whether the peer addr (scope) may add a connection: false when it has
 * an entry at ib_peer_conn_max.  Read before anything is allocated for
 * a request of the peer (cm.c); rds_ib_peer_take() decides.
 */
bool rds_ib_peer_room(const struct in6_addr *addr, u32 scope,
		      unsigned int *conns)
{
	unsigned int max = READ_ONCE(rds_ib_peer_conn_max);
	struct rds_ib_peer *p;
	bool room = true;

	*conns = 0;
	spin_lock(&rds_ib_peer_lock);
	p = rds_ib_peer_find(addr, scope);
	if (p) {
		*conns = atomic_read(&p->p_conns);
		room = rds_ib_peer_admit(*conns, max);
	}
	spin_unlock(&rds_ib_peer_lock);
	return room;
}

/* A new connection (rds_ib_conn_alloc()): its peer's entry, made if it
 * is the first.
 */
int rds_ib_peer_get(struct rds_ib_conn *ic, gfp_t gfp)
{
	const struct in6_addr *addr = &ic->i_conn->c_faddr;
	u32 scope = ic->i_conn->c_bound_if;
	struct rds_ib_peer *p, *fresh;

	fresh = kzalloc(sizeof(*fresh), gfp);
	if (!fresh)
		return -ENOMEM;
	spin_lock(&rds_ib_peer_lock);
	p = rds_ib_peer_find(addr, scope);
	if (!p) {
		p = fresh;
		fresh = NULL;
		p->p_addr = *addr;
		p->p_scope = scope;
		hash_add(rds_ib_peers, &p->p_node,
			 rds_ib_peer_hash(addr, scope));
	}
	p->p_refs++;
	spin_unlock(&rds_ib_peer_lock);
	kfree(fresh);
	ic->i_peer = p;
	return 0;
}

/* The connection goes (rds_ib_conn_free(): no attempt any more). */
void rds_ib_peer_put(struct rds_ib_conn *ic)
{
	struct rds_ib_peer *p = ic->i_peer;
	bool last;

	if (!p)
		return;
	WARN_ON_ONCE(ic->i_peer_held);
	spin_lock(&rds_ib_peer_lock);
	last = !--p->p_refs;
	if (last)
		hash_del(&p->p_node);
	spin_unlock(&rds_ib_peer_lock);
	if (last)
		kfree(p);
	ic->i_peer = NULL;
}

/* ic gets an attempt: take its place among its peer's connections.
 * bounded: a request of the peer for a connection that has none, which
 * is refused (false) beyond ib_peer_conn_max.  True if ic holds one.
 */
bool rds_ib_peer_take(struct rds_ib_conn *ic, bool bounded)
{
	unsigned int max = READ_ONCE(rds_ib_peer_conn_max);
	atomic_t *conns = &ic->i_peer->p_conns;
	int n;

	lockdep_assert_held(&ic->i_cm_mutex);
	if (ic->i_peer_held)
		return true;
	n = atomic_read(conns);
	do {
		if (bounded && !rds_ib_peer_admit(n, max))
			return false;
	} while (!atomic_try_cmpxchg(conns, &n, n + 1));
	ic->i_peer_held = true;
	return true;
}

/* ic's attempt ended and none follows: give its place back. */
void rds_ib_peer_leave(struct rds_ib_conn *ic)
{
	lockdep_assert_held(&ic->i_cm_mutex);
	if (!ic->i_peer_held)
		return;
	ic->i_peer_held = false;
	atomic_dec(&ic->i_peer->p_conns);
}

/* How many connections with ic's peer hold a place (for the log). */
unsigned int rds_ib_peer_conns(const struct rds_ib_conn *ic)
{
	return atomic_read(&ic->i_peer->p_conns);
}
