// SPDX-License-Identifier: GPL-2.0
/*
 * The IB transport as the RDS core sees it: which local addresses it
 * claims, its operations table, its counters, and the order in which its
 * parts come up and go down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/module.h>
#include <linux/sysctl.h>
#include <linux/sysfs.h>
#include <net/net_namespace.h>

#include "../compat.h"
#include "ib.h"

struct workqueue_struct *rds_ib_wq;

atomic64_t rds_ib_counters[RDS_IB_C_MAX];

static const char *const rds_ib_counter_keys[RDS_IB_C_MAX] = {
	[RDS_IB_C_TX_FRAMES]	= "tx_frames",
	[RDS_IB_C_RX_FRAMES]	= "rx_frames",
	[RDS_IB_C_TX_CTRL]	= "tx_ctrl",
	[RDS_IB_C_TX_ACKS]	= "tx_acks",
	[RDS_IB_C_CREDIT_WAITS]	= "credit_waits",
	[RDS_IB_C_CREDITS_PEAK]	= "credits_peak",
	[RDS_IB_C_RNR]		= "rnr",
	[RDS_IB_C_BAD_FRAMES]	= "bad_frames",
	[RDS_IB_C_RESETS]	= "resets",
	[RDS_IB_C_CONNECTS]	= "connects",
	[RDS_IB_C_RX_NOMEM]	= "rx_nomem",
	[RDS_IB_C_STALE_RX]	= "stale_rx",
	[RDS_IB_C_CONG_SENT]	= "cong_sent",
	[RDS_IB_C_CONG_RECV]	= "cong_recv",
	[RDS_IB_C_HB_SENT]	= "hb_sent",
	[RDS_IB_C_HB_TIMEOUTS]	= "hb_timeouts",
	[RDS_IB_C_MR_REGS]	= "mr_regs",
	[RDS_IB_C_MR_FREES]	= "mr_frees",
	[RDS_IB_C_MR_IN_USE]	= "mr_in_use",
	[RDS_IB_C_MR_WAITS]	= "mr_waits",
	[RDS_IB_C_MR_EXHAUSTED]	= "mr_exhausted",
	[RDS_IB_C_RDMA_OPS]	= "rdma_ops",
	[RDS_IB_C_RDMA_BYTES]	= "rdma_bytes",
	[RDS_IB_C_RDMA_ERRORS]	= "rdma_errors",
	[RDS_IB_C_ATOMICS]	= "atomics",
	[RDS_IB_C_RX_DRAINS]	= "rx_drains",
	[RDS_IB_C_LAST_WQE_LATE] = "last_wqe_late",
	[RDS_IB_C_RX_COPIES]	= "rx_copies",
	[RDS_IB_C_GRANTS_SHORT]	= "grants_short",
	[RDS_IB_C_GRANTS_SHRUNK] = "grants_shrunk",
	[RDS_IB_C_GRANTS_EARNED] = "grants_earned",
	[RDS_IB_C_CONNECT_WAITS] = "connect_waits",
	[RDS_IB_C_RX_HELD]	= "rx_held",
	[RDS_IB_C_RX_HELD_DROPPED] = "rx_held_dropped",
	[RDS_IB_C_ACCEPT_TIMEOUTS] = "accept_timeouts",
	[RDS_IB_C_PACK_NOMEM]	= "pack_nomem",
	[RDS_IB_C_CREDIT_RETURNS] = "credit_returns",
	[RDS_IB_C_CREDITS_RETURNED] = "credits_returned",
	[RDS_IB_C_CREDITS_RELEASED] = "credits_released",
	[RDS_IB_C_PACK_COPIES]	= "pack_copies",
	[RDS_IB_C_SRQ_GROWN]	= "srq_grown",
	[RDS_IB_C_SRQ_SHRUNK]	= "srq_shrunk",
	[RDS_IB_C_SRQ_RETIRED]	= "srq_retired",
	[RDS_IB_C_SRQ_GROW_FAIL] = "srq_grow_fail",
	[RDS_IB_C_SRQ_STRANDED]	= "srq_stranded",
	[RDS_IB_C_HB_RUNS]	= "hb_runs",
};

/* net.rds.ib.heartbeat_ms: how often a quiet connection asks the peer for
 * a sign of life; 5 intervals without any frame from it and the
 * connection is declared lost (0: no heartbeat).  At most an hour, so
 * that 5 intervals fit in 32 bits of milliseconds.
 */
