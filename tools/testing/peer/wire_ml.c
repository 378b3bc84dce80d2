// SPDX-License-Identifier: GPL-2.0
/*
 * wire_peer's conformance tests of the module's side of the kernel's RDS
 * protocol (peer_mlconform.sh): the peer in mainline mode (mlpeer.c)
 * speaks it exactly as rds_rdma does.
 *
 *   mlrx     we request (-V), the module sends: its accept, its map at
 *            connect, every boundary size byte for byte in 4 KiB
 *            fragments, ACK_REQUIRED on the last message and at least
 *            every 8th
 *   mltx     we request (-V) and send: the boundary sizes, a message
 *            flagged ACK_REQUIRED (the module's ACK-only frame comes), a
 *            burst by rds_rdma's rule; then -k messages whose ACK we
 *            drop, a new connection in the other version, the same
 *            messages again flagged RETRANSMITTED (host 1 takes them
 *            once); one map of the module per connection
 *   mlaccept the module connects to us (host 1 sends -n): over IPv6 its
 *            first request is its own handshake, refused with the int
 *            1 as rds_rdma does; its request
 *            (3.1, addresses, credit 0, ack_seq 0), our 3.1 accept and
 *            map; we ACK -k of them only and drop the connection; its
 *            second request (ack_seq 0), our 4.1 accept: exactly the
 *            others again, flagged RETRANSMITTED and ACK_REQUIRED, and
 *            one map per connection, none flagged otherwise
 *   mlcong   congestion maps both ways (host 1: peer_host.py cong)
 *   mlforge  we connect (-V), take host 1's -n messages unacknowledged,
 *            drop the connection; our next request claims them all in
 *            its ack_seq: they must come again, flagged RETRANSMITTED
 *            (host 1 holds them meanwhile), until our ACK
 *
 * Over IPv6 (-s and -d IPv6 addresses) each speaks the kernel's IPv6
 * layout (56 bytes of private data, port 16385).
 *
 * NEG (the environment variable WIRE_PEER_NEG=1): each check of the
 * module here expects a value the module must not produce, so that a run
 * shows every one of them can fail.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "wire_peer.h"

/* 0, or 1 under WIRE_PEER_NEG: added to what a check expects. */
int wire_neg(void)
{
	static int neg = -1;

	if (neg < 0)
		neg = getenv("WIRE_PEER_NEG") && atoi(getenv("WIRE_PEER_NEG"));
	return neg;
}

int ml_up(struct peer *p, u8 t, u16 ver)
{
	if (peer_init(p, 56))
		return -1;
	peer_ml_init(p, ver);
	return peer_ml_connect(p, src, dst, t, 12);
}

static u16 ml_other(u16 ver)
{
	return ver == RDS_IB_MLHS_3_1 ? RDS_IB_MLHS_4_1 : RDS_IB_MLHS_3_1;
}

static bool ml_addr_is(const u8 *a, const char *s)
{
	u8 b[16];

	peer_ml_addr(b, s);
	return !memcmp(a, b, 16);
}

/* The module's private data: the kernel's layout, version ver, its
 * address and ours, credit 0; ack_seq as given.
 */
static void ml_check_pd(struct peer *p, const char *what, u16 ver, u64 ack)
{
	const struct rds_ib_mlhs *m = &p->ml_theirs;

	check(m->major == ver >> 8 && m->minor == (ver & 0xff) + wire_neg() &&
	      m->minor_mask == RDS_IB_MLHS_MASK,
	      "%s: version %u.%u mask 0x%04x (want %u.%u, 0x0003)", what,
	      m->major, m->minor, m->minor_mask, ver >> 8, ver & 0xff);
	check(ml_addr_is(m->saddr, wire_neg() ? src : dst) &&
	      ml_addr_is(m->daddr, src) &&
	      m->tos == tos,
	      "%s: from %s to %s, TOS %u", what, dst, src, m->tos);
	check(!m->credit && m->ack_seq == ack + wire_neg(),
	      "%s: credit %u (no flow control), ack_seq %llu (want %llu)",
	      what, m->credit, (unsigned long long)m->ack_seq,
	      (unsigned long long)ack);
}

/* The module's congestion map within tmo_ms: 0 (in *m), or -1.  Data
 * messages meanwhile are kept, in order, for the caller.
 */
