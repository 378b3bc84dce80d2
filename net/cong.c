// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion maps: one bitmap of ports per (netns, address), a set bit
 * meaning "the socket bound to this port has more than rcvbuf queued".
 * Senders check the destination's map before queueing.  The map of a
 * local address is updated directly by the receive path; maps of remote
 * addresses will be fed by the IB transport's map exchange.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/highmem.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "rds.h"

#define RDS_CONG_HASH_BITS	6

struct rds_cong_map {
	struct hlist_node	m_node;		/* rds_cong_hash, rds_cong_lock */
	possible_net_t		m_net;
	struct in6_addr		m_addr;
	wait_queue_head_t	m_waitq;	/* senders blocked on a port */
	/* RDS_CONG_MAP_BYTES of LE bits, allocated on the first congestion:
	 * most addresses never see one.  Set once (cmpxchg), then stable.
	 */
	unsigned long		*m_bits;
	atomic_t		m_local_gen;	/* bumped when a local map changes */
	/* A foreign map: the peer's generation its bits are of (0: none, or
	 * the kernel's RDS), and m_gen_pending while they came on an
	 * attempt whose handshake was not applied yet (our IPv6 request:
	 * its frames are delivered before its ESTABLISHED is handled): they
	 * are of the generation that handshake will show.  m_lock protects
	 * both and the bits' writes by a map (rds_cong_map_recv()) and by a
	 * new generation (rds_cong_map_peer_gen()), so that neither sees
	 * half of the other; it is a leaf.
	 */
	spinlock_t		m_lock;
	u32			m_peer_gen;
	bool			m_gen_pending;
};

/* protects rds_cong_hash; maps are never freed before module exit */
static DEFINE_SPINLOCK(rds_cong_lock);
static DEFINE_HASHTABLE(rds_cong_hash, RDS_CONG_HASH_BITS);

/* protects rds_cong_monitor (the sockets with RDS_CONG_MONITOR set) */
static DEFINE_RWLOCK(rds_cong_monitor_lock);
static LIST_HEAD(rds_cong_monitor);

/* bumped on every map change; poll() reports it without CONG_MONITOR */
static atomic_t rds_cong_generation = ATOMIC_INIT(0);

static u32 rds_cong_hashfn(const struct in6_addr *addr)
{
	return ipv6_addr_hash(addr);
}

static struct rds_cong_map *rds_cong_lookup(struct net *net,
					    const struct in6_addr *addr)
{
	struct rds_cong_map *map;

	lockdep_assert_held(&rds_cong_lock);
	hash_for_each_possible(rds_cong_hash, map, m_node,
			       rds_cong_hashfn(addr)) {
		if (ipv6_addr_equal(&map->m_addr, addr) &&
		    net_eq(read_pnet(&map->m_net), net))
			return map;
	}
	return NULL;
}

/* The map of addr, created on first use; NULL on allocation failure. */
struct rds_cong_map *rds_cong_map_get(struct net *net,
				      const struct in6_addr *addr, gfp_t gfp)
{
	struct rds_cong_map *map, *old;

	spin_lock_bh(&rds_cong_lock);
	map = rds_cong_lookup(net, addr);
	spin_unlock_bh(&rds_cong_lock);
	if (map)
		return map;

	map = kzalloc(sizeof(*map), gfp);
	if (!map)
		return NULL;
	write_pnet(&map->m_net, net);
	map->m_addr = *addr;
	init_waitqueue_head(&map->m_waitq);
	spin_lock_init(&map->m_lock);

	spin_lock_bh(&rds_cong_lock);
	old = rds_cong_lookup(net, addr);
	if (!old)
		hash_add(rds_cong_hash, &map->m_node, rds_cong_hashfn(addr));
	spin_unlock_bh(&rds_cong_lock);

	if (old) {
		kfree(map);
		map = old;
	}
	return map;
}

/* May run in softirq context.  Returns false if the bitmap could not be
 * allocated: the port then stays uncongested (the receiver keeps queueing
 * past its rcvbuf), which is the safe direction to fail in.
 */
