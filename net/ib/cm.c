// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_cm: the listener and the passive side of the handshake.
 *
 * One listener (IPv4, port RDS_IB_PORT) takes connection requests; each is
 * judged by its private data (hs.c): a malformed or foreign request is
 * refused with a reason byte the peer can read, and counted; an acceptable
 * one gets a queue pair on the device's shared receive queue and an answer
 * with our own handshake.
 *
 * Lifetime: an accepted connection is on rds_ib_conns until whoever takes
 * it off (its cm event handler on disconnect or device removal, or module
 * exit) tears it down.  Handlers run in process context (rdma_cm's work
 * queue); a handler that returns non-zero has rdma_cm destroy its cm_id.
 *
 * The active side and the binding to RDS connections come with the data
 * path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "../fault.h"
#include "hs.h"
#include "ib.h"

#define RDS_IB_PORT		18634
#define RDS_IB_BACKLOG		128
#define RDS_IB_SEND_WR		64
#define RDS_IB_RNR_RETRY	2	/* credits prevent RNR: keep it visible */

struct rds_ib_conn {
	struct list_head	ic_item;	/* rds_ib_conns, rds_ib_conns_lock */
	struct rdma_cm_id	*ic_cm_id;
	struct rds_ib_device	*ic_rdev;	/* reference */
	struct ib_cq		*ic_send_cq;
	struct rds_ib_hs	ic_peer_hs;	/* what the peer offered */
};

/* protects rds_ib_conns and the ic_item links */
static DEFINE_MUTEX(rds_ib_conns_lock);
static LIST_HEAD(rds_ib_conns);

static struct rdma_cm_id *rds_ib_listen_id;
u32 rds_ib_gen;

/* Handshake outcomes: [0] accepted, [reason] refused for that reason. */
static atomic_t rds_ib_hs_count[RDS_IB_HS_R_MAX];

/* Keys of the ib_handshakes listing: one word each, unlike the log names. */
static const char *const rds_ib_hs_keys[RDS_IB_HS_R_MAX] = {
	[RDS_IB_HS_OK]		= "accepted",
	[RDS_IB_HS_R_SHORT]	= "short",
	[RDS_IB_HS_R_MAGIC]	= "not_rds",
	[RDS_IB_HS_R_VERSION]	= "version",
	[RDS_IB_HS_R_FLAGS]	= "flags",
	[RDS_IB_HS_R_GEN]	= "gen0",
	[RDS_IB_HS_R_FRAG]	= "frag",
	[RDS_IB_HS_R_CREDITS]	= "credits",
	[RDS_IB_HS_R_TOS]	= "tos",
	[RDS_IB_HS_R_BUSY]	= "busy",
};