static int ml_map_wait(struct peer *p, struct peer_msg *m, int tmo_ms)
{
	u64 end = peer_deadline(tmo_ms);
	unsigned int i;

	while (peer_now_ms() < end) {
		for (i = 0; i < p->qn; i++) {
			if (!(p->q[i].flags & RDS_FLAG_CONG_BITMAP))
				continue;
			*m = p->q[i];
			memmove(p->q + i, p->q + i + 1,
				(--p->qn - i) * sizeof(*p->q));
			return 0;
		}
		if (peer_poll(p, 200, false) < 0)
			return -1;
	}
	return -1;
}

/* The next data message within tmo_ms (maps skipped, counted). */
static int ml_recv(struct peer *p, struct peer_msg *m, int tmo_ms,
		   unsigned int *maps)
{
	u64 end = peer_deadline(tmo_ms);

	while (peer_now_ms() < end) {
		if (peer_recv_msg(p, m, 1000))
			continue;
		if (m->flags == RDS_FLAG_CONG_BITMAP) {
			if (maps)
				(*maps)++;
			peer_msg_free(m);
			continue;
		}
		return 0;
	}
	return -1;
}

static void ml_check_map(const struct peer_msg *m, const char *what)
{
	check(m->len == (u32)RDS_CONG_MAP_BYTES + wire_neg() && m->frags == 2 &&
	      m->flags == RDS_FLAG_CONG_BITMAP && !m->seq && !m->sport &&
	      !m->dport,
	      "%s: the module's map: %u bytes in %u fragments, flags 0x%x, sequence %llu, ports %u/%u",
	      what, m->len, m->frags, m->flags, (unsigned long long)m->seq,
	      m->sport, m->dport);
}

void ml_check_clean(struct peer *p, const char *what)
{
	check(p->st.violations == (u64)wire_neg(),
	      "%s: every frame as the kernel's RDS takes it (%llu departures: flags %llu, credits %llu, fragments %llu, maps %llu/%llu, ACK frames %llu, checksums %llu)",
	      what, (unsigned long long)p->st.violations,
	      (unsigned long long)p->st.ml_bad_flags,
	      (unsigned long long)p->st.ml_credit,
	      (unsigned long long)p->st.ml_bad_frag,
	      (unsigned long long)p->st.ml_bad_map,
	      (unsigned long long)p->st.ml_map_flags,
	      (unsigned long long)p->st.ml_bad_ack,
	      (unsigned long long)p->st.bad_csum);
}

static u32 ml_frags(u32 len)
{
	return len ? (len + PEER_FRAG - 1) / PEER_FRAG : 1;
}

/* Connect as the kernel's RDS in version mlver (again: p's state kept):
 * the module's accept and its map at connect checked.  0, or -1.
 */
static int ml_start(struct peer *p, const char *what, bool again)
{
	struct peer_msg m = { 0 };
	char w[64];

	if (again ? peer_ml_connect(p, src, dst, tos, 12) :
	    ml_up(p, tos, mlver)) {
		check(false, "%s: connected as the kernel's RDS %u.%u", what,
		      mlver >> 8, mlver & 0xff);
		return -1;
	}
	check(true, "%s: connected as the kernel's RDS %u.%u", what,
	      mlver >> 8, mlver & 0xff);
	snprintf(w, sizeof(w), "%s: its accept", what);
	ml_check_pd(p, w, mlver, 0);
	check((ml_map_wait(p, &m, 30000) == 0) != wire_neg(),
	      "%s: its congestion map came at connect", what);
	if (m.data) {
		ml_check_map(&m, what);
		peer_msg_free(&m);
	}
	return 0;
}

/* ---- mlrx: the module sends ------------------------------------------ */

