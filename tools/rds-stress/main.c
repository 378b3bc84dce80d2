// SPDX-License-Identifier: GPL-2.0
/*
 * rds-stress: the two sides of a run.
 *
 * The active side (-s peer) connects to the passive side's control port
 * and sends the run's options; both sides open one RDS socket per task,
 * the passive side answers READY, the active side GO, and the tasks run.
 * The active side keeps time and sends STOP; each side stops issuing
 * requests, and once all of its own requests are acked it sends DRAINED
 * with how many requests each of its tasks sent to each remote task.  When
 * both sides are drained every request has been answered; each side then
 * checks that it received exactly what the peer says it sent, and the two
 * exchange their RESULT.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "rds_stress.h"

#define RESULT_TIMEOUT_MS	20000

static void on_signal(int sig)
{
	(void)sig;
	stress_signals++;
}

static int open_tasks(struct run *r)
{
	unsigned int i;

	r->tasks = calloc(r->o.tasks, sizeof(*r->tasks));
	if (!r->tasks) {
		fprintf(stderr, "rds-stress: out of memory\n");
		return -1;
	}
	for (i = 0; i < r->o.tasks; i++) {
		r->tasks[i].idx = i;
		r->tasks[i].fd = -1;
		r->tasks[i].run = r;
	}
	for (i = 0; i < r->o.tasks; i++)
		if (task_open(r, &r->tasks[i]))
			return -1;
	/* RDMA_MAP needs a connection: the first REQ probes it. */
	if (r->o.rdma_bytes && r->o.rdma_use_get_mr &&
	    rdma_probe(r, &r->tasks[0]) <= 0)
		return -1;
	return 0;
}

static int start_tasks(struct run *r)
{
	sigset_t all, old;
	unsigned int i;
	int rc = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < r->o.tasks && !rc; i++)
		rc = pthread_create(&r->tasks[i].thread, NULL, task_main,
				    &r->tasks[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		fprintf(stderr, "rds-stress: cannot start task %u: %s\n", i - 1,
			strerror(rc));
		r->o.tasks = i - 1;	/* join only those started */
		__atomic_store_n(&r->failed, 1, __ATOMIC_RELEASE);
		return -1;
	}
	return 0;
}

static void join_tasks(struct run *r)
{
	unsigned int i;

	__atomic_store_n(&r->finish, 1, __ATOMIC_RELEASE);
	for (i = 0; i < r->o.tasks; i++)
		pthread_join(r->tasks[i].thread, NULL);
}

static int all_drained(struct run *r)
{
	unsigned int i;

	for (i = 0; i < r->o.tasks; i++)
		if (!__atomic_load_n(&r->tasks[i].drained, __ATOMIC_ACQUIRE))
			return 0;
	return 1;
}

/*
 * "n c[0][0] c[0][1] ...": REQs our task i sent on each of its flows
 * (socket k to the peer's task j: flow k * n + j).
 */
static char *drained_text(struct run *r)
{
	unsigned int n = r->o.tasks, nf = n * r->o.sockets, i, f;
	size_t len = 16 + (size_t)n * nf * 21, o;
	char *b = malloc(len);

	if (!b)
		return NULL;
	o = snprintf(b, len, "%u", n);
	for (i = 0; i < n; i++)
		for (f = 0; f < nf; f++)
			o += snprintf(b + o, len - o, " %llu",
				      (unsigned long long)
				      (r->tasks[i].flows[f].next_tx_seq - 1));
	return b;
}

/* "active.1->passive.2", with the socket when there are several. */
static void flow_text(const struct run *r, char *b, size_t len,
		      int from_here, unsigned int i, unsigned int f)
{
	const char *a = r->o.active ? "active" : "passive";
	const char *p = r->o.active ? "passive" : "active";
	unsigned int n = r->o.tasks, k = f / n, j = f % n;
	int l = snprintf(b, len, "%s.%u->%s.%u", from_here ? a : p, i,
			 from_here ? p : a, j);

	if (r->o.sockets > 1 && l > 0 && (size_t)l < len)
		snprintf(b + l, len - l, " (socket %u)", k);
}

