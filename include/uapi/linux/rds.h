/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * AF_RDS (Reliable Datagram Sockets) user-space interface.
 *
 * Binary compatible with the mainline <linux/rds.h>: every number, type
 * and structure layout below is part of the ABI and must not change.
 */
#ifndef _UAPI_LINUX_RDS_H
#define _UAPI_LINUX_RDS_H

#include <linux/types.h>
#include <linux/socket.h>	/* struct __kernel_sockaddr_storage */
#include <linux/sockios.h>	/* SIOCPROTOPRIVATE */
#include <linux/in6.h>		/* struct in6_addr */

/* Socket option level; the family itself is AF_RDS/PF_RDS (21). */
#define SOL_RDS				276

/* Version of the IB transport's connection handshake. */
#define RDS_IB_ABI_VERSION		0x301

/* ------------------------------------------------------------------ */
/* setsockopt()/getsockopt() names at level SOL_RDS                    */
/* ------------------------------------------------------------------ */

#define RDS_CANCEL_SENT_TO		1	/* cancel sends to a peer */
#define RDS_GET_MR			2	/* struct rds_get_mr_args */
#define RDS_FREE_MR			3	/* struct rds_free_mr_args */
/* 4 was RDS_BARRIER, no longer supported */
#define RDS_RECVERR			5	/* int: notify RDMA failures */
#define RDS_CONG_MONITOR		6	/* __u64 port-group mask */
#define RDS_GET_MR_FOR_DEST		7	/* rds_get_mr_for_dest_args */
#define SO_RDS_TRANSPORT		8	/* int: one of RDS_TRANS_* */
/* 9 is unused */
#define SO_RDS_MSG_RXPATH_LATENCY	10	/* struct rds_rx_trace_so */

/* Values of SO_RDS_TRANSPORT. */
#define RDS_TRANS_IB			0
#define RDS_TRANS_GAP			1	/* former iWARP slot */
#define RDS_TRANS_IWARP			RDS_TRANS_GAP	/* obsolete alias */
#define RDS_TRANS_TCP			2
#define RDS_TRANS_COUNT			3
#define RDS_TRANS_NONE			(~0)	/* not pinned to a transport */

/* ------------------------------------------------------------------ */
/* ioctl()s: type of service, passed as a pointer to rds_tos_t         */
/* ------------------------------------------------------------------ */

#define SIOCRDSSETTOS			(SIOCPROTOPRIVATE)
#define SIOCRDSGETTOS			(SIOCPROTOPRIVATE + 1)

typedef __u8 rds_tos_t;

/* ------------------------------------------------------------------ */
/* Ancillary data (cmsg_level SOL_RDS)                                 */
/* ------------------------------------------------------------------ */

#define RDS_CMSG_RDMA_ARGS		1	/* tx: struct rds_rdma_args */
#define RDS_CMSG_RDMA_DEST		2	/* tx/rx: rds_rdma_cookie_t */
#define RDS_CMSG_RDMA_MAP		3	/* tx: struct rds_get_mr_args */
#define RDS_CMSG_RDMA_STATUS		4	/* rx: struct rds_rdma_notify */
#define RDS_CMSG_CONG_UPDATE		5	/* rx: __u64 uncongested mask */
#define RDS_CMSG_ATOMIC_FADD		6	/* tx: struct rds_atomic_args */
#define RDS_CMSG_ATOMIC_CSWP		7	/* tx: struct rds_atomic_args */
#define RDS_CMSG_MASKED_ATOMIC_FADD	8	/* tx: struct rds_atomic_args */
#define RDS_CMSG_MASKED_ATOMIC_CSWP	9	/* tx: struct rds_atomic_args */
/* 10 is unused */
#define RDS_CMSG_RXPATH_LATENCY		11	/* rx: rds_cmsg_rx_trace */
#define RDS_CMSG_ZCOPY_COOKIE		12	/* tx: __u32 cookie */
#define RDS_CMSG_ZCOPY_COMPLETION	13	/* rx: rds_zcopy_cookies */

