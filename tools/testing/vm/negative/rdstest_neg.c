// SPDX-License-Identifier: GPL-2.0
/*
 * Negative controls for the VM harness: loading this module makes the guest
 * fail the way a buggy rds.ko would, so the harness can prove that it turns
 * each failure into a failed run that names the test.  Test use only; it is
 * built into build/, never installed, never part of rds.ko.
 *
 *   warn=1          WARN at load (panic_on_warn ends the guest)
 *   hang=1          spin at load with preemption off (the guest stops
 *                   responding)
 *   block_ms=N      a worker sleeps uninterruptibly for N ms: with
 *                   kernel.hung_task_timeout_secs=1 the kernel reports a
 *                   hung task (no panic) after the test that loaded the
 *                   module has ended
 *   poweroff_warn=1 WARN when the guest powers off (a reboot notifier):
 *                   after its last test reported
 */
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/jiffies.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

static bool warn;
module_param(warn, bool, 0400);
static bool hang;
module_param(hang, bool, 0400);
static unsigned int block_ms;
module_param(block_ms, uint, 0400);
static bool poweroff_warn;
module_param(poweroff_warn, bool, 0400);

static void rdstest_neg_block(struct work_struct *work)
{
	schedule_timeout_uninterruptible(msecs_to_jiffies(block_ms));
}

static DECLARE_WORK(block_work, rdstest_neg_block);

static int rdstest_neg_reboot(struct notifier_block *nb, unsigned long what,
			      void *data)
{
	WARN(1, "rdstest_neg: deliberate warning at power-off (negative control)\n");
	return NOTIFY_DONE;
}

static struct notifier_block rdstest_neg_nb = {
	.notifier_call = rdstest_neg_reboot,
};

static int __init rdstest_neg_init(void)
{
	WARN(warn, "rdstest_neg: deliberate warning (negative control)\n");
	if (hang) {
		preempt_disable();
		for (;;)
			cpu_relax();
	}
	if (block_ms)
		schedule_work(&block_work);
	if (poweroff_warn)
		register_reboot_notifier(&rdstest_neg_nb);
	return 0;
}

static void __exit rdstest_neg_exit(void)
{
	flush_work(&block_work);
	if (poweroff_warn)
		unregister_reboot_notifier(&rdstest_neg_nb);
}

module_init(rdstest_neg_init);
module_exit(rdstest_neg_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("VM harness negative control (test only)");
