// SPDX-License-Identifier: GPL-2.0
/*
 * wire_peer -t mlhostile (peer_mlconform.sh): bad input toward the
 * module's side of the kernel's RDS protocol, each case on a fresh
 * connection of the peer in mainline mode, while a witness connection
 * (TOS -w, also mainline) keeps answering pings: a wrong header checksum,
 * fragments longer than 4 KiB (which our own receive buffers would
 * hold), a SEND longer than any receive buffer, flags the kernel's RDS
 * never sets (ours: control, heartbeat, packed), a congestion map of the
 * wrong size (counted and ignored, as rds_rdma ignores one: the
 * connection stays).  The last line "expect bad N resets M" is what host
 * 1's counters must show (bad_frames +N, resets +M at least).
 */
#include <string.h>

#include "wire_peer.h"

enum mlh_kind { MLH_RESET, MLH_STAY };

struct mlh_case {
	const char	*name;
	enum mlh_kind	kind;
	int		bad;	/* bad_frames it must add on host 1 */
	int		(*fn)(struct peer *p);
};

/* One frame: a header for a message of len bytes, dlen bytes after it. */
static int mlh_frame(struct peer *p, u32 len, u32 dlen, u16 sport, u8 flags,
		     bool csum_ok)
{
	static u8 d[3 * PEER_FRAG - RDS_IB_HDR_LEN];
	struct rds_header h;

	if (dlen > sizeof(d))
		return -1;
	peer_hdr_fill(p, &h, sport ? p->tx_next++ : 0, len, sport,
		      sport ? 9999 : 0, flags);
	h.h_csum = peer_csum(&h);
	if (!csum_ok)
		h.h_csum ^= 0x5a5a;
	return peer_send_frame(p, &h, d, dlen, true);
}

static int mlh_csum(struct peer *p)
{
	return mlh_frame(p, 10, 10, 7001, 0, false);
}

static int mlh_frag_4097(struct peer *p)
{
	return mlh_frame(p, 4097, 4097, 7001, 0, true);
}

static int mlh_frag_8192(struct peer *p)
{
	return mlh_frame(p, 8192, 8192, 7001, 0, true);
}

/* Past the module's 8 KiB receive buffer: its queue pair fails (a local
 * length error), the connection resets, no frame is read.
 */
static int mlh_oversize(struct peer *p)
{
	mlh_frame(p, 9000, 9000, 7001, 0, true);
	return 0;
}

static int mlh_ctrl(struct peer *p)
{
	return mlh_frame(p, 4, 4, 7001, RDS_IB_FLAG_CTRL, true);
}

static int mlh_ctrl_ack(struct peer *p)
{
	return mlh_frame(p, 0, 0, 0, RDS_IB_FLAG_CTRL, true);
}

static int mlh_hb(struct peer *p)
{
	return mlh_frame(p, 0, 0, 0, RDS_IB_FLAG_CTRL | RDS_IB_FLAG_HB, true);
}

static int mlh_pack(struct peer *p)
{
	return mlh_frame(p, 4, 4, 7001, RDS_IB_FLAG_PACK, true);
}

static int mlh_map_size(struct peer *p)
{
	static u8 map[RDS_CONG_MAP_BYTES / 2];

	return peer_ml_send_map(p, map, sizeof(map)) ||
	       peer_send_drain(p, 10000);
}

static const struct mlh_case mlh_cases[] = {
	{ "header checksum wrong", MLH_RESET, 1, mlh_csum },
	{ "fragment of 4097 bytes", MLH_RESET, 1, mlh_frag_4097 },
	{ "fragment of 8192 bytes", MLH_RESET, 1, mlh_frag_8192 },
	{ "SEND longer than a receive buffer", MLH_RESET, 0, mlh_oversize },
	{ "data frame flagged control (0x80)", MLH_RESET, 1, mlh_ctrl },
	{ "ACK-only frame flagged control (0x80)", MLH_RESET, 1, mlh_ctrl_ack },
	{ "heartbeat request (0xc0)", MLH_RESET, 1, mlh_hb },
	{ "data frame flagged packed (0x20)", MLH_RESET, 1, mlh_pack },
	{ "congestion map of 4096 bytes", MLH_STAY, 1, mlh_map_size },
};

int t_mlhostile(void)
{
	unsigned int i;
	int bad = 0, resets = 0;

	if (ml_up(&witness, wtos, RDS_IB_MLHS_3_1)) {
		check(false, "witness connection (TOS %d) up", wtos);
		return 1;
	}
	check(witness_ping() != wire_neg(),
	      "witness connection (TOS %d) answers a ping", wtos);
	for (i = 0; i < sizeof(mlh_cases) / sizeof(mlh_cases[0]); i++) {
		const struct mlh_case *c = &mlh_cases[i];
		struct peer p;
		bool ok;
		int r;

		if (ml_up(&p, tos, mlver)) {
			check(false, "%s: connected", c->name);
			continue;
		}
		/* Up on both sides: its map came. */
		peer_poll(&p, 1000, false);
		r = c->fn(&p);
		if (c->kind == MLH_RESET) {
			ok = !peer_wait_gone(&p, 15000);
			check(ok != (bool)wire_neg(),
			      "%s: the module reset the connection (%s)",
			      c->name, p.gone_why ?: "still up");
			resets += ok;
		} else {
			ok = !r && peer_poll(&p, 2000, false) >= 0 &&
			     !p.gone && ping_on(&p);
			check(ok != (bool)wire_neg(),
			      "%s: ignored, the connection stays and answers a ping",
			      c->name);
		}
		bad += c->bad;
		peer_fini(&p);
		peer_poll(&witness, 0, false);
		check(witness_ping() != wire_neg(),
		      "%s: the witness connection still answers", c->name);
	}
	check(witness.gone == wire_neg(),
	      "the witness connection stayed up throughout");
	stats(&witness, "witness");
	peer_fini(&witness);
	printf("expect bad %d resets %d\n", bad + wire_neg(), resets);
	return 0;
}
