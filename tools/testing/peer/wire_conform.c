// SPDX-License-Identifier: GPL-2.0
/*
 * wire_peer's conformance tests (peer_conform.sh, ping_port0.sh): rx
 * (with -W: withheld credits), tx, retrans, cong and ping0.
 */
#include <string.h>

#include "wire_peer.h"

/* ---- rx: what the module sends ---------------------------------------- */

int t_rx(void)
{
	struct peer p;
	struct peer_msg m;
	int i, bad = 0, got = 0;

	if (up(&p, tos, credits)) {
		check(false, "connected");
		return 1;
	}
	check(true, "connected: module protocol %u.%u, grants us %u, tx_first %llu",
	      p.theirs.major, p.theirs.minor, p.theirs.credits,
	      (unsigned long long)p.theirs.hello.tx_first);
	p.withhold = withhold;
	printf("up\n");
	fflush(stdout);
	if (withhold) {
		withheld_grant_used(&p);
		check(!peer_release_credits(&p), "credits granted back");
	}
	for (i = 0; i < count; i++) {
		u32 len = sizes[i % nsizes];

		if (peer_recv_msg(&p, &m, 180000)) {
			check(false, "message %d of %d arrived (waited 180 s)", i,
			      count);
			break;
		}
		got++;
		if (!pattern_ok(&m, i, len) || m.dport != dport) {
			if (bad++ < 5)
				printf("# message %d: len %u (want %u), dport %u, seq %llu\n",
				       i, m.len, len, m.dport,
				       (unsigned long long)m.seq);
		}
		peer_msg_free(&m);
	}
	check(got == count && !bad,
	      "%d of %d messages, every boundary size, intact and in order (%d bad)",
	      got, count, bad);
	check(!p.st.violations,
	      "the module kept every credit rule (%llu violations, %llu of our grants in flight at most, grant %u)",
	      (unsigned long long)p.st.violations,
	      (unsigned long long)p.st.inflight_peak, credits);
	check(p.st.inflight_peak <= credits, "in flight never above our grant");
	check(!p.st.bad_csum, "every header checksum right");
	check(!p.st.ack_back, "its ACK never went back");
	stats(&p, "rx");
	/* Let our last ACK reach the module before we go. */
	peer_poll(&p, 200, false);
	peer_fini(&p);
	return 0;
}

/* ---- tx: what the module receives ---------------------------------- */

/* A packed frame the module's own sender never makes but must take: two
 * messages (pattern idx and idx + 1) in one 8 KiB receive buffer, the
 * first longer than a page.
 */
#define BIG_PACK_FIRST	5000
#define BIG_PACK_SECOND	2000

static int send_big_packed(struct peer *p, u32 idx)
{
	static u8 frame[BIG_PACK_FIRST + RDS_IB_HDR_LEN + BIG_PACK_SECOND];
	struct rds_header h, in;

	_Static_assert(sizeof(frame) <= 2 * PEER_FRAG, "one 8 KiB buffer");
	peer_hdr_fill(p, &h, p->tx_next++, BIG_PACK_FIRST, 7001, dport,
		      RDS_IB_FLAG_PACK);
	fill(frame, idx, BIG_PACK_FIRST);
	peer_hdr_fill(p, &in, p->tx_next++, BIG_PACK_SECOND, 7001, dport, 0);
	in.h_ack = 0;
	in.h_csum = peer_csum(&in);
	memcpy(frame + BIG_PACK_FIRST, &in, sizeof(in));
	fill(frame + BIG_PACK_FIRST + sizeof(in), idx + 1, BIG_PACK_SECOND);
	p->st.tx_msgs += 2;
	return peer_send_data(p, &h, frame, sizeof(frame), 30000);
}

