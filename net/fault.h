/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation-failure injection, so that tests exercise every failure path
 * (Debian's kernels have no CONFIG_FAULT_INJECTION).  With the module
 * parameter fault_nth = N (at load or later), the Nth call to rds_fault()
 * from then on reports a failure, once; the site is logged.  With
 * fault_nth = 0 (the default) rds_fault() costs one predicted branch.
 * Only in a test build (RDS_TEST_HOOKS=1, see Kbuild).
 */
#ifndef _RDS_FAULT_H
#define _RDS_FAULT_H

#include <linux/compiler.h>
#include <linux/types.h>

#ifdef RDS_TEST_HOOKS
extern unsigned int rds_fault_nth;
bool rds_fault_hit(void);

static inline bool rds_fault(void)
{
	return unlikely(READ_ONCE(rds_fault_nth)) && rds_fault_hit();
}
#else
/* A production build (no RDS_TEST_HOOKS, see Kbuild): never. */
static inline bool rds_fault(void)
{
	return false;
}
#endif

#endif /* _RDS_FAULT_H */