unsigned int rds_ib_heartbeat_ms = 2000;
static unsigned int rds_ib_heartbeat_ms_max = 3600 * MSEC_PER_SEC;

/* net.rds.ib.heartbeat_idle_ms: the same for a connection with nothing at
 * stake (no message queued or waiting for the peer's ACK), where a lost
 * peer costs nothing until the next send, whose own failure reconnects:
 * asking every heartbeat_ms there is what made 996 idle connections take
 * 75% of 4 busy ones' throughput (performance.md).  Never below
 * heartbeat_ms; 0: an idle connection is never asked (the kernel's RDS
 * has no heartbeat at all).  At most an hour.
 */
unsigned int rds_ib_heartbeat_idle_ms = 30 * MSEC_PER_SEC;

/* net.rds.ib.credit_return_ms is ib_credit_return_ms (cm.c): at most an
 * hour, as the heartbeat.
 */
static unsigned int rds_ib_credit_return_ms_max = 3600 * MSEC_PER_SEC;

/* net.rds.ib.max_send_wr, max_unsignaled_wr: the send queue of the next
 * attempt (rds_ib_send_sizes()).
 */
unsigned int rds_ib_max_send_wr = RDS_IB_SEND_RING;
static unsigned int rds_ib_max_send_wr_min = RDS_IB_SEND_RING_MIN;
static unsigned int rds_ib_max_send_wr_max = RDS_IB_SEND_RING_MAX;
unsigned int rds_ib_max_unsignaled_wr = 16;
static unsigned int rds_ib_max_unsignaled_wr_max = 64;
/* net.rds.ib.max_recv_wr is ib_credits, which only RDS_IB_CREDITS_MAX bounds */
static unsigned int rds_ib_max_recv_wr_max = RDS_IB_CREDITS_MAX;
/* net.rds.ib.flow_control: credits cannot be turned off here; 0 is taken
 * and said once to have no effect (rds_ib_flow_control_check())
 */
static unsigned int rds_ib_flow_control = 1;
/* net.rds.ib.idle_secs is ib_idle_secs: at most a week */
static unsigned int rds_ib_idle_secs_max = 7 * 24 * 3600;
/* net.rds.ib.accept_max is ib_accept_max: at most 65536, the queue
 * pairs rxe gives a device
 */
static unsigned int rds_ib_accept_max_max = 65536;
/* net.rds.ib.mr_max is ib_mr_max */
static unsigned int rds_ib_mr_max_max = 1 << 20;

/* heartbeat_ms, heartbeat_idle_ms, credit_return_ms: a write re-arms the
 * heartbeat work of every connection (rds_ib_hb_next()).
 */
static int rds_ib_hb_sysctl(RDS_CTL_TABLE table, int write, void *buffer,
			    size_t *lenp, loff_t *ppos)
{
	int ret = proc_douintvec_minmax(table, write, buffer, lenp, ppos);

	if (write && !ret)
		rds_ib_hb_rearm_all();
	return ret;
}

