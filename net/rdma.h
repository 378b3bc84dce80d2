/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RDMA and atomic operations bound to messages, and the memory regions
 * (MRs) a socket exposes to its peers.
 *
 * An op and the message that carries it are one unit (shared/seeds'
 * lesson, Documentation/rdma.md): the transport posts the op's work
 * requests right before the message's first frame, and the op's outcome
 * is decided when the message leaves its connection:
 *  - acknowledged by the peer (it delivered the message, so the op before
 *    it was done): RDS_RDMA_SUCCESS, unless a completion failed;
 *  - dropped after a reconnect because the op had been posted (an op is
 *    never executed twice): the completion's error, else RDS_RDMA_DROPPED;
 *  - cancelled (RDS_CANCEL_SENT_TO): RDS_RDMA_CANCELED.
 * The sender learns it with RDS_CMSG_RDMA_STATUS when it asked
 * (RDS_RDMA_NOTIFY_ME) or on a failure with RDS_RECVERR set.
 */
#ifndef _RDS_RDMA_H
#define _RDS_RDMA_H

#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "seq.h"
#include "wire.h"

/* Pages a memory region spans at most: 1 MiB starting anywhere in a page. */
#define RDS_MR_MAX_PAGES	(RDS_MAX_MSG_SIZE / PAGE_SIZE + 1)

struct rds_sock;
struct rds_message;
struct rds_connection;
struct rds_transport;

/* A memory region a socket registered (RDS_GET_MR, RDS_CMSG_RDMA_MAP). */
struct rds_mr {
	refcount_t		r_refcount;
	struct rb_node		r_node;		/* rs_mr_tree by r_key, rs_rdma_lock */
	/* on rs_mr_pending (rs_rdma_lock) until a message takes it onto
	 * its m_regs (owned by the message from then on)
	 */
	struct list_head	r_reg_item;
	struct rds_sock		*r_rs;		/* no reference: cleared on close */
	u32			r_key;
	bool			r_use_once;
	bool			r_in_tree;	/* rs_rdma_lock */
	bool			r_pending;	/* on rs_mr_pending, rs_rdma_lock */
	struct rds_transport	*r_trans;
	void			*r_trans_data;	/* the transport's registration */
	struct page		**r_pages;	/* pinned, counted in r_mm */
	unsigned int		r_npages;
	unsigned int		r_offset;	/* of the first byte in r_pages[0] */
	u64			r_bytes;	/* what the peer may touch */
	struct mm_struct	*r_mm;		/* mmgrab()ed; locked_vm charged */
	struct work_struct	r_free_work;	/* runs: last put outside process context */
};

/* The pinned local pages of an op.  They outlive its message when pages
 * the device wrote are to be marked dirty: that may sleep (the page lock,
 * the filesystem's locks of a file-backed MAP_SHARED mapping), and the
 * last put of a message may come from the completion path (softirq), so
 * a work item does it.
 */
struct rds_rdma_pin {
	struct work_struct	p_work;
	unsigned int		p_n;		/* pages pinned */
	struct page		*p_pages[];
};

/* What kind of op a message carries. */
enum {
	RDS_OPK_NONE,
	RDS_OPK_READ,		/* RDMA READ from the peer into local memory */
	RDS_OPK_WRITE,		/* RDMA WRITE of local memory to the peer */
	RDS_OPK_ATOMIC,		/* 8-byte atomic; the old value lands locally */
};

/* A completion notice waiting for recvmsg (rs_notify_queue). */
struct rds_notifier {
	struct list_head	n_item;
	u64			n_token;
	int			n_status;
};

/* The op a message carries.  Set up by sendmsg; the o_ib_* fields belong
 * to the transport, under its connection's data-path lock.
 */
struct rds_rdma_op {
	u8			o_kind;		/* RDS_OPK_* */
	u8			o_state;	/* enum rds_seq_op */
	bool			o_notify;	/* RDS_RDMA_NOTIFY_ME */
	bool			o_silent;	/* RDS_RDMA_SILENT */
	bool			o_fence;
	bool			o_ended;	/* the outcome was decided */
	int			o_status;	/* a failed completion: RDS_RDMA_* */
	u32			o_rkey;
	u64			o_raddr;	/* in the peer's region */
	u32			o_bytes;
	u64			o_token;
	u64			o_dest;		/* RDS_CMSG_RDMA_DEST/MAP cookie */
	bool			o_has_dest;
	/* atomics: the IB opcode and its operands */
	enum ib_wr_opcode	o_aop;
	u64			o_compare;	/* or the addend */
	u64			o_swap;
	u64			o_cmask;
	u64			o_smask;
	struct rds_notifier	*o_notifier;	/* preallocated */
	/* local memory: pinned pages (o_pin's), cut at page and iovec
	 * boundaries
	 */
	struct rds_rdma_pin	*o_pin;
	struct page		**o_pages;
	unsigned int		o_npages;
	struct scatterlist	*o_sg;
	unsigned int		o_nsg;
	/* transport state */
	struct ib_cqe		o_cqe;
	struct ib_device	*o_ib_dev;	/* o_sg is mapped for it */
	unsigned int		o_ib_nwr;	/* work requests of the op */
	unsigned int		o_ib_posted;
	unsigned int		o_ib_done;	/* completions seen */
	u32			o_ib_off;	/* bytes of the WRs posted */
	void			*o_ib_conn;	/* posted on */
};

/* rdma.c */
int rds_rdma_setsockopt(struct rds_sock *rs, int optname, sockptr_t optval,
			unsigned int optlen);
int rds_rdma_cmsgs(struct rds_sock *rs, struct rds_message *rm,
		   struct msghdr *msg, bool nonblock, long timeo);
void rds_rdma_take_pending(struct rds_sock *rs, struct rds_message *rm,
			   struct rds_connection *conn);
void rds_rdma_op_end(struct rds_message *rm, enum rds_seq_op_end end);
void rds_rdma_msg_free(struct rds_message *rm);
void rds_rdma_sock_release(struct rds_sock *rs);
void rds_rdma_recv_used(struct rds_sock *rs, struct rds_connection *conn,
			const struct rds_header *hdr);
int rds_rdma_recv_cmsgs(const struct rds_header *hdr, struct msghdr *msg);
int rds_rdma_notify_cmsg(struct rds_sock *rs, struct msghdr *msg);
void rds_mr_put(struct rds_mr *mr);
int rds_rdma_init(void);
void rds_rdma_exit(void);

#endif /* _RDS_RDMA_H */
