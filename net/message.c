// SPDX-License-Identifier: GPL-2.0
/*
 * Message lifetime: allocation with payload pages, copies from and to
 * user space, the header, and the final put.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uio.h>

#include "rds.h"

/* messages allocated and not yet freed: must be 0 at module exit */
static atomic_t rds_message_live = ATOMIC_INIT(0);

static int rds_message_live_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&rds_message_live));
}

static const struct kernel_param_ops rds_message_live_ops = {
	.get	= rds_message_live_get,
};
module_param_cb(messages_live, &rds_message_live_ops, NULL, 0444);
MODULE_PARM_DESC(messages_live,
		 "Messages allocated and not yet freed (read only)");

static void rds_message_free_pages(struct rds_message *rm)
{
	unsigned int i;

	for (i = 0; i < rm->m_nents; i++) {
		struct page *page = sg_page(&rm->m_sg[i]);

		/* A reference, to a page of its own or to a compound page
		 * shared with other messages (a receive buffer's, ib/recv.c):
		 * only put_page() frees a compound page whole.
		 */
		if (page)
			put_page(page);
	}
	rm->m_nents = 0;
}

/* A message of len bytes with room for nents pages, none attached. */
static struct rds_message *rds_message_new(unsigned int len,
					   unsigned int nents, gfp_t gfp)
{
	struct rds_message *rm;

	if (len > RDS_MAX_MSG_SIZE)
		return NULL;

	rm = kzalloc(struct_size(rm, m_sg, nents), gfp);
	if (!rm)
		return NULL;

	atomic_inc(&rds_message_live);
	refcount_set(&rm->m_refcount, 1);
	INIT_LIST_HEAD(&rm->m_sock_item);
	INIT_LIST_HEAD(&rm->m_conn_item);
	INIT_LIST_HEAD(&rm->m_inc.i_item);
	INIT_LIST_HEAD(&rm->m_regs);
	spin_lock_init(&rm->m_rs_lock);
	rm->m_len = len;
	if (nents)
		sg_init_table(rm->m_sg, nents);
	return rm;
}

/* A message whose len payload bytes (1..page_size(page) - off) are at off
 * in page (a compound page's head, or a single page): the message takes
 * over the caller's reference to the page.  One
 * reference to the message, owned by the caller.
 */
struct rds_message *rds_message_alloc_page(struct page *page,
					   unsigned int off, unsigned int len,
					   gfp_t gfp)
{
	struct rds_message *rm;

	if (!len || off >= page_size(page) || len > page_size(page) - off)
		return NULL;
	rm = rds_message_new(len, 1, gfp);
	if (!rm)
		return NULL;
	sg_set_page(&rm->m_sg[0], page, len, off);
	rm->m_nents = 1;
	return rm;
}

/* A message with room for len payload bytes, in pages.  One reference,
 * owned by the caller.
 */
struct rds_message *rds_message_alloc(unsigned int len, gfp_t gfp)
{
	unsigned int nents = DIV_ROUND_UP(len, PAGE_SIZE);
	struct rds_message *rm;
	unsigned int i;

	rm = rds_message_new(len, nents, gfp);
	if (!rm || !nents)
		return rm;

	for (i = 0; i < nents; i++) {
		unsigned int bytes = min_t(unsigned int, len, PAGE_SIZE);
		struct page *page = alloc_page(gfp);

		if (!page) {
			rds_message_free_pages(rm);
			kfree(rm);
			atomic_dec(&rds_message_live);
			return NULL;
		}
		sg_set_page(&rm->m_sg[i], page, bytes, 0);
		rm->m_nents = i + 1;
		len -= bytes;
	}
	return rm;
}

/* Fill the payload from user space; -EFAULT on a bad user buffer. */
int rds_message_copy_from_user(struct rds_message *rm, struct iov_iter *from)
{
	unsigned int i;

	rds_stats_add(s_copy_from_user, rm->m_len);
	for (i = 0; i < rm->m_nents; i++) {
		struct scatterlist *sg = &rm->m_sg[i];

		if (copy_page_from_iter(sg_page(sg), sg->offset, sg->length,
					from) != sg->length)
			return -EFAULT;
	}
	return 0;
}

/* Copy as much of the payload as fits into to.  Returns the bytes copied
 * or -EFAULT if the user buffer faulted.
 */
int rds_message_copy_to_user(struct rds_message *rm, struct iov_iter *to)
{
	unsigned int i, copied = 0;

	for (i = 0; i < rm->m_nents && iov_iter_count(to); i++) {
		struct scatterlist *sg = &rm->m_sg[i];
		size_t want = min_t(size_t, sg->length, iov_iter_count(to));

		if (copy_page_to_iter(sg_page(sg), sg->offset, want, to) != want)
			return -EFAULT;
		copied += want;
	}
	rds_stats_add(s_copy_to_user, copied);
	return copied;
}

void rds_message_populate_header(struct rds_message *rm, __be16 sport,
				 __be16 dport, u64 seq)
{
	struct rds_header *hdr = &rm->m_inc.i_hdr;

	hdr->h_sport = sport;
	hdr->h_dport = dport;
	hdr->h_sequence = cpu_to_be64(seq);
	hdr->h_len = cpu_to_be32(rm->m_len);
}

void rds_message_get(struct rds_message *rm)
{
	refcount_inc(&rm->m_refcount);
}

void rds_message_put(struct rds_message *rm)
{
	if (!refcount_dec_and_test(&rm->m_refcount))
		return;

	WARN_ON_ONCE(test_bit(RDS_MSG_ON_SOCK, &rm->m_flags));
	WARN_ON_ONCE(test_bit(RDS_MSG_ON_CONN, &rm->m_flags));
	WARN_ON_ONCE(rm->m_rs);
	rds_rdma_msg_free(rm);
	rds_message_free_pages(rm);
	kfree(rm);
	atomic_dec(&rds_message_live);
}

/* Called last: every socket and connection is gone, so every message. */
void rds_message_exit(void)
{
	WARN(atomic_read(&rds_message_live), "rds: %d messages leaked\n",
	     atomic_read(&rds_message_live));
}