int t_tx(void)
{
	static u8 buf[PEER_MAX_MSG];
	const u8 *pd[PEER_PACK_MAX];
	u32 pl[PEER_PACK_MAX];
	struct peer p;
	u32 idx = 0, i, j;
	u64 last, ctrl0;
	int ok;

	if (peer_init(&p, credits))
		return 1;
	/* Sequence numbers that wrap during the test. */
	peer_hs_default(&p.mine, gen_new(), credits, tos);
	p.mine.hello.tx_first = (u64)-(u64)(nsizes + 4 + count) - 3;
	if (peer_connect_hs(&p, src, dst, 12)) {
		check(false, "connected");
		return 1;
	}
	check(true, "connected: first sequence %llu, the module grants %u",
	      (unsigned long long)p.tx_next, p.theirs.credits);
	/* 1. every boundary size, fragmented */
	ok = 1;
	for (i = 0; i < nsizes; i++, idx++) {
		fill(buf, idx, sizes[i]);
		ok &= !peer_send_msg(&p, 7001, dport, 0, buf, sizes[i], 30000);
	}
	check(ok, "%u messages of the boundary sizes sent", nsizes);
	/* 2. packed frames of 2..4 small messages */
	ok = 1;
	for (j = 2; j <= PEER_PACK_MAX; j++) {
		static u8 small[PEER_PACK_MAX][600];

		for (i = 0; i < j; i++) {
			pl[i] = 1 + (i * 97 + j * 13) % 600;
			fill(small[i], idx + i, pl[i]);
			pd[i] = small[i];
		}
		ok &= !peer_send_packed(&p, 7001, dport, j, pd, pl, 30000);
		idx += j;
	}
	check(ok, "packed frames of 2, 3 and 4 messages sent");
	/* 2b. packed frames of 8 KiB buffers: a first message longer than a
	 * page; the second such frame after host 1 armed fault_nth, so the
	 * module finds no page to refill its buffer and copies the messages
	 * out (issue 15, lead 2: that copy once wrote past the first page).
	 */
	for (j = 0; j < 2; j++) {
		/* Everything before taken by the module (acknowledged), so
		 * the armed failure can only hit this frame's refill.
		 */
		if (j && (peer_send_drain(&p, 30000) ||
			  wait_acked(&p, p.tx_next - 1, 30000)))
			ok = 0;
		if (j && !sync_with(&p, "tx.arm"))
			ok = 0;
		if (j && !sync_with(&p, "tx.armed"))
			ok = 0;
		ok &= !send_big_packed(&p, idx);
		idx += 2;
	}
	check(ok, "packed frames of %u + %u bytes sent, the second one copied",
	      BIG_PACK_FIRST, BIG_PACK_SECOND);
	ok = !peer_send_drain(&p, 30000) &&
	     !wait_acked(&p, p.tx_next - 1, 30000);
	check(ok, "the module acknowledged them all (ACK %llu)",
	      (unsigned long long)p.ack_seen);
	/* 3. a burst of small messages: its ACKs are grouped */
	ctrl0 = p.st.ctrl_frames;
	ok = 1;
	for (i = 0; i < (u32)count; i++, idx++) {
		fill(buf, idx, 64);
		ok &= !peer_send_msg(&p, 7001, dport, 0, buf, 64, 30000);
	}
	last = p.tx_next - 1;
	ok &= !peer_send_drain(&p, 30000) && !wait_acked(&p, last, 30000);
	check(ok, "burst of %d messages acknowledged", count);
	check(p.st.ctrl_frames - ctrl0 < (u64)count,
	      "ACKs grouped: %llu control frames for %d messages",
	      (unsigned long long)(p.st.ctrl_frames - ctrl0), count);
	printf("# burst: %d messages, %llu control frames from the module\n",
	       count, (unsigned long long)(p.st.ctrl_frames - ctrl0));
	/* 4. duplicates: the last 4 again, flagged RETRANSMITTED */
	ok = 1;
	for (i = 4; i >= 1; i--) {
		fill(buf, idx - i, 64);
		ok &= !peer_send_msg_at(&p, last - i + 1, 7001, dport,
				     RDS_FLAG_RETRANSMITTED |
				     (i == 4 ? RDS_FLAG_ACK_REQUIRED : 0),
				     buf, 64, 30000);
	}
	ok &= !peer_send_drain(&p, 30000);
	check(ok, "4 duplicates sent (seq %llu..%llu)",
	      (unsigned long long)(last - 3), (unsigned long long)last);
	/* 5. the end marker: everything before it is accounted for */
	fill(buf, idx, 8);
	ok = !peer_send_msg(&p, 7001, dport, RDS_FLAG_ACK_REQUIRED, buf, 8, 30000) &&
	     !peer_send_drain(&p, 30000) &&
	     !wait_acked(&p, p.tx_next - 1, 30000);
	check(ok, "end marker %u acknowledged (sequence wrapped: %s)", idx,
	      rds_seq_before(p.mine.hello.tx_first, p.tx_next) &&
	      p.tx_next < p.mine.hello.tx_first ? "yes" : "no");
	known(!p.st.ack_back, "a duplicate sets the ACK back to its own sequence",
	      "the module's ACK never went back");
	printf("# the module's ACK went back %llu times\n",
	       (unsigned long long)p.st.ack_back);
	check(!p.st.violations, "the module kept every credit rule");
	printf("total %u\n", idx + 1);
	stats(&p, "tx");
	peer_fini(&p);
	return 0;
}

