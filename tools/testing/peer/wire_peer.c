// SPDX-License-Identifier: GPL-2.0
/*
 * wire_peer: conformance, hostile-input and fuzz tests of the module's IB
 * wire protocol, played from user space (libpeer, peer.h) against the
 * module of another host.  The host running the module sends and
 * receives with AF_RDS sockets (peer_host.py) and checks its counters;
 * see tools/testing/selftests/peer_*.sh.
 *
 *   wire_peer -s SRC -d DST -t TEST [options]
 *
 * TEST:
 *   rx       receive -n messages of the sizes -z (cycled) from the module,
 *            each checked byte for byte (peer_pattern) and in order; with
 *            -W, withhold credits first: the module must stop at our grant
 *   tx       send messages of the sizes -z to DST port -P (fragments at
 *            every boundary, packed frames), -n small ones in a burst (ACK
 *            grouping), sequence numbers across the 64-bit wrap and
 *            duplicates flagged RETRANSMITTED, then an end marker
 *   retrans  receive -n messages without acknowledging them, ACK -k,
 *            drop the connection and accept the module's reconnection:
 *            exactly the others come again, flagged RETRANSMITTED
 *   active   listen: the module connects to us (host 1 sends -n messages);
 *            the first two answers are malformed, the third valid
 *   cong     congestion maps both ways: host 1's port -P congested by
 *            our messages (its map arrives with the bit set, then clear
 *            once host 1 reads), then our map congests our port -P + 1
 *            (host 1's non-blocking send fails) and frees it again
 *   hostile  malformed frames, each on a fresh connection, which the
 *            module must reset (or ignore), while a witness connection
 *            (TOS -w) keeps answering pings
 *   fuzz     random mutations of valid traffic for -T seconds, seed -S
 *   rdma     one-sided ops both ways (host 1: peer_rdma_host): our WRITE
 *            and READ on host 1's region (its cookie in a message; an
 *            offset inside a page), then WRITEs out of its range, with
 *            keys never issued and with the key of the freed region: each
 *            fails with a remote access error, we connect again; then
 *            host 1's WRITE and READ on our region (ibv_reg_mr_iova, iova
 *            0): its data is here when its message (RDS_EXTHDR_RDMA: our
 *            key) arrives, and we hold our ACK of that message until host
 *            1 saw no status yet; its WRITE on the key of our freed
 *            region breaks the connection, the module connects to us
 *            again and only its next message arrives.  A witness
 *            connection (TOS -w) answers a ping after every case
 *   ping0    a ping from port 0 (to port 0) is not answered: its pong
 *            would be a ping to port 0 in turn, and two hosts would
 *            answer each other for ever; a ping from another port right
 *            after it is, and its pong comes after any answer to the first
 *
 * Output: "# ..." lines, "ok N NAME" / "not ok N NAME" per check and a
 * last line "result: pass|fail key=value ..."; exit 0 only on pass.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "peer.h"
#include "../../../net/exthdr.h"

static const char *src, *dst;
static int tos = 2, wtos = 5, count = 100, keep = 8, secs = 30, dport = 7002;
static u32 credits = 16;
static bool withhold;
static unsigned long long seed;
static u32 sizes[128];
static unsigned int nsizes;
static int nchecks, nfail;

static void check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	nchecks++;
	if (!ok)
		nfail++;
	printf("%sok %d ", ok ? "" : "not ", nchecks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* A check of a module bug already reported: shown as TAP "TODO" (not
 * counted as a failure) until it is fixed, then it passes as any other.
 */
static void known(bool ok, const char *bug, const char *what)
{
	nchecks++;
	if (ok)
		printf("ok %d %s\n", nchecks, what);
	else
		printf("not ok %d %s # TODO module bug: %s\n", nchecks, what, bug);
	fflush(stdout);
}

static u32 gen_new(void)
{
	u32 g = (u32)(peer_now_ms() * 2654435761u) ^ (u32)getpid();

	return g ? g : 1;
}

static void stats(struct peer *p, const char *what)
{
	printf("# %s: frames=%llu data=%llu ctrl=%llu packed=%llu msgs=%llu "
	       "retrans=%llu cong=%llu hb=%llu violations=%llu ack_back=%llu "
	       "inflight_peak=%llu grants=%llu tx_frames=%llu tx_ctrl=%llu\n",
	       what, (unsigned long long)p->st.frames,
	       (unsigned long long)p->st.data_frames,
	       (unsigned long long)p->st.ctrl_frames,
	       (unsigned long long)p->st.packed_frames,
	       (unsigned long long)p->st.msgs,
	       (unsigned long long)p->st.retrans_msgs,
	       (unsigned long long)p->st.cong_maps,
	       (unsigned long long)p->st.hb_asked,
	       (unsigned long long)p->st.violations,
	       (unsigned long long)p->st.ack_back,
	       (unsigned long long)p->st.inflight_peak,
	       (unsigned long long)p->st.grants,
	       (unsigned long long)p->st.tx_frames,
	       (unsigned long long)p->st.tx_ctrl);
	fflush(stdout);
}

static int up(struct peer *p, u8 t, u32 cr)
{
	if (peer_init(p, cr))
		return -1;
	peer_hs_default(&p->mine, gen_new(), cr, t);
	return peer_connect_hs(p, src, dst, 12);
}

static bool pattern_ok(const struct peer_msg *m, u32 idx, u32 len)
{
	u32 i;

	if (m->len != len)
		return false;
	for (i = 0; i < len; i++)
		if (m->data[i] != peer_pattern(idx, i))
			return false;
	return true;
}

static void fill(u8 *b, u32 idx, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		b[i] = peer_pattern(idx, i);
}

/* ---- rx: what the module sends ---------------------------------------- */

static int t_rx(void)
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
		/* The module may send exactly our grant, then must wait. */
		u64 end = peer_now_ms() + 180000;

		while (p.st.data_frames < credits && peer_now_ms() < end)
			if (peer_poll(&p, 1000, false) < 0)
				break;
		check(p.st.data_frames == credits,
		      "withheld: the module used all %u credits (%llu frames)",
		      credits, (unsigned long long)p.st.data_frames);
		/* Proving an absence needs a bounded wait: 2 s is 500
		 * ticks, and the module had frames queued.
		 */
		peer_poll(&p, 2000, false);
		check(p.st.data_frames == credits,
		      "withheld: no data frame beyond the grant in 2 s (%llu)",
		      (unsigned long long)p.st.data_frames);
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

