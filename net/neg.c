// SPDX-License-Identifier: GPL-2.0
/*
 * Negative controls (see neg.h): linked only into a module built with
 * RDS_NEG=KIND, never into the shipped one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/gfp.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/highmem.h>

#include "rds.h"
#include "neg.h"

#if !defined(RDS_NEG_KASAN) && !defined(RDS_NEG_KMEMLEAK) && \
	!defined(RDS_NEG_LOCKDEP) && !defined(RDS_NEG_LOST) && \
	!defined(RDS_NEG_DUP) && !defined(RDS_NEG_PAGELEAK) && \
	!defined(RDS_NEG_STALERX) && !defined(RDS_NEG_DOWNWORK) && \
	!defined(RDS_NEG_HBNOW) && !defined(RDS_NEG_HBIDLE) && \
	!defined(RDS_NEG_HBTICK) && \
	!defined(RDS_NEG_NOHOLD) && \
	!defined(RDS_NEG_HALFOPEN) && !defined(RDS_NEG_IDLECOPY) && \
	!defined(RDS_NEG_CONGKEEP) && !defined(RDS_NEG_CONGEARLY)
#error "RDS_NEG: one of the kinds of net/neg.h"
#endif

/* lost, dup: one message in this many */
#define RDS_NEG_EVERY	100
/* pageleak: pages leaked at most (64 MiB), so that the guest lives on */
#define RDS_NEG_PAGES	16384

#ifdef RDS_NEG_KASAN
void rds_neg_init(void)
{
	u8 *p = kmalloc(32, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	pr_warn("negative control: reading a freed object\n");
	pr_info("negative control: read 0x%02x\n", READ_ONCE(p[7]));
}
#endif

#ifdef RDS_NEG_KMEMLEAK
void rds_neg_init(void)
{
	u8 *p = kmalloc(200, GFP_KERNEL);

	if (p)
		memset(p, 0x5a, 200);
	pr_warn("negative control: an object leaked\n");
}
#endif

#ifdef RDS_NEG_LOCKDEP
static DEFINE_MUTEX(rds_neg_a);
static DEFINE_MUTEX(rds_neg_b);

void rds_neg_init(void)
{
	pr_warn("negative control: two locks taken in both orders\n");
	mutex_lock(&rds_neg_a);
	mutex_lock(&rds_neg_b);
	mutex_unlock(&rds_neg_b);
	mutex_unlock(&rds_neg_a);

	mutex_lock(&rds_neg_b);
	mutex_lock(&rds_neg_a);
	mutex_unlock(&rds_neg_a);
	mutex_unlock(&rds_neg_b);
}
#endif

#if defined(RDS_NEG_LOST) || defined(RDS_NEG_DUP)
static atomic_t rds_neg_count = ATOMIC_INIT(0);

/* A data message to a socket, the RDS_NEG_EVERYth of them. */
static bool rds_neg_pick(const struct rds_incoming *inc)
{
	if (!inc->i_hdr.h_dport || !inc->i_hdr.h_len)
		return false;
	return atomic_inc_return(&rds_neg_count) % RDS_NEG_EVERY == 0;
}
#endif

#ifdef RDS_NEG_LOST
bool rds_neg_lost(const struct rds_incoming *inc)
{
	if (!rds_neg_pick(inc))
		return false;
	pr_warn_ratelimited("negative control: message %llu lost\n",
			    be64_to_cpu(inc->i_hdr.h_sequence));
	return true;
}
#endif

#ifdef RDS_NEG_DUP
/* Deliver a copy of inc (a message of the IB or loopback transport: an
 * rds_message, freed by either's inc_free) as if it had arrived again,
 * without RDS_FLAG_RETRANSMITTED: the sequence check lets it through.
 */
void rds_neg_dup(struct rds_connection *conn, const struct in6_addr *saddr,
		 const struct in6_addr *daddr, struct rds_incoming *inc)
{
	struct rds_message *rm = container_of(inc, struct rds_message, m_inc);
	struct rds_message *copy;
	unsigned int i, skip = 0;

	if (!rds_neg_pick(inc))
		return;
	copy = rds_message_alloc(rm->m_len, GFP_ATOMIC);
	if (!copy)
		return;
	for (i = 0; i < copy->m_nents; i++) {
		struct scatterlist *sg = &copy->m_sg[i];
		void *dst = kmap_local_page(sg_page(sg));

		sg_pcopy_to_buffer(rm->m_sg, rm->m_nents, dst + sg->offset,
				   sg->length, skip);
		kunmap_local(dst);
		skip += sg->length;
	}
	rds_inc_init(&copy->m_inc, conn, saddr);
	copy->m_inc.i_hdr = inc->i_hdr;
	pr_warn_ratelimited("negative control: message %llu duplicated\n",
			    be64_to_cpu(inc->i_hdr.h_sequence));
	rds_recv_incoming(conn, saddr, daddr, &copy->m_inc);
	rds_inc_put(&copy->m_inc);
}
#endif

#ifdef RDS_NEG_PAGELEAK
static atomic_t rds_neg_pages = ATOMIC_INIT(0);

void rds_neg_pageleak(void)
{
	if (atomic_read(&rds_neg_pages) >= RDS_NEG_PAGES ||
	    !alloc_page(GFP_ATOMIC | __GFP_NOWARN))
		return;
	if (atomic_inc_return(&rds_neg_pages) == 1)
		pr_warn("negative control: a page leaked per message received\n");
}
#endif