static unsigned long *rds_cong_bits(struct rds_cong_map *map)
{
	unsigned long *bits = READ_ONCE(map->m_bits);

	if (bits)
		return bits;
	bits = kzalloc(RDS_CONG_MAP_BYTES, GFP_ATOMIC);
	if (!bits)
		return NULL;
	if (cmpxchg(&map->m_bits, NULL, bits)) {
		kfree(bits);
		bits = READ_ONCE(map->m_bits);
	}
	return bits;
}

bool rds_cong_set_bit(struct rds_cong_map *map, __be16 port)
{
	unsigned long *bits = rds_cong_bits(map);

	if (!bits)
		return false;
	set_bit_le(be16_to_cpu(port), bits);
	return true;
}

void rds_cong_clear_bit(struct rds_cong_map *map, __be16 port)
{
	unsigned long *bits = READ_ONCE(map->m_bits);

	if (bits)
		clear_bit_le(be16_to_cpu(port), bits);
}

bool rds_cong_test_bit(struct rds_cong_map *map, __be16 port)
{
	unsigned long *bits = READ_ONCE(map->m_bits);

	return bits && test_bit_le(be16_to_cpu(port), bits);
}

/* The map changed: wake blocked senders and pollers, and tell every
 * CONG_MONITOR socket which of the port groups it was refused on (bit
 * port % 64 of portmask) may have become free.
 */
void rds_cong_map_updated(struct rds_cong_map *map, u64 portmask)
{
	struct rds_sock *rs;

	rds_stats_inc(s_cong_update_received);
	atomic_inc(&rds_cong_generation);
	wake_up_all(&map->m_waitq);
	wake_up_all(&rds_poll_waitq);

	if (!portmask)
		return;

	read_lock_bh(&rds_cong_monitor_lock);
	list_for_each_entry(rs, &rds_cong_monitor, rs_cong_item) {
		bool notify;

		spin_lock(&rs->rs_lock);
		rs->rs_cong_notify |= rs->rs_cong_mask & portmask;
		rs->rs_cong_mask &= ~portmask;
		notify = rs->rs_cong_notify;
		spin_unlock(&rs->rs_lock);
		if (notify)
			rds_sock_wake(rs);
	}
	read_unlock_bh(&rds_cong_monitor_lock);
}

/* Send the new map of a local address to the peers of every connection
 * from it whose transport carries maps (rds_send_cong_map()).  One that
 * still has a map waiting is left alone: that map goes with what the
 * bits are when it leaves.
 */
static void rds_cong_send_visit(struct rds_connection *conn, void *arg)
{
	if (!conn->c_trans->t_cong_maps)
		return;
	if (atomic_read(&conn->c_lcong->m_local_gen) ==
	    READ_ONCE(conn->c_cong_gen))
		return;
	rds_send_cong_map(conn);
}

/* Runs after a local map changed; one instance at a time. */
static void rds_cong_send_func(struct work_struct *work)
{
	rds_conn_for_each(NULL, rds_cong_send_visit, NULL);
}

static DECLARE_WORK(rds_cong_send_work, rds_cong_send_func);

/* A map of a local address changed (from the receive path). */
void rds_cong_local_changed(struct rds_cong_map *map)
{
	/* The bits before the generation: pairs with rds_cong_map_fill(). */
	smp_mb__before_atomic();
	atomic_inc(&map->m_local_gen);
	queue_work(system_wq, &rds_cong_send_work);
}

/* rm, the map rds_send_cong_map() queued on conn, is handed to the
 * transport for the first time (rds_send_xmit(), one thread at a time):
 * copy in the bits as they are now.  From here on a change needs a
 * message of its own, which rds_cong_send_visit() queues when it sees a
 * generation newer than the one copied.
 */
void rds_cong_map_fill(struct rds_connection *conn, struct rds_message *rm)
{
	int gen;

	clear_bit(RDS_CONN_CONG_PENDING, &conn->c_flags);
	/* Pairs with test_and_set_bit() in rds_send_cong_map(): a change
	 * whose update still found the flag set is seen by the copy.
	 */
	smp_mb__after_atomic();
	gen = atomic_read(&conn->c_lcong->m_local_gen);
	/* Pairs with rds_cong_local_changed(): the bits of gen at least. */
	smp_rmb();
	rds_cong_map_copy(conn->c_lcong, rm);
	WRITE_ONCE(conn->c_cong_gen, gen);
}