static int rds_ib_hs_stats_get(char *buf, const struct kernel_param *kp)
{
	int i, len = 0;

	for (i = 0; i < RDS_IB_HS_R_MAX; i++)
		len += sysfs_emit_at(buf, len, "%s%s=%d", i ? " " : "",
				     rds_ib_hs_keys[i],
				     atomic_read(&rds_ib_hs_count[i]));
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

static const struct kernel_param_ops rds_ib_hs_stats_ops = {
	.get	= rds_ib_hs_stats_get,
};
module_param_cb(ib_handshakes, &rds_ib_hs_stats_ops, NULL, 0444);
MODULE_PARM_DESC(ib_handshakes, "Connection requests accepted and refused, by reason (read only)");

/* Refuse a request; our reply carries the reason and our version. */
static void rds_ib_cm_refuse(struct rdma_cm_id *cm_id,
			     enum rds_ib_hs_reason reason)
{
	struct rds_ib_hs hs = {
		.major		= RDS_IB_HS_MAJOR,
		.minor		= RDS_IB_HS_MINOR,
		.frag_shift	= PAGE_SHIFT,
		.reason		= reason,
		.hello.gen	= rds_ib_gen,
	};
	u8 buf[sizeof(struct rds_ib_hs_wire)];

	atomic_inc(&rds_ib_hs_count[reason]);
	pr_info_ratelimited("refused a connection from %pISc: %s\n",
			    &cm_id->route.addr.dst_addr,
			    rds_ib_hs_reason_name(reason));
	rds_ib_hs_encode(&hs, buf);
	rdma_reject(cm_id, buf, sizeof(buf), IB_CM_REJ_CONSUMER_DEFINED);
}

static void rds_ib_conn_free(struct rds_ib_conn *ic)
{
	rdma_destroy_qp(ic->ic_cm_id);
	ib_free_cq(ic->ic_send_cq);
	rds_ib_device_put(ic->ic_rdev);
	kfree(ic);
}

static int rds_ib_cm_accept(struct rdma_cm_id *cm_id,
			    const struct rds_ib_hs *offer)
{
	struct rds_ib_device *rdev;
	struct rds_ib_conn *ic;
	struct ib_qp_init_attr attr = { };
	struct rds_ib_hs hs = { };
	struct rdma_conn_param param = { };
	u8 buf[sizeof(struct rds_ib_hs_wire)];
	enum rds_ib_hs_reason reason;
	int ret;

	reason = rds_ib_hs_negotiate(offer, offer->tos, &hs.minor);
	if (reason)
		goto refuse;
	/* A device RDS does not use (no SRQ, or being set up): later. */
	reason = RDS_IB_HS_R_BUSY;
	rdev = rds_ib_device_get(cm_id->device);
	if (!rdev)
		goto refuse;
	ic = rds_fault() ? NULL : kzalloc(sizeof(*ic), GFP_KERNEL);
	if (!ic)
		goto put_dev;
	ic->ic_cm_id = cm_id;
	ic->ic_rdev = rdev;
	ic->ic_peer_hs = *offer;
	ic->ic_send_cq = rds_fault() ? ERR_PTR(-ENOMEM) :
			 ib_alloc_cq_any(rdev->rd_dev, ic, RDS_IB_SEND_WR,
					 IB_POLL_SOFTIRQ);
	if (IS_ERR(ic->ic_send_cq))
		goto free_ic;

	attr.qp_context = ic;
	attr.send_cq = ic->ic_send_cq;
	attr.recv_cq = rdev->rd_recv_cq;
	attr.srq = rdev->rd_srq;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = RDS_IB_SEND_WR;
	attr.cap.max_send_sge = 2;
	ret = rds_fault() ? -ENOMEM : rdma_create_qp(cm_id, rdev->rd_pd, &attr);
	if (ret)
		goto free_cq;

	hs.major = RDS_IB_HS_MAJOR;
	hs.frag_shift = PAGE_SHIFT;
	hs.tos = offer->tos;
	hs.hello.gen = rds_ib_gen;
	hs.hello.peer_gen = 0;		/* sequence state comes with the data path */
	hs.hello.rx_next = 1;
	hs.hello.tx_first = 1;
	rds_ib_hs_encode(&hs, buf);
	param.private_data = buf;
	param.private_data_len = sizeof(buf);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.rnr_retry_count = RDS_IB_RNR_RETRY;
	cm_id->context = ic;

	mutex_lock(&rds_ib_conns_lock);
	list_add_tail(&ic->ic_item, &rds_ib_conns);
	mutex_unlock(&rds_ib_conns_lock);
	ret = rdma_accept(cm_id, &param);
	if (ret) {
		mutex_lock(&rds_ib_conns_lock);
		list_del(&ic->ic_item);
		mutex_unlock(&rds_ib_conns_lock);
		cm_id->context = NULL;
		rds_ib_conn_free(ic);
		return ret;
	}
	atomic_inc(&rds_ib_hs_count[RDS_IB_HS_OK]);
	pr_info("accepted a connection from %pISc (protocol %u.%u)\n",
		&cm_id->route.addr.dst_addr, hs.major, hs.minor);
	return 0;

free_cq:
	ib_free_cq(ic->ic_send_cq);
free_ic:
	kfree(ic);
put_dev:
	rds_ib_device_put(rdev);
refuse:
	rds_ib_cm_refuse(cm_id, reason);
	return -ECONNREFUSED;
}

/* Take an accepted connection off the list; true if this caller owns it. */
static bool rds_ib_conn_unlist(struct rds_ib_conn *ic)
{
	bool mine = false;

	mutex_lock(&rds_ib_conns_lock);
	if (!list_empty(&ic->ic_item)) {
		list_del_init(&ic->ic_item);
		mine = true;
	}
	mutex_unlock(&rds_ib_conns_lock);
	return mine;
}

static int rds_ib_cm_handler(struct rdma_cm_id *cm_id,
			     struct rdma_cm_event *event)
{
	struct rds_ib_conn *ic = cm_id->context;
	struct rds_ib_hs offer;
	enum rds_ib_hs_reason reason;

	switch (event->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		reason = rds_ib_hs_decode(event->param.conn.private_data,
					  event->param.conn.private_data_len,
					  &offer);
		if (reason) {
			rds_ib_cm_refuse(cm_id, reason);
			return -ECONNREFUSED;
		}
		/* Non-zero: rdma_cm destroys this cm_id for us. */
		return rds_ib_cm_accept(cm_id, &offer);
	case RDMA_CM_EVENT_ESTABLISHED:
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (cm_id == rds_ib_listen_id || !ic)
			return 0;
		/* Module exit may own it already; then it destroys the id. */
		if (!rds_ib_conn_unlist(ic))
			return 0;
		rdma_disconnect(cm_id);
		rds_ib_conn_free(ic);
		cm_id->context = NULL;
		return 1;
	default:
		return 0;
	}
}

int rds_ib_cm_init(void)
{
	struct sockaddr_in sin = {
		.sin_family	= AF_INET,
		.sin_addr	= { htonl(INADDR_ANY) },
		.sin_port	= htons(RDS_IB_PORT),
	};
	struct rdma_cm_id *id;
	int ret;

	rds_ib_gen = get_random_u32() ?: 1;
	id = rdma_create_id(&init_net, rds_ib_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(id, RDS_IB_BACKLOG);
	if (ret) {
		pr_err("cannot listen on port %u: %d\n", RDS_IB_PORT, ret);
		rdma_destroy_id(id);
		return ret;
	}
	rds_ib_listen_id = id;
	return 0;
}

void rds_ib_cm_exit(void)
{
	struct rds_ib_conn *ic;

	/* Waits for running handlers; no new request arrives after this. */
	rdma_destroy_id(rds_ib_listen_id);
	for (;;) {
		mutex_lock(&rds_ib_conns_lock);
		ic = list_first_entry_or_null(&rds_ib_conns, struct rds_ib_conn,
					      ic_item);
		if (ic)
			list_del_init(&ic->ic_item);
		mutex_unlock(&rds_ib_conns_lock);
		if (!ic)
			break;
		rdma_disconnect(ic->ic_cm_id);
		rdma_destroy_qp(ic->ic_cm_id);
		/* Waits for a handler of this id that may still be running. */
		rdma_destroy_id(ic->ic_cm_id);
		ib_free_cq(ic->ic_send_cq);
		rds_ib_device_put(ic->ic_rdev);
		kfree(ic);
	}
}