/* ------------------------------------------------------------------ */
/* RDMA and atomic operations                                          */
/* ------------------------------------------------------------------ */

/*
 * Names a remote memory region: the low 32 bits carry the R_Key, the high
 * 32 bits the offset of the first byte within the region.
 */
typedef __u64 rds_rdma_cookie_t;

/* Flags shared by the RDMA argument structures below. */
#define RDS_RDMA_READWRITE		0x0001	/* RDMA write, else read */
#define RDS_RDMA_FENCE			0x0002	/* fence the following send */
#define RDS_RDMA_INVALIDATE		0x0004	/* invalidate the key on free */
#define RDS_RDMA_USE_ONCE		0x0008	/* free the MR after one use */
#define RDS_RDMA_DONTWAIT		0x0010	/* historical, ignored */
#define RDS_RDMA_NOTIFY_ME		0x0020	/* queue a completion status */
#define RDS_RDMA_SILENT			0x0040	/* no receive-side wakeup */

/* rds_rdma_notify.status */
#define RDS_RDMA_SUCCESS		0
#define RDS_RDMA_REMOTE_ERROR		1
#define RDS_RDMA_CANCELED		2
#define RDS_RDMA_DROPPED		3
#define RDS_RDMA_OTHER_ERROR		4

/* One contiguous range of user memory. */
struct rds_iovec {
	__u64			addr;
	__u64			bytes;
};

/* RDS_GET_MR, RDS_CMSG_RDMA_MAP: map vec, store the cookie at cookie_addr. */
struct rds_get_mr_args {
	struct rds_iovec	vec;
	__u64			cookie_addr;
	__u64			flags;
};

/* RDS_GET_MR_FOR_DEST: as above, naming the peer that will use the MR. */
struct rds_get_mr_for_dest_args {
	struct __kernel_sockaddr_storage dest_addr;
	struct rds_iovec	vec;
	__u64			cookie_addr;
	__u64			flags;
};

/* RDS_FREE_MR: release one MR, or all of them when cookie is 0. */
struct rds_free_mr_args {
	rds_rdma_cookie_t	cookie;
	__u64			flags;
};

/* RDS_CMSG_RDMA_ARGS: local_vec_addr points to nr_local struct rds_iovec. */
struct rds_rdma_args {
	rds_rdma_cookie_t	cookie;
	struct rds_iovec	remote_vec;
	__u64			local_vec_addr;
	__u64			nr_local;
	__u64			flags;
	__u64			user_token;
};

/* RDS_CMSG_*ATOMIC_*: the union member used depends on the cmsg type. */
struct rds_atomic_args {
	rds_rdma_cookie_t	cookie;
	__u64			local_addr;
	__u64			remote_addr;
	union {
		struct {
			__u64	compare;
			__u64	swap;
		} cswp;
		struct {
			__u64	add;
		} fadd;
		struct {
			__u64	compare;
			__u64	swap;
			__u64	compare_mask;
			__u64	swap_mask;
		} m_cswp;
		struct {
			__u64	add;
			__u64	nocarry_mask;
		} m_fadd;
	};
	__u64			flags;
	__u64			user_token;
};

/* RDS_CMSG_RDMA_STATUS: outcome of an operation, status is RDS_RDMA_*. */
struct rds_rdma_notify {
	__u64			user_token;
	__s32			status;
};

/* ------------------------------------------------------------------ */
/* Zero-copy send completions                                          */
/* ------------------------------------------------------------------ */

#define RDS_MAX_ZCOOKIES		8

struct rds_zcopy_cookies {
	__u32			num;
	__u32			cookies[RDS_MAX_ZCOOKIES];
};

/* ------------------------------------------------------------------ */
/* Congestion monitoring (RDS_CONG_MONITOR, RDS_CMSG_CONG_UPDATE)      */
/* ------------------------------------------------------------------ */