/* After both sides drained and the tasks stopped: nothing missing? */
static void check_counts(struct run *r, const char *peer)
{
	unsigned int n = r->o.tasks, nf = n * r->o.sockets, i, j, f, pn;
	const char *p = peer;
	char fl[96];
	int k;

	if (sscanf(p, "%u%n", &pn, &k) != 1 || pn != n) {
		run_fail(r, "peer's DRAINED report is malformed");
		return;
	}
	p += k;
	for (i = 0; i < n; i++)
		for (f = 0; f < nf; f++) {
			unsigned long long sent, got;
			struct flow *fw;

			/* the peer's task i, socket f / n, to our task j */
			j = f % n;
			fw = &r->tasks[j].flows[f - j + i];
			if (sscanf(p, "%llu%n", &sent, &k) != 1) {
				run_fail(r, "peer's DRAINED report is malformed");
				return;
			}
			p += k;
			got = fw->next_rx_seq - 1;
			flow_text(r, fl, sizeof(fl), 0, i, f);
			if (got != sent) {
				run_fail(r, "flow %s: the peer sent %llu requests, %llu arrived (%lld missing)",
					 fl, sent, got, (long long)(sent - got));
				return;
			}
			if (fw->ackq_len) {
				run_fail(r, "flow %s: %u acks were never sent",
					 fl, fw->ackq_len);
				return;
			}
		}
}

static void report_missing(struct run *r)
{
	unsigned int i, j;
	char fl[96];

	for (i = 0; i < r->o.tasks; i++)
		for (j = 0; j < r->o.tasks * r->o.sockets; j++) {
			struct flow *f = &r->tasks[i].flows[j];

			if (!f->outstanding)
				continue;
			flow_text(r, fl, sizeof(fl), 1, i, j);
			run_fail(r, "%us after STOP, flow %s still has %u requests unacked (seq %llu..%llu)",
				 r->o.drain_s, fl, f->outstanding,
				 (unsigned long long)f->next_ack_seq,
				 (unsigned long long)f->next_tx_seq - 1);
			return;
		}
	run_fail(r, "%us after STOP, the peer has not drained",
		 r->o.drain_s);
}

static int ctl_say(struct run *r, int fd, int type, const char *text)
{
	if (ctl_send(fd, type, text, text ? strlen(text) : 0)) {
		run_fail(r, "control connection to the peer lost (sending %s): %s",
			 ctl_name(type), strerror(errno));
		return -1;
	}
	return 0;
}