int t_mlrx(void)
{
	unsigned int run = 0, maxrun = 0, badfrag = 0, maps = 0;
	struct peer_msg m = { 0 };
	struct peer p;
	int i, bad = 0, got = 0;
	u64 prev = 0;
	bool last_req = false;

	if (ml_start(&p, "rx", false))
		return 1;
	printf("up\n");
	fflush(stdout);
	for (i = 0; i < count; i++) {
		u32 len = sizes[i % nsizes];

		if (ml_recv(&p, &m, 180000, &maps)) {
			check(false, "message %d of %d arrived (waited 180 s)", i,
			      count);
			break;
		}
		got++;
		if (!pattern_ok(&m, i, len) || m.dport != dport ||
		    (i && m.seq != prev + 1) || m.dup ||
		    (m.flags & ~RDS_FLAG_ACK_REQUIRED)) {
			if (bad++ < 5)
				printf("# message %d: len %u (want %u), dport %u, seq %llu, flags 0x%x\n",
				       i, m.len, len, m.dport,
				       (unsigned long long)m.seq, m.flags);
		}
		if (m.frags != ml_frags(len) + wire_neg())
			badfrag++;
		prev = m.seq;
		run = m.flags & RDS_FLAG_ACK_REQUIRED ? 0 : run + 1;
		if (run > maxrun)
			maxrun = run;
		last_req = m.flags & RDS_FLAG_ACK_REQUIRED;
		peer_msg_free(&m);
	}
	check(got == count && bad == wire_neg(),
	      "%d of %d messages, every boundary size, intact, in order, numbered one by one (%d bad)",
	      got, count, bad);
	check(!badfrag, "each in frames of 4 KiB, the last one shorter (%u not)",
	      badfrag);
	check(last_req != (bool)wire_neg(),
	      "the last one flagged ACK_REQUIRED (the module's queue ran empty)");
	check(maxrun + wire_neg() < 8,
	      "ACK_REQUIRED at least every 8 messages (%u in a row without)",
	      maxrun);
	printf("# %llu messages asked for an ACK; we sent %llu ACK-only frames\n",
	       (unsigned long long)p.st.ack_req,
	       (unsigned long long)p.st.tx_ctrl);
	ml_check_clean(&p, "rx");
	check(maps == (unsigned int)wire_neg(),
	      "no other map meanwhile (%u)", maps);
	stats(&p, "mlrx");
	/* Let our last ACK reach the module before we go. */
	peer_poll(&p, 500, false);
	peer_fini(&p);
	return 0;
}

/* ---- mltx: the module receives ----------------------------------------- */

/* Until the module's ACK-only frame acknowledged seq: 0, or -1. */
static int ml_wait_ack_frame(struct peer *p, u64 seq, u64 acks0, int tmo_ms)
{
	u64 end = peer_deadline(tmo_ms);

	while (p->st.ml_acks == acks0 || !p->ack_seen_valid ||
	       rds_seq_before(p->ack_seen, seq)) {
		if (p->gone || peer_now_ms() >= end)
			return -1;
		peer_poll(p, 100, false);
	}
	return 0;
}