static struct ctl_table rds_ib_sysctl_table[] = {
	{
		.procname	= "heartbeat_ms",
		.data		= &rds_ib_heartbeat_ms,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= rds_ib_hb_sysctl,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &rds_ib_heartbeat_ms_max,
	},
	{
		.procname	= "heartbeat_idle_ms",
		.data		= &rds_ib_heartbeat_idle_ms,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= rds_ib_hb_sysctl,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &rds_ib_heartbeat_ms_max,
	},
	{
		.procname	= "credit_return_ms",
		.data		= &rds_ib_credit_return_ms,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= rds_ib_hb_sysctl,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &rds_ib_credit_return_ms_max,
	},
	{
		.procname	= "max_send_wr",
		.data		= &rds_ib_max_send_wr,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &rds_ib_max_send_wr_min,
		.extra2		= &rds_ib_max_send_wr_max,
	},
	{
		.procname	= "max_recv_wr",
		.data		= &rds_ib_credits,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &rds_ib_max_recv_wr_max,
	},
	{
		.procname	= "max_unsignaled_wr",
		.data		= &rds_ib_max_unsignaled_wr,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &rds_ib_max_unsignaled_wr_max,
	},
	{
		/* each device's SRQ, sized when the device is added */
		.procname	= "max_recv_allocation",
		.data		= &rds_ib_srq_size,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0444,
		.proc_handler	= proc_douintvec,
	},
	{
		.procname	= "flow_control",
		.data		= &rds_ib_flow_control,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "idle_secs",
		.data		= &rds_ib_idle_secs,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &rds_ib_idle_secs_max,
	},
	{
		/* the parameter ib_peer_conn_max (peer.c) */
		.procname	= "peer_conn_max",
		.data		= &rds_ib_peer_conn_max,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
	{
		/* the parameter ib_accept_max (accept.c) */
		.procname	= "accept_max",
		.data		= &rds_ib_accept_max,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &rds_ib_accept_max_max,
	},
	{
		.procname	= "mr_max",
		.data		= &rds_ib_mr_max,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &rds_ib_mr_max_max,
	},
	RDS_SYSCTL_TABLE_END
};

/* A connection is being set up while net.rds.ib.flow_control is 0: say
 * once that it has no effect (credit flow control is part of our wire
 * protocol and always on).
 */
void rds_ib_flow_control_check(void)
{
	if (!READ_ONCE(rds_ib_flow_control))
		pr_info_once("net.rds.ib.flow_control=0 has no effect: credit flow control is always on\n");
}

static struct ctl_table_header *rds_ib_sysctl_hdr;

/* A "key=value key=value ...\n" listing of n counters, for sysfs. */
int rds_ib_counts_show(char *buf, const char *const *keys,
		       atomic64_t *vals, int n)
{
	int i, len = 0;

	for (i = 0; i < n; i++)
		len += sysfs_emit_at(buf, len, "%s%s=%lld", i ? " " : "",
				     keys[i], atomic64_read(&vals[i]));
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

/* Append n counters to an RDS_INFO_COUNTERS snapshot, each named
 * names[i] if names and names[i] are set, else prefix and keys[i]; n.
 */
unsigned int rds_ib_counts_info(struct rds_info_buf *out, const char *prefix,
				const char *const *keys,
				const char *const *names, atomic64_t *vals,
				unsigned int n)
{
	char name[sizeof_field(struct rds_info_counter, name)];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (names && names[i])
			strscpy(name, names[i], sizeof(name));
		else
			snprintf(name, sizeof(name), "%s%s", prefix, keys[i]);
		rds_stats_info_one(out, name, atomic64_read(&vals[i]));
	}
	return n;
}

/* RDS_INFO_COUNTERS names of ib_counters: mainline's where the meaning is
 * the same, "ib_" and the key for the others.
 */
static const char *const rds_ib_counter_names[RDS_IB_C_MAX] = {
	/* a frame had to wait for the peer's credits */
	[RDS_IB_C_CREDIT_WAITS]	= "ib_tx_throttle",
};

/* The transport's counters after the core's: ib_counters, ib_handshakes
 * (ib_hs_*) and ib_rx_pages (a level, not a count).
 */
static unsigned int rds_ib_stats_info(struct rds_info_buf *out)
{
	unsigned int n;

	n = rds_ib_counts_info(out, "ib_", rds_ib_counter_keys,
			       rds_ib_counter_names, rds_ib_counters,
			       RDS_IB_C_MAX);
	n += rds_ib_hs_stats_info(out);
	rds_stats_info_one(out, "ib_rx_pages",
			   (unsigned int)atomic_read(&rds_ib_rx_pages));
	return n + 1;
}

static int rds_ib_counters_get(char *buf, const struct kernel_param *kp)
{
	return rds_ib_counts_show(buf, rds_ib_counter_keys, rds_ib_counters,
				  RDS_IB_C_MAX);
}

static const struct kernel_param_ops rds_ib_counters_ops = {
	.get	= rds_ib_counters_get,
};
module_param_cb(ib_counters, &rds_ib_counters_ops, NULL, 0444);
MODULE_PARM_DESC(ib_counters, "Counters of the IB transport (read only)");

static int rds_ib_laddr_check(struct net *net, const struct in6_addr *addr,
			      u32 scope_id)
{
	struct rds_ib_device *rdev;

	/* the reasons, in rds_transport's terms, that bind() logs */
	if (!net_eq(net, &init_net))
		return -EPROTOTYPE;
	rdev = rds_ib_device_of_addr(addr, scope_id);
	if (!rdev)
		return -EADDRNOTAVAIL;
	rds_ib_device_put(rdev);
	return 0;
}

/* Every TOS value is carried as is (the rdma_cm service type). */
static u8 rds_ib_get_tos_map(u8 tos)
{
	return tos;
}

struct rds_transport rds_ib_transport = {
	.t_name			= "infiniband",
	.t_type			= RDS_TRANS_IB,
	.laddr_check		= rds_ib_laddr_check,
	.conn_alloc		= rds_ib_conn_alloc,
	.conn_stop		= rds_ib_conn_stop,
	.conn_free		= rds_ib_conn_free,
	.conn_connect		= rds_ib_conn_connect,
	.xmit			= rds_ib_xmit,
	.xmit_done		= rds_ib_xmit_done,
	.inc_copy_to_user	= rds_ib_inc_copy_to_user,
	.inc_free		= rds_ib_inc_free,
	.mr_register		= rds_ib_mr_register,
	.mr_invalidate		= rds_ib_mr_invalidate,
	.mr_used		= rds_ib_mr_used,
	.mr_prepost		= rds_ib_mr_prepost,
	.mr_free		= rds_ib_mr_free,
	.atomic_check		= rds_ib_atomic_check,
	.get_tos_map		= rds_ib_get_tos_map,
	.stats_info		= rds_ib_stats_info,
	.conn_proc		= rds_ib_conn_proc,
	.devices_proc		= rds_ib_devices_proc,
	.stake			= rds_ib_conn_stake,
	.t_cong_maps		= true,
};

int rds_ib_init(void)
{
	int ret;

	rds_ib_peer_init();
	rds_ib_sysctl_hdr = register_net_sysctl(&init_net, "net/rds/ib",
						rds_ib_sysctl_table);
	if (!rds_ib_sysctl_hdr)
		return -ENOMEM;
	rds_ib_wq = alloc_workqueue("rds_ib", WQ_MEM_RECLAIM, 0);
	if (!rds_ib_wq) {
		ret = -ENOMEM;
		goto err_sysctl;
	}
	ret = rds_ib_device_init();
	if (ret)
		goto err_wq;
	rds_trans_register(&rds_ib_transport);
	ret = rds_ib_cm_init();
	if (ret)
		goto err_trans;
	rds_ib_info_init();
	return 0;

err_trans:
	rds_trans_unregister(&rds_ib_transport);
	rds_ib_device_exit();
err_wq:
	destroy_workqueue(rds_ib_wq);
err_sysctl:
	unregister_net_sysctl_table(rds_ib_sysctl_hdr);
	return ret;
}

void rds_ib_exit(void)
{
	rds_ib_info_exit();
	rds_ib_cm_exit();
	rds_cong_flush_sends();
	/* Tears down every IB connection (rds_ib_conn_free). */
	rds_trans_unregister(&rds_ib_transport);
	rds_ib_peer_exit();
	destroy_workqueue(rds_ib_wq);
	rds_ib_device_exit();
	unregister_net_sysctl_table(rds_ib_sysctl_hdr);
}
