/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI facts abi_test compares: one table per <linux/rds.h> variant.
 *
 * abi_sys.c and abi_ours.c each include one variant of the header, define
 * ABI_TABLE/ABI_COUNT and include this file, which then builds the table
 * from the very same list, so the two can be compared entry by entry.
 *
 * Keys ("const X", "sizeof struct X", "offsetof struct X.f", "call M(a)")
 * must match those gen_abi_names.sh derives from the system header: the
 * test checks that every name found there has an entry below.
 */
#ifndef ABI_TABLE_H
#define ABI_TABLE_H

/*
 * v[] depends on the kind of entry, lbl[] names its elements:
 *   const / call:    value, sizeof, signed
 *   struct / union:  sizeof, alignof
 *   typedef / enum:  sizeof, alignof, signed
 *   integer member:  offset, sizeof, signed
 *   array member:    offset, sizeof, sizeof element, element signed
 *   other member:    offset, sizeof, alignof
 */
struct abi_entry {
	const char *name;
	int present;		/* 0: not defined by this header */
	long long v[4];
	const char *lbl[4];
};

extern const struct abi_entry abi_sys_table[];
extern const unsigned int abi_sys_count;
extern const struct abi_entry abi_ours_table[];
extern const unsigned int abi_ours_count;

#endif /* ABI_TABLE_H */

#ifdef ABI_TABLE

#include <stddef.h>

/* 1 if type T is signed; written so that -Wtype-limits stays quiet. */
#define ABI_SIGNED(T)	(!((T)-1 > (T)0))
#define ABI_MEMBER_T(T, f)	__typeof__(((T *)0)->f)
#define ABI_ELEM_T(T, f)	__typeof__(((T *)0)->f[0])

#define ABI_MISSING(key)	{ key, 0, { 0 }, { NULL } },

#define ABI_CONST(c)							\
	{ "const " #c, 1,						\
	  { (long long)(c), sizeof(c), ABI_SIGNED(__typeof__(c)) },	\
	  { "value", "size", "signed" } },

#define ABI_CALL(m, arg)						\
	{ "call " #m "(" #arg ")", 1,					\
	  { (long long)m(arg), sizeof(m(arg)),				\
	    ABI_SIGNED(__typeof__(m(arg))) },				\
	  { "value", "size", "signed" } },

#define ABI_AGGR(T)							\
	{ "sizeof " #T, 1, { sizeof(T), _Alignof(T) },			\
	  { "size", "align" } },

#define ABI_SCALAR(T)							\
	{ "sizeof " #T, 1, { sizeof(T), _Alignof(T), ABI_SIGNED(T) },	\
	  { "size", "align", "signed" } },

#define ABI_INT(T, f)							\
	{ "offsetof " #T "." #f, 1,					\
	  { offsetof(T, f), sizeof(ABI_MEMBER_T(T, f)),			\
	    ABI_SIGNED(ABI_MEMBER_T(T, f)) },				\
	  { "offset", "size", "signed" } },

#define ABI_ARRAY(T, f)							\
	{ "offsetof " #T "." #f, 1,					\
	  { offsetof(T, f), sizeof(ABI_MEMBER_T(T, f)),			\
	    sizeof(ABI_ELEM_T(T, f)), ABI_SIGNED(ABI_ELEM_T(T, f)) },	\
	  { "offset", "size", "elem_size", "elem_signed" } },

#define ABI_OBJ(T, f)							\
	{ "offsetof " #T "." #f, 1,					\
	  { offsetof(T, f), sizeof(ABI_MEMBER_T(T, f)),			\
	    _Alignof(ABI_MEMBER_T(T, f)) },				\
	  { "offset", "size", "align" } },

