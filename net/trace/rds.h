/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the RDS module (TRACE_SYSTEM rds): connection states,
 * dropped messages, retransmissions, RDMA outcomes and the IB transport's
 * credit stalls, heartbeat losses and refused handshakes, documented in
 * Documentation/tracepoints.md.  Each costs a static branch when off and
 * takes no lock; strings are copied into the ring.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rds

#if !defined(_RDS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDS_TRACE_H

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/trace_events.h>

#include "../rds.h"

/* Since 6.10 __assign_str() takes the field only (the source is the one
 * __string() named); EVENT_NULL_STR came with that change.
 */
#ifndef rds_trace_assign_str
#ifdef EVENT_NULL_STR
#define rds_trace_assign_str(dst, src)	__assign_str(dst)
#else
#define rds_trace_assign_str(dst, src)	__assign_str(dst, src)
#endif
#endif

#ifndef _RDS_TRACE_HELPERS
#define _RDS_TRACE_HELPERS
/* An address of the ring: a struct sockaddr_in for an IPv4 (-mapped)
 * address, a struct sockaddr_in6 for another, printed with %pISc (as the
 * kernel's tcp events do): IPv4 shows as 10.0.0.1, not ::ffff:10.0.0.1.
 */
#define RDS_TRACE_ADDR_LEN	sizeof(struct sockaddr_in6)

static inline void rds_trace_addr(u8 *buf, const struct in6_addr *addr)
{
	memset(buf, 0, RDS_TRACE_ADDR_LEN);
	if (ipv6_addr_v4mapped(addr)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)buf;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = addr->s6_addr32[3];
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)buf;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = *addr;
	}
}

/* The addresses of conn into laddr and faddr, :: without one. */
static inline void rds_trace_addrs(u8 *laddr, u8 *faddr,
				   const struct rds_connection *conn)
{
	rds_trace_addr(laddr, conn ? &conn->c_laddr : &in6addr_any);
	rds_trace_addr(faddr, conn ? &conn->c_faddr : &in6addr_any);
}
#endif

/* The enums' values in the events' format files, for trace-cmd, perf
 * and libtraceevent, which cannot read the C enums.
 */
TRACE_DEFINE_ENUM(RDS_CONN_DOWN);
TRACE_DEFINE_ENUM(RDS_CONN_CONNECTING);
TRACE_DEFINE_ENUM(RDS_CONN_UP);
TRACE_DEFINE_ENUM(RDS_OPK_READ);
TRACE_DEFINE_ENUM(RDS_OPK_WRITE);
TRACE_DEFINE_ENUM(RDS_OPK_ATOMIC);

#define rds_trace_show_state(s)					\
	__print_symbolic(s, { RDS_CONN_DOWN, "down" },		\
			 { RDS_CONN_CONNECTING, "connecting" },	\
			 { RDS_CONN_UP, "up" })

#define rds_trace_show_op(o)					\
	__print_symbolic(o, { RDS_OPK_READ, "read" },		\
			 { RDS_OPK_WRITE, "write" },		\
			 { RDS_OPK_ATOMIC, "atomic" })

#define rds_trace_show_rdma_status(s)					\
	__print_symbolic(s, { RDS_RDMA_SUCCESS, "success" },		\
			 { RDS_RDMA_REMOTE_ERROR, "remote_error" },	\
			 { RDS_RDMA_CANCELED, "canceled" },		\
			 { RDS_RDMA_DROPPED, "dropped" },		\
			 { RDS_RDMA_OTHER_ERROR, "other_error" })

TRACE_EVENT(rds_conn_state,
	    TP_PROTO(const struct rds_connection *conn, int old, int new,
		     const char *reason),
	    TP_ARGS(conn, old, new, reason),
	    TP_STRUCT__entry(__array(u8, laddr, RDS_TRACE_ADDR_LEN)
			     __array(u8, faddr, RDS_TRACE_ADDR_LEN)
			     __field(u8, tos)
			     __field(u8, old)
			     __field(u8, new)
			     __string(transport, conn->c_trans->t_name)
			     __string(reason, reason)),
	    TP_fast_assign(rds_trace_addrs(__entry->laddr, __entry->faddr,
					   conn);
			   __entry->tos = conn->c_tos;
			   __entry->old = old;
			   __entry->new = new;
			   rds_trace_assign_str(transport,
						conn->c_trans->t_name);
			   rds_trace_assign_str(reason, reason);),
	    TP_printk("laddr=%pISc faddr=%pISc tos=%u transport=%s old=%s new=%s reason=\"%s\"",
		      __entry->laddr, __entry->faddr, __entry->tos,
		      __get_str(transport),
		      rds_trace_show_state(__entry->old),
		      rds_trace_show_state(__entry->new), __get_str(reason)));