/* ---- retrans --------------------------------------------------------- */

int t_retrans(void)
{
	struct peer p;
	struct peer_msg m;
	u64 seqs[1024], first_unacked;
	u32 gen;
	int i, got = 0, bad = 0;

	if (count > 1024 || keep >= count)
		return 2;
	if (up(&p, tos, credits)) {
		check(false, "connected");
		return 1;
	}
	gen = p.mine.hello.gen;
	p.no_ack = true;
	printf("up\n");
	fflush(stdout);
	for (i = 0; i < count; i++) {
		if (peer_recv_msg(&p, &m, 180000))
			break;
		seqs[i] = m.seq;
		got++;
		peer_msg_free(&m);
	}
	check(got == count, "%d messages received, none acknowledged", got);
	if (got != count)
		return 1;
	/* Acknowledge the first keep, then drop the connection. */
	p.no_ack = false;
	p.rx_last = seqs[keep - 1];
	p.no_ack = false;
	check(!peer_send_ctrl(&p, 0), "ACK of the first %d (seq %llu) sent",
	      keep, (unsigned long long)seqs[keep - 1]);
	first_unacked = seqs[keep];
	p.accept_tos = p.tos;
	check(!peer_listen(&p, src, PEER_RDS_PORT), "listening on %s:%d",
	      src, PEER_RDS_PORT);
	peer_disconnect(&p);
	printf("# dropped the connection: %d of %d acknowledged\n", keep, count);
	/* The module holds the others: it must reconnect to us. */
	p.mine.hello.gen = gen;
	p.mine.hello.peer_gen = p.theirs.hello.gen;
	p.mine.hello.rx_next = seqs[keep - 1] + 1;
	p.mine.hello.tx_first = 1;
	if (peer_accept(&p, 60000)) {
		check(false, "the module reconnected");
		return 1;
	}
	check(p.theirs.hello.peer_gen == gen,
	      "the module reconnected, knows us (gen %x) and holds from %llu",
	      gen, (unsigned long long)p.theirs.hello.tx_first);
	check(p.theirs.hello.tx_first == first_unacked,
	      "its oldest held message is the first unacknowledged (%llu)",
	      (unsigned long long)first_unacked);
	got = 0;
	for (i = keep; i < count; i++) {
		if (peer_recv_msg(&p, &m, 60000))
			break;
		got++;
		if (m.seq != seqs[i] || !(m.flags & RDS_FLAG_RETRANSMITTED) ||
		    !pattern_ok(&m, i, sizes[i % nsizes])) {
			if (bad++ < 5)
				printf("# resent %d: seq %llu (want %llu), flags %x\n",
				       i, (unsigned long long)m.seq,
				       (unsigned long long)seqs[i], m.flags);
		}
		peer_msg_free(&m);
	}
	check(got == count - keep && !bad,
	      "exactly the %d unacknowledged came again, in order, flagged RETRANSMITTED, intact (%d bad)",
	      count - keep, bad);
	/* Nothing more may come (a bounded wait: the resend is a burst). */
	peer_poll(&p, 1500, false);
	check(!p.qn, "nothing beyond them (%u more)", p.qn);
	check(!p.st.violations, "the module kept every credit rule");
	stats(&p, "retrans");
	peer_poll(&p, 200, false);
	peer_fini(&p);
	return 0;
}

/* ---- cong: congestion maps both ways ---------------------------------- */

static bool cong_bit(const struct peer_msg *m, u16 port)
{
	return m->data[port / 8] & (1u << (port % 8));
}

int cong_wait(struct peer *p, u16 port, bool set, int tmo_ms)
{
	u64 end = peer_deadline(tmo_ms);
	struct peer_msg m;

	while (peer_now_ms() < end) {
		if (peer_recv_msg(p, &m, 1000))
			continue;
		if ((m.flags & RDS_FLAG_CONG_BITMAP) && m.len == RDS_CONG_MAP_BYTES &&
		    !m.sport && !m.dport && cong_bit(&m, port) == set) {
			peer_msg_free(&m);
			return 0;
		}
		peer_msg_free(&m);
	}
	return -1;
}

/* Our map: ours is a sequenced message, acknowledged; the kernel's RDS
 * sends its own outside the sequence and never acknowledges one.
 */