const struct abi_entry ABI_TABLE[] = {
	/* Every object-like macro of the system header, generated. */
#define ABI_GEN_CONSTS
#include "abi_gen.h"
#undef ABI_GEN_CONSTS

	/* Function-like macros, probed at a few ports. */
	ABI_CALL(RDS_CONG_MONITOR_BIT, 0)
	ABI_CALL(RDS_CONG_MONITOR_BIT, 1)
	ABI_CALL(RDS_CONG_MONITOR_BIT, 63)
	ABI_CALL(RDS_CONG_MONITOR_BIT, 64)
	ABI_CALL(RDS_CONG_MONITOR_BIT, 4001)
	ABI_CALL(RDS_CONG_MONITOR_BIT, 65535)
	ABI_CALL(RDS_CONG_MONITOR_MASK, 0)
	ABI_CALL(RDS_CONG_MONITOR_MASK, 1)
	ABI_CALL(RDS_CONG_MONITOR_MASK, 63)
	ABI_CALL(RDS_CONG_MONITOR_MASK, 64)
	ABI_CALL(RDS_CONG_MONITOR_MASK, 4001)
	ABI_CALL(RDS_CONG_MONITOR_MASK, 65535)

	/* Typedefs and enums. */
	ABI_SCALAR(rds_tos_t)
	ABI_SCALAR(rds_rdma_cookie_t)
	ABI_SCALAR(enum rds_message_rxpath_latency)
	ABI_CONST(RDS_MSG_RX_HDR_TO_DGRAM_START)
	ABI_CONST(RDS_MSG_RX_DGRAM_REASSEMBLE)
	ABI_CONST(RDS_MSG_RX_DGRAM_DELIVERED)
	ABI_CONST(RDS_MSG_RX_DGRAM_TRACE_MAX)

	/* RDS_INFO_* records */
	ABI_AGGR(struct rds_info_counter)
	ABI_ARRAY(struct rds_info_counter, name)
	ABI_INT(struct rds_info_counter, value)

	ABI_AGGR(struct rds_info_connection)
	ABI_INT(struct rds_info_connection, next_tx_seq)
	ABI_INT(struct rds_info_connection, next_rx_seq)
	ABI_INT(struct rds_info_connection, laddr)
	ABI_INT(struct rds_info_connection, faddr)
	ABI_ARRAY(struct rds_info_connection, transport)
	ABI_INT(struct rds_info_connection, flags)
	ABI_INT(struct rds_info_connection, tos)

	ABI_AGGR(struct rds6_info_connection)
	ABI_INT(struct rds6_info_connection, next_tx_seq)
	ABI_INT(struct rds6_info_connection, next_rx_seq)
	ABI_OBJ(struct rds6_info_connection, laddr)
	ABI_OBJ(struct rds6_info_connection, faddr)
	ABI_ARRAY(struct rds6_info_connection, transport)
	ABI_INT(struct rds6_info_connection, flags)

	ABI_AGGR(struct rds_info_message)
	ABI_INT(struct rds_info_message, seq)
	ABI_INT(struct rds_info_message, len)
	ABI_INT(struct rds_info_message, laddr)
	ABI_INT(struct rds_info_message, faddr)
	ABI_INT(struct rds_info_message, lport)
	ABI_INT(struct rds_info_message, fport)
	ABI_INT(struct rds_info_message, flags)
	ABI_INT(struct rds_info_message, tos)

	ABI_AGGR(struct rds6_info_message)
	ABI_INT(struct rds6_info_message, seq)
	ABI_INT(struct rds6_info_message, len)
	ABI_OBJ(struct rds6_info_message, laddr)
	ABI_OBJ(struct rds6_info_message, faddr)
	ABI_INT(struct rds6_info_message, lport)
	ABI_INT(struct rds6_info_message, fport)
	ABI_INT(struct rds6_info_message, flags)
	ABI_INT(struct rds6_info_message, tos)

	ABI_AGGR(struct rds_info_socket)
	ABI_INT(struct rds_info_socket, sndbuf)
	ABI_INT(struct rds_info_socket, bound_addr)
	ABI_INT(struct rds_info_socket, connected_addr)
	ABI_INT(struct rds_info_socket, bound_port)
	ABI_INT(struct rds_info_socket, connected_port)
	ABI_INT(struct rds_info_socket, rcvbuf)
	ABI_INT(struct rds_info_socket, inum)

	ABI_AGGR(struct rds6_info_socket)
	ABI_INT(struct rds6_info_socket, sndbuf)
	ABI_OBJ(struct rds6_info_socket, bound_addr)
	ABI_OBJ(struct rds6_info_socket, connected_addr)
	ABI_INT(struct rds6_info_socket, bound_port)
	ABI_INT(struct rds6_info_socket, connected_port)
	ABI_INT(struct rds6_info_socket, rcvbuf)
	ABI_INT(struct rds6_info_socket, inum)

	ABI_AGGR(struct rds_info_tcp_socket)
	ABI_INT(struct rds_info_tcp_socket, local_addr)
	ABI_INT(struct rds_info_tcp_socket, local_port)
	ABI_INT(struct rds_info_tcp_socket, peer_addr)
	ABI_INT(struct rds_info_tcp_socket, peer_port)
	ABI_INT(struct rds_info_tcp_socket, hdr_rem)
	ABI_INT(struct rds_info_tcp_socket, data_rem)
	ABI_INT(struct rds_info_tcp_socket, last_sent_nxt)
	ABI_INT(struct rds_info_tcp_socket, last_expected_una)
	ABI_INT(struct rds_info_tcp_socket, last_seen_una)
	ABI_INT(struct rds_info_tcp_socket, tos)

	ABI_AGGR(struct rds6_info_tcp_socket)
	ABI_OBJ(struct rds6_info_tcp_socket, local_addr)
	ABI_INT(struct rds6_info_tcp_socket, local_port)
	ABI_OBJ(struct rds6_info_tcp_socket, peer_addr)
	ABI_INT(struct rds6_info_tcp_socket, peer_port)
	ABI_INT(struct rds6_info_tcp_socket, hdr_rem)
	ABI_INT(struct rds6_info_tcp_socket, data_rem)
	ABI_INT(struct rds6_info_tcp_socket, last_sent_nxt)
	ABI_INT(struct rds6_info_tcp_socket, last_expected_una)
	ABI_INT(struct rds6_info_tcp_socket, last_seen_una)

	ABI_AGGR(struct rds_info_rdma_connection)
	ABI_INT(struct rds_info_rdma_connection, src_addr)
	ABI_INT(struct rds_info_rdma_connection, dst_addr)
	ABI_ARRAY(struct rds_info_rdma_connection, src_gid)
	ABI_ARRAY(struct rds_info_rdma_connection, dst_gid)
	ABI_INT(struct rds_info_rdma_connection, max_send_wr)
	ABI_INT(struct rds_info_rdma_connection, max_recv_wr)
	ABI_INT(struct rds_info_rdma_connection, max_send_sge)
	ABI_INT(struct rds_info_rdma_connection, rdma_mr_max)
	ABI_INT(struct rds_info_rdma_connection, rdma_mr_size)
	ABI_INT(struct rds_info_rdma_connection, tos)
	ABI_INT(struct rds_info_rdma_connection, sl)
	ABI_INT(struct rds_info_rdma_connection, cache_allocs)

	ABI_AGGR(struct rds6_info_rdma_connection)
	ABI_OBJ(struct rds6_info_rdma_connection, src_addr)
	ABI_OBJ(struct rds6_info_rdma_connection, dst_addr)
	ABI_ARRAY(struct rds6_info_rdma_connection, src_gid)
	ABI_ARRAY(struct rds6_info_rdma_connection, dst_gid)
	ABI_INT(struct rds6_info_rdma_connection, max_send_wr)
	ABI_INT(struct rds6_info_rdma_connection, max_recv_wr)
	ABI_INT(struct rds6_info_rdma_connection, max_send_sge)
	ABI_INT(struct rds6_info_rdma_connection, rdma_mr_max)
	ABI_INT(struct rds6_info_rdma_connection, rdma_mr_size)
	ABI_INT(struct rds6_info_rdma_connection, tos)
	ABI_INT(struct rds6_info_rdma_connection, sl)
	ABI_INT(struct rds6_info_rdma_connection, cache_allocs)

	/* Receive path latency tracing */
	ABI_AGGR(struct rds_rx_trace_so)
	ABI_INT(struct rds_rx_trace_so, rx_traces)
	ABI_ARRAY(struct rds_rx_trace_so, rx_trace_pos)

	ABI_AGGR(struct rds_cmsg_rx_trace)
	ABI_INT(struct rds_cmsg_rx_trace, rx_traces)
	ABI_ARRAY(struct rds_cmsg_rx_trace, rx_trace_pos)
	ABI_ARRAY(struct rds_cmsg_rx_trace, rx_trace)

	/* RDMA and atomics */
	ABI_AGGR(struct rds_iovec)
	ABI_INT(struct rds_iovec, addr)
	ABI_INT(struct rds_iovec, bytes)

	ABI_AGGR(struct rds_get_mr_args)
	ABI_OBJ(struct rds_get_mr_args, vec)
	ABI_INT(struct rds_get_mr_args, cookie_addr)
	ABI_INT(struct rds_get_mr_args, flags)

	ABI_AGGR(struct rds_get_mr_for_dest_args)
	ABI_OBJ(struct rds_get_mr_for_dest_args, dest_addr)
	ABI_OBJ(struct rds_get_mr_for_dest_args, vec)
	ABI_INT(struct rds_get_mr_for_dest_args, cookie_addr)
	ABI_INT(struct rds_get_mr_for_dest_args, flags)

	ABI_AGGR(struct rds_free_mr_args)
	ABI_INT(struct rds_free_mr_args, cookie)
	ABI_INT(struct rds_free_mr_args, flags)

	ABI_AGGR(struct rds_rdma_args)
	ABI_INT(struct rds_rdma_args, cookie)
	ABI_OBJ(struct rds_rdma_args, remote_vec)
	ABI_INT(struct rds_rdma_args, local_vec_addr)
	ABI_INT(struct rds_rdma_args, nr_local)
	ABI_INT(struct rds_rdma_args, flags)
	ABI_INT(struct rds_rdma_args, user_token)

	ABI_AGGR(struct rds_atomic_args)
	ABI_INT(struct rds_atomic_args, cookie)
	ABI_INT(struct rds_atomic_args, local_addr)
	ABI_INT(struct rds_atomic_args, remote_addr)
	ABI_OBJ(struct rds_atomic_args, cswp)
	ABI_INT(struct rds_atomic_args, cswp.compare)
	ABI_INT(struct rds_atomic_args, cswp.swap)
	ABI_OBJ(struct rds_atomic_args, fadd)
	ABI_INT(struct rds_atomic_args, fadd.add)
	ABI_OBJ(struct rds_atomic_args, m_cswp)
	ABI_INT(struct rds_atomic_args, m_cswp.compare)
	ABI_INT(struct rds_atomic_args, m_cswp.swap)
	ABI_INT(struct rds_atomic_args, m_cswp.compare_mask)
	ABI_INT(struct rds_atomic_args, m_cswp.swap_mask)
	ABI_OBJ(struct rds_atomic_args, m_fadd)
	ABI_INT(struct rds_atomic_args, m_fadd.add)
	ABI_INT(struct rds_atomic_args, m_fadd.nocarry_mask)
	ABI_INT(struct rds_atomic_args, flags)
	ABI_INT(struct rds_atomic_args, user_token)

	ABI_AGGR(struct rds_rdma_notify)
	ABI_INT(struct rds_rdma_notify, user_token)
	ABI_INT(struct rds_rdma_notify, status)

	/* Zero-copy completions */
	ABI_AGGR(struct rds_zcopy_cookies)
	ABI_INT(struct rds_zcopy_cookies, num)
	ABI_ARRAY(struct rds_zcopy_cookies, cookies)
};

const unsigned int ABI_COUNT = sizeof(ABI_TABLE) / sizeof(ABI_TABLE[0]);

#endif /* ABI_TABLE */