/* The run proper, on both sides.  Returns the exit status. */
static int run_loop(struct run *r, int cfd)
{
	uint64_t t0 = now_ns(), last_tick = t0, stop_ns = 0, end_ns;
	uint64_t stop_at = r->o.active && r->o.time_s ?
			   t0 + r->o.time_s * 1000000000ULL : 0;
	char *peer_drained = NULL, *buf = NULL;
	int sent_drained = 0, peer_failed = 0, handled_sig = 0, type, st;
	uint32_t len;

	if (start_tasks(r))
		goto out;
	for (;;) {
		uint64_t now = now_ns(), next = last_tick + 1000000000ULL;
		struct pollfd p = { .fd = cfd, .events = POLLIN };
		int ms = next > now ? (int)((next - now) / 1000000) + 1 : 0;

		if (ms > 100)
			ms = 100;
		if (poll(&p, 1, ms) < 0 && errno != EINTR) {
			run_fail(r, "poll: %s", strerror(errno));
			break;
		}
		if (p.revents) {
			type = ctl_recv(cfd, &buf, &len);
			if (type <= 0) {
				run_fail(r, "control connection to the peer lost%s%s",
					 type < 0 ? ": " : " (the peer exited)",
					 type < 0 ? strerror(errno) : "");
				break;
			}
			if (type == CTL_STOP) {
				if (!r->stopping) {
					stop_ns = now_ns();
					__atomic_store_n(&r->stopping, 1,
							 __ATOMIC_RELEASE);
				}
			} else if (type == CTL_DRAINED) {
				peer_drained = buf;
				buf = NULL;
			} else if (type == CTL_ABORT) {
				run_fail(r, "the peer failed: %s", buf);
				peer_failed = 1;
			} else {
				run_fail(r, "control protocol: unexpected %s from the peer",
					 ctl_name(type));
			}
			free(buf);
			buf = NULL;
		}
		if (r->failed)
			break;
		now = now_ns();
		if (stress_signals > 1) {
			run_fail(r, "interrupted twice: giving up");
			break;
		}
		if ((stress_signals && !handled_sig) ||
		    (stop_at && now >= stop_at && !r->stopping)) {
			handled_sig = stress_signals != 0;
			if (!r->stopping) {
				stop_ns = now;
				__atomic_store_n(&r->stopping, 1,
						 __ATOMIC_RELEASE);
				if (ctl_say(r, cfd, CTL_STOP, NULL))
					break;
			}
		}
		if (now >= last_tick + 1000000000ULL) {
			report_tick(r, (now - last_tick) / 1e9);
			last_tick = now;
		}
		if (r->stopping && !sent_drained && all_drained(r)) {
			char *t = drained_text(r);

			if (!t) {
				run_fail(r, "out of memory");
				break;
			}
			st = ctl_say(r, cfd, CTL_DRAINED, t);
			free(t);
			if (st)
				break;
			sent_drained = 1;
		}
		if (sent_drained && peer_drained)
			break;
		if (r->stopping &&
		    now - stop_ns > r->o.drain_s * 1000000000ULL) {
			report_missing(r);
			break;
		}
	}
out:
	end_ns = now_ns();
	join_tasks(r);
	if (!r->failed && peer_drained)
		check_counts(r, peer_drained);

	/* Exchange the verdicts (the peer that failed has said so). */
	if (!peer_failed) {
		if (r->failed) {
			ctl_send(cfd, CTL_ABORT, r->fail_msg, strlen(r->fail_msg));
		} else if (!ctl_say(r, cfd, CTL_RESULT, "ok")) {
			struct pollfd p = { .fd = cfd, .events = POLLIN };

			type = poll(&p, 1, RESULT_TIMEOUT_MS) <= 0 ? -2 :
			       ctl_recv(cfd, &buf, &len);
			if (type == -2)
				run_fail(r, "the peer sent no result");
			else if (type <= 0)
				run_fail(r, "control connection to the peer lost before its result");
			else if (type == CTL_ABORT)
				run_fail(r, "the peer failed: %s", buf);
			else if (type != CTL_RESULT || strcmp(buf, "ok"))
				run_fail(r, "the peer's result: %s %s",
					 ctl_name(type), buf);
			free(buf);
		}
	}
	free(peer_drained);
	report_final(r, (end_ns - t0) / 1e9, r->failed ? "fail" : "ok");
	return r->failed ? EXIT_FAIL : EXIT_OK;
}

/* What a run of odd shapes needs to be replayed, before the first line. */
static void announce(const struct run *r)
{
	if (r->o.size_mix)
		printf("size mix seed %llu (--size-mix %llu replays the sizes)\n",
		       (unsigned long long)r->o.mix_seed,
		       (unsigned long long)r->o.mix_seed);
	if (r->o.slow_ms && !r->o.active)
		printf("slow reader: nothing read for %u ms of every second\n",
		       r->o.slow_ms);
}