static int cong_send(struct peer *p, u16 port, bool set)
{
	static u8 map[RDS_CONG_MAP_BYTES];

	memset(map, 0, sizeof(map));
	if (set)
		map[port / 8] |= 1u << (port % 8);
	if (p->ml)
		return peer_ml_send_map(p, map, sizeof(map)) ||
		       peer_send_drain(p, 10000);
	return peer_send_msg(p, 0, 0, RDS_FLAG_CONG_BITMAP, map, sizeof(map), 10000) ||
	       peer_send_drain(p, 10000) ||
	       wait_acked(p, p->tx_next - 1, 10000);
}

static int msg_send(struct peer *p, u16 port, const void *data, u32 len)
{
	if (p->ml)
		return peer_ml_send_msg(p, 7001, port, 0, data, len);
	return peer_send_msg(p, 7001, port, 0, data, len, 10000);
}

bool recv_after(struct peer *p, u16 port)
{
	u64 end = peer_deadline(neg_tmo(60000));
	struct peer_msg m;
	bool ok = false;

	while (!ok && peer_now_ms() < end) {
		if (peer_recv_msg(p, &m, 1000))
			continue;
		ok = m.dport == port && m.len == 5 &&
		     !memcmp(m.data, "after", 5);
		peer_msg_free(&m);
	}
	return ok;
}

/* t_cong on p, connected in either protocol (t_mlcong: the kernel's);
 * WIRE_PEER_NEG flips what the module's maps are expected to say.
 */
int cong_both_ways(struct peer *p)
{
	static u8 buf[1500];
	int i, ok;

	ok = sync_with(p, "cong.bound");
	check(ok, "host 1 bound port %d with a small receive buffer", dport);
	if (!ok)
		goto out;
	ok = 1;
	for (i = 0; i < 8; i++) {
		fill(buf, i, sizeof(buf));
		ok &= !msg_send(p, dport, buf, sizeof(buf));
	}
	check(ok, "8 messages of %zu bytes sent to host 1 port %d, which does not read",
	      sizeof(buf), dport);
	check(!cong_wait(p, dport + wire_neg(), true, neg_tmo(60000)),
	      "the module sent its congestion map: port %d congested", dport);
	if (!sync_with(p, "cong.congested"))
		goto lost;
	/* host 1 reads them: the port is free again */
	check(!cong_wait(p, dport, wire_neg(), neg_tmo(60000)),
	      "the module sent its congestion map: port %d free again", dport);
	/* Our port dport + 1 congested: host 1's sender must wait. */
	check(!cong_send(p, dport + 1, true),
	      "our map with port %d congested sent (and acknowledged if ours)",
	      dport + 1);
	if (!sync_with(p, "cong.peer_congested") || !sync_with(p, "cong.tried"))
		goto lost;
	check(!cong_send(p, dport + 1, false),
	      "our map with port %d free sent (and acknowledged if ours)",
	      dport + 1);
	if (!sync_with(p, "cong.peer_free"))
		goto lost;
	check(recv_after(p, dport + 1 + wire_neg()),
	      "host 1's message to port %d arrived once the port was free",
	      dport + 1);
	if (p->ml)
		ml_check_clean(p, "cong");
	else
		check(!p->st.violations, "the module kept every credit rule");
	stats(p, "cong");
	peer_poll(p, 200, false);
	if (sync_with(p, "cong.end"))
		goto out;
lost:
	check(false, "host 1 kept step (a barrier failed)");
out:
	peer_fini(p);
	return 0;
}

int t_cong(void)
{
	struct peer p;

	if (up(&p, tos, credits)) {
		check(false, "connected");
		return 1;
	}
	return cong_both_ways(&p);
}

/* ---- ping0: a ping from port 0 ---------------------------------------- */

int t_ping0(void)
{
	bool pong = false, pong0 = false;
	struct peer_msg m;
	struct peer p;
	u64 end;

	if (up(&p, tos, credits)) {
		check(false, "connected");
		return 1;
	}
	if (peer_send_msg(&p, 0, 0, 0, "ping0", 5, 10000) ||
	    peer_send_msg(&p, 40000, 0, 0, "ping", 4, 10000)) {
		check(false, "both pings sent");
		goto out;
	}
	/* The module answers in order: the pong to port 40000 comes after
	 * any answer to the first ping.
	 */
	end = peer_deadline(20000);
	while (!pong && peer_now_ms() < end) {
		if (peer_recv_msg(&p, &m, 1000))
			continue;
		if (!m.sport && !m.dport && !(m.flags & RDS_FLAG_CONG_BITMAP))
			pong0 = true;
		if (!m.sport && m.dport == 40000)
			pong = true;
		peer_msg_free(&m);
	}
	check(pong, "a ping from port 40000 is answered");
	check(!pong0, "a ping from port 0 is not answered");
out:
	peer_fini(&p);
	return 0;
}
