// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/rds/ of each network namespace, for operators
 * (Documentation/socket-layer.md, "/proc/net/rds"):
 *   connections  one line per connection of the namespace
 *   devices      the transports' devices (their devices_proc hooks)
 *   stats        every RDS_INFO_COUNTERS counter, "name value"; the
 *                counters are the host's, so only the initial namespace
 *                has this file
 * The files are world-readable.  They are made for every namespace by
 * pernet operations and removed with the namespace or the module; the
 * proc core waits for readers inside a show before a removal returns and
 * fails later reads of a file still open.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "rds.h"

#define RDS_PROC_DIR	"rds"

static const char *const rds_proc_states[] = {
	[RDS_CONN_DOWN]		= "down",
	[RDS_CONN_CONNECTING]	= "connecting",
	[RDS_CONN_UP]		= "up",
};

static void rds_proc_addr(struct seq_file *m, const struct in6_addr *addr,
			  u32 scope_id)
{
	if (ipv6_addr_v4mapped(addr))
		seq_printf(m, "%pI4", &addr->s6_addr32[3]);
	else if (scope_id && ipv6_addr_type(addr) & IPV6_ADDR_LINKLOCAL)
		seq_printf(m, "%pI6c%%%u", addr, scope_id);
	else
		seq_printf(m, "%pI6c", addr);
}

/* One line; under rcu_read_lock() (rds_conn_for_each()). */
static void rds_proc_conn(struct rds_connection *conn, void *arg)
{
	struct seq_file *m = arg;
	struct rds_conn_proc p = {};
	unsigned int queued, unacked;
	const char *reason;
	u64 retransmits;
	int state;

	spin_lock_bh(&conn->c_lock);
	queued = conn->c_send_queue_n;
	unacked = conn->c_retrans_n;
	retransmits = conn->c_retransmits;
	spin_unlock_bh(&conn->c_lock);
	if (conn->c_trans->conn_proc)
		conn->c_trans->conn_proc(conn, &p);

	state = atomic_read(&conn->c_state);
	reason = READ_ONCE(conn->c_reset_reason);
	rds_proc_addr(m, &conn->c_laddr, conn->c_bound_if);
	seq_putc(m, ' ');
	rds_proc_addr(m, &conn->c_faddr, conn->c_bound_if);
	seq_printf(m, " %u %s %s %lu ", conn->c_tos, conn->c_trans->t_name,
		   state >= 0 && state < ARRAY_SIZE(rds_proc_states) ?
		   rds_proc_states[state] : "?",
		   (jiffies - READ_ONCE(conn->c_state_since)) / HZ);
	if (p.p_credits)
		seq_printf(m, "%u/%u", p.p_cr_avail, p.p_cr_granted);
	else
		seq_putc(m, '-');
	seq_printf(m, " %u %u %llu ", queued, unacked, retransmits);
	if (p.p_gen)
		seq_printf(m, "%08x", p.p_gen);
	else
		seq_putc(m, '-');
	seq_printf(m, " %s\n", reason ?: "-");
}

static int rds_proc_conns_show(struct seq_file *m, void *v)
{
	seq_puts(m, "local remote tos transport state secs credits queued unacked retransmitted generation last_reset\n");
	rds_conn_for_each(seq_file_single_net(m), rds_proc_conn, m);
	return 0;
}

static int rds_proc_devices_show(struct seq_file *m, void *v)
{
	rds_trans_devices_proc(m, seq_file_single_net(m));
	return 0;
}

/* RDS_INFO_COUNTERS' records, taken by its own producer. */
static int rds_proc_stats_show(struct seq_file *m, void *v)
{
	const size_t each = sizeof(struct rds_info_counter);
	struct rds_info_buf out = {};
	const struct rds_info_counter *c;
	unsigned int n, i;

	/* the same number of counters at every call: count, then take */
	n = rds_stats_snapshot(&out);
	out.cap = n * each;
	out.buf = kvmalloc(out.cap, GFP_KERNEL);
	if (!out.buf)
		return -ENOMEM;
	n = min_t(unsigned int, rds_stats_snapshot(&out), out.used / each);
	for (i = 0; i < n; i++) {
		c = (const struct rds_info_counter *)(out.buf + i * each);
		seq_printf(m, "%.*s %llu\n", (int)sizeof(c->name),
			   (const char *)c->name, (unsigned long long)c->value);
	}
	kvfree(out.buf);
	return 0;
}

static int __net_init rds_proc_net_init(struct net *net)
{
	struct proc_dir_entry *dir;

	if (!IS_ENABLED(CONFIG_PROC_FS))
		return 0;
	dir = proc_net_mkdir(net, RDS_PROC_DIR, net->proc_net);
	if (!dir)
		goto fail;
	if (!proc_create_net_single("connections", 0444, dir,
				    rds_proc_conns_show, NULL) ||
	    !proc_create_net_single("devices", 0444, dir,
				    rds_proc_devices_show, NULL))
		goto fail;
	if (net_eq(net, &init_net) &&
	    !proc_create_net_single("stats", 0444, dir, rds_proc_stats_show,
				    NULL))
		goto fail;
	return 0;

fail:
	remove_proc_subtree(RDS_PROC_DIR, net->proc_net);
	return -ENOMEM;
}

static void __net_exit rds_proc_net_exit(struct net *net)
{
	remove_proc_subtree(RDS_PROC_DIR, net->proc_net);
}

static struct pernet_operations rds_proc_net_ops = {
	.init = rds_proc_net_init,
	.exit = rds_proc_net_exit,
};

int rds_proc_init(void)
{
	return register_pernet_subsys(&rds_proc_net_ops);
}

void rds_proc_exit(void)
{
	unregister_pernet_subsys(&rds_proc_net_ops);
}
