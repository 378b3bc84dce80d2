// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU event counters of the core, exported via RDS_INFO_COUNTERS.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/string.h>

#include "rds.h"

DEFINE_PER_CPU_SHARED_ALIGNED(struct rds_statistics, rds_stats);

/* Same order as the members of struct rds_statistics. */
static const char *const rds_stat_names[] = {
	"conn_reset",
	"recv_drop_bad_checksum",
	"recv_drop_old_seq",
	"recv_drop_no_sock",
	"recv_drop_dead_sock",
	"recv_deliver_raced",
	"recv_delivered",
	"recv_queued",
	"recv_immediate_retry",
	"recv_delayed_retry",
	"recv_ack_required",
	"recv_rdma_bytes",
	"recv_ping",
	"send_queue_empty",
	"send_queue_full",
	"send_lock_contention",
	"send_lock_queue_raced",
	"send_immediate_retry",
	"send_delayed_retry",
	"send_drop_acked",
	"send_ack_required",
	"send_queued",
	"send_rdma",
	"send_rdma_bytes",
	"send_pong",
	"page_remainder_hit",
	"page_remainder_miss",
	"copy_to_user",
	"copy_from_user",
	"cong_update_queued",
	"cong_update_received",
	"cong_send_error",
	"cong_send_blocked",
	"recv_bytes_added_to_sock",
	"recv_bytes_freed_fromsock",
	"send_stuck_rm",
	"send_rdma_dropped",
	"recv_rdma_silent",
	"recv_notice_ctrunc",
};

#define RDS_STAT_COUNT	(sizeof(struct rds_statistics) / sizeof(u64))
static_assert(ARRAY_SIZE(rds_stat_names) == RDS_STAT_COUNT);

/* Append one RDS_INFO_COUNTERS record: its name NUL padded, every byte
 * of it written.
 */
void rds_stats_info_one(struct rds_info_buf *out, const char *name, u64 value)
{
	struct rds_info_counter ctr;

	memset(&ctr, 0, sizeof(ctr));
	strscpy_pad((char *)ctr.name, name, sizeof(ctr.name));
	ctr.value = value;
	rds_info_copy(out, &ctr, sizeof(ctr));
}

/* Every counter, the core's then each transport's (rds_trans_stats_info()),
 * as RDS_INFO_COUNTERS records appended to out (those that fit); how many
 * there are.  RDS_INFO_COUNTERS and /proc/net/rds/stats (proc.c).
 */
unsigned int rds_stats_snapshot(struct rds_info_buf *out)
{
	unsigned int i;
	int cpu;

	for (i = 0; i < RDS_STAT_COUNT; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu) {
			const u64 *v = (const u64 *)per_cpu_ptr(&rds_stats, cpu);

			sum += v[i];
		}
		rds_stats_info_one(out, rds_stat_names[i], sum);
	}
	return RDS_STAT_COUNT + rds_trans_stats_info(out);
}

static void rds_stats_info(struct socket *sock, struct rds_info_buf *out,
			   struct rds_info_lengths *lens)
{
	lens->nr = rds_stats_snapshot(out);
	lens->each = sizeof(struct rds_info_counter);
}

int rds_stats_init(void)
{
	rds_info_register(RDS_INFO_COUNTERS, rds_stats_info);
	return 0;
}

void rds_stats_exit(void)
{
	rds_info_unregister(RDS_INFO_COUNTERS);
}
