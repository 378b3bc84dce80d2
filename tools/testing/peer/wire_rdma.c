// SPDX-License-Identifier: GPL-2.0
/*
 * wire_peer's tests of one-sided ops both ways (peer_rdma.sh).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "wire_peer.h"
#include "../../../net/exthdr.h"

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
	u64 end = peer_deadline(tmo_ms);

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
	p->accept_tos = tos;
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
	end = peer_deadline(120000);
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
		end = peer_deadline(120000);
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

int t_rdma(void)
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