static int wait_acked(struct peer *p, u64 seq, int tmo_ms)
{
	u64 end = peer_now_ms() + tmo_ms;

	while (!p->ack_seen_valid || rds_seq_before(p->ack_seen, seq)) {
		if (p->gone || peer_now_ms() >= end)
			return -1;
		peer_poll(p, 100, false);
	}
	return 0;
}

static bool sync_with(struct peer *p, const char *name);

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

static int t_tx(void)
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

static int t_retrans(void)
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

/* ---- active: the module connects to us ---------------------------------- */

/* Host 1 sends -n messages to us on a TOS nobody connected yet: its
 * module connects to us.  The first request is accepted with a malformed
 * handshake (magic wrong), the second with one whose rx_next acknowledges
 * messages never sent: the module must count each, end the attempt and
 * try again; the third is answered properly and the messages arrive.
 */
static int t_active(void)
{
	struct peer p;
	struct peer_msg m;
	u8 junk[40];
	int i, got = 0, bad = 0;

	if (peer_init(&p, credits))
		return 1;
	check(!peer_listen(&p, src, PEER_RDS_PORT), "listening on %s:%d", src,
	      PEER_RDS_PORT);
	printf("up\n");
	fflush(stdout);
	peer_hs_default(&p.mine, gen_new(), credits, tos);
	rds_ib_hs_encode(&p.mine, junk);
	junk[0] ^= 0xff;
	/* The module sees ESTABLISHED, then a bad handshake: it ends it. */
	i = !peer_accept_pd(&p, 180000, junk, sizeof(junk)) &&
	    !peer_wait_gone(&p, 30000);
	check(i, "request 1 (tx_first %llu) answered with a bad magic: the module ended it",
	      (unsigned long long)p.theirs.hello.tx_first);
	peer_disconnect(&p);
	/* An rx_next acknowledging what it never sent. */
	p.mine.hello.peer_gen = p.theirs.hello.gen;
	p.mine.hello.rx_next = p.theirs.hello.tx_first + 1000;
	check(!peer_accept(&p, 180000) && !peer_wait_gone(&p, 30000),
	      "request 2 answered acknowledging 1000 messages never sent: the module ended it");
	peer_disconnect(&p);
	p.mine.hello.peer_gen = 0;
	p.mine.hello.rx_next = 1;
	if (peer_accept(&p, 180000)) {
		check(false, "request 3 accepted");
		peer_fini(&p);
		return 1;
	}
	check(true, "request 3 accepted with a valid handshake");
	for (i = 0; i < count; i++) {
		if (peer_recv_msg(&p, &m, 180000))
			break;
		got++;
		if (!pattern_ok(&m, i, sizes[i % nsizes]) || m.dport != dport)
			bad++;
		peer_msg_free(&m);
	}
	check(got == count && !bad, "the %d messages arrived intact, in order (%d bad)",
	      count, bad);
	check(!p.st.violations, "the module kept every credit rule");
	stats(&p, "active");
	peer_poll(&p, 200, false);
	peer_fini(&p);
	return 0;
}

/* ---- cong: congestion maps both ways ---------------------------------- */

static struct peer witness;

/* A barrier with host 1 (tools/testing/selftests/barrier), in a VM test,
 * while p (and the witness, if up) keeps answering the module (its
 * heartbeat ends a connection silent for 5 intervals, and host 1 may take
 * that long under load).
 */
static bool sync_with(struct peer *p, const char *name)
{
	const char *top = getenv("RDS_TOP");
	char bar[512], full[256];
	pid_t pid;
	int st;

	if (!top)
		return false;
	snprintf(bar, sizeof(bar), "%s/tools/testing/selftests/barrier", top);
	snprintf(full, sizeof(full), "%s.%s", getenv("RDS_TEST") ?: "wire_peer",
		 name);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		execl(bar, bar, full, "120", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (witness.id)
			peer_poll(&witness, 0, false);
		if (!p || peer_poll(p, 100, false) < 0)
			usleep(100000);
	}
	return WIFEXITED(st) && !WEXITSTATUS(st);
}

static bool cong_bit(const struct peer_msg *m, u16 port)
{
	return m->data[port / 8] & (1u << (port % 8));
}