/* --show-sizes N: the first N request sizes of flow active.0->passive.0. */
static int show_sizes(const struct options *o)
{
	uint32_t i;

	printf("sizes of REQ 1..%u of flow active.0->passive.0:", o->show_sizes);
	for (i = 0; i < o->show_sizes; i++)
		printf(" %u", req_len(o, 1, 0, 0, 0, i + 1));
	printf("\n");
	return EXIT_OK;
}

static int local_addr_of(int fd, struct rs_addr *a)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &l) < 0)
		return -1;
	if (addr_of_sockaddr((struct sockaddr *)&ss, a, NULL)) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	return 0;
}

static int wait_msg(struct run *r, int fd, int want, char **buf)
{
	uint32_t len;
	int type = ctl_recv(fd, buf, &len);

	if (type == want)
		return 0;
	if (type == CTL_ABORT)
		fprintf(stderr, "rds-stress: the peer failed: %s\n", *buf);
	else if (type <= 0)
		fprintf(stderr,
			"rds-stress: control connection to the peer lost while waiting for %s%s%s\n",
			ctl_name(want), type < 0 ? ": " : "",
			type < 0 ? strerror(errno) : "");
	else
		fprintf(stderr,
			"rds-stress: control protocol: expected %s, got %s\n",
			ctl_name(want), ctl_name(type));
	free(*buf);
	*buf = NULL;
	(void)r;
	return -1;
}

static int active_side(struct run *r)
{
	char text[4096], *buf = NULL;
	int fd, opened = 0;

	/* With -r, find out about the local RDS before bothering the peer. */
	if (r->o.have_laddr) {
		r->local = r->o.laddr;
		r->remote = r->o.peer;
		if (open_tasks(r))
			return EXIT_FAIL;
		opened = 1;
	}
	fd = ctl_connect(&r->o);
	if (fd < 0)
		return EXIT_FAIL;
	if (!opened) {
		if (local_addr_of(fd, &r->local)) {
			fprintf(stderr, "rds-stress: getsockname: %s\n",
				strerror(errno));
			return EXIT_FAIL;
		}
		r->remote = r->o.peer;
		if (open_tasks(r)) {
			ctl_send(fd, CTL_ABORT, "the active side could not set up",
				 32);
			return EXIT_FAIL;
		}
	}
	if (options_to_text(&r->o, &r->local, text, sizeof(text)) < 0 ||
	    ctl_send(fd, CTL_OPTS, text, strlen(text))) {
		fprintf(stderr, "rds-stress: cannot send the options to the peer: %s\n",
			strerror(errno));
		return EXIT_FAIL;
	}
	if (wait_msg(r, fd, CTL_READY, &buf))
		return EXIT_FAIL;
	free(buf);
	if (ctl_send(fd, CTL_GO, NULL, 0)) {
		fprintf(stderr, "rds-stress: control connection to the peer lost\n");
		return EXIT_FAIL;
	}
	if (r->o.show_params)
		options_show(&r->o, stdout);
	announce(r);
	report_header(r);
	return run_loop(r, fd);
}

