// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation-failure injection for tests: see fault.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

#include "fault.h"

static atomic_t rds_fault_calls = ATOMIC_INIT(0);

static int rds_fault_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint(val, kp);

	if (!ret)
		atomic_set(&rds_fault_calls, 0);
	return ret;
}

static const struct kernel_param_ops rds_fault_ops = {
	.set	= rds_fault_set,
	.get	= param_get_uint,
};

unsigned int rds_fault_nth;
module_param_cb(fault_nth, &rds_fault_ops, &rds_fault_nth, 0600);
MODULE_PARM_DESC(fault_nth,
		 "Test only: make the Nth allocation from now on fail (0: off)");

bool rds_fault_hit(void)
{
	unsigned int nth = READ_ONCE(rds_fault_nth);

	if (!nth || atomic_inc_return(&rds_fault_calls) != nth)
		return false;
	pr_info("fault injected at allocation %u (%pS)\n", nth,
		__builtin_return_address(0));
	return true;
}