int t_mltx(void)
{
	static u8 buf[PEER_MAX_MSG];
	struct peer p;
	u32 idx = 0, i, k = keep;
	u64 acks0, seq0, t0;
	int ok;

	if (k < 1 || k > 64)
		return 2;
	if (ml_start(&p, "first connection", false))
		return 1;
	/* 1. every boundary size, by rds_rdma's ACK_REQUIRED rule */
	ok = 1;
	for (i = 0; i < nsizes; i++, idx++) {
		fill(buf, idx, sizes[i]);
		ok &= !peer_ml_send_msg(&p, 7001, dport, 0, buf, sizes[i]);
	}
	ok &= !peer_send_drain(&p, 60000);
	check(ok, "%u messages of the boundary sizes sent in 4 KiB fragments",
	      nsizes);
	/* 2. a message that asks for an ACK: the ACK-only frame comes */
	acks0 = p.st.ml_acks;
	fill(buf, idx++, 64);
	seq0 = p.tx_next;
	t0 = peer_now_ms();
	ok = !peer_ml_send_msg(&p, 7001, dport, RDS_FLAG_ACK_REQUIRED, buf, 64) &&
	     !peer_send_drain(&p, 10000) &&
	     !ml_wait_ack_frame(&p, seq0 + wire_neg(), acks0, neg_tmo(10000));
	check(ok, "ACK_REQUIRED honoured: the module's ACK-only frame for %llu came in %llu ms (ACK %llu)",
	      (unsigned long long)seq0,
	      (unsigned long long)(peer_now_ms() - t0),
	      (unsigned long long)p.ack_seen);
	/* 3. a burst by the rule */
	ok = 1;
	for (i = 0; i < (u32)count; i++, idx++) {
		fill(buf, idx, 64);
		ok &= !peer_ml_send_msg(&p, 7001, dport, 0, buf, 64);
	}
	ok &= !peer_send_drain(&p, 30000);
	check(ok, "burst of %d messages sent (ACK_REQUIRED by rds_rdma's rule)",
	      count);
	/* 4. k messages whose ACK we lose with the connection: it came (so
	 * the module delivered them before the connection went), we act as
	 * if it had not.
	 */
	p.ml_no_rule = true;
	seq0 = p.tx_next;
	ok = 1;
	for (i = 0; i < k; i++) {
		fill(buf, idx + i, 100);
		ok &= !peer_ml_send_msg(&p, 7001, dport, 0, buf, 100);
	}
	ok &= !peer_send_drain(&p, 10000) &&
	      !wait_acked(&p, seq0 + k - 1, 10000);
	check(ok, "%u messages sent (seq %llu..%llu), their ACK came unasked (ACK %llu), taken as lost",
	      k, (unsigned long long)seq0, (unsigned long long)(seq0 + k - 1),
	      (unsigned long long)p.ack_seen);
	peer_disconnect(&p);
	mlver = ml_other(mlver);
	p.ml_ver = mlver;
	if (ml_start(&p, "second connection", true))
		return 1;
	/* rds_rdma resends what was not acknowledged: flagged RETRANSMITTED
	 * and ACK_REQUIRED.
	 */
	ok = 1;
	for (i = 0; i < k; i++) {
		fill(buf, idx + i, 100);
		ok &= !peer_ml_send_msg_at(&p, seq0 + i, 7001, dport,
					   RDS_FLAG_RETRANSMITTED |
					   RDS_FLAG_ACK_REQUIRED, buf, 100);
	}
	acks0 = p.st.ml_acks;
	ok &= !peer_send_drain(&p, 10000) &&
	      !ml_wait_ack_frame(&p, seq0 + k - 1 + wire_neg(), acks0,
				 neg_tmo(10000));
	check(ok, "the %u again, flagged RETRANSMITTED, acknowledged", k);
	idx += k;
	p.ml_no_rule = false;
	/* 5. the end marker */
	fill(buf, idx, 8);
	acks0 = p.st.ml_acks;
	ok = !peer_ml_send_msg(&p, 7001, dport, RDS_FLAG_ACK_REQUIRED, buf, 8) &&
	     !peer_send_drain(&p, 10000) &&
	     !ml_wait_ack_frame(&p, p.tx_next - 1 + wire_neg(), acks0,
				neg_tmo(30000));
	check(ok, "end marker %u acknowledged", idx);
	peer_poll(&p, 1500, false);
	check(p.st.cong_maps == 2u + wire_neg(),
	      "one map of the module per connection, none again later (%llu)",
	      (unsigned long long)p.st.cong_maps);
	ml_check_clean(&p, "tx");
	printf("total %u\n", idx + 1);
	stats(&p, "mltx");
	peer_fini(&p);
	return 0;
}

/* Host 1's messages i0..n-1 (pattern i, to dport), each within tmo_ms:
 * how many came.  Sent the first time (resent false): not flagged
 * RETRANSMITTED nor below the window, seqs[i] noted.  Sent again: seqs[i]
 * each, flagged RETRANSMITTED and ACK_REQUIRED, below the window.  *bad
 * counts the others (the first 5 printed).
 */
static int ml_take(struct peer *p, u64 *seqs, int i0, int n, bool resent,
		   int tmo_ms, int *bad)
{
	const u8 again = RDS_FLAG_RETRANSMITTED | RDS_FLAG_ACK_REQUIRED;
	struct peer_msg m = { 0 };
	int i, got = 0;
	bool ok;

	*bad = 0;
	for (i = i0; i < n; i++) {
		if (ml_recv(p, &m, tmo_ms, NULL))
			break;
		got++;
		if (!resent)
			seqs[i] = m.seq;
		ok = pattern_ok(&m, i, sizes[i % nsizes]) && m.dport == dport;
		if (resent)
			ok = ok && m.seq == seqs[i] && m.dup &&
			     (m.flags & again) == again;
		else
			ok = ok && !(m.flags & RDS_FLAG_RETRANSMITTED) && !m.dup;
		if (!ok && (*bad)++ < 5)
			printf("# %s %d: seq %llu (first %llu), flags 0x%x\n",
			       resent ? "resent" : "message", i,
			       (unsigned long long)m.seq,
			       (unsigned long long)seqs[i], m.flags);
		peer_msg_free(&m);
	}
	return got;
}

