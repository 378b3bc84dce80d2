// SPDX-License-Identifier: GPL-2.0
/*
 * The memory-registration socket options (RDS_GET_MR, RDS_GET_MR_FOR_DEST,
 * RDS_FREE_MR).  Their argument checks are transport neutral; the
 * registration itself needs an RDMA transport, and no transport provides
 * one yet, so a well-formed request on a bound socket gets -EOPNOTSUPP.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sockptr.h>

#include "rds.h"

/* The checks every registration request passes first. */
static int rds_rdma_map_check(struct rds_sock *rs)
{
	if (ipv6_addr_any(&rs->rs_bound_addr) || !rs->rs_transport)
		return -ENOTCONN;
	return -EOPNOTSUPP;
}

static int rds_rdma_get_mr(struct rds_sock *rs, sockptr_t optval,
			   unsigned int optlen)
{
	struct rds_get_mr_args args;

	if (optlen != sizeof(args))
		return -EINVAL;
	if (copy_from_sockptr(&args, optval, sizeof(args)))
		return -EFAULT;
	return rds_rdma_map_check(rs);
}

static int rds_rdma_get_mr_for_dest(struct rds_sock *rs, sockptr_t optval,
				    unsigned int optlen)
{
	struct rds_get_mr_for_dest_args args;

	if (optlen != sizeof(args))
		return -EINVAL;
	if (copy_from_sockptr(&args, optval, sizeof(args)))
		return -EFAULT;
	return rds_rdma_map_check(rs);
}

static int rds_rdma_free_mr(struct rds_sock *rs, sockptr_t optval,
			    unsigned int optlen)
{
	struct rds_free_mr_args args;

	if (optlen != sizeof(args))
		return -EINVAL;
	if (copy_from_sockptr(&args, optval, sizeof(args)))
		return -EFAULT;
	/* No MR was ever registered: nothing to flush, no such cookie. */
	return -EINVAL;
}

int rds_rdma_setsockopt(struct rds_sock *rs, int optname, sockptr_t optval,
			unsigned int optlen)
{
	switch (optname) {
	case RDS_GET_MR:
		return rds_rdma_get_mr(rs, optval, optlen);
	case RDS_GET_MR_FOR_DEST:
		return rds_rdma_get_mr_for_dest(rs, optval, optlen);
	case RDS_FREE_MR:
		return rds_rdma_free_mr(rs, optval, optlen);
	default:
		return -ENOPROTOOPT;
	}
}