/* No more local changes will be sent (transport going away). */
void rds_cong_flush_sends(void)
{
	cancel_work_sync(&rds_cong_send_work);
}

/* The peer sent the map of its address (RDS_CONG_MAP_BYTES in rm's
 * payload, little-endian bit order): take it over word by word and tell
 * senders and monitors which port groups became free.  gen: the peer's
 * generation as the connection it came on knows it, known false while
 * that attempt's handshake is not applied yet (see m_gen_pending).
 * Softirq context.
 */
void rds_cong_map_recv(struct rds_cong_map *map, struct rds_message *rm,
		       u32 gen, bool known)
{
	unsigned long *bits;
	unsigned int i, w, off = 0;
	u64 freed = 0;

	spin_lock_bh(&map->m_lock);
	map->m_peer_gen = gen;
	map->m_gen_pending = !known;
	bits = READ_ONCE(map->m_bits);
	for (i = 0; i < rm->m_nents; i++) {
		struct scatterlist *sg = &rm->m_sg[i];
		const __le64 *p = kmap_local_page(sg_page(sg));

		for (w = 0; w < sg->length / 8; w++, off++) {
			u64 new = le64_to_cpu(p[w]);
			u64 old = 0;
			__le64 *cur;

			/* No memory for the bits: the ports stay free, the
			 * safe direction (as in rds_cong_set_bit()).
			 */
			if (!bits && new)
				bits = rds_cong_bits(map);
			if (!bits)
				continue;
			cur = (__le64 *)bits + off;
			old = le64_to_cpu(READ_ONCE(*cur));
			/* Port w*64+b is bit b: "port % 64" is the bit itself. */
			freed |= old & ~new;
			WRITE_ONCE(*cur, cpu_to_le64(new));
		}
		kunmap_local(p);
	}
	spin_unlock_bh(&map->m_lock);
	rds_cong_map_updated(map, freed);
}

/* A connection's handshake says that the peer whose foreign map is map runs
 * generation gen (non-zero, new at every load of its module).  Bits of
 * another generation, or of none (a peer met only over the kernel's RDS,
 * or before any handshake), speak of sockets the peer no longer has, and
 * a peer of ours sends its map at a connection only if one of its ports
 * is congested (rds_ib_attempt_up()): a port marked here would stay
 * marked for ever.  They are forgotten, and the senders and monitors of
 * the ports they held are woken.  The same generation keeps them: it is
 * a reconnect, or another connection to the same address (one map per
 * address, shared by every TOS and local address), and a change the
 * peer made meanwhile comes in a map message of its own.  So do bits
 * that came on an attempt before its handshake was applied
 * (m_gen_pending): they are the new generation's.  Process context (an
 * rdma_cm handler).
 */
void rds_cong_map_peer_gen(struct rds_cong_map *map, u32 gen)
{
	__le64 *words;
	unsigned int w;
	u64 freed = 0;

	spin_lock_bh(&map->m_lock);
	if (map->m_gen_pending) {
		/* the bits came from the peer this handshake speaks for */
		map->m_gen_pending = false;
		map->m_peer_gen = gen;
	} else if (map->m_peer_gen != gen) {
		map->m_peer_gen = gen;
		words = (__le64 *)READ_ONCE(map->m_bits);
		for (w = 0; words && w < RDS_CONG_MAP_BYTES / 8; w++) {
			/* as in rds_cong_map_recv(): bit b is port % 64 */
			freed |= le64_to_cpu(READ_ONCE(words[w]));
			WRITE_ONCE(words[w], 0);
		}
	}
	spin_unlock_bh(&map->m_lock);
	if (freed)
		rds_cong_map_updated(map, freed);
}