TRACE_EVENT(rds_msg_drop,
	    TP_PROTO(const struct rds_connection *conn,
		     const struct rds_header *hdr, const char *reason),
	    TP_ARGS(conn, hdr, reason),
	    TP_STRUCT__entry(__array(u8, laddr, RDS_TRACE_ADDR_LEN)
			     __array(u8, faddr, RDS_TRACE_ADDR_LEN)
			     __field(u16, sport)
			     __field(u16, dport)
			     __field(u64, seq)
			     __field(u32, len)
			     __string(reason, reason)),
	    TP_fast_assign(rds_trace_addrs(__entry->laddr, __entry->faddr,
					   conn);
			   __entry->sport = hdr ? be16_to_cpu(hdr->h_sport) : 0;
			   __entry->dport = hdr ? be16_to_cpu(hdr->h_dport) : 0;
			   __entry->seq = hdr ? be64_to_cpu(hdr->h_sequence) : 0;
			   __entry->len = hdr ? be32_to_cpu(hdr->h_len) : 0;
			   rds_trace_assign_str(reason, reason);),
	    TP_printk("laddr=%pISc faddr=%pISc sport=%u dport=%u seq=%llu len=%u reason=\"%s\"",
		      __entry->laddr, __entry->faddr, __entry->sport,
		      __entry->dport, __entry->seq, __entry->len,
		      __get_str(reason)));

TRACE_EVENT(rds_retransmit,
	    TP_PROTO(const struct rds_connection *conn, u64 seq),
	    TP_ARGS(conn, seq),
	    TP_STRUCT__entry(__array(u8, laddr, RDS_TRACE_ADDR_LEN)
			     __array(u8, faddr, RDS_TRACE_ADDR_LEN)
			     __field(u8, tos)
			     __field(u64, seq)),
	    TP_fast_assign(rds_trace_addrs(__entry->laddr, __entry->faddr,
					   conn);
			   __entry->tos = conn->c_tos;
			   __entry->seq = seq;),
	    TP_printk("laddr=%pISc faddr=%pISc tos=%u seq=%llu",
		      __entry->laddr, __entry->faddr, __entry->tos,
		      __entry->seq));

TRACE_EVENT(rds_rdma_complete,
	    TP_PROTO(const struct rds_connection *conn, u8 op, int status),
	    TP_ARGS(conn, op, status),
	    TP_STRUCT__entry(__array(u8, laddr, RDS_TRACE_ADDR_LEN)
			     __array(u8, faddr, RDS_TRACE_ADDR_LEN)
			     __field(u8, op)
			     __field(int, status)),
	    TP_fast_assign(rds_trace_addrs(__entry->laddr, __entry->faddr,
					   conn);
			   __entry->op = op;
			   __entry->status = status;),
	    TP_printk("laddr=%pISc faddr=%pISc op=%s status=%s",
		      __entry->laddr, __entry->faddr,
		      rds_trace_show_op(__entry->op),
		      rds_trace_show_rdma_status(__entry->status)));

TRACE_EVENT(rds_ib_credit_stall,
	    TP_PROTO(const struct rds_connection *conn, u32 credits,
		     u32 waiting),
	    TP_ARGS(conn, credits, waiting),
	    TP_STRUCT__entry(__array(u8, laddr, RDS_TRACE_ADDR_LEN)
			     __array(u8, faddr, RDS_TRACE_ADDR_LEN)
			     __field(u8, tos)
			     __field(u32, credits)
			     __field(u32, waiting)),
	    TP_fast_assign(rds_trace_addrs(__entry->laddr, __entry->faddr,
					   conn);
			   __entry->tos = conn->c_tos;
			   __entry->credits = credits;
			   __entry->waiting = waiting;),
	    TP_printk("laddr=%pISc faddr=%pISc tos=%u credits=%u waiting=%u",
		      __entry->laddr, __entry->faddr, __entry->tos,
		      __entry->credits, __entry->waiting));

TRACE_EVENT(rds_ib_heartbeat_loss,
	    TP_PROTO(const struct rds_connection *conn, unsigned int silent_ms),
	    TP_ARGS(conn, silent_ms),
	    TP_STRUCT__entry(__array(u8, laddr, RDS_TRACE_ADDR_LEN)
			     __array(u8, faddr, RDS_TRACE_ADDR_LEN)
			     __field(u8, tos)
			     __field(unsigned int, silent_ms)),
	    TP_fast_assign(rds_trace_addrs(__entry->laddr, __entry->faddr,
					   conn);
			   __entry->tos = conn->c_tos;
			   __entry->silent_ms = silent_ms;),
	    TP_printk("laddr=%pISc faddr=%pISc tos=%u silent_ms=%u",
		      __entry->laddr, __entry->faddr, __entry->tos,
		      __entry->silent_ms));

TRACE_EVENT(rds_ib_hs_refuse,
	    TP_PROTO(const struct in6_addr *peer, const char *reason),
	    TP_ARGS(peer, reason),
	    TP_STRUCT__entry(__array(u8, peer, RDS_TRACE_ADDR_LEN)
			     __string(reason, reason)),
	    TP_fast_assign(rds_trace_addr(__entry->peer, peer);
			   rds_trace_assign_str(reason, reason);),
	    TP_printk("peer=%pISc reason=\"%s\"", __entry->peer,
		      __get_str(reason)));

#endif /* _RDS_TRACE_H */

/* This part must be outside the multi-read protection. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rds
#include <trace/define_trace.h>