/* Ports fall into 64 groups; group n is bit n of the 64-bit mask. */
#define RDS_CONG_MONITOR_SIZE		64
#define RDS_CONG_MONITOR_BIT(port)	\
	(((unsigned int)(port)) % RDS_CONG_MONITOR_SIZE)
#define RDS_CONG_MONITOR_MASK(port)	(1ULL << RDS_CONG_MONITOR_BIT(port))

/* ------------------------------------------------------------------ */
/* Receive path latency tracing                                        */
/* ------------------------------------------------------------------ */

/* Points on the receive path that can be timed. */
enum rds_message_rxpath_latency {
	RDS_MSG_RX_HDR_TO_DGRAM_START = 0,
	RDS_MSG_RX_DGRAM_REASSEMBLE,
	RDS_MSG_RX_DGRAM_DELIVERED,
	RDS_MSG_RX_DGRAM_TRACE_MAX
};

/* SO_RDS_MSG_RXPATH_LATENCY: which points (rx_traces of them) to report. */
struct rds_rx_trace_so {
	__u8			rx_traces;
	__u8			rx_trace_pos[RDS_MSG_RX_DGRAM_TRACE_MAX];
};

/* RDS_CMSG_RXPATH_LATENCY: the selected points and their deltas in ns. */
struct rds_cmsg_rx_trace {
	__u8			rx_traces;
	__u8			rx_trace_pos[RDS_MSG_RX_DGRAM_TRACE_MAX];
	__u64			rx_trace[RDS_MSG_RX_DGRAM_TRACE_MAX];
};

/* ------------------------------------------------------------------ */
/* getsockopt(SOL_RDS, RDS_INFO_*): snapshots of module state          */
/* ------------------------------------------------------------------ */

#define RDS_INFO_FIRST			10000
#define RDS_INFO_COUNTERS		10000	/* rds_info_counter */
#define RDS_INFO_CONNECTIONS		10001	/* rds_info_connection */
/* 10002 (flows) is obsolete */
#define RDS_INFO_SEND_MESSAGES		10003	/* rds_info_message */
#define RDS_INFO_RETRANS_MESSAGES	10004	/* rds_info_message */
#define RDS_INFO_RECV_MESSAGES		10005	/* rds_info_message */
#define RDS_INFO_SOCKETS		10006	/* rds_info_socket */
#define RDS_INFO_TCP_SOCKETS		10007	/* rds_info_tcp_socket */
#define RDS_INFO_IB_CONNECTIONS		10008	/* rds_info_rdma_connection */
#define RDS_INFO_CONNECTION_STATS	10009
#define RDS_INFO_IWARP_CONNECTIONS	10010

/* The same snapshots with IPv6 addresses. */
#define RDS6_INFO_CONNECTIONS		10011	/* rds6_info_connection */
#define RDS6_INFO_SEND_MESSAGES		10012	/* rds6_info_message */
#define RDS6_INFO_RETRANS_MESSAGES	10013	/* rds6_info_message */
#define RDS6_INFO_RECV_MESSAGES		10014	/* rds6_info_message */
#define RDS6_INFO_SOCKETS		10015	/* rds6_info_socket */
#define RDS6_INFO_TCP_SOCKETS		10016	/* rds6_info_tcp_socket */
#define RDS6_INFO_IB_CONNECTIONS	10017	/* rds6_info_rdma_connection */

#define RDS_INFO_LAST			10017

/* rds_info_connection.flags / rds6_info_connection.flags */
#define RDS_INFO_CONNECTION_FLAG_SENDING	0x01
#define RDS_INFO_CONNECTION_FLAG_CONNECTING	0x02
#define RDS_INFO_CONNECTION_FLAG_CONNECTED	0x04

/* rds_info_message.flags / rds6_info_message.flags */
#define RDS_INFO_MESSAGE_FLAG_ACK		0x01
#define RDS_INFO_MESSAGE_FLAG_FAST_ACK		0x02