/* Whether any port of map is congested. */
bool rds_cong_map_any(struct rds_cong_map *map)
{
	unsigned long *bits = READ_ONCE(map->m_bits);

	return bits && find_first_bit(bits, RDS_CONG_MAP_BYTES * 8) <
		       RDS_CONG_MAP_BYTES * 8;
}

/* Copy the bitmap of map into rm's payload (RDS_CONG_MAP_BYTES). */
void rds_cong_map_copy(struct rds_cong_map *map, struct rds_message *rm)
{
	const u8 *bits = (const u8 *)READ_ONCE(map->m_bits);
	unsigned int i, off = 0;

	for (i = 0; i < rm->m_nents; i++) {
		struct scatterlist *sg = &rm->m_sg[i];
		u8 *p = kmap_local_page(sg_page(sg));

		if (bits)
			memcpy(p, bits + off, sg->length);
		else
			memset(p, 0, sg->length);
		kunmap_local(p);
		off += sg->length;
	}
}

/* True (once) if any map changed since *track was last updated. */
bool rds_cong_updated_since(unsigned long *track)
{
	unsigned long gen = atomic_read(&rds_cong_generation);

	if (likely(*track == gen))
		return false;
	*track = gen;
	return true;
}

/* Wait until port is not congested in map.  Non-blocking: -ENOBUFS, and a
 * CONG_MONITOR socket remembers the port group to be notified about.
 * Blocking: sleeps interruptibly, honouring the send timeout in *timeo.
 */
int rds_cong_wait(struct rds_cong_map *map, __be16 port, bool nonblock,
		  long *timeo, struct rds_sock *rs)
{
	long ret;

	if (!rds_cong_test_bit(map, port))
		return 0;

	if (nonblock) {
		if (READ_ONCE(rs->rs_cong_monitor)) {
			spin_lock_bh(&rs->rs_lock);
			rs->rs_cong_mask |=
				RDS_CONG_MONITOR_MASK(be16_to_cpu(port));
			spin_unlock_bh(&rs->rs_lock);
			/* an update may have raced with setting the mask */
			if (!rds_cong_test_bit(map, port))
				return 0;
		}
		rds_stats_inc(s_cong_send_error);
		return -ENOBUFS;
	}

	rds_stats_inc(s_cong_send_blocked);
	ret = wait_event_interruptible_timeout(map->m_waitq,
					       !rds_cong_test_bit(map, port),
					       *timeo);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ETIMEDOUT;
	if (*timeo != MAX_SCHEDULE_TIMEOUT)
		*timeo = ret;
	return 0;
}

void rds_cong_add_socket(struct rds_sock *rs)
{
	write_lock_bh(&rds_cong_monitor_lock);
	if (list_empty(&rs->rs_cong_item))
		list_add(&rs->rs_cong_item, &rds_cong_monitor);
	write_unlock_bh(&rds_cong_monitor_lock);
}

void rds_cong_remove_socket(struct rds_sock *rs)
{
	write_lock_bh(&rds_cong_monitor_lock);
	list_del_init(&rs->rs_cong_item);
	write_unlock_bh(&rds_cong_monitor_lock);
}

/* Free the maps of net (all maps if net is NULL).  Called once no
 * connection of that namespace is left to point at them.
 */
static void rds_cong_free_maps(struct net *net)
{
	struct rds_cong_map *map;
	struct hlist_node *tmp;
	HLIST_HEAD(doomed);
	int bkt;

	spin_lock_bh(&rds_cong_lock);
	hash_for_each_safe(rds_cong_hash, bkt, tmp, map, m_node) {
		if (net && !net_eq(read_pnet(&map->m_net), net))
			continue;
		hash_del(&map->m_node);
		hlist_add_head(&map->m_node, &doomed);
	}
	spin_unlock_bh(&rds_cong_lock);

	hlist_for_each_entry_safe(map, tmp, &doomed, m_node) {
		hlist_del(&map->m_node);
		kfree(map->m_bits);
		kfree(map);
	}
}

void rds_cong_net_exit(struct net *net)
{
	rds_cong_free_maps(net);
}

int rds_cong_init(void)
{
	return 0;
}

void rds_cong_exit(void)
{
	rds_cong_free_maps(NULL);
}