static int passive_side(struct run *r)
{
	struct options mine = r->o;
	char *buf = NULL;
	uint32_t len;
	int lfd, fd, type;

	lfd = ctl_listen(&r->o);
	if (lfd < 0)
		return EXIT_FAIL;
	fd = ctl_accept(lfd);
	close(lfd);
	if (fd < 0)
		return EXIT_FAIL;
	type = ctl_recv(fd, &buf, &len);
	if (type != CTL_OPTS) {
		fprintf(stderr, "rds-stress: the peer sent no options (%s)\n",
			type <= 0 ? "connection closed" : ctl_name(type));
		return EXIT_FAIL;
	}
	if (options_from_text(&r->o, &r->remote, buf)) {
		fprintf(stderr, "rds-stress: the peer's options are invalid:\n%s\n",
			buf);
		ctl_send(fd, CTL_ABORT, "invalid options", 15);
		return EXIT_FAIL;
	}
	free(buf);
	buf = NULL;
	/* What only concerns this side's output stays ours. */
	r->o.active = 0;
	r->o.summary_only = mine.summary_only;
	r->o.show_params = mine.show_params;
	r->o.show_perfdata = mine.show_perfdata;
	r->o.show_histogram = mine.show_histogram;
	r->o.json = mine.json;
	if (mine.have_laddr)
		r->local = mine.laddr;
	else if (local_addr_of(fd, &r->local)) {
		fprintf(stderr, "rds-stress: getsockname: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	/* The peer's link-local address is reached through our interface. */
	if (addr_linklocal(&r->remote))
		r->remote.scope = r->local.scope;
	if (r->remote.family != r->local.family) {
		fprintf(stderr, "rds-stress: the peer's RDS address and ours are of different families\n");
		ctl_send(fd, CTL_ABORT, "address families differ", 23);
		return EXIT_FAIL;
	}
	if (open_tasks(r)) {
		ctl_send(fd, CTL_ABORT, "the passive side could not set up its RDS sockets (see its output)",
			 66);
		return EXIT_FAIL;
	}
	if (ctl_send(fd, CTL_READY, NULL, 0) || wait_msg(r, fd, CTL_GO, &buf)) {
		fprintf(stderr, "rds-stress: the active side went away before GO\n");
		return EXIT_FAIL;
	}
	free(buf);
	if (r->o.show_params)
		options_show(&r->o, stdout);
	announce(r);
	report_header(r);
	return run_loop(r, fd);
}

static int setup_corruption(struct run *r)
{
	const char *m = getenv("RDS_STRESS_CORRUPT");
	const char *s = getenv("RDS_STRESS_CORRUPT_SEQ");

	if (!m || !*m)
		return 0;
	if (strcmp(m, "byte") && strcmp(m, "drop") && strcmp(m, "dup") &&
	    strcmp(m, "reorder") && strcmp(m, "rdma-read") &&
	    strcmp(m, "rdma-write")) {
		fprintf(stderr,
			"rds-stress: RDS_STRESS_CORRUPT=%s: byte, drop, dup, reorder, rdma-read or rdma-write\n",
			m);
		return -1;
	}
	if (!strncmp(m, "rdma-", 5) != !!r->o.rdma_bytes) {
		fprintf(stderr,
			"rds-stress: RDS_STRESS_CORRUPT=%s: %s\n", m,
			r->o.rdma_bytes ? "with -D, only rdma-read or rdma-write" :
			"rdma-read and rdma-write need -D");
		return -1;
	}
	r->corrupt.mode = m;
	r->corrupt.seq = s ? strtoull(s, NULL, 0) : 10;
	if (!r->corrupt.seq)
		r->corrupt.seq = 1;
	fprintf(stderr,
		"rds-stress: TEST HOOK RDS_STRESS_CORRUPT=%s armed (seq %llu of task 0 to task 0)\n",
		m, (unsigned long long)r->corrupt.seq);
	return 0;
}

int main(int argc, char **argv)
{
	static struct run run;
	struct run *r = &run;
	struct sigaction sa;
	int rc;

	rc = options_parse(&r->o, argc, argv);
	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	if (r->o.size_mix == 2) {	/* --size-mix random */
		if (getrandom(&r->o.mix_seed, sizeof(r->o.mix_seed), 0) !=
		    sizeof(r->o.mix_seed))
			r->o.mix_seed = now_ns();
		r->o.mix_seed >>= 1;	/* fits a signed parser too */
		r->o.size_mix = 1;
	}
	if (r->o.show_sizes)
		return show_sizes(&r->o);
	if (setup_corruption(r))
		return EXIT_USAGE;
	pthread_mutex_init(&r->lock, NULL);
	if (getrandom(&r->o.run_id, sizeof(r->o.run_id), 0) !=
	    sizeof(r->o.run_id))
		r->o.run_id = now_ns() ^ ((uint64_t)getpid() << 32);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	return r->o.active ? active_side(r) : passive_side(r);
}
