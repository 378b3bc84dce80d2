// SPDX-License-Identifier: GPL-2.0
/*
 * Module entry points: the order in which the parts of RDS come up and go
 * down.  Everything registered here is unregistered in exact reverse order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/init.h>

#include "rds.h"
#include "neg.h"
#include "ib/ib.h"

static int __init rds_module_init(void)
{
	int ret;

	ret = rds_info_init();
	if (ret)
		return ret;
	ret = rds_stats_init();
	if (ret)
		goto err_stats;
	ret = rds_sysctl_init();
	if (ret)
		goto err_sysctl;
	ret = rds_bind_init();
	if (ret)
		goto err_bind;
	ret = rds_cong_init();
	if (ret)
		goto err_cong;
	ret = rds_rdma_init();
	if (ret)
		goto err_rdma;
	ret = rds_conn_init();
	if (ret)
		goto err_conn;
	ret = rds_loop_init();
	if (ret)
		goto err_loop;
	ret = rds_ib_init();
	if (ret)
		goto err_ib;
	ret = rds_proc_init();
	if (ret)
		goto err_proc;
	ret = rds_af_init();
	if (ret)
		goto err_af;

	rds_neg_init();
	pr_info("AF_RDS registered\n");
	return 0;

err_af:
	rds_proc_exit();
err_proc:
	rds_ib_exit();
err_ib:
	rds_loop_exit();
err_loop:
	rds_conn_exit();
err_conn:
	rds_rdma_exit();
err_rdma:
	rds_cong_exit();
err_cong:
	rds_bind_exit();
err_bind:
	rds_sysctl_exit();
err_sysctl:
	rds_stats_exit();
err_stats:
	rds_info_exit();
	return ret;
}

static void __exit rds_module_exit(void)
{
	rds_af_exit();
	rds_proc_exit();
	rds_ib_exit();
	rds_loop_exit();
	rds_conn_exit();
	rds_rdma_exit();
	rds_cong_exit();
	rds_bind_exit();
	rds_sysctl_exit();
	rds_stats_exit();
	rds_info_exit();
	rds_message_exit();
	pr_info("AF_RDS unregistered\n");
}

module_init(rds_module_init);
module_exit(rds_module_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Reliable Datagram Sockets (AF_RDS) over InfiniBand/RoCE");
/* The modprobe configuration (packaging/rds-ib.conf) knows ours by its
 * author.  The release is year.month.n, as the RDMA stack's OFED
 * releases: dkms.conf's PACKAGE_VERSION is the same, and DKMS replaces a
 * module of the kernel only by a newer version (the kernel's rds.ko says
 * 4.0).  tools/testing/version-check.sh checks all three.
 */
MODULE_AUTHOR("The rds-ib project");
MODULE_VERSION("26.12.0");
