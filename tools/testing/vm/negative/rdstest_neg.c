// SPDX-License-Identifier: GPL-2.0
/*
 * Negative controls for the VM harness: loading this module makes the guest
 * fail the way a buggy rds.ko would, so the harness can prove that it turns
 * each failure into a failed run that names the test.  Test use only; it is
 * built into build/, never installed, never part of rds.ko.
 *
 *   warn=1   WARN at load (panic_on_warn ends the guest)
 *   hang=1   spin at load with preemption off (the guest stops responding)
 */
#include <linux/module.h>
#include <linux/preempt.h>

static bool warn;
module_param(warn, bool, 0400);
static bool hang;
module_param(hang, bool, 0400);

static int __init rdstest_neg_init(void)
{
	WARN(warn, "rdstest_neg: deliberate warning (negative control)\n");
	if (hang) {
		preempt_disable();
		for (;;)
			cpu_relax();
	}
	return 0;
}

static void __exit rdstest_neg_exit(void)
{
}

module_init(rdstest_neg_init);
module_exit(rdstest_neg_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("VM harness negative control (test only)");