/* Host 1's -n messages, sent the first time, none acknowledged: 0, or
 * -1 if not all came.
 */
static int ml_take_first(struct peer *p, u64 *seqs)
{
	int bad, got = ml_take(p, seqs, 0, count, false, 180000, &bad);

	check(got == count && bad == wire_neg(),
	      "%d messages received, intact (%d bad), none acknowledged", got,
	      bad);
	return got == count ? 0 : -1;
}

/* ---- mlaccept: the module connects --------------------------------------- */

static int ml_send_our_map(struct peer *p, u16 port, bool set)
{
	static u8 map[RDS_CONG_MAP_BYTES];

	memset(map, 0, sizeof(map));
	if (set)
		map[port / 8] |= 1u << (port % 8);
	return peer_ml_send_map(p, map, sizeof(map)) ||
	       peer_send_drain(p, 10000);
}

/* Accept the module's request as rds_rdma does, our map sent at once.
 * An attempt of the module that guessed our own protocol may take our
 * map before our accept (interop.md): a bad frame of its protocol, the
 * attempt ends; its next request is accepted again, up to 3 times.
 * 0, or -1.
 */
static int ml_accept(struct peer *p, int *attempts)
{
	for (*attempts = 1; *attempts <= 3; (*attempts)++) {
		if (peer_accept(p, 120000))
			return -1;
		if (ml_send_our_map(p, 0, false))
			return -1;
		peer_poll(p, 1000, false);
		if (!p->gone)
			return 0;
		peer_disconnect(p);
	}
	return -1;
}

int t_mlaccept(void)
{
	u64 seqs[1024];
	struct peer p;
	int i, att, att1, got = 0, bad = 0;

	if (count > 1024 || keep >= count)
		return 2;
	if (peer_init(&p, 56))
		return 1;
	peer_ml_init(&p, RDS_IB_MLHS_3_1);
	p.accept_tos = tos;
	p.tos = tos;
	check(!peer_listen(&p, src, peer_rds_port(src)), "listening on %s port %d",
	      src, peer_rds_port(src));
	printf("up\n");
	fflush(stdout);
	/* Every message, none acknowledged (the ACKs lost, say). */
	p.no_ack = true;
	if (ml_accept(&p, &att)) {
		check(false, "the module connected");
		return 1;
	}
	check(true, "the module connected (%d attempts; its request %s an offer of ours)",
	      att, p.ml_offer ? "is" : "is not");
	att1 = att;
	/* Over IPv6 its first request is our module's own handshake, which
	 * rds_rdma refuses with the int 1; then the kernel's own request.
	 */
	check(p.ml_refused == (p.v6 ? 1u : 0u) + wire_neg(),
	      "%u of its requests refused as the kernel's RDS refuses them before the one taken (want %u)",
	      p.ml_refused, p.v6 ? 1u : 0u);
	ml_check_pd(&p, "its request", RDS_IB_MLHS_3_1, 0);
	if (ml_take_first(&p, seqs))
		return 1;
	p.no_ack = false;
	p.rx_last = seqs[keep - 1];
	check(!peer_send_ctrl(&p, 0) && !peer_send_drain(&p, 10000),
	      "ACK-only frame for the first %d (seq %llu) sent", keep,
	      (unsigned long long)seqs[keep - 1]);
	/* the module takes it before we go */
	peer_poll(&p, 1000, false);
	check(p.st.cong_maps == 1u + wire_neg(),
	      "one map of the module on the first connection (%llu)",
	      (unsigned long long)p.st.cong_maps);
	peer_disconnect(&p);
	printf("# dropped the connection: %d of %d acknowledged\n", keep, count);
	/* Its second request, answered in 4.1: it must resend the rest. */
	p.ml_ver = RDS_IB_MLHS_4_1;
	p.st.cong_maps = 0;
	p.ml_refused = 0;
	if (ml_accept(&p, &att)) {
		check(false, "the module reconnected");
		return 1;
	}
	check(true, "the module reconnected (%d attempts), took our 4.1 accept",
	      att);
	check(p.ml_refused == (u32)wire_neg(),
	      "it remembered: no request refused before (%u)", p.ml_refused);
	ml_check_pd(&p, "its second request", RDS_IB_MLHS_3_1, 0);
	got = ml_take(&p, seqs, keep, count, true, 60000, &bad);
	check(got == count - keep + wire_neg() && !bad,
	      "exactly the %d unacknowledged came again, in order, flagged RETRANSMITTED and ACK_REQUIRED, intact (%d, %d bad)",
	      count - keep, got, bad);
	check(p.st.ml_dups == (u64)(count - keep) + wire_neg(),
	      "below rds_rdma's window, it would drop each as delivered (%llu)",
	      (unsigned long long)p.st.ml_dups);
	peer_poll(&p, 1500, false);
	/* its map may come after them: counted below */
	for (i = 0, got = 0; i < (int)p.qn; i++)
		got += p.q[i].flags != RDS_FLAG_CONG_BITMAP;
	check(got == wire_neg(), "nothing beyond them (%d more)", got);
	check(p.st.cong_maps == 1u + wire_neg(),
	      "one map of the module on the second connection, the first not again (%llu)",
	      (unsigned long long)p.st.cong_maps);
	ml_check_clean(&p, "accept");
	stats(&p, "mlaccept");
	/* for host 1: each attempt ended by our map is a bad frame there */
	printf("attempts %d %d\n", att1, att);
	peer_poll(&p, 200, false);
	peer_fini(&p);
	return 0;
}

