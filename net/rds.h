/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Core definitions shared by every part of the RDS module.
 */
#ifndef _RDS_RDS_H
#define _RDS_RDS_H

#include <linux/types.h>
#include <net/sock.h>

#include "../include/uapi/linux/rds.h"

/* Per-socket state.  sk must stay first: sk_alloc() allocates rds_sock. */
struct rds_sock {
	struct sock		rs_sk;
};

static inline struct rds_sock *rds_sk_to_rs(const struct sock *sk)
{
	return container_of(sk, struct rds_sock, rs_sk);
}

/* af_rds.c */
int rds_af_init(void);
void rds_af_exit(void);

#endif /* _RDS_RDS_H */
