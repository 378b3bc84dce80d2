// SPDX-License-Identifier: GPL-2.0
/*
 * Module entry points: the order in which the parts of RDS come up and go
 * down.  Everything registered here is unregistered in exact reverse order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>

#include "rds.h"
#include "ib/ib.h"

static int __init rds_module_init(void)
{
	int ret;

	ret = rds_ib_device_init();
	if (ret)
		return ret;
	ret = rds_ib_cm_init();
	if (ret)
		goto err_device;
	ret = rds_af_init();
	if (ret)
		goto err_cm;

	pr_info("AF_RDS registered\n");
	return 0;

err_cm:
	rds_ib_cm_exit();
err_device:
	rds_ib_device_exit();
	return ret;
}

static void __exit rds_module_exit(void)
{
	rds_af_exit();
	rds_ib_cm_exit();
	rds_ib_device_exit();
	pr_info("AF_RDS unregistered\n");
}

module_init(rds_module_init);
module_exit(rds_module_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Reliable Datagram Sockets (AF_RDS) over InfiniBand/RoCE");
MODULE_AUTHOR("The rds-ib project");
