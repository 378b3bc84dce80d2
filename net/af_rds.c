// SPDX-License-Identifier: GPL-2.0
/*
 * The AF_RDS socket family: socket creation and the proto_ops table.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <net/sock.h>

#include "rds.h"

static struct proto rds_proto = {
	.name		= "RDS",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct rds_sock),
};

static int rds_release(struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (!sk)
		return 0;

	sock_orphan(sk);
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

static int rds_setsockopt(struct socket *sock, int level, int optname,
			  sockptr_t optval, unsigned int optlen)
{
	return -ENOPROTOOPT;
}

static int rds_getsockopt(struct socket *sock, int level, int optname,
			  char __user *optval, int __user *optlen)
{
	return -ENOPROTOOPT;
}

static const struct proto_ops rds_proto_ops = {
	.family		= AF_RDS,
	.owner		= THIS_MODULE,
	.release	= rds_release,
	.bind		= sock_no_bind,
	.connect	= sock_no_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= sock_no_getname,
	.poll		= datagram_poll,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.setsockopt	= rds_setsockopt,
	.getsockopt	= rds_getsockopt,
	.sendmsg	= sock_no_sendmsg,
	.recvmsg	= sock_no_recvmsg,
	.mmap		= sock_no_mmap,
};

static int rds_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct sock *sk;

	if (sock->type != SOCK_SEQPACKET || protocol)
		return -ESOCKTNOSUPPORT;

	sk = sk_alloc(net, AF_RDS, GFP_KERNEL, &rds_proto, kern);
	if (!sk)
		return -ENOMEM;

	sock_init_data(sock, sk);
	sock->ops = &rds_proto_ops;
	return 0;
}

static const struct net_proto_family rds_family_ops = {
	.family	= AF_RDS,
	.create	= rds_create,
	.owner	= THIS_MODULE,
};

int rds_af_init(void)
{
	int ret;

	ret = proto_register(&rds_proto, 1);
	if (ret)
		return ret;

	ret = sock_register(&rds_family_ops);
	if (ret) {
		/* -EEXIST: the in-tree rds module is loaded. */
		pr_err("cannot register PF_RDS: %d\n", ret);
		proto_unregister(&rds_proto);
	}
	return ret;
}

void rds_af_exit(void)
{
	sock_unregister(AF_RDS);
	proto_unregister(&rds_proto);
}