/* ---- mlforge: a request's ack_seq frees nothing --------------------------- */

/* We connect (-V) and take host 1's -n messages without acknowledging
 * them, then drop the connection; our next request claims them all in
 * its ack_seq, as anyone on the fabric could for this address
 * (Documentation/interop.md, "Acknowledgments in a handshake").  The
 * module must keep them (host 1 checks at the barrier "forged") and send
 * them again, flagged RETRANSMITTED; our ACK then frees them.
 */
int t_mlforge(void)
{
	u64 seqs[1024];
	struct peer p;
	int got, bad;

	if (count < 1 || count > 1024)
		return 2;
	if (ml_start(&p, "forge", false))
		return 1;
	p.no_ack = true;
	printf("up\n");
	fflush(stdout);
	if (ml_take_first(&p, seqs))
		return 1;
	peer_disconnect(&p);
	printf("# dropped the connection, nothing acknowledged\n");
	/* our request claims every one: ack_seq = the last sequence */
	p.ml_req_ack = seqs[count - 1];
	if (ml_start(&p, "forged request", true))
		return 1;
	printf("# our request carried ack_seq %llu\n",
	       (unsigned long long)p.ml_req_ack);
	p.ml_req_ack = 0;
	check(sync_with(&p, "forged") && sync_with(&p, "checked"),
	      "host 1 looked at what it holds");
	got = ml_take(&p, seqs, 0, count, true, 60000, &bad);
	check(got == count + wire_neg() && !bad,
	      "all %d came again, in order, flagged RETRANSMITTED and ACK_REQUIRED, intact (%d, %d bad)",
	      count, got, bad);
	check(p.st.ml_dups == (u64)count + wire_neg(),
	      "below rds_rdma's window, it would drop each as delivered (%llu)",
	      (unsigned long long)p.st.ml_dups);
	/* now acknowledged, on the connection */
	p.no_ack = false;
	p.rx_last = seqs[count - 1];
	check(!peer_send_ctrl(&p, 0) && !peer_send_drain(&p, 10000),
	      "ACK-only frame for all %d (seq %llu) sent", count,
	      (unsigned long long)seqs[count - 1]);
	peer_poll(&p, 1000, false);
	check(sync_with(&p, "acked"), "host 1 saw the ACK");
	ml_check_clean(&p, "forge");
	stats(&p, "mlforge");
	peer_poll(&p, 200, false);
	peer_fini(&p);
	return 0;
}

/* ---- mlcong: congestion maps both ways (wire_conform.c) ------------------ */

int t_mlcong(void)
{
	struct peer p;

	if (ml_up(&p, tos, mlver)) {
		check(false, "connected as the kernel's RDS");
		return 1;
	}
	return cong_both_ways(&p);
}
