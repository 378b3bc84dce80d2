/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernel series we build against (6.1 and 6.12),
 * decided by the presence of a symbol, never by version numbers.
 */
#ifndef _RDS_COMPAT_H
#define _RDS_COMPAT_H

#include <net/net_namespace.h>

/* Since 6.6 register_net_sysctl() is a macro passing ARRAY_SIZE(table)
 * and sysctl tables carry no empty sentinel entry; before, they must.
 */
#ifdef register_net_sysctl
#define RDS_SYSCTL_TABLE_END
#else
#define RDS_SYSCTL_TABLE_END	{ }
#endif

#endif /* _RDS_COMPAT_H */
