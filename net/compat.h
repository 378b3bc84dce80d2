/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernel series we build against (6.1 and 6.12),
 * decided by the presence of a symbol, never by version numbers.
 */
#ifndef _RDS_COMPAT_H
#define _RDS_COMPAT_H

#include <linux/sysctl.h>
#include <net/net_namespace.h>

/* Since 6.6 register_net_sysctl() is a macro passing ARRAY_SIZE(table)
 * and sysctl tables carry no empty sentinel entry; before, they must.
 */
#ifdef register_net_sysctl
#define RDS_SYSCTL_TABLE_END
#else
#define RDS_SYSCTL_TABLE_END	{ }
#endif

/* Since 6.11 a sysctl handler takes its table const: the table argument
 * of ours is of the type proc_handler's takes.
 */
typedef int rds_ctl_const_handler(const struct ctl_table *table, int write,
				  void *buffer, size_t *lenp, loff_t *ppos);
#define RDS_CTL_TABLE							\
	typeof(__builtin_choose_expr(					\
		__builtin_types_compatible_p(proc_handler,		\
					     rds_ctl_const_handler),	\
		(const struct ctl_table *)NULL,				\
		(struct ctl_table *)NULL))

#endif /* _RDS_COMPAT_H */