#define TRANSNAMSIZ			16	/* transport name, NUL padded */
#define RDS_IB_GID_LEN			16

/*
 * All records except the RDMA connection ones are packed: their sizes are
 * what user space uses to step through the returned array.
 */

struct rds_info_counter {
	__u8			name[32];
	__u64			value;
} __attribute__((packed));

struct rds_info_connection {
	__u64			next_tx_seq;
	__u64			next_rx_seq;
	__be32			laddr;
	__be32			faddr;
	__u8			transport[TRANSNAMSIZ];
	__u8			flags;
	__u8			tos;
} __attribute__((packed));

/* Note: unlike the IPv4 record this one has no tos. */
struct rds6_info_connection {
	__u64			next_tx_seq;
	__u64			next_rx_seq;
	struct in6_addr		laddr;
	struct in6_addr		faddr;
	__u8			transport[TRANSNAMSIZ];
	__u8			flags;
} __attribute__((packed));

struct rds_info_message {
	__u64			seq;
	__u32			len;
	__be32			laddr;
	__be32			faddr;
	__be16			lport;
	__be16			fport;
	__u8			flags;
	__u8			tos;
} __attribute__((packed));

struct rds6_info_message {
	__u64			seq;
	__u32			len;
	struct in6_addr		laddr;
	struct in6_addr		faddr;
	__be16			lport;
	__be16			fport;
	__u8			flags;
	__u8			tos;
} __attribute__((packed));

struct rds_info_socket {
	__u32			sndbuf;
	__be32			bound_addr;
	__be32			connected_addr;
	__be16			bound_port;
	__be16			connected_port;
	__u32			rcvbuf;
	__u64			inum;
} __attribute__((packed));

struct rds6_info_socket {
	__u32			sndbuf;
	struct in6_addr		bound_addr;
	struct in6_addr		connected_addr;
	__be16			bound_port;
	__be16			connected_port;
	__u32			rcvbuf;
	__u64			inum;
} __attribute__((packed));

struct rds_info_tcp_socket {
	__be32			local_addr;
	__be16			local_port;
	__be32			peer_addr;
	__be16			peer_port;
	__u64			hdr_rem;
	__u64			data_rem;
	__u32			last_sent_nxt;
	__u32			last_expected_una;
	__u32			last_seen_una;
	__u8			tos;
} __attribute__((packed));

/* Note: unlike the IPv4 record this one has no tos. */
struct rds6_info_tcp_socket {
	struct in6_addr		local_addr;
	__be16			local_port;
	struct in6_addr		peer_addr;
	__be16			peer_port;
	__u64			hdr_rem;
	__u64			data_rem;
	__u32			last_sent_nxt;
	__u32			last_expected_una;
	__u32			last_seen_una;
} __attribute__((packed));

/* Naturally aligned (not packed): 68 bytes, with padding after sl. */
struct rds_info_rdma_connection {
	__be32			src_addr;
	__be32			dst_addr;
	__u8			src_gid[RDS_IB_GID_LEN];
	__u8			dst_gid[RDS_IB_GID_LEN];
	__u32			max_send_wr;
	__u32			max_recv_wr;
	__u32			max_send_sge;
	__u32			rdma_mr_max;
	__u32			rdma_mr_size;
	__u8			tos;
	__u8			sl;
	__u32			cache_allocs;
};

/* Naturally aligned (not packed): 92 bytes. */
struct rds6_info_rdma_connection {
	struct in6_addr		src_addr;
	struct in6_addr		dst_addr;
	__u8			src_gid[RDS_IB_GID_LEN];
	__u8			dst_gid[RDS_IB_GID_LEN];
	__u32			max_send_wr;
	__u32			max_recv_wr;
	__u32			max_send_sge;
	__u32			rdma_mr_max;
	__u32			rdma_mr_size;
	__u8			tos;
	__u8			sl;
	__u32			cache_allocs;
};

#endif /* _UAPI_LINUX_RDS_H */