/* The next congestion map within tmo_ms whose bit for port is set. */
static int cong_wait(struct peer *p, u16 port, bool set, int tmo_ms)
{
	u64 end = peer_now_ms() + tmo_ms;
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

static int cong_send(struct peer *p, u16 port, bool set)
{
	static u8 map[RDS_CONG_MAP_BYTES];

	memset(map, 0, sizeof(map));
	if (set)
		map[port / 8] |= 1u << (port % 8);
	return peer_send_msg(p, 0, 0, RDS_FLAG_CONG_BITMAP, map, sizeof(map), 10000) ||
	       peer_send_drain(p, 10000) ||
	       wait_acked(p, p->tx_next - 1, 10000);
}

static int t_cong(void)
{
	static u8 buf[1500];
	struct peer_msg m;
	struct peer p;
	u64 end;
	int i, ok;

	if (up(&p, tos, credits)) {
		check(false, "connected");
		return 1;
	}
	ok = sync_with(&p, "cong.bound");
	check(ok, "host 1 bound port %d with a small receive buffer", dport);
	if (!ok)
		goto out;
	ok = 1;
	for (i = 0; i < 8; i++) {
		fill(buf, i, sizeof(buf));
		ok &= !peer_send_msg(&p, 7001, dport, 0, buf, sizeof(buf), 10000);
	}
	check(ok, "8 messages of %zu bytes sent to host 1 port %d, which does not read",
	      sizeof(buf), dport);
	check(!cong_wait(&p, dport, true, 60000),
	      "the module sent its congestion map: port %d congested", dport);
	if (!sync_with(&p, "cong.congested"))
		goto lost;
	/* host 1 reads them: the port is free again */
	check(!cong_wait(&p, dport, false, 60000),
	      "the module sent its congestion map: port %d free again", dport);
	/* Our port dport + 1 congested: host 1's sender must wait. */
	check(!cong_send(&p, dport + 1, true),
	      "our map with port %d congested sent and acknowledged", dport + 1);
	if (!sync_with(&p, "cong.peer_congested") || !sync_with(&p, "cong.tried"))
		goto lost;
	check(!cong_send(&p, dport + 1, false),
	      "our map with port %d free sent and acknowledged", dport + 1);
	if (!sync_with(&p, "cong.peer_free"))
		goto lost;
	end = peer_now_ms() + 60000;
	ok = 0;
	while (!ok && peer_now_ms() < end) {
		if (peer_recv_msg(&p, &m, 1000))
			continue;
		ok = m.dport == dport + 1 && m.len == 5 &&
		     !memcmp(m.data, "after", 5);
		peer_msg_free(&m);
	}
	check(ok, "host 1's message to port %d arrived once the port was free",
	      dport + 1);
	check(!p.st.violations, "the module kept every credit rule");
	stats(&p, "cong");
	peer_poll(&p, 200, false);
	if (sync_with(&p, "cong.end"))
		goto out;
lost:
	check(false, "host 1 kept step (a barrier failed)");
out:
	peer_fini(&p);
	return 0;
}

/* ---- ping0: a ping from port 0 ---------------------------------------- */

static int t_ping0(void)
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
	end = peer_now_ms() + 20000;
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

/* ---- hostile ---------------------------------------------------------- */

static struct peer witness;

/* A ping on the witness connection: the module answers from port 0. */
static bool witness_ping(void)
{
	static u16 sport = 40000;
	struct peer_msg m;
	u64 end = peer_now_ms() + 20000;

	sport++;
	if (peer_send_msg(&witness, sport, 0, 0, "ping", 4, 10000))
		return false;
	while (peer_now_ms() < end) {
		if (peer_recv_msg(&witness, &m, 1000))
			continue;
		if (!m.sport && m.dport == sport) {
			peer_msg_free(&m);
			return true;
		}
		peer_msg_free(&m);
	}
	return false;
}

enum hcase_kind { H_RESET, H_STAY, H_REFUSE };

struct hcase {
	const char	*name;
	enum hcase_kind	kind;
	int		bad;	/* bad_frames it must add on host 1 */
	int		(*fn)(struct peer *p);
};

static int h_data(struct peer *p, u32 len, u32 dlen, u8 flags, bool csum)
{
	static u8 d[3 * PEER_FRAG];
	struct rds_header h;
	u8 g;

	peer_hdr_fill(p, &h, p->tx_next++, len, 7001, dport, flags);
	if (!rds_ib_credit_take(&p->cr, &g))
		return -1;
	h.h_credit = g;
	h.h_csum = peer_csum(&h);
	if (!csum)
		h.h_csum ^= 0x5a5a;
	return peer_send_frame(p, &h, d, dlen, true);
}

static int hc_csum(struct peer *p) { return h_data(p, 10, 10, 0, false); }
static int hc_fraglen(struct peer *p) { return h_data(p, 100, 50, 0, true); }
static int hc_fraglen0(struct peer *p) { return h_data(p, 0, 16, 0, true); }

/* A SEND of 20 bytes: shorter than a header. */
static int hc_short(struct peer *p)
{
	struct rds_header h;

	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_csum = peer_csum(&h);
	return peer_send_bytes(p, &h, 20, true);
}

static int hc_ctrl_data(struct peer *p)
{
	struct rds_header h;

	peer_hdr_fill(p, &h, 0, 16, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, "0123456789abcdef", 16, true);
}

static int hc_fragmix(struct peer *p)
{
	static u8 d[PEER_FRAG];
	struct rds_header h;

	peer_hdr_fill(p, &h, p->tx_next++, 8192, 7001, dport, 0);
	if (peer_send_data(p, &h, d, PEER_FRAG, 10000))
		return -1;
	peer_hdr_fill(p, &h, p->tx_next++, 8192, 7001, dport, 0);
	return peer_send_data(p, &h, d, PEER_FRAG, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_fragcount(struct peer *p)
{
	static u8 d[PEER_FRAG];
	struct rds_header h;

	/* 2 MiB: 512 fragments, twice what a message may have */
	peer_hdr_fill(p, &h, p->tx_next++, 2u << 20, 7001, dport, 0);
	return peer_send_data(p, &h, d, PEER_FRAG, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_fraglast(struct peer *p)
{
	static u8 d[PEER_FRAG];
	struct rds_header h;
	u64 seq = p->tx_next++;

	/* 4097 bytes: the second fragment must be 1 byte, not 4096 */
	peer_hdr_fill(p, &h, seq, 4097, 7001, dport, 0);
	if (peer_send_data(p, &h, d, PEER_FRAG, 10000))
		return -1;
	peer_hdr_fill(p, &h, seq, 4097, 7001, dport, 0);
	return peer_send_data(p, &h, d, PEER_FRAG, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_ack_unsent(struct peer *p)
{
	struct rds_header h;

	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_ack = cpu_to_be64(p->theirs.hello.tx_first + 1000);
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, NULL, 0, true);
}

static int hc_credit_absurd(struct peer *p)
{
	struct rds_header h;

	/* We granted credits in the handshake and nothing was used. */
	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_credit = 255;
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, NULL, 0, true);
}

static int hc_credit_one(struct peer *p)
{
	struct rds_header h;

	/* One more than we could have given back. */
	peer_hdr_fill(p, &h, 0, 0, 0, 0, RDS_IB_FLAG_CTRL);
	h.h_credit = 1;
	h.h_csum = peer_csum(&h);
	return peer_send_frame(p, &h, NULL, 0, true);
}

static int hc_pack(struct peer *p, int what)
{
	u8 frame[PEER_FRAG] = { 0 };
	struct rds_header h, in;
	u32 used = 100;

	peer_hdr_fill(p, &h, p->tx_next++, 100, 7001, dport, RDS_IB_FLAG_PACK);
	peer_hdr_fill(p, &in, p->tx_next++, 50, 7001, dport, 0);
	in.h_ack = 0;
	if (what == 1)
		in.h_ack = cpu_to_be64(1);
	if (what == 3)
		in.h_flags = RDS_IB_FLAG_PACK;
	if (what == 4)
		in.h_len = cpu_to_be32(5000);
	in.h_csum = peer_csum(&in);
	if (what == 2)
		in.h_csum ^= 1;
	memcpy(frame + used, &in, sizeof(in));
	used += sizeof(in) + 50;
	if (what == 5)
		used = 100;	/* flagged packed, one message */
	if (what == 6)
		used = 130;	/* a header cut short */
	return peer_send_data(p, &h, frame, used, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_pack_ack(struct peer *p) { return hc_pack(p, 1); }
static int hc_pack_csum(struct peer *p) { return hc_pack(p, 2); }
static int hc_pack_flags(struct peer *p) { return hc_pack(p, 3); }
static int hc_pack_len(struct peer *p) { return hc_pack(p, 4); }
static int hc_pack_empty(struct peer *p) { return hc_pack(p, 5); }
static int hc_pack_short(struct peer *p) { return hc_pack(p, 6); }

/* A SEND bigger than the module's receive buffer (header + 8 KiB). */
static int hc_oversize(struct peer *p)
{
	static u8 d[2 * PEER_FRAG + 1024];
	struct rds_header h;

	peer_hdr_fill(p, &h, p->tx_next++, sizeof(d), 7001, dport, 0);
	peer_send_data(p, &h, d, sizeof(d), 10000);
	peer_send_drain(p, 10000);
	return 0;
}

static int hc_cong_size(struct peer *p)
{
	static u8 d[100];

	return peer_send_msg(p, 0, 0, RDS_FLAG_CONG_BITMAP, d, sizeof(d), 10000) ||
	       peer_send_drain(p, 10000) ||
	       wait_acked(p, p->tx_next - 1, 10000);
}

static int hc_noport(struct peer *p)
{
	return peer_send_msg(p, 7001, 9999, 0, "nobody", 6, 10000) ||
	       peer_send_drain(p, 10000) ||
	       wait_acked(p, p->tx_next - 1, 10000);
}

/* Sequence numbers outside the receive window (net/seq.h: 2^32 either
 * side of the next expected): the module resets the connection.
 */
static int hc_seq_far(struct peer *p)
{
	return peer_send_msg_at(p, p->tx_next + (1ull << 62), 7001, 9999, 0,
				"far", 3, 10000) ||
	       peer_send_drain(p, 10000);
}

static int hc_seq_behind(struct peer *p)
{
	return peer_send_msg_at(p, p->tx_next - (1ull << 33), 7001, 9999,
				RDS_FLAG_RETRANSMITTED, "old", 3, 10000) ||
	       peer_send_drain(p, 10000);
}

static const struct hcase hcases[] = {
	{ "header checksum wrong", H_RESET, 1, hc_csum },
	{ "frame shorter than a header", H_RESET, 1, hc_short },
	{ "length does not match the fragment", H_RESET, 1, hc_fraglen },
	{ "empty message with data", H_RESET, 1, hc_fraglen0 },
	{ "control frame with data", H_RESET, 1, hc_ctrl_data },
	{ "fragment of another message", H_RESET, 1, hc_fragmix },
	{ "fragment count overflow (2 MiB)", H_RESET, 1, hc_fragcount },
	{ "last fragment too long", H_RESET, 1, hc_fraglast },
	{ "ACK of a message never sent", H_RESET, 1, hc_ack_unsent },
	{ "absurd credit grant (255)", H_RESET, 1, hc_credit_absurd },
	{ "credit grant one beyond the handshake", H_RESET, 1, hc_credit_one },
	{ "packed: inner header with an ACK", H_RESET, 1, hc_pack_ack },
	{ "packed: inner checksum wrong", H_RESET, 1, hc_pack_csum },
	{ "packed: inner header flagged packed", H_RESET, 1, hc_pack_flags },
	{ "packed: inner length past the frame", H_RESET, 1, hc_pack_len },
	{ "packed: only one message", H_RESET, 1, hc_pack_empty },
	{ "packed: inner header cut short", H_RESET, 1, hc_pack_short },
	{ "SEND larger than a receive buffer", H_RESET, 0, hc_oversize },
	{ "congestion map of the wrong size", H_STAY, 1, hc_cong_size },
	{ "message to a port nobody bound", H_STAY, 0, hc_noport },
	{ "sequence number 2^62 ahead", H_RESET, 1, hc_seq_far },
	{ "retransmission 2^33 behind", H_RESET, 1, hc_seq_behind },
};

/* Handshakes off the ordinary: 0 accepted, else the refusal reason. */
static int hs_try(const void *pd, size_t len, int port)
{
	struct peer p;
	int reason = -1, r;

	if (witness.id)
		peer_poll(&witness, 0, false);	/* answer its heartbeats */
	if (peer_init(&p, credits))
		return -2;
	p.quiet = true;
	r = peer_connect(&p, src, dst, port, pd, len, 2, &reason);
	peer_fini(&p);
	return r == 0 ? 0 : r == 3 ? reason : -1;
}

static int t_hostile(void)
{
	u8 pd[56];
	struct rds_ib_hs hs;
	unsigned int i;
	int bad = 0, resets = 0, r, n;

	if (up(&witness, wtos, credits)) {
		check(false, "witness connection (TOS %d) up", wtos);
		return 1;
	}
	check(witness_ping(), "witness connection (TOS %d) answers a ping", wtos);
	for (i = 0; i < sizeof(hcases) / sizeof(hcases[0]); i++) {
		const struct hcase *c = &hcases[i];
		struct peer p;
		bool ok;

		if (up(&p, tos, credits)) {
			check(false, "%s: connected", c->name);
			continue;
		}
		r = c->fn(&p);
		if (c->kind == H_RESET) {
			ok = !peer_wait_gone(&p, 15000);
			check(ok, "%s: the module reset the connection (%s)",
			      c->name, p.gone_why ?: "still up");
			resets += ok;
		} else {
			/* It must still take and acknowledge a message. */
			ok = !r && !peer_send_msg(&p, 7001, 9999,
						  RDS_FLAG_ACK_REQUIRED, "x", 1, 10000) &&
			     !wait_acked(&p, p.tx_next - 1, 10000);
			check(ok, "%s: the connection stays up and acknowledges", c->name);
		}
		bad += c->bad;
		peer_fini(&p);
		peer_poll(&witness, 0, false);
		check(witness_ping(), "%s: the witness connection still answers",
		      c->name);
	}
	/* Handshakes: oversized private data with junk after our 40 bytes
	 * (ignored), one byte short, every length 0..39 refused.
	 */
	peer_hs_default(&hs, gen_new(), credits, tos);
	memset(pd, 0xa5, sizeof(pd));
	rds_ib_hs_encode(&hs, pd);
	check(hs_try(pd, sizeof(pd), PEER_RDS_PORT) == 0,
	      "56 bytes of private data, junk after the handshake: accepted");
	/* Truncated: the IB CM pads private data to 56 bytes with zeros,
	 * so the module must answer what its own decoder makes of our
	 * bytes followed by zeros (a refusal or, at 39 bytes, which only
	 * cuts the reason byte, an accept).
	 */
	n = 0;
	{
		static const unsigned int cut[] = { 0, 4, 8, 13, 26, 36, 37, 39 };
		unsigned int k;

		for (k = 0; k < sizeof(cut) / sizeof(cut[0]); k++) {
			u8 z[56] = { 0 };
			struct rds_ib_hs d;
			int want, got;

			memcpy(z, pd, cut[k]);
			want = rds_ib_hs_decode(z, sizeof(z), &d);
			got = hs_try(pd, cut[k], PEER_RDS_PORT);
			printf("# private data cut to %u bytes: %s (decoder: %s)\n",
			       cut[k], got < 0 ? "no answer" :
			       rds_ib_hs_reason_name(got),
			       rds_ib_hs_reason_name(want));
			n += got == want;
		}
		check(n == (int)k,
		      "truncated private data (0..39 bytes): answered as the decoder reads it zero-padded (%d of %u)",
		      n, k);
	}
	pd[37] = 1;
	check(hs_try(pd, 40, PEER_RDS_PORT) == RDS_IB_HS_R_FLAGS,
	      "reserved byte set: refused (flags)");
	pd[37] = 0;
	check(hs_try(pd, 40, PEER_RDS_PORT + 1) == -1,
	      "rdma_cm port %d where nobody listens: no answer from RDS",
	      PEER_RDS_PORT + 1);
	check(witness_ping(), "after the handshakes: the witness answers");
	/* A flood of connection requests: valid ones replacing each other
	 * and garbage ones, back to back.
	 */
	{
		int acc = 0, ref = 0, k;

		for (k = 0; k < 30; k++) {
			u8 junk[56];
			unsigned int j;

			hs.hello.gen = gen_new();
			rds_ib_hs_encode(&hs, pd);
			acc += hs_try(pd, 40, PEER_RDS_PORT) == 0;
			for (j = 0; j < sizeof(junk); j++)
				junk[j] = (u8)rand();
			ref += hs_try(junk, 40, PEER_RDS_PORT) > 0;
		}
		check(acc == 30 && ref == 30,
		      "flood: %d of 30 valid requests accepted, %d of 30 garbage refused",
		      acc, ref);
		printf("flood accepted %d refused %d\n", acc, ref);
	}
	check(witness_ping(), "after the flood: the witness answers");
	{
		struct peer p;

		check(!up(&p, tos, credits) && !peer_send_msg(&p, 7001, 9999,
			RDS_FLAG_ACK_REQUIRED, "y", 1, 10000) &&
		      !wait_acked(&p, p.tx_next - 1, 10000),
		      "a fresh connection on TOS %d works", tos);
		peer_fini(&p);
	}
	check(!witness.st.violations, "the module kept every credit rule");
	stats(&witness, "witness");
	printf("expect bad_frames %d resets %d\n", bad, resets);
	peer_fini(&witness);
	return 0;
}

/* ---- fuzz ------------------------------------------------------------- */

static u64 rng;

static u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One valid frame of random traffic, then mutated. */
static int fuzz_one(struct peer *p, unsigned long *mutated)
{
	static u8 d[2 * PEER_FRAG];
	struct rds_header h;
	u32 len, dlen, i;
	u8 g;
	/* One frame in four is mutated: the rest keeps a connection busy
	 * with valid traffic between the mutations that do not reset it.
	 */
	int what = rnd() % 4 ? 12 + rnd() % 8 : rnd() % 12;

	len = rnd() % 3 ? rnd() % 600 : rnd() % (3 * PEER_FRAG);
	for (i = 0; i < sizeof(d); i++)
		d[i] = (u8)rnd();
	if (what >= 12) {
		/* valid traffic: messages, control, packed */
		if (what < 16)
			return peer_send_msg(p, 7001, dport + rnd() % 4, 0,
					     d, len, 2000);
		if (what < 18)
			return peer_send_ctrl(p, rnd() % 2 ? RDS_IB_FLAG_HB : 0);
		{
			const u8 *pd[4] = { d, d + 600, d + 1200, d + 1800 };
			u32 pl[4] = { rnd() % 500, rnd() % 500, rnd() % 500,
				      rnd() % 500 };

			return peer_send_packed(p, 7001, dport, 2 + rnd() % 3,
						pd, pl, 2000);
		}
	}
	/* a mutated frame */
	(*mutated)++;
	peer_hdr_fill(p, &h, p->tx_next++, len, 7001, dport + rnd() % 4,
		      rnd() % 4 ? 0 : (u8)rnd());
	dlen = len < PEER_FRAG ? len : PEER_FRAG;
	if (!rds_ib_credit_take(&p->cr, &g))
		return peer_poll(p, 100, false) < 0 ? -1 : 0;
	h.h_credit = g;
	switch (what % 6) {
	case 0:	/* a random bit of the header */
		((u8 *)&h)[rnd() % 30] ^= 1u << (rnd() % 8);
		break;
	case 1:	/* a random byte */
		((u8 *)&h)[rnd() % 48] = (u8)rnd();
		break;
	case 2:	/* the frame's length */
		dlen = rnd() % (2 * PEER_FRAG);
		break;
	case 3:	/* sequence numbers */
		h.h_sequence = cpu_to_be64(rnd() % 2 ? rnd() :
					   p->tx_next - rnd() % 8);
		h.h_flags |= rnd() % 2 ? RDS_FLAG_RETRANSMITTED : 0;
		break;
	case 4:	/* ACK and credit */
		h.h_ack = cpu_to_be64(rnd() % 2 ? p->theirs.hello.tx_first +
				      rnd() % 4 : rnd());
		h.h_credit = (u8)rnd();
		break;
	case 5:	/* the flags */
		h.h_flags = (u8)rnd();
		break;
	}
	h.h_csum = peer_csum(&h);
	if (rnd() % 8 == 0)
		h.h_csum = (u16)rnd();
	if (what % 6 != 2 && h.h_flags & RDS_IB_FLAG_CTRL && rnd() % 2)
		dlen = 0;
	return peer_send_frame(p, &h, d, dlen, false);
}

static int t_fuzz(void)
{
	unsigned long runs = 0, mutated = 0, resets = 0, conns = 0, pings = 0;
	u64 end;
	struct peer p;
	bool have = false;
	int fails = 0;

	rng = seed ? seed : 1;
	printf("fuzz: seed %llu, %d s\n", seed, secs);
	fflush(stdout);
	if (up(&witness, wtos, credits)) {
		check(false, "witness connection (TOS %d) up", wtos);
		return 1;
	}
	end = peer_now_ms() + (u64)secs * 1000;
	while (peer_now_ms() < end) {
		if (!have) {
			if (up(&p, tos, credits)) {
				if (++fails > 5) {
					check(false, "fuzz: connections keep failing");
					break;
				}
				peer_fini(&p);
				continue;
			}
			p.quiet = true;
			have = true;
			conns++;
		}
		runs++;
		peer_poll(&witness, 0, false);	/* answer its heartbeats */
		fuzz_one(&p, &mutated);
		if (runs % 8 == 0 || p.gone) {
			/* Does the module still talk on it? A ping to port
			 * 0 comes back as a pong from port 0.
			 */
			peer_send_drain(&p, 2000);
			peer_poll(&witness, 0, false);
			peer_poll(&p, 50, false);
			if (p.gone) {
				resets++;
				peer_fini(&p);
				have = false;
			}
			while (have && p.qn)
				peer_msg_free(&p.q[--p.qn]);
		}
		if (runs % 64 == 0) {
			if (!witness_ping()) {
				check(false, "fuzz: witness answers after %lu runs",
				      runs);
				break;
			}
			pings++;
		}
	}
	if (have)
		peer_fini(&p);
	check(witness_ping(), "fuzz: the witness answers at the end");
	check(conns > 1 && mutated > 0,
	      "fuzz: %lu runs, %lu mutated frames, %lu connections", runs,
	      mutated, conns);
	printf("fuzz: seed %llu runs %lu mutated %lu resets %lu connections %lu witness_pings %lu\n",
	       seed, runs, mutated, resets, conns, pings);
	peer_fini(&witness);
	return 0;
}

/* ---- rdma: one-sided ops both ways ------------------------------------ */

/* Host 1's side is tools/testing/selftests/peer_rdma_host.c; the two talk
 * in text messages (host 1's port -P, ours -P + 1) on TOS -q, while the
 * witness connection (TOS -w) answers pings between the cases.
 */
#define R_LEN		6000		/* host 1's region: its bytes */
#define R_SPACE		(3 * 4096)	/* our local buffer */
#define R_PBUF		(64 * 1024)	/* our region for host 1's ops */
#define R_WR_OFF	100		/* host 1's WRITE lands here, */
#define R_WR_LEN	7000		/* so many bytes */
#define R_RD_OFF	32778		/* host 1 READs from here */
#define R_RD_LEN	5000
#define R_GUARD		0x5a		/* our bytes around them */

/* A text message to host 1, acknowledged by its module (the library does
 * not resend: a message lost with the connection is gone).
 */
static int rsay(struct peer *p, const char *fmt, ...)
{
	char b[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	printf("# to host 1: %s\n", b);
	return peer_send_msg(p, dport + 1, dport, RDS_FLAG_ACK_REQUIRED, b,
			     strlen(b), 10000) ||
	       peer_send_drain(p, 10000) ||
	       wait_acked(p, p->tx_next - 1, 30000);
}

/* The next message of host 1 to our port within tmo_ms (the witness
 * kept answering meanwhile); its text, NUL-terminated, in txt.
 */
static int rnext(struct peer *p, struct peer_msg *m, char *txt, size_t n,
		 int tmo_ms)
{
	u64 end = peer_now_ms() + tmo_ms;

	while (peer_now_ms() < end) {
		peer_poll(&witness, 0, false);
		if (peer_recv_msg(p, m, 200)) {
			if (p->gone && !p->qn)
				return -1;
			continue;
		}
		if (m->dport != dport + 1) {
			peer_msg_free(m);
			continue;
		}
		snprintf(txt, n, "%.*s", (int)m->len, (const char *)m->data);
		printf("# from host 1: %s\n", txt);
		return 0;
	}
	return -1;
}

/* The next message must start with word: 0, or -1 (reported). */
static int rwant(struct peer *p, const char *word, char *txt, size_t n,
		 int tmo_ms)
{
	struct peer_msg m;

	if (rnext(p, &m, txt, n, tmo_ms)) {
		check(false, "host 1's \"%s\" arrived", word);
		return -1;
	}
	peer_msg_free(&m);
	if (strncmp(txt, word, strlen(word))) {
		check(false, "host 1 sent \"%s\", not \"%s\"", txt, word);
		return -1;
	}
	return 0;
}

/* Connect again as the same peer (our generation kept): both sequences
 * go on where they were.
 */
static int reup(struct peer *p)
{
	struct rds_ib_hs hs = p->mine;
	u32 mgen = p->theirs.hello.gen;
	u64 rx = p->rx_last + 1, tx = p->tx_next;

	peer_disconnect(p);
	p->mine = hs;
	p->mine.hello.peer_gen = mgen;
	p->mine.hello.rx_next = rx;
	p->mine.hello.tx_first = tx;
	peer_poll(&witness, 0, false);
	return peer_connect_hs(p, src, dst, 12);
}

static const char *wc_name(int st)
{
	return st < 0 ? "no completion" :
	       ibv_wc_status_str((enum ibv_wc_status)st);
}

/* One of our WRITEs on host 1's memory that must fail with a remote
 * access error (our queue pair and the module's fail with it); then we
 * connect again and the witness must still answer.
 */
static void rdeny(struct peer *p, struct ibv_mr **lmr, u8 *lbuf, u32 len,
		  u32 rkey, u64 addr, const char *what)
{
	int st;

	memset(lbuf, 0xee, len);
	st = peer_rdma(p, true, *lmr, lbuf, len, rkey, addr, 30000);
	check(st == IBV_WC_REM_ACCESS_ERR,
	      "%s: WRITE of %u bytes at %llu, key %08x: %s (want %s)", what,
	      len, (unsigned long long)addr, rkey, wc_name(st),
	      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	ibv_dereg_mr(*lmr);
	*lmr = NULL;
	check(!reup(p), "%s: the module took our new connection", what);
	*lmr = peer_reg_mr(p, lbuf, R_SPACE, PEER_NO_IOVA,
			   IBV_ACCESS_LOCAL_WRITE);
	check(*lmr, "%s: our buffer registered again", what);
	check(witness_ping(), "%s: the witness still answers", what);
}

/* Bytes [from, to) of b: n of them equal to want (idx < 0) or to
 * peer_pattern(idx, i - from).  The count of those that differ.
 */
static u32 rdiff(const u8 *b, u32 from, u32 to, int idx, u8 want)
{
	u32 i, bad = 0;

	for (i = from; i < to; i++)
		bad += b[i] != (idx < 0 ? want : peer_pattern(idx, i - from));
	return bad;
}

/* READ the len bytes of host 1's region back into lbuf: they must be the
 * pattern 201 our WRITE put there.
 */
static void rread_check(struct peer *p, struct ibv_mr *lmr, u8 *lbuf, u32 len,
			u32 rkey, u32 off, const char *what)
{
	int st;

	memset(lbuf, 0, len);
	st = peer_rdma(p, false, lmr, lbuf, len, rkey, off, 30000);
	check(st == IBV_WC_SUCCESS && !rdiff(lbuf, 0, len, 201, 0),
	      "%s: %s, %u bytes differ from what we wrote", what, wc_name(st),
	      rdiff(lbuf, 0, len, 201, 0));
}

static bool rkey_of(const struct peer_msg *m, u32 *key)
{
	return rds_exthdr_find(m->hdr.h_exthdr, RDS_EXTHDR_RDMA, key, 1);
}

/* Part 1: our ops on host 1's region (its cookie in a message). */
static void rdma_ours(struct peer *p)
{
	static u8 lbuf[R_SPACE];
	unsigned long long cookie;
	struct ibv_mr *lmr;
	char txt[200];
	u32 rkey, off, len;
	int st;

	if (rwant(p, "hello", txt, sizeof(txt), 120000) ||
	    rwant(p, "mr ", txt, sizeof(txt), 60000))
		return;
	if (sscanf(txt, "mr %llx %u", &cookie, &len) != 2 || len != R_LEN) {
		check(false, "host 1's cookie parsed (%s)", txt);
		return;
	}
	rkey = (u32)cookie;
	off = (u32)(cookie >> 32);
	printf("# host 1's region: key %08x, [%u, %u)\n", rkey, off, off + len);
	lmr = peer_reg_mr(p, lbuf, R_SPACE, PEER_NO_IOVA, IBV_ACCESS_LOCAL_WRITE);
	check(lmr, "our buffer registered");
	if (!lmr)
		return;
	/* The whole region: WRITE a pattern, READ it back. */
	fill(lbuf, 201, len);
	st = peer_rdma(p, true, lmr, lbuf, len, rkey, off, 30000);
	check(st == IBV_WC_SUCCESS, "WRITE of the whole region (%u bytes at %u): %s",
	      len, off, wc_name(st));
	rread_check(p, lmr, lbuf, len, rkey, off, "READ of the whole region");
	check(!rsay(p, "written"), "host 1 told: written");
	if (rwant(p, "checked", txt, sizeof(txt), 60000))
		goto out;
	/* Out of the region, by a little. */
	rdeny(p, &lmr, lbuf, 20, rkey, off + len - 10, "straddling the end");
	rdeny(p, &lmr, lbuf, 20, rkey, off - 10, "straddling the start");
	rdeny(p, &lmr, lbuf, 20, rkey, off + len, "just past the end");
	/* Keys never issued: another index, another key byte. */
	rdeny(p, &lmr, lbuf, 20, rkey ^ 0x00ffff00, off, "foreign key (index)");
	rdeny(p, &lmr, lbuf, 20, rkey ^ 0xff, off, "foreign key (key byte)");
	if (!lmr)
		goto out;
	/* The key survived five failed queue pairs; nothing changed. */
	rread_check(p, lmr, lbuf, len, rkey, off,
		    "after the refused ones: the key still reads the region, unchanged");
	check(!rsay(p, "denied"), "host 1 told: denied");
	if (rwant(p, "freed", txt, sizeof(txt), 60000))
		goto out;
	/* The key of a freed region. */
	rdeny(p, &lmr, lbuf, 20, rkey, off, "stale key (freed)");
	check(!rsay(p, "stale"), "host 1 told: stale");
out:
	if (lmr)
		ibv_dereg_mr(lmr);
}

/* Part 2: host 1's ops on our region (our cookie in a message). */
static void rdma_theirs(struct peer *p)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ;
	u8 *pbuf = aligned_alloc(4096, R_PBUF), *bbuf = aligned_alloc(4096, 4096);
	struct ibv_mr *pmr = NULL, *bmr;
	struct peer_msg m;
	char txt[200];
	u32 key = 0, stale, bad;
	u64 end;
	bool got;

	if (!pbuf || !bbuf)
		goto out;
	memset(pbuf, R_GUARD, R_PBUF);
	fill(pbuf + R_RD_OFF, 302, R_RD_LEN);
	pmr = peer_reg_mr(p, pbuf, R_PBUF, 0, acc);
	bmr = peer_reg_mr(p, bbuf, 4096, 0, acc);
	check(pmr && bmr, "our regions registered at iova 0");
	if (!pmr || !bmr)
		goto out;
	stale = bmr->rkey;
	ibv_dereg_mr(bmr);
	check(!peer_listen(p, src, PEER_RDS_PORT), "listening on %s:%d", src,
	      PEER_RDS_PORT);
	check(!rsay(p, "peer %x %x", pmr->rkey, stale), "host 1 told our cookies");
	/* (a) host 1's WRITE: its data is here when its message is; we
	 * hold our ACK until host 1 saw that its op has no status yet.
	 */
	p->no_ack = true;
	if (rnext(p, &m, txt, sizeof(txt), 120000)) {
		check(false, "host 1's \"write\" arrived");
		goto out;
	}
	got = rkey_of(&m, &key);
	bad = rdiff(pbuf, R_WR_OFF, R_WR_OFF + R_WR_LEN, 301, 0);
	check(!strcmp(txt, "write") && got && key == pmr->rkey,
	      "host 1's WRITE message carries RDS_EXTHDR_RDMA with our key (%s, key %08x, ours %08x)",
	      txt, key, pmr->rkey);
	peer_msg_free(&m);
	check(!bad, "the WRITE's %u bytes were in our memory when its message arrived (%u differ)",
	      R_WR_LEN, bad);
	bad = rdiff(pbuf, 0, R_WR_OFF, -1, R_GUARD) +
	      rdiff(pbuf, R_WR_OFF + R_WR_LEN, R_RD_OFF, -1, R_GUARD) +
	      rdiff(pbuf, R_RD_OFF + R_RD_LEN, R_PBUF, -1, R_GUARD);
	check(!bad, "nothing around it touched (%u bytes differ)", bad);
	check(!rsay(p, "holding"), "host 1 told: holding our ACK");
	if (rwant(p, "seen", txt, sizeof(txt), 120000))
		goto out;
	p->no_ack = false;
	/* (b) host 1's READ */
	if (rnext(p, &m, txt, sizeof(txt), 120000)) {
		check(false, "host 1's \"read\" arrived");
		goto out;
	}
	key = 0;
	got = rkey_of(&m, &key);
	check(!strcmp(txt, "read") && got && key == pmr->rkey,
	      "host 1's READ message carries RDS_EXTHDR_RDMA with our key (%s, key %08x)",
	      txt, key);
	peer_msg_free(&m);
	check(!rdiff(pbuf, R_RD_OFF, R_RD_OFF + R_RD_LEN, 302, 0) &&
	      !rdiff(pbuf, R_WR_OFF, R_WR_OFF + R_WR_LEN, 301, 0),
	      "the READ changed nothing here");
	/* (c) host 1's WRITE with the key of our freed region: our queue
	 * pair fails, its message never arrives; the module connects again
	 * to our listener and its next message arrives.
	 */
	end = peer_now_ms() + 120000;
	got = false;
	while (!p->gone && peer_now_ms() < end) {
		peer_poll(&witness, 0, false);
		peer_poll(p, 200, false);
		while (p->qn) {
			m = p->q[0];
			memmove(p->q, p->q + 1, --p->qn * sizeof(*p->q));
			got |= m.dport == dport + 1;
			printf("# from host 1: %.*s\n", (int)m.len,
			       (const char *)m.data);
			peer_msg_free(&m);
		}
	}
	check(p->gone && !got,
	      "host 1's op on our freed key broke the connection (%s), its message did not arrive",
	      p->gone_why ?: "still up");
	ibv_dereg_mr(pmr);
	pmr = NULL;
	{
		struct rds_ib_hs hs = p->mine;
		u32 mgen = p->theirs.hello.gen;
		u64 rx = p->rx_last + 1, tx = p->tx_next;
		int ok = -1;

		peer_disconnect(p);
		end = peer_now_ms() + 120000;
		while (ok && peer_now_ms() < end) {
			p->mine = hs;
			p->mine.hello.peer_gen = mgen;
			p->mine.hello.rx_next = rx;
			p->mine.hello.tx_first = tx;
			peer_poll(&witness, 0, false);
			ok = peer_accept(p, 1000);
		}
		check(!ok && p->theirs.hello.peer_gen == hs.hello.gen,
		      "the module connected to us again and knows us (gen %x)",
		      hs.hello.gen);
		if (ok)
			goto out;
	}
	if (rnext(p, &m, txt, sizeof(txt), 120000)) {
		check(false, "host 1's message after the failed op arrived");
		goto out;
	}
	peer_msg_free(&m);
	check(!strcmp(txt, "after"),
	      "the next message from host 1 is its plain one (\"%s\"), not the failed op's",
	      txt);
	check(witness_ping(), "after host 1's failed op: the witness answers");
	check(!rsay(p, "done"), "host 1 told: done");
out:
	if (pmr)
		ibv_dereg_mr(pmr);
	free(pbuf);
	free(bbuf);
}

static int t_rdma(void)
{
	struct peer p;

	if (up(&witness, wtos, credits)) {
		check(false, "witness connection (TOS %d) up", wtos);
		return 1;
	}
	check(witness_ping(), "witness connection (TOS %d) answers a ping", wtos);
	if (up(&p, tos, credits)) {
		check(false, "connected (TOS %d)", tos);
		peer_fini(&witness);
		return 1;
	}
	check(true, "connected (TOS %d)", tos);
	if (!sync_with(&p, "rdma.up")) {
		check(false, "host 1 kept step (barrier rdma.up)");
		goto out;
	}
	rdma_ours(&p);
	if (!p.gone)
		rdma_theirs(&p);
	check(witness_ping(), "at the end: the witness answers");
	check(!p.st.violations && !witness.st.violations,
	      "the module kept every credit rule");
	stats(&p, "rdma");
	peer_poll(&p, 200, false);
out:
	peer_fini(&p);
	peer_fini(&witness);
	return 0;
}

static int parse_sizes(const char *s)
{
	char *e;

	nsizes = 0;
	while (*s && nsizes < 128) {
		sizes[nsizes++] = strtoul(s, &e, 0);
		if (*e != ',' && *e)
			return -1;
		s = *e ? e + 1 : e;
	}
	return nsizes ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *test = NULL;
	int c, r;

	parse_sizes("1");
	seed = (unsigned long long)time(NULL);
	while ((c = getopt(argc, argv, "s:d:t:q:w:c:n:k:z:S:T:P:W")) != -1) {
		switch (c) {
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 't': test = optarg; break;
		case 'q': tos = atoi(optarg); break;
		case 'w': wtos = atoi(optarg); break;
		case 'c': credits = atoi(optarg); break;
		case 'n': count = atoi(optarg); break;
		case 'k': keep = atoi(optarg); break;
		case 'z': if (parse_sizes(optarg)) goto usage; break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'T': secs = atoi(optarg); break;
		case 'P': dport = atoi(optarg); break;
		case 'W': withhold = true; break;
		default: goto usage;
		}
	}
	if (!src || !dst || !test || credits < 2 || credits > 255)
		goto usage;
	signal(SIGPIPE, SIG_IGN);
	srand((unsigned int)seed);
	if (!strcmp(test, "rx"))
		r = t_rx();
	else if (!strcmp(test, "tx"))
		r = t_tx();
	else if (!strcmp(test, "retrans"))
		r = t_retrans();
	else if (!strcmp(test, "cong"))
		r = t_cong();
	else if (!strcmp(test, "active"))
		r = t_active();
	else if (!strcmp(test, "hostile"))
		r = t_hostile();
	else if (!strcmp(test, "fuzz"))
		r = t_fuzz();
	else if (!strcmp(test, "rdma"))
		r = t_rdma();
	else if (!strcmp(test, "ping0"))
		r = t_ping0();
	else
		goto usage;
	if (r == 2)
		goto usage;
	printf("result: %s checks=%d failed=%d\n",
	       !r && !nfail ? "pass" : "fail", nchecks, nfail);
	return !r && !nfail ? 0 : 1;
usage:
	fprintf(stderr, "usage: %s -s SRC -d DST -t rx|tx|retrans|active|cong|hostile|fuzz|rdma|ping0 "
		"[-q TOS] [-w WTOS] [-c CREDITS] [-n N] [-k K] [-z SIZES] "
		"[-S SEED] [-T SECS] [-P PORT] [-W]\n", argv[0]);
	return 2;
}
