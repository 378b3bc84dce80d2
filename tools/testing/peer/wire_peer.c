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
 * SRC and DST: IPv4, or (the ml* tests: the kernel's IPv6 layout, port
 * 16385) IPv6 addresses, a link-local one with its %scope.
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
 *   ackahead receive -c credits' worth of host 1's -n messages, withhold
 *            the refills (the module keeps the rest queued, never sent),
 *            then ACK the first one not sent whole: the module must
 *            reset the connection (a bad frame), connect to us again
 *            and send all -n, the ones sent before flagged RETRANSMITTED
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
 *   mlrx, mltx, mlaccept, mlcong, mlhostile
 *            the same concerns toward the module's side of the kernel's
 *            RDS protocol, the peer speaking it as rds_rdma does (version
 *            -V 3.1 or 4.1): see wire_ml.c and wire_mlhostile.c
 *
 * The tests are in wire_conform.c (rx, tx, retrans, cong, ping0),
 * wire_hostile.c (hostile, active, ackahead), wire_fuzz.c, wire_rdma.c,
 * wire_ml.c and wire_mlhostile.c; what they share is declared in
 * wire_peer.h.
 *
 * Output: "# ..." lines, "ok N NAME" / "not ok N NAME" per check and a
 * last line "result: pass|fail key=value ..."; exit 0 only on pass.
 */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wire_peer.h"

const char *src, *dst;
int tos = 2, wtos = 5, count = 100, keep = 8, secs = 30, dport = 7002;
u32 credits = 16;
u16 mlver = RDS_IB_MLHS_3_1;
bool withhold;
unsigned long long seed;
u32 sizes[128];
unsigned int nsizes;
struct peer witness;
static int nchecks, nfail;

void check(bool ok, const char *fmt, ...)
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
void known(bool ok, const char *bug, const char *what)
{
	nchecks++;
	if (ok)
		printf("ok %d %s\n", nchecks, what);
	else
		printf("not ok %d %s # TODO module bug: %s\n", nchecks, what, bug);
	fflush(stdout);
}

u32 gen_new(void)
{
	u32 g = (u32)(peer_now_ms() * 2654435761u) ^ (u32)getpid();

	return g ? g : 1;
}

void stats(struct peer *p, const char *what)
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

int up(struct peer *p, u8 t, u32 cr)
{
	if (peer_init(p, cr))
		return -1;
	peer_hs_default(&p->mine, gen_new(), cr, t);
	return peer_connect_hs(p, src, dst, 12);
}

/* With our refills withheld, the module may send exactly our grant, then
 * must wait: both checked (the absence with a bounded wait: 2 s is 500
 * ticks, and the module has frames queued).
 */
void withheld_grant_used(struct peer *p)
{
	u64 end = peer_deadline(180000);

	while (p->st.data_frames < credits && peer_now_ms() < end)
		if (peer_poll(p, 1000, false) < 0)
			break;
	check(p->st.data_frames == credits,
	      "withheld: the module used all %u credits (%llu frames)",
	      credits, (unsigned long long)p->st.data_frames);
	peer_poll(p, 2000, false);
	check(p->st.data_frames == credits,
	      "withheld: no data frame beyond the grant in 2 s (%llu)",
	      (unsigned long long)p->st.data_frames);
}

bool pattern_ok(const struct peer_msg *m, u32 idx, u32 len)
{
	u32 i;

	if (m->len != len)
		return false;
	for (i = 0; i < len; i++)
		if (m->data[i] != peer_pattern(idx, i))
			return false;
	return true;
}

void fill(u8 *b, u32 idx, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		b[i] = peer_pattern(idx, i);
}

int wait_acked(struct peer *p, u64 seq, int tmo_ms)
{
	u64 end = peer_deadline(tmo_ms);

	while (!p->ack_seen_valid || rds_seq_before(p->ack_seen, seq)) {
		if (p->gone || peer_now_ms() >= end)
			return -1;
		peer_poll(p, 100, false);
	}
	return 0;
}

/* A barrier with host 1 (tools/testing/selftests/barrier), in a VM test,
 * while p (and the witness, if up) keeps answering the module (its
 * heartbeat ends a connection silent for 5 intervals, and host 1 may take
 * that long under load).
 */
bool sync_with(struct peer *p, const char *name)
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

/* A ping on p (in its protocol): the module answers from port 0. */
bool ping_on(struct peer *p)
{
	static u16 sport = 40000;
	struct peer_msg m;
	u64 end = peer_deadline(20000);

	sport++;
	if (p->ml ? peer_ml_send_msg(p, sport, 0, 0, "ping", 4) ||
		    peer_send_drain(p, 10000) :
		    peer_send_msg(p, sport, 0, 0, "ping", 4, 10000))
		return false;
	while (peer_now_ms() < end) {
		if (peer_recv_msg(p, &m, 1000))
			continue;
		if (!m.sport && m.dport == sport) {
			peer_msg_free(&m);
			return true;
		}
		peer_msg_free(&m);
	}
	return false;
}

bool witness_ping(void)
{
	return ping_on(&witness);
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
	while ((c = getopt(argc, argv, "s:d:t:q:w:c:n:k:z:S:T:P:V:W")) != -1) {
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
		case 'V':
			if (!strcmp(optarg, "3.1"))
				mlver = RDS_IB_MLHS_3_1;
			else if (!strcmp(optarg, "4.1"))
				mlver = RDS_IB_MLHS_4_1;
			else
				goto usage;
			break;
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
	else if (!strcmp(test, "ackahead"))
		r = t_ackahead();
	else if (!strcmp(test, "hostile"))
		r = t_hostile();
	else if (!strcmp(test, "fuzz"))
		r = t_fuzz();
	else if (!strcmp(test, "rdma"))
		r = t_rdma();
	else if (!strcmp(test, "ping0"))
		r = t_ping0();
	else if (!strcmp(test, "mlrx"))
		r = t_mlrx();
	else if (!strcmp(test, "mltx"))
		r = t_mltx();
	else if (!strcmp(test, "mlaccept"))
		r = t_mlaccept();
	else if (!strcmp(test, "mlcong"))
		r = t_mlcong();
	else if (!strcmp(test, "mlhostile"))
		r = t_mlhostile();
	else if (!strcmp(test, "mlforge"))
		r = t_mlforge();
	else
		goto usage;
	if (r == 2)
		goto usage;
	printf("result: %s checks=%d failed=%d\n",
	       !r && !nfail ? "pass" : "fail", nchecks, nfail);
	return !r && !nfail ? 0 : 1;
usage:
	fprintf(stderr, "usage: %s -s SRC -d DST -t rx|tx|retrans|active|ackahead|cong|hostile|fuzz|rdma|ping0|"
		"mlrx|mltx|mlaccept|mlcong|mlhostile|mlforge "
		"[-q TOS] [-w WTOS] [-c CREDITS] [-n N] [-k K] [-z SIZES] "
		"[-S SEED] [-T SECS] [-P PORT] [-V 3.1|4.1] [-W]\n", argv[0]);
	return 2;
}
