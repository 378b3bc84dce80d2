// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA, transport neutral: the memory-registration socket options
 * (RDS_GET_MR, RDS_GET_MR_FOR_DEST, RDS_FREE_MR), the RDMA and atomic
 * cmsgs of sendmsg, the extension headers that carry keys, the status
 * notices recvmsg hands out, and the lifetime of pinned memory.  The
 * transport registers regions and posts ops (net/ib/mr.c, net/ib/send.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sockptr.h>
#include <linux/uaccess.h>

#include "rds.h"
#include "exthdr.h"
#include "fault.h"
#include "trace/rds.h"

static_assert(RDS_SEQ_ST_SUCCESS == RDS_RDMA_SUCCESS);
static_assert(RDS_SEQ_ST_REMOTE_ERROR == RDS_RDMA_REMOTE_ERROR);
static_assert(RDS_SEQ_ST_CANCELED == RDS_RDMA_CANCELED);
static_assert(RDS_SEQ_ST_DROPPED == RDS_RDMA_DROPPED);
static_assert(RDS_SEQ_ST_OTHER_ERROR == RDS_RDMA_OTHER_ERROR);

#define RDS_RDMA_MAX_IOVECS	1024
/* the longest a blocking caller waits for a free region */
#define RDS_MR_MAX_WAIT		(10 * HZ)

static struct workqueue_struct *rds_mr_wq;

static u64 rds_rdma_cookie(u32 key, u64 addr)
{
	return key | (u64)offset_in_page(addr) << 32;
}

static u32 rds_cookie_key(u64 cookie)
{
	return lower_32_bits(cookie);
}

static u32 rds_cookie_offset(u64 cookie)
{
	return upper_32_bits(cookie);
}

/* Pages spanned by [addr, addr + bytes); 0 if the range wraps or is empty. */
static unsigned long rds_rdma_npages(u64 addr, u64 bytes)
{
	if (!bytes || addr + bytes < addr)
		return 0;
	return ((addr + bytes - 1) >> PAGE_SHIFT) - (addr >> PAGE_SHIFT) + 1;
}

/* Pin n user pages from the one holding addr; -EFAULT unless all pin. */
static int rds_rdma_pin(u64 addr, unsigned long n, bool write,
			unsigned int extra, struct page **pages)
{
	long got;

	got = pin_user_pages_fast(addr & PAGE_MASK, n,
				  (write ? FOLL_WRITE : 0) | extra, pages);
	if (got == n)
		return 0;
	if (got > 0)
		unpin_user_pages(pages, got);
	return got < 0 ? got : -EFAULT;
}

/* ---- memory regions ---------------------------------------------------- */

static void rds_mr_release(struct work_struct *work)
{
	struct rds_mr *mr = container_of(work, struct rds_mr, r_free_work);

	mr->r_trans->mr_invalidate(mr);
	mr->r_trans->mr_free(mr);
	unpin_user_pages_dirty_lock(mr->r_pages, mr->r_npages, true);
	if (mmget_not_zero(mr->r_mm)) {
		account_locked_vm(mr->r_mm, mr->r_npages, false);
		mmput(mr->r_mm);
	}
	mmdrop(mr->r_mm);
	kvfree(mr->r_pages);
	kfree(mr);
}

/* The last put releases the region from a work item: puts come from the
 * completion path too, and unpinning sleeps.  Whoever needs the key dead
 * at once (RDS_FREE_MR, close) invalidates it before its put.
 */
void rds_mr_put(struct rds_mr *mr)
{
	if (refcount_dec_and_test(&mr->r_refcount))
		queue_work(rds_mr_wq, &mr->r_free_work);
}

/* A put from process context that frees the region: its last put releases
 * it here, so that the pages are unpinned and uncharged from
 * RLIMIT_MEMLOCK when RDS_FREE_MR (or close) returns, and a registration
 * right after it is charged against what is really pinned.  A put that is
 * not the last (an op in flight still holds the region) leaves the
 * release to whoever puts last.
 */
static void rds_mr_put_sync(struct rds_mr *mr)
{
	might_sleep();
	if (refcount_dec_and_test(&mr->r_refcount))
		rds_mr_release(&mr->r_free_work);
}

static struct rds_mr *rds_mr_find(struct rds_sock *rs, u32 key)
{
	struct rb_node *n = rs->rs_mr_tree.rb_node;

	lockdep_assert_held(&rs->rs_rdma_lock);
	while (n) {
		struct rds_mr *mr = rb_entry(n, struct rds_mr, r_node);

		if (key < mr->r_key)
			n = n->rb_left;
		else if (key > mr->r_key)
			n = n->rb_right;
		else
			return mr;
	}
	return NULL;
}

static bool rds_mr_insert(struct rds_sock *rs, struct rds_mr *mr)
{
	struct rb_node **p = &rs->rs_mr_tree.rb_node, *parent = NULL;

	lockdep_assert_held(&rs->rs_rdma_lock);
	while (*p) {
		struct rds_mr *cur = rb_entry(*p, struct rds_mr, r_node);

		parent = *p;
		if (mr->r_key < cur->r_key)
			p = &(*p)->rb_left;
		else if (mr->r_key > cur->r_key)
			p = &(*p)->rb_right;
		else
			return false;
	}
	rb_link_node(&mr->r_node, parent, p);
	rb_insert_color(&mr->r_node, &rs->rs_mr_tree);
	mr->r_in_tree = true;
	return true;
}

/* Take mr out of its socket's tree (and pending list): the tree's
 * reference and the pending list's go to the caller, returned as the
 * number of references it now has to put.
 */
static unsigned int rds_mr_unlink(struct rds_sock *rs, struct rds_mr *mr)
{
	unsigned int refs = 0;

	lockdep_assert_held(&rs->rs_rdma_lock);
	if (mr->r_in_tree) {
		rb_erase(&mr->r_node, &rs->rs_mr_tree);
		mr->r_in_tree = false;
		refs++;
	}
	if (mr->r_pending) {
		list_del_init(&mr->r_reg_item);
		mr->r_pending = false;
		refs++;
	}
	return refs;
}

/* Register args->vec for rs: the region and its cookie.  One reference
 * for the caller, one for the socket's tree.
 */
static int rds_mr_create(struct rds_sock *rs, const struct rds_get_mr_args *args,
			 bool nonblock, long *timeo, struct rds_mr **mrp,
			 u64 *cookie)
{
	struct rds_transport *trans = rs->rs_transport;
	unsigned long n;
	struct rds_mr *mr;
	bool ok;
	int ret;

	if (ipv6_addr_any(&rs->rs_bound_addr) || !trans)
		return -ENOTCONN;
	if (!trans->mr_register)
		return -EOPNOTSUPP;
	n = rds_rdma_npages(args->vec.addr, args->vec.bytes);
	if (!n)
		return -EINVAL;
	if (n > RDS_MR_MAX_PAGES)
		return -EMSGSIZE;
	if (!can_do_mlock())
		return -EPERM;

	mr = rds_fault() ? NULL : kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	refcount_set(&mr->r_refcount, 2);
	INIT_LIST_HEAD(&mr->r_reg_item);
	INIT_WORK(&mr->r_free_work, rds_mr_release);
	mr->r_rs = rs;
	mr->r_trans = trans;
	mr->r_use_once = args->flags & RDS_RDMA_USE_ONCE;
	mr->r_pages = rds_fault() ? NULL :
		      kvmalloc_array(n, sizeof(*mr->r_pages), GFP_KERNEL);
	if (!mr->r_pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = account_locked_vm(current->mm, n, true);
	if (ret)
		goto err_free;
	ret = rds_rdma_pin(args->vec.addr, n, true, FOLL_LONGTERM, mr->r_pages);
	if (ret)
		goto err_unaccount;
	mr->r_npages = n;
	mr->r_offset = offset_in_page(args->vec.addr);
	mr->r_bytes = args->vec.bytes;
	mr->r_mm = current->mm;
	mmgrab(mr->r_mm);

	ret = trans->mr_register(rs, mr, nonblock, timeo);
	if (ret)
		goto err_unpin;

	/* (a test build can pretend the key is taken: rds_fault()) */
	ok = !rds_fault();
	spin_lock_bh(&rs->rs_rdma_lock);
	ok = ok && rds_mr_insert(rs, mr);
	spin_unlock_bh(&rs->rs_rdma_lock);
	if (!ok) {
		/* A key the device handed out twice: refuse, never alias.
		 * The region is on its device's list now, where a flush may
		 * have taken a reference: it goes by its references.
		 */
		trans->mr_invalidate(mr);
		rds_mr_put_sync(mr);
		rds_mr_put_sync(mr);
		return -EBUSY;
	}
	*cookie = rds_rdma_cookie(mr->r_key, args->vec.addr);
	*mrp = mr;
	return 0;

err_unpin:
	mmdrop(mr->r_mm);
	unpin_user_pages(mr->r_pages, n);
err_unaccount:
	account_locked_vm(current->mm, n, false);
err_free:
	kvfree(mr->r_pages);
	kfree(mr);
	return ret;
}

/* Free the region of key (all of rs's with key 0): its key stops working
 * before this returns, and its pages are unpinned unless an op in flight
 * still holds it.  Process context.  -EINVAL if rs has no such region.
 */
static int rds_mr_free_key(struct rds_sock *rs, u32 key, bool all)
{
	struct rds_mr *mr;
	unsigned int refs;

	for (;;) {
		spin_lock_bh(&rs->rs_rdma_lock);
		if (all) {
			struct rb_node *first = rb_first(&rs->rs_mr_tree);

			mr = first ? rb_entry(first, struct rds_mr, r_node) : NULL;
		} else {
			mr = rds_mr_find(rs, key);
		}
		refs = mr ? rds_mr_unlink(rs, mr) : 0;
		spin_unlock_bh(&rs->rs_rdma_lock);
		if (!mr)
			return all ? 0 : -EINVAL;

		mr->r_trans->mr_invalidate(mr);
		while (refs--)
			rds_mr_put_sync(mr);
		if (!all)
			return 0;
	}
}

/* Where the cookie goes; 0 means the caller does not want it. */
static int rds_mr_put_cookie(u64 cookie_addr, u64 cookie)
{
	if (!cookie_addr)
		return 0;
	return put_user(cookie, (u64 __user *)u64_to_user_ptr(cookie_addr)) ?
	       -EFAULT : 0;
}

static long rds_mr_timeo(struct rds_sock *rs, bool nonblock)
{
	long timeo = sock_sndtimeo(rds_rs_to_sk(rs), nonblock);

	return min_t(long, timeo, RDS_MR_MAX_WAIT);
}

static bool rds_sock_nonblock(struct rds_sock *rs)
{
	struct socket *sock = rs->rs_sk.sk_socket;

	return sock && sock->file && (sock->file->f_flags & O_NONBLOCK);
}

/* RDS_GET_MR, RDS_GET_MR_FOR_DEST: the region waits on rs_mr_pending for
 * the socket's next message, which registers it with the device before
 * its own first frame (the peer learns the cookie from a message).
 */
static int rds_mr_get(struct rds_sock *rs, const struct rds_get_mr_args *args)
{
	bool nonblock = rds_sock_nonblock(rs);
	long timeo = rds_mr_timeo(rs, nonblock);
	struct rds_connection *conn;
	struct rds_mr *mr;
	u64 cookie;
	int ret;

	ret = rds_mr_create(rs, args, nonblock, &timeo, &mr, &cookie);
	if (ret)
		return ret;
	ret = rds_mr_put_cookie(args->cookie_addr, cookie);
	if (ret) {
		/* Undo it whole: the caller never learnt the cookie. */
		rds_mr_free_key(rs, mr->r_key, false);
		rds_mr_put(mr);
		return ret;
	}
	/* The pending list takes our reference, unless a FREE_MR (or
	 * close) freed the region meanwhile.
	 */
	/* The connection the socket last used, if up, registers it now:
	 * the peer may learn the cookie some other way.
	 */
	spin_lock_bh(&rds_sock_lock);
	conn = rs->rs_conn;
	spin_unlock_bh(&rds_sock_lock);
	if (conn && conn->c_trans->mr_prepost &&
	    atomic_read(&conn->c_state) == RDS_CONN_UP)
		conn->c_trans->mr_prepost(mr, conn);

	spin_lock_bh(&rs->rs_rdma_lock);
	if (mr->r_in_tree) {
		list_add_tail(&mr->r_reg_item, &rs->rs_mr_pending);
		mr->r_pending = true;
		mr = NULL;
	}
	spin_unlock_bh(&rs->rs_rdma_lock);
	if (mr)
		rds_mr_put(mr);
	return 0;
}

int rds_rdma_setsockopt(struct rds_sock *rs, int optname, sockptr_t optval,
			unsigned int optlen)
{
	struct rds_get_mr_for_dest_args dargs;
	struct rds_get_mr_args args;
	struct rds_free_mr_args fargs;

	switch (optname) {
	case RDS_GET_MR:
		if (optlen != sizeof(args))
			return -EINVAL;
		if (copy_from_sockptr(&args, optval, sizeof(args)))
			return -EFAULT;
		return rds_mr_get(rs, &args);
	case RDS_GET_MR_FOR_DEST:
		/* The destination is not needed: any connection can carry
		 * the registration (the socket's next message does).
		 */
		if (optlen != sizeof(dargs))
			return -EINVAL;
		if (copy_from_sockptr(&dargs, optval, sizeof(dargs)))
			return -EFAULT;
		args.vec = dargs.vec;
		args.cookie_addr = dargs.cookie_addr;
		args.flags = dargs.flags;
		return rds_mr_get(rs, &args);
	case RDS_FREE_MR:
		if (optlen != sizeof(fargs))
			return -EINVAL;
		if (copy_from_sockptr(&fargs, optval, sizeof(fargs)))
			return -EFAULT;
		/* No transport doing RDMA (unbound, loopback): no region. */
		if (!rs->rs_transport || !rs->rs_transport->mr_register)
			return -EINVAL;
		/* Every free invalidates: RDS_RDMA_INVALIDATE changes nothing. */
		return rds_mr_free_key(rs, rds_cookie_key(fargs.cookie),
				       !fargs.cookie);
	default:
		return -ENOPROTOOPT;
	}
}

/* ---- ops in sendmsg ---------------------------------------------------- */

/* Cut [addr, addr + bytes) of pinned pages (from *page on) into sg. */
static void rds_rdma_fill_sg(struct rds_rdma_op *op, u64 addr, u64 bytes,
			     unsigned int *page)
{
	while (bytes) {
		unsigned int off = offset_in_page(addr);
		unsigned int len = min_t(u64, bytes, PAGE_SIZE - off);

		sg_set_page(&op->o_sg[op->o_nsg++], op->o_pages[*page], len,
			    off);
		(*page)++;
		addr += len;
		bytes -= len;
	}
}

static int rds_rdma_op_alloc(struct rds_rdma_op *op, unsigned long npages)
{
	op->o_pin = kvzalloc(struct_size(op->o_pin, p_pages, npages),
			     GFP_KERNEL);
	op->o_sg = kvcalloc(npages, sizeof(*op->o_sg), GFP_KERNEL);
	op->o_notifier = kzalloc(sizeof(*op->o_notifier), GFP_KERNEL);
	if (!op->o_pin || !op->o_sg || !op->o_notifier)
		return -ENOMEM;
	op->o_pages = op->o_pin->p_pages;
	sg_init_table(op->o_sg, npages);
	return 0;
}

/* RDS_CMSG_RDMA_ARGS */
static int rds_rdma_args(struct rds_message *rm, const struct cmsghdr *cmsg,
			 size_t payload)
{
	struct rds_rdma_op *op = &rm->m_op;
	struct rds_iovec *vec = NULL;
	struct rds_rdma_args args;
	unsigned long npages = 0, n;
	unsigned int i, page = 0;
	u64 total = 0;
	bool write;
	int ret;

	if (cmsg->cmsg_len != CMSG_LEN(sizeof(args)))
		return -EINVAL;
	memcpy(&args, CMSG_DATA(cmsg), sizeof(args));
	if (!args.nr_local)
		return -EINVAL;
	if (args.nr_local > RDS_RDMA_MAX_IOVECS)
		return -EMSGSIZE;
	vec = kvmalloc_array(args.nr_local, sizeof(*vec), GFP_KERNEL);
	if (!vec)
		return -ENOMEM;
	if (copy_from_user(vec, u64_to_user_ptr(args.local_vec_addr),
			   args.nr_local * sizeof(*vec))) {
		ret = -EFAULT;
		goto out;
	}
	for (i = 0; i < args.nr_local; i++) {
		n = rds_rdma_npages(vec[i].addr, vec[i].bytes);
		ret = -EINVAL;
		if (!n || vec[i].bytes > UINT_MAX)
			goto out;
		total += vec[i].bytes;
		ret = -EMSGSIZE;
		if (total > RDS_MAX_MSG_SIZE)
			goto out;
		npages += n;
	}
	ret = -EINVAL;
	if (total > args.remote_vec.bytes)
		goto out;
	ret = -EMSGSIZE;
	if (max_t(u64, payload, total) > RDS_MAX_MSG_SIZE)
		goto out;

	ret = rds_rdma_op_alloc(op, npages);
	if (ret)
		goto out;
	write = args.flags & RDS_RDMA_READWRITE;
	for (i = 0; i < args.nr_local; i++) {
		n = rds_rdma_npages(vec[i].addr, vec[i].bytes);
		/* A READ writes into local memory. */
		ret = rds_rdma_pin(vec[i].addr, n, !write, 0,
				   op->o_pages + op->o_npages);
		if (ret)
			goto out;
		op->o_npages += n;
		rds_rdma_fill_sg(op, vec[i].addr, vec[i].bytes, &page);
	}
	op->o_kind = write ? RDS_OPK_WRITE : RDS_OPK_READ;
	op->o_fence = args.flags & RDS_RDMA_FENCE;
	op->o_notify = args.flags & RDS_RDMA_NOTIFY_ME;
	op->o_silent = args.flags & RDS_RDMA_SILENT;
	op->o_token = args.user_token;
	op->o_rkey = rds_cookie_key(args.cookie);
	op->o_raddr = args.remote_vec.addr + rds_cookie_offset(args.cookie);
	op->o_bytes = total;
	op->o_state = RDS_OP_UNPOSTED;
	ret = 0;
out:
	kvfree(vec);
	return ret;
}

/* RDS_CMSG_*ATOMIC_* */
static int rds_rdma_atomic(struct rds_sock *rs, struct rds_message *rm,
			   const struct cmsghdr *cmsg)
{
	struct rds_rdma_op *op = &rm->m_op;
	struct rds_atomic_args args;
	int ret;

	if (cmsg->cmsg_len != CMSG_LEN(sizeof(args)))
		return -EINVAL;
	memcpy(&args, CMSG_DATA(cmsg), sizeof(args));

	switch (cmsg->cmsg_type) {
	case RDS_CMSG_ATOMIC_FADD:
		op->o_aop = IB_WR_ATOMIC_FETCH_AND_ADD;
		op->o_compare = args.fadd.add;
		break;
	case RDS_CMSG_ATOMIC_CSWP:
		op->o_aop = IB_WR_ATOMIC_CMP_AND_SWP;
		op->o_compare = args.cswp.compare;
		op->o_swap = args.cswp.swap;
		break;
	case RDS_CMSG_MASKED_ATOMIC_FADD:
		op->o_aop = IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
		op->o_compare = args.m_fadd.add;
		op->o_cmask = args.m_fadd.nocarry_mask;
		break;
	default:
		op->o_aop = IB_WR_MASKED_ATOMIC_CMP_AND_SWP;
		op->o_compare = args.m_cswp.compare;
		op->o_swap = args.m_cswp.swap;
		op->o_cmask = args.m_cswp.compare_mask;
		op->o_smask = args.m_cswp.swap_mask;
		break;
	}
	if (!IS_ALIGNED(args.local_addr, sizeof(u64)))
		return -EFAULT;
	ret = rs->rs_transport->atomic_check(rs, op->o_aop);
	if (ret)
		return ret;
	ret = rds_rdma_op_alloc(op, 1);
	if (ret)
		return ret;
	ret = rds_rdma_pin(args.local_addr, 1, true, 0, op->o_pages);
	if (ret)
		return ret;
	op->o_npages = 1;
	sg_set_page(&op->o_sg[0], op->o_pages[0], sizeof(u64),
		    offset_in_page(args.local_addr));
	op->o_nsg = 1;
	op->o_kind = RDS_OPK_ATOMIC;
	op->o_fence = true;
	op->o_notify = args.flags & RDS_RDMA_NOTIFY_ME;
	op->o_silent = args.flags & RDS_RDMA_SILENT;
	op->o_token = args.user_token;
	op->o_rkey = rds_cookie_key(args.cookie);
	op->o_raddr = args.remote_addr + rds_cookie_offset(args.cookie);
	op->o_bytes = sizeof(u64);
	op->o_state = RDS_OP_UNPOSTED;
	return 0;
}

/* RDS_CMSG_RDMA_MAP: a region registered for this message, whose cookie
 * the receiver gets as RDS_CMSG_RDMA_DEST.
 */
static int rds_rdma_map(struct rds_sock *rs, struct rds_message *rm,
			const struct cmsghdr *cmsg, bool nonblock, long *timeo)
{
	struct rds_get_mr_args args;
	struct rds_mr *mr;
	u64 cookie;
	int ret;

	if (cmsg->cmsg_len != CMSG_LEN(sizeof(args)))
		return -EINVAL;
	memcpy(&args, CMSG_DATA(cmsg), sizeof(args));
	ret = rds_mr_create(rs, &args, nonblock, timeo, &mr, &cookie);
	/* The pool is a resource of its own: not "no send buffer". */
	if (ret == -ENODEV)
		ret = -EAGAIN;
	if (ret)
		return ret;
	ret = rds_mr_put_cookie(args.cookie_addr, cookie);
	if (ret) {
		rds_mr_free_key(rs, mr->r_key, false);
		rds_mr_put(mr);
		return ret;
	}
	list_add_tail(&mr->r_reg_item, &rm->m_regs);	/* our reference */
	rm->m_op.o_dest = cookie;
	rm->m_op.o_has_dest = true;
	return 0;
}

/* Parse the RDMA cmsgs of a message (already checked for combinations by
 * the send path) into rm.  Transports without RDMA: -EOPNOTSUPP.
 */
int rds_rdma_cmsgs(struct rds_sock *rs, struct rds_message *rm,
		   struct msghdr *msg, bool nonblock, long timeo)
{
	struct rds_transport *trans = rs->rs_transport;
	struct rds_rdma_op *op = &rm->m_op;
	struct cmsghdr *cmsg;
	u32 vals[2];
	unsigned int off = 0;
	int ret = 0;

	timeo = min_t(long, timeo, RDS_MR_MAX_WAIT);
	for_each_cmsghdr(cmsg, msg) {
		if (cmsg->cmsg_level != SOL_RDS)
			continue;
		switch (cmsg->cmsg_type) {
		case RDS_CMSG_RDMA_ARGS:
		case RDS_CMSG_ATOMIC_FADD:
		case RDS_CMSG_ATOMIC_CSWP:
		case RDS_CMSG_MASKED_ATOMIC_FADD:
		case RDS_CMSG_MASKED_ATOMIC_CSWP:
		case RDS_CMSG_RDMA_DEST:
		case RDS_CMSG_RDMA_MAP:
			break;
		default:
			continue;
		}
		if (!trans || !trans->mr_register)
			return -EOPNOTSUPP;
		switch (cmsg->cmsg_type) {
		case RDS_CMSG_RDMA_ARGS:
			/* one op per message */
			if (op->o_kind != RDS_OPK_NONE || op->o_pages)
				return -EINVAL;
			ret = rds_rdma_args(rm, cmsg, rm->m_len);
			break;
		case RDS_CMSG_RDMA_DEST:
			if (op->o_has_dest ||
			    cmsg->cmsg_len != CMSG_LEN(sizeof(u64)))
				return -EINVAL;
			memcpy(&op->o_dest, CMSG_DATA(cmsg), sizeof(u64));
			op->o_has_dest = true;
			break;
		case RDS_CMSG_RDMA_MAP:
			if (op->o_has_dest)
				return -EINVAL;
			ret = rds_rdma_map(rs, rm, cmsg, nonblock, &timeo);
			break;
		default:
			if (op->o_kind != RDS_OPK_NONE || op->o_pages)
				return -EINVAL;
			ret = rds_rdma_atomic(rs, rm, cmsg);
			break;
		}
		if (ret)
			return ret;
	}

	/* The keys travel in the extension headers. */
	if (op->o_kind != RDS_OPK_NONE) {
		vals[0] = op->o_rkey;
		rds_exthdr_add(rm->m_inc.i_hdr.h_exthdr, &off, RDS_EXTHDR_RDMA,
			       vals, 1);
		rds_stats_inc(s_send_rdma);
		rds_stats_add(s_send_rdma_bytes, op->o_bytes);
		/* Nothing for the receiving application: it is not woken.
		 * The header still goes (its ACK is what completes the op),
		 * but the peer does not queue it.
		 */
		if (op->o_silent && !rm->m_len && !op->o_has_dest)
			rm->m_inc.i_hdr.h_flags |= RDS_FLAG_SILENT;
	}
	if (op->o_has_dest) {
		vals[0] = rds_cookie_key(op->o_dest);
		vals[1] = rds_cookie_offset(op->o_dest);
		rds_exthdr_add(rm->m_inc.i_hdr.h_exthdr, &off,
			       RDS_EXTHDR_RDMA_DEST, vals, 2);
	}
	return 0;
}

/* The socket's pending RDS_GET_MR regions ride on rm (to conn). */
void rds_rdma_take_pending(struct rds_sock *rs, struct rds_message *rm,
			   struct rds_connection *conn)
{
	struct rds_mr *mr, *tmp;

	if (!conn->c_trans->mr_register || list_empty_careful(&rs->rs_mr_pending))
		return;
	spin_lock_bh(&rs->rs_rdma_lock);
	list_for_each_entry_safe(mr, tmp, &rs->rs_mr_pending, r_reg_item) {
		mr->r_pending = false;
		list_move_tail(&mr->r_reg_item, &rm->m_regs);
	}
	spin_unlock_bh(&rs->rs_rdma_lock);
}

/* rm leaves its connection: decide its op's outcome, once, and tell the
 * sender if it wants to know.  Before rm leaves its socket.
 */
void rds_rdma_op_end(struct rds_message *rm, enum rds_seq_op_end end)
{
	struct rds_rdma_op *op = &rm->m_op;
	struct rds_notifier *n = NULL;
	struct rds_sock *rs;
	int status;

	if (op->o_kind == RDS_OPK_NONE)
		return;
	spin_lock_bh(&rm->m_rs_lock);
	if (op->o_ended) {
		spin_unlock_bh(&rm->m_rs_lock);
		return;
	}
	op->o_ended = true;
	status = rds_seq_op_status(end, op->o_status);
	trace_rds_rdma_complete(rm->m_conn, op->o_kind, status);
	rs = rm->m_rs;
	if (rs && op->o_notifier &&
	    rds_seq_op_notify(status, op->o_notify, READ_ONCE(rs->rs_recverr))) {
		spin_lock(&rs->rs_recv_lock);
		if (!sock_flag(rds_rs_to_sk(rs), SOCK_DEAD)) {
			n = op->o_notifier;
			op->o_notifier = NULL;
			n->n_token = op->o_token;
			n->n_status = status;
			list_add_tail(&n->n_item, &rs->rs_notify_queue);
			sock_hold(rds_rs_to_sk(rs));
		}
		spin_unlock(&rs->rs_recv_lock);
	}
	spin_unlock_bh(&rm->m_rs_lock);
	if (n) {
		rds_sock_wake(rs);
		sock_put(rds_rs_to_sk(rs));
	}
}

/* Process context: the pages the device wrote are marked dirty (under
 * their lock: they may be file-backed MAP_SHARED) and unpinned.
 */
static void rds_rdma_pin_release(struct work_struct *work)
{
	struct rds_rdma_pin *pin = container_of(work, struct rds_rdma_pin,
						p_work);

	unpin_user_pages_dirty_lock(pin->p_pages, pin->p_n, true);
	kvfree(pin);
}

/* The last reference to rm is gone (any context). */
void rds_rdma_msg_free(struct rds_message *rm)
{
	struct rds_rdma_op *op = &rm->m_op;
	struct rds_rdma_pin *pin = op->o_pin;
	struct rds_mr *mr, *tmp;

	list_for_each_entry_safe(mr, tmp, &rm->m_regs, r_reg_item) {
		list_del_init(&mr->r_reg_item);
		rds_mr_put(mr);
	}
	/* READ and atomic results were written by the device: marking
	 * their pages dirty may sleep, so a work item does it (and the
	 * unpinning after it).  A WRITE only read them, and an op that
	 * failed to be set up was not run: unpinned here.
	 */
	if (pin && op->o_npages &&
	    (op->o_kind == RDS_OPK_READ || op->o_kind == RDS_OPK_ATOMIC)) {
		pin->p_n = op->o_npages;
		INIT_WORK(&pin->p_work, rds_rdma_pin_release);
		queue_work(rds_mr_wq, &pin->p_work);
	} else if (pin) {
		unpin_user_pages(pin->p_pages, op->o_npages);
		kvfree(pin);
	}
	kvfree(op->o_sg);
	kfree(op->o_notifier);
}

/* Close: every region goes (their keys stop working now), and every
 * notice not read.
 */
void rds_rdma_sock_release(struct rds_sock *rs)
{
	struct rds_notifier *n, *tmp;
	LIST_HEAD(list);

	/* Pending regions are in the tree too: this frees them all. */
	rds_mr_free_key(rs, 0, true);

	spin_lock_bh(&rs->rs_recv_lock);
	list_splice_init(&rs->rs_notify_queue, &list);
	spin_unlock_bh(&rs->rs_recv_lock);
	list_for_each_entry_safe(n, tmp, &list, n_item)
		kfree(n);
}

/* ---- the receive side ---------------------------------------------------- */

/* A message for rs came on conn: if it carried an op on one of rs's
 * USE_ONCE keys, that key is done.
 */
void rds_rdma_recv_used(struct rds_sock *rs, struct rds_connection *conn,
			const struct rds_header *hdr)
{
	struct rds_mr *mr;
	unsigned int refs = 0;
	u32 key;

	if (!rds_exthdr_find(hdr->h_exthdr, RDS_EXTHDR_RDMA, &key, 1))
		return;
	spin_lock_bh(&rs->rs_rdma_lock);
	mr = rds_mr_find(rs, key);
	if (mr && mr->r_use_once)
		refs = rds_mr_unlink(rs, mr);
	spin_unlock_bh(&rs->rs_rdma_lock);
	if (!refs)
		return;
	mr->r_trans->mr_used(mr, conn);
	while (refs--)
		rds_mr_put(mr);
}

/* recvmsg: the RDS_CMSG_RDMA_DEST of a message that carries one. */
int rds_rdma_recv_cmsgs(const struct rds_header *hdr, struct msghdr *msg)
{
	u32 vals[2];
	u64 cookie;

	if (!rds_exthdr_find(hdr->h_exthdr, RDS_EXTHDR_RDMA_DEST, vals, 2))
		return 0;
	cookie = vals[0] | (u64)vals[1] << 32;
	return put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_DEST, sizeof(cookie),
			&cookie);
}

/* recvmsg: hand out as many notices as the control buffer holds.  1 if
 * any was handed out, 0 if none was queued, -ENOBUFS if one is queued
 * and the buffer has no room for it, or put_cmsg()'s error.  A notice
 * not handed out stays first in the queue.
 */
int rds_rdma_notify_cmsg(struct rds_sock *rs, struct msghdr *msg)
{
	struct rds_rdma_notify out;
	struct rds_notifier *n;
	int given = 0, err;

	for (;;) {
		if (msg->msg_controllen < CMSG_SPACE(sizeof(out))) {
			if (!given &&
			    !list_empty_careful(&rs->rs_notify_queue))
				return -ENOBUFS;
			break;
		}
		spin_lock_bh(&rs->rs_recv_lock);
		n = list_first_entry_or_null(&rs->rs_notify_queue,
					     struct rds_notifier, n_item);
		if (n)
			list_del_init(&n->n_item);
		spin_unlock_bh(&rs->rs_recv_lock);
		if (!n)
			break;
		memset(&out, 0, sizeof(out));
		out.user_token = n->n_token;
		out.status = n->n_status;
		err = put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_STATUS, sizeof(out),
			       &out);
		if (err) {
			spin_lock_bh(&rs->rs_recv_lock);
			list_add(&n->n_item, &rs->rs_notify_queue);
			spin_unlock_bh(&rs->rs_recv_lock);
			return given ? given : err;
		}
		kfree(n);
		given = 1;
	}
	return given;
}

int rds_rdma_init(void)
{
	rds_mr_wq = alloc_workqueue("rds_mr", WQ_MEM_RECLAIM, 0);
	return rds_mr_wq ? 0 : -ENOMEM;
}

/* After the transports: their teardown puts the last regions and
 * messages (whose pinned pages the work items release).
 */
void rds_rdma_exit(void)
{
	destroy_workqueue(rds_mr_wq);
}
