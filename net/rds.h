/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Core definitions shared by every part of the RDS module.
 *
 * Lock order (outer first):
 *   lock_sock(sk)
 *   rm->m_rs_lock  ->  rs->rs_lock  ->  conn->c_lock
 *   rm->m_rs_lock  ->  rs->rs_recv_lock (RDMA completion notices)
 *   rs->rs_rdma_lock is a leaf
 *   rds_sock_lock  ->  rs->rs_recv_lock  ->  rds_cong_monitor_lock
 *     ->  rs->rs_lock (of the monitoring sockets)
 *   rds_bind_lock, rds_conn_lock and rds_cong_lock are leaves, and so is
 *   a congestion map's m_lock (cong.c: its peer generation).
 *   ic->i_lock (net/ib: an IB connection's send ring, credits, packing,
 *   i_posted_seq and the messages held while an attempt's protocol is a
 *   guess, i_held): conn->c_lock is let go before it.  Under either of
 *   them, ic->i_hb_lock (the heartbeat work's arming), a leaf.
 * All of them are taken with bottom halves disabled: the IB completion
 * path acknowledges and delivers messages from softirq context.
 * Sleeping locks of the IB transport (net/ib): ic->i_cm_mutex  ->
 * rdev->rd_drain_mutex (an attempt's end drains the shared CQ);
 * rds_ib_gate_lock (net/ib/gate.c) is a leaf, taken under i_cm_mutex;
 * rds_ib_peer_lock (net/ib/peer.c) is a leaf.
 * RDS_INFO_* handlers run under rds_info_sem (read): RDS_INFO_COUNTERS
 * takes rds_trans_sem (read) inside it; RDS_INFO_IB_CONNECTIONS takes
 * ic->i_lock under rcu_read_lock() (the connection walk).
 * /proc/net/rds (proc.c): connections takes conn->c_lock, then (not
 * nested) ic->i_lock, under rcu_read_lock(); devices holds rds_trans_sem
 * (read) and, under rcu_read_lock(), takes each ic->i_lock; stats takes
 * rds_trans_sem (read).
 */
#ifndef _RDS_RDS_H
#define _RDS_RDS_H

#include <linux/types.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/rculist.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/sockptr.h>
#include <linux/spinlock.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "../include/uapi/linux/rds.h"
#include "wire.h"
#include "rdma.h"

/* Transport type of the loopback transport, as SO_RDS_TRANSPORT reports it. */
#define RDS_TRANS_LOOP	RDS_TRANS_COUNT

struct rds_sock;
struct rds_connection;
struct rds_message;
struct rds_incoming;
struct rds_info_buf;
struct seq_file;

/* Per-incoming receive-path timestamps, indexed by RDS_MSG_RX_* below. */
enum {
	RDS_MSG_RX_HDR,		/* header seen by the transport */
	RDS_MSG_RX_START,	/* reassembly started */
	RDS_MSG_RX_END,		/* queued on the socket */
	RDS_MSG_RX_CMSG,	/* handed to recvmsg */
	RDS_RX_MAX_TRACES,
};

/* A message as the receiver sees it.  Transports embed it in their own
 * receive structure (loopback embeds it in the sender's rds_message) and
 * free it through c_trans->inc_free once the last reference is gone.
 */
struct rds_incoming {
	refcount_t		i_refcount;
	struct list_head	i_item;		/* rs_recv_queue, rs_recv_lock */
	struct rds_connection	*i_conn;
	struct rds_header	i_hdr;
	struct in6_addr		i_saddr;
	u64			i_rx_tstamp;	/* ns, real time, 0 if unset */
	u64			i_rx_lat_trace[RDS_RX_MAX_TRACES];
};

/* rm->m_flags bits */
enum {
	RDS_MSG_ON_SOCK,	/* on rs->rs_send_queue, counted in snd_bytes */
	RDS_MSG_ON_CONN,	/* on c_send_queue or c_retrans */
	RDS_MSG_ON_RETRANS,	/* on c_retrans (under c_lock) */
	RDS_MSG_RETRANSMITTED,
	RDS_MSG_OP_STALE,	/* its op was posted on a connection since lost */
	RDS_MSG_CONG_FILL,	/* a map: copied in on its first xmit */
};

/* What a message costs its sender's send buffer and its receiver's
 * receive buffer at the least, whatever its payload: its header, what it
 * takes on the wire when empty.  Without it, empty and RDMA-only messages
 * would cost nothing and a sender could queue them without bound; with it
 * a buffer holds at most buffer / 48 of them.  Not the descriptor's size
 * (some 430 bytes): small messages would then congest a receiver long
 * before their bytes reach its buffer, which applications written for
 * mainline's accounting (payload only) do not expect.
 */
#define RDS_MSG_MIN_CHARGE	((unsigned int)sizeof(struct rds_header))

/* A message being sent.  Reference counted: the sender (sendmsg), the
 * socket's send queue (RDS_MSG_ON_SOCK), the connection's queues
 * (RDS_MSG_ON_CONN) and a transport in the middle of xmit each hold one.
 */
struct rds_message {
	refcount_t		m_refcount;
	unsigned long		m_flags;	/* RDS_MSG_* bits, atomic */
	struct list_head	m_sock_item;	/* rs_send_queue, rs->rs_lock */
	struct list_head	m_conn_item;	/* conn queues (c_lock), ib i_held (i_lock) */
	struct rds_incoming	m_inc;		/* header; loopback delivery */
	struct in6_addr		m_daddr;
	struct rds_connection	*m_conn;	/* set when queued */

	/* protects m_rs: who clears it drops the socket reference */
	spinlock_t		m_rs_lock;
	struct rds_sock		*m_rs;

	struct rds_rdma_op	m_op;		/* RDMA/atomic op (rdma.h) */
	/* regions to register before the message's first frame: its
	 * RDS_CMSG_RDMA_MAP and its socket's pending RDS_GET_MRs (references,
	 * r_reg_item; fixed once the message is queued)
	 */
	struct list_head	m_regs;

	unsigned int		m_len;		/* payload bytes */
	/* counted in its socket's rs_snd_bytes: at least RDS_MSG_MIN_CHARGE
	 * and its payload, plus the pages its op keeps pinned
	 */
	unsigned int		m_charge;
	unsigned int		m_nents;	/* used entries of m_sg */
	struct scatterlist	m_sg[];		/* payload pages */
};

/* Connection states (c_state). */
enum {
	RDS_CONN_DOWN,
	RDS_CONN_CONNECTING,
	RDS_CONN_UP,
};

/* conn->c_flags bits */
enum {
	RDS_CONN_IN_XMIT,	/* one thread at a time drains c_send_queue */
	RDS_CONN_XMIT_AGAIN,	/* a kick came while IN_XMIT was held */
	/* a map of c_lcong waits on c_send_queue, not yet filled in: a
	 * later change goes with it (rds_send_cong_map())
	 */
	RDS_CONN_CONG_PENDING,
};

/* One per (netns, laddr, faddr, tos, transport).  Connections live until
 * their namespace or the module goes away, so a pointer cached in a
 * socket stays valid for the socket's lifetime.
 */
struct rds_connection {
	struct hlist_node	c_hash_node;	/* rds_conn_hash, rds_conn_lock */
	/* rds_conn_destroy_matching()'s list of connections to free, its
	 * own: c_hash_node may still be walked under RCU until the grace
	 * period is over
	 */
	struct list_head	c_doomed_item;
	possible_net_t		c_net;
	struct in6_addr		c_laddr;
	struct in6_addr		c_faddr;
	u32			c_bound_if;	/* scope id for link-local */
	u8			c_tos;
	struct rds_transport	*c_trans;
	void			*c_transport_data;
	struct rds_connection	*c_loop_peer;	/* loopback: reverse conn */
	u64			c_loop_delivered; /* loopback: last seq delivered */
	struct rds_cong_map	*c_lcong;
	struct rds_cong_map	*c_fcong;
	int			c_cong_gen;	/* lcong generation last filled
						 * into a map (rds_cong_map_fill)
						 */
	atomic_t		c_state;	/* rds_conn_set_state() */
	unsigned long		c_state_since;	/* jiffies of the last change
						 * of c_state (WRITE_ONCE)
						 */
	/* why the transport last ended the connection or an attempt at
	 * it: a static string, NULL if never (WRITE_ONCE)
	 */
	const char		*c_reset_reason;
	unsigned long		c_flags;	/* RDS_CONN_* bits, atomic */

	/* protects c_send_queue, c_retrans and their lengths, c_next_tx_seq,
	 * c_next_rx_seq, c_retransmits and the unacked counters below
	 */
	spinlock_t		c_lock;
	struct list_head	c_send_queue;	/* queued, not yet transmitted */
	struct list_head	c_retrans;	/* sent, awaiting ack */
	/* how many messages each list holds (rds_conn_queue_move()), so
	 * that /proc reads them without a walk under c_lock
	 */
	unsigned int		c_send_queue_n;
	unsigned int		c_retrans_n;
	u64			c_next_tx_seq;	/* assigned when queued */
	u64			c_next_rx_seq;	/* written under c_lock with
						 * WRITE_ONCE: the IB receive
						 * window reads it without
						 */
	unsigned int		c_unacked_packets;
	unsigned int		c_unacked_bytes;
	u64			c_retransmits;	/* messages requeued after a
						 * loss (rds_send_requeue())
						 */
	struct work_struct	c_stop_work;	/* c_trans->conn_stop at the
						 * connection's destruction
						 */
	struct rcu_head		c_rcu;
};

/* A transport's columns of a /proc/net/rds/connections line (proc.c). */
struct rds_conn_proc {
	bool	p_credits;	/* p_cr_avail and p_cr_granted are set */
	u32	p_cr_avail;	/* data sends the peer's grants allow now */
	u32	p_cr_granted;	/* what the peer granted at the handshake */
	u32	p_gen;		/* the peer's handshake generation, 0: none */
};

/* A transport: chosen at bind time (by address, or pinned with
 * SO_RDS_TRANSPORT) and at connection creation time (loopback for a
 * destination local to the host).
 */
struct rds_transport {
	const char		*t_name;
	unsigned int		t_type;
	struct list_head	t_item;		/* rds_transports, rds_trans_sem */
	/* 0 if addr is a local address this transport can bind to, else
	 * why not: -EADDRNOTAVAIL (none of its devices has addr),
	 * -EAFNOSUPPORT (it does not carry addr's family yet), -EPROTOTYPE
	 * (it does not serve net).  Only bind() sees these; it answers
	 * EADDRNOTAVAIL (ENOPROTOOPT if pinned) and logs the reason.
	 */
	int (*laddr_check)(struct net *net, const struct in6_addr *addr,
			   u32 scope_id);
	int (*conn_alloc)(struct rds_connection *conn, gfp_t gfp);
	/* optional: stop the connection (its traffic, its timers, what it
	 * has in flight) before conn_free, which must then have little left
	 * to wait for.  Process context, may sleep.  When connections go
	 * many at once (module or namespace exit) the core stops several at
	 * the same time (rds_conn_destroy_matching()), then frees them one
	 * by one.
	 */
	void (*conn_stop)(struct rds_connection *conn);
	void (*conn_free)(struct rds_connection *conn);
	/* start bringing the connection up; may complete synchronously */
	int (*conn_connect)(struct rds_connection *conn);
	/* Transmit one message.  0 on success; -EAGAIN/-ENOMEM leave it at
	 * the head of the send queue and the transport kicks the queue
	 * again with rds_send_xmit() once it has room.
	 */
	int (*xmit)(struct rds_connection *conn, struct rds_message *rm);
	/* optional: the send queue ran empty after xmit() took messages;
	 * anything held back to batch must go now
	 */
	void (*xmit_done)(struct rds_connection *conn);
	int (*inc_copy_to_user)(struct rds_incoming *inc, struct iov_iter *to);
	void (*inc_free)(struct rds_incoming *inc);
	/* RDMA (all NULL: the transport has none).  Register mr (its
	 * r_pages) with the device of rs's bound address, waiting up to
	 * *timeo for room in the device's pool unless nonblock: sets
	 * r_key and r_trans_data.
	 */
	int (*mr_register)(struct rds_sock *rs, struct rds_mr *mr,
			   bool nonblock, long *timeo);
	/* optional: register mr at once on conn, if it is up (RDS_GET_MR
	 * on a socket with a connection); process context
	 */
	void (*mr_prepost)(struct rds_mr *mr, struct rds_connection *conn);
	/* the key must stop working now; process context */
	void (*mr_invalidate)(struct rds_mr *mr);
	/* the peer used a USE_ONCE key in a message that came on conn:
	 * stop it before anything after that message goes out; any context
	 */
	void (*mr_used)(struct rds_mr *mr, struct rds_connection *conn);
	/* release r_trans_data (after mr_invalidate); process context */
	void (*mr_free)(struct rds_mr *mr);
	/* 0 if the device of rs's address can do the atomic op */
	int (*atomic_check)(struct rds_sock *rs, enum ib_wr_opcode op);
	/* NULL: SIOCRDSSETTOS is not supported */
	u8 (*get_tos_map)(u8 tos);
	/* optional: append the transport's counters to an RDS_INFO_COUNTERS
	 * snapshot (rds_stats_info_one()) and say how many, the same number
	 * at every call; process context, rds_trans_sem held for reading
	 */
	unsigned int (*stats_info)(struct rds_info_buf *out);
	/* optional: fill p for conn's /proc/net/rds/connections line; under
	 * rcu_read_lock() (the connection walk): must not sleep
	 */
	void (*conn_proc)(struct rds_connection *conn,
			  struct rds_conn_proc *p);
	/* optional: print its header and its lines of /proc/net/rds/devices
	 * as net sees them; process context, rds_trans_sem held for reading
	 */
	void (*devices_proc)(struct seq_file *m, struct net *net);
	/* optional: a message was queued on conn, which had none queued
	 * nor waiting for the peer's ACK (nothing at stake before).  Under
	 * c_lock, BH off, on every send path: cheap, must not sleep.
	 */
	void (*stake)(struct rds_connection *conn);
	/* sends the maps of local addresses to its peers */
	bool			t_cong_maps;
};

/* Per-socket state.  sk must stay first: sk_alloc() allocates rds_sock. */
struct rds_sock {
	struct sock		rs_sk;

	/* Written under lock_sock() (bind, connect, options); read racily. */
	struct in6_addr		rs_bound_addr;
	__be16			rs_bound_port;
	u32			rs_bound_scope_id;	/* fixed while bound */
	u32			rs_conn_scope_id;	/* of a link-local peer */
	struct in6_addr		rs_conn_addr;
	__be16			rs_conn_port;
	struct rds_transport	*rs_transport;
	bool			rs_recverr;
	bool			rs_cong_monitor;
	u8			rs_rx_traces;
	u8			rs_rx_trace[RDS_MSG_RX_DGRAM_TRACE_MAX];
	struct hlist_node	rs_bound_node;	/* bind table, rds_bind_lock */

	/* protected by rds_sock_lock (they must change together) */
	struct rds_connection	*rs_conn;	/* last connection used */
	u8			rs_tos;

	/* protects rs_send_queue, rs_snd_bytes, rs_cong_mask and
	 * rs_cong_notify
	 */
	spinlock_t		rs_lock;
	struct list_head	rs_send_queue;	/* not yet acked, RDS_MSG_ON_SOCK */
	unsigned int		rs_snd_bytes;
	u64			rs_cong_mask;	/* ports we got ENOBUFS for */
	u64			rs_cong_notify;	/* ports that became free */

	struct list_head	rs_cong_item;	/* rds_cong_monitor list */
	int			rs_seen_congestion;
	unsigned long		rs_cong_track;	/* congestion generation seen */

	/* protects rs_recv_queue, rs_notify_queue, rs_rcv_bytes and
	 * rs_congested; also orders delivery against close (SOCK_DEAD)
	 */
	spinlock_t		rs_recv_lock;
	struct list_head	rs_recv_queue;
	/* RDMA completion notices; recvmsg must hand them out before data
	 * (RDS_CMSG_RDMA_STATUS) once a transport queues any: it is always
	 * empty until then, and rds_recv_ready()/poll already count it.
	 */
	struct list_head	rs_notify_queue;
	int			rs_rcv_bytes;
	bool			rs_congested;

	struct list_head	rs_item;	/* rds_sock_list, rds_sock_lock */

	/* protects rs_mr_tree and rs_mr_pending */
	spinlock_t		rs_rdma_lock;
	struct rb_root		rs_mr_tree;	/* registered regions by key */
	struct list_head	rs_mr_pending;	/* not yet taken by a message */
};

static inline struct rds_sock *rds_sk_to_rs(const struct sock *sk)
{
	return container_of(sk, struct rds_sock, rs_sk);
}

static inline struct sock *rds_rs_to_sk(struct rds_sock *rs)
{
	return &rs->rs_sk;
}

/* The kernel stores twice what the user asked for; RDS uses half. */
static inline int rds_sk_sndbuf(struct rds_sock *rs)
{
	return READ_ONCE(rs->rs_sk.sk_sndbuf) / 2;
}

static inline int rds_sk_rcvbuf(struct rds_sock *rs)
{
	return READ_ONCE(rs->rs_sk.sk_rcvbuf) / 2;
}

static inline struct net *rds_conn_net(const struct rds_connection *conn)
{
	return read_pnet(&conn->c_net);
}

/* Move rm, on one of conn's lists, to the one where it belongs now:
 * c_retrans (to_retrans), else c_send_queue; before pos (a list head or
 * a message of that list).  Keeps the lists' lengths.
 */
static inline void rds_conn_queue_move(struct rds_connection *conn,
				       struct rds_message *rm,
				       struct list_head *pos, bool to_retrans)
{
	lockdep_assert_held(&conn->c_lock);
	if (test_bit(RDS_MSG_ON_RETRANS, &rm->m_flags))
		conn->c_retrans_n--;
	else
		conn->c_send_queue_n--;
	if (to_retrans) {
		set_bit(RDS_MSG_ON_RETRANS, &rm->m_flags);
		conn->c_retrans_n++;
	} else {
		clear_bit(RDS_MSG_ON_RETRANS, &rm->m_flags);
		conn->c_send_queue_n++;
	}
	list_move_tail(&rm->m_conn_item, pos);
}

/* Take rm off conn's lists, onto the list to or none (RDS_MSG_ON_CONN is
 * the caller's to clear).
 */
static inline void rds_conn_queue_del(struct rds_connection *conn,
				      struct rds_message *rm,
				      struct list_head *to)
{
	lockdep_assert_held(&conn->c_lock);
	if (test_and_clear_bit(RDS_MSG_ON_RETRANS, &rm->m_flags))
		conn->c_retrans_n--;
	else
		conn->c_send_queue_n--;
	if (to)
		list_move_tail(&rm->m_conn_item, to);
	else
		list_del_init(&rm->m_conn_item);
}

/* why: a string that lives as long as the module (a literal) */
static inline void rds_conn_set_reset_reason(struct rds_connection *conn,
					     const char *why)
{
	WRITE_ONCE(conn->c_reset_reason, why);
}

/* af_rds.c */
extern spinlock_t rds_sock_lock;
extern struct list_head rds_sock_list;
extern wait_queue_head_t rds_poll_waitq;
void rds_sock_wake(struct rds_sock *rs);
int rds_af_init(void);
void rds_af_exit(void);

/* bind.c */
int rds_bind_addr(struct socket *sock, struct sockaddr *uaddr, int addr_len);
void rds_bind_remove(struct rds_sock *rs);
struct rds_sock *rds_bind_find(struct net *net, const struct in6_addr *addr,
			       __be16 port, u32 scope_id);
int rds_bind_init(void);
void rds_bind_exit(void);

/* transport.c */
void rds_trans_register(struct rds_transport *trans);
void rds_trans_unregister(struct rds_transport *trans);
struct rds_transport *rds_trans_get(unsigned int t_type);
unsigned int rds_trans_stats_info(struct rds_info_buf *out);
void rds_trans_devices_proc(struct seq_file *m, struct net *net);
struct rds_transport *rds_trans_for_bind(struct net *net,
					 struct rds_transport *pinned,
					 const struct in6_addr *addr,
					 u32 scope_id);

/* message.c */
struct rds_message *rds_message_alloc(unsigned int len, gfp_t gfp);
struct rds_message *rds_message_alloc_page(struct page *page,
					   unsigned int off, unsigned int len,
					   gfp_t gfp);
int rds_message_copy_from_user(struct rds_message *rm, struct iov_iter *from);
int rds_message_copy_to_user(struct rds_message *rm, struct iov_iter *to);
void rds_message_populate_header(struct rds_message *rm, __be16 sport,
				 __be16 dport, u64 seq);
void rds_message_get(struct rds_message *rm);
void rds_message_put(struct rds_message *rm);
void rds_message_exit(void);

/* conn.c */
struct rds_connection *rds_conn_create(struct net *net,
				       const struct in6_addr *laddr,
				       const struct in6_addr *faddr,
				       struct rds_transport *trans, u8 tos,
				       u32 scope_id, gfp_t gfp);
struct rds_connection *rds_conn_find_or_alloc(struct net *net,
					      const struct in6_addr *laddr,
					      const struct in6_addr *faddr,
					      struct rds_transport *trans,
					      u8 tos, u32 scope_id, gfp_t gfp);
struct rds_connection *rds_conn_find(struct net *net,
				     const struct in6_addr *laddr,
				     const struct in6_addr *faddr,
				     struct rds_transport *trans,
				     u8 tos, u32 scope_id);
void rds_conn_destroy_trans(struct rds_transport *trans);
void rds_conn_set_state(struct rds_connection *conn, int state,
			const char *why);
bool rds_conn_transition(struct rds_connection *conn, int old, int new,
			 const char *why);
typedef void (*rds_conn_visit_t)(struct rds_connection *conn, void *arg);
void rds_conn_for_each(struct net *net, rds_conn_visit_t visit, void *arg);
int rds_conn_init(void);
void rds_conn_exit(void);

/* cong.c */
struct rds_cong_map *rds_cong_map_get(struct net *net,
				      const struct in6_addr *addr, gfp_t gfp);
bool rds_cong_set_bit(struct rds_cong_map *map, __be16 port);
void rds_cong_clear_bit(struct rds_cong_map *map, __be16 port);
bool rds_cong_test_bit(struct rds_cong_map *map, __be16 port);
void rds_cong_map_updated(struct rds_cong_map *map, u64 portmask);
int rds_cong_wait(struct rds_cong_map *map, __be16 port, bool nonblock,
		  long *timeo, struct rds_sock *rs);
void rds_cong_net_exit(struct net *net);
void rds_cong_add_socket(struct rds_sock *rs);
void rds_cong_remove_socket(struct rds_sock *rs);
bool rds_cong_updated_since(unsigned long *track);
void rds_cong_local_changed(struct rds_cong_map *map);
void rds_cong_flush_sends(void);
void rds_cong_map_copy(struct rds_cong_map *map, struct rds_message *rm);
void rds_cong_map_fill(struct rds_connection *conn, struct rds_message *rm);
void rds_cong_map_recv(struct rds_cong_map *map, struct rds_message *rm,
		       u32 gen, bool known);
void rds_cong_map_peer_gen(struct rds_cong_map *map, u32 gen);
bool rds_cong_map_any(struct rds_cong_map *map);
int rds_cong_init(void);
void rds_cong_exit(void);

/* send.c */
int rds_send_msg(struct socket *sock, struct msghdr *msg, size_t len);
void rds_send_xmit(struct rds_connection *conn);
void rds_send_drop_acked(struct rds_connection *conn, u64 ack);
void rds_send_requeue(struct rds_connection *conn);
void rds_send_cong_map(struct rds_connection *conn);
void rds_send_map_posted(struct rds_connection *conn, struct rds_message *rm);
void rds_send_drop_to(struct rds_sock *rs, const struct sockaddr_in6 *dest);
int rds_send_pong(struct rds_connection *conn, __be16 dport);

/* recv.c */
void rds_inc_init(struct rds_incoming *inc, struct rds_connection *conn,
		  const struct in6_addr *saddr);
void rds_inc_get(struct rds_incoming *inc);
void rds_inc_put(struct rds_incoming *inc);
void rds_recv_incoming(struct rds_connection *conn,
		       const struct in6_addr *saddr,
		       const struct in6_addr *daddr,
		       struct rds_incoming *inc);
int rds_recv_msg(struct socket *sock, struct msghdr *msg, size_t size,
		 int flags);
void rds_recv_purge(struct rds_sock *rs);

/* loop.c */
extern struct rds_transport rds_loop_transport;

/* 127/8 or ::1 (v4 addresses are v4-mapped): the loopback transport's. */
static inline bool rds_addr_is_loopback(const struct in6_addr *addr)
{
	if (ipv6_addr_v4mapped(addr))
		return ipv4_is_loopback(addr->s6_addr32[3]);
	return ipv6_addr_loopback(addr);
}

bool rds_loop_addr_is_local(struct net *net, const struct in6_addr *addr,
			    u32 scope_id);
int rds_loop_init(void);
void rds_loop_exit(void);

/* info.c */
struct rds_info_lengths {
	unsigned int	nr;	/* items that exist */
	unsigned int	each;	/* size of one item */
};

struct rds_info_buf {
	char		*buf;
	size_t		cap;
	size_t		used;
};

typedef void (*rds_info_func)(struct socket *sock, struct rds_info_buf *out,
			      struct rds_info_lengths *lens);
void rds_info_register(int optname, rds_info_func func);
void rds_info_unregister(int optname);
void rds_info_copy(struct rds_info_buf *out, const void *data, size_t bytes);
int rds_info_getsockopt(struct socket *sock, int optname,
			char __user *optval, int __user *optlen);
int rds_info_init(void);
void rds_info_exit(void);

/* stats.c */
struct rds_statistics {
	u64	s_conn_reset;
	u64	s_recv_drop_bad_checksum;
	u64	s_recv_drop_old_seq;
	u64	s_recv_drop_no_sock;
	u64	s_recv_drop_dead_sock;
	u64	s_recv_deliver_raced;
	u64	s_recv_delivered;
	u64	s_recv_queued;
	u64	s_recv_immediate_retry;
	u64	s_recv_delayed_retry;
	u64	s_recv_ack_required;
	u64	s_recv_rdma_bytes;
	u64	s_recv_ping;
	u64	s_send_queue_empty;
	u64	s_send_queue_full;
	u64	s_send_lock_contention;
	u64	s_send_lock_queue_raced;
	u64	s_send_immediate_retry;
	u64	s_send_delayed_retry;
	u64	s_send_drop_acked;
	u64	s_send_ack_required;
	u64	s_send_queued;
	u64	s_send_rdma;
	u64	s_send_rdma_bytes;
	u64	s_send_pong;
	u64	s_page_remainder_hit;
	u64	s_page_remainder_miss;
	u64	s_copy_to_user;
	u64	s_copy_from_user;
	u64	s_cong_update_queued;
	u64	s_cong_update_received;
	u64	s_cong_send_error;
	u64	s_cong_send_blocked;
	u64	s_recv_bytes_added_to_socket;
	u64	s_recv_bytes_removed_from_socket;
	u64	s_send_stuck_rm;
	u64	s_send_rdma_dropped;
	u64	s_recv_rdma_silent;
	u64	s_recv_notice_ctrunc;
};

DECLARE_PER_CPU_SHARED_ALIGNED(struct rds_statistics, rds_stats);
#define rds_stats_inc(member)	this_cpu_inc(rds_stats.member)
#define rds_stats_add(member, n) this_cpu_add(rds_stats.member, n)
void rds_stats_info_one(struct rds_info_buf *out, const char *name,
			u64 value);
unsigned int rds_stats_snapshot(struct rds_info_buf *out);
int rds_stats_init(void);
void rds_stats_exit(void);

/* proc.c */
int rds_proc_init(void);
void rds_proc_exit(void);

/* sysctl.c */
extern unsigned int rds_sysctl_max_unacked_packets;
extern unsigned int rds_sysctl_max_unacked_bytes;
extern unsigned int rds_sysctl_ping_enable;
extern unsigned long rds_sysctl_reconnect_min_jiffies;
extern unsigned long rds_sysctl_reconnect_max_jiffies;
int rds_sysctl_init(void);
void rds_sysctl_exit(void);

#endif /* _RDS_RDS_H */
