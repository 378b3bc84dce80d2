// SPDX-License-Identifier: GPL-2.0
/*
 * Output: the classic per-second line, the (average) line, the RTT
 * histogram and the JSON summary.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "rds_stress.h"

static const char header[] =
	"tsks   tx/s   rx/s  tx+rx K/s    mbi K/s    mbo K/s tx us/c   rtt us cpu %";

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

struct snap {
	uint64_t tx_req, rx_req, tx_ack, rx_ack, tx_bytes, rx_bytes;
	uint64_t send_calls, send_ns, rtt_n, rtt_ns;
	uint64_t eagain, enobufs, enomem, cong_updates, cong_timeouts;
	uint64_t mbi, mbo, rdma_ops, rdma_eagain, rdma_getmr_eagain;
	uint64_t rdma_dropped, acks_overtaking;
	uint64_t rx_zero, rx_short, rx_max, tx_max, slow_pauses;
	uint64_t cpu_us;
	unsigned int live;
};

static struct snap last;

static uint64_t cpu_us(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void take(const struct run *r, struct snap *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < r->o.tasks; i++) {
		const struct stats *st = &r->tasks[i].st;

		s->tx_req += LD(st->tx_req);
		s->rx_req += LD(st->rx_req);
		s->tx_ack += LD(st->tx_ack);
		s->rx_ack += LD(st->rx_ack);
		s->tx_bytes += LD(st->tx_bytes);
		s->rx_bytes += LD(st->rx_bytes);
		s->send_calls += LD(st->send_calls);
		s->send_ns += LD(st->send_ns);
		s->rtt_n += LD(st->rtt_n);
		s->rtt_ns += LD(st->rtt_ns);
		s->eagain += LD(st->eagain);
		s->enobufs += LD(st->enobufs);
		s->enomem += LD(st->enomem);
		s->cong_updates += LD(st->cong_updates);
		s->cong_timeouts += LD(st->cong_timeouts);
		s->mbi += LD(st->mbi);
		s->mbo += LD(st->mbo);
		s->rdma_ops += LD(st->rdma_ops);
		s->rdma_eagain += LD(st->rdma_eagain);
		s->rdma_getmr_eagain += LD(st->rdma_getmr_eagain);
		s->rdma_dropped += LD(st->rdma_dropped);
		s->acks_overtaking += LD(st->acks_overtaking);
		s->rx_zero += LD(st->rx_zero);
		s->rx_short += LD(st->rx_short);
		s->slow_pauses += LD(st->slow_pauses);
		if (LD(st->rx_max) > s->rx_max)
			s->rx_max = LD(st->rx_max);
		if (LD(st->tx_max) > s->tx_max)
			s->tx_max = LD(st->tx_max);
		if (!__atomic_load_n(&r->tasks[i].done, __ATOMIC_RELAXED))
			s->live++;
	}
	s->cpu_us = cpu_us();
}

static void line(const struct run *r, const struct snap *a,
		 const struct snap *b, double secs, const char *suffix)
{
	double tx = (b->tx_req - a->tx_req) / secs;
	double rx = (b->rx_req - a->rx_req) / secs;
	double kb = (b->tx_bytes - a->tx_bytes + b->rx_bytes - a->rx_bytes) /
		    1024.0 / secs;
	uint64_t calls = b->send_calls - a->send_calls;
	uint64_t rtts = b->rtt_n - a->rtt_n;
	double usc = calls ? (b->send_ns - a->send_ns) / 1000.0 / calls : 0;
	double rtt = rtts ? (b->rtt_ns - a->rtt_ns) / 1000.0 / rtts : 0;
	double cpu = (b->cpu_us - a->cpu_us) / 10000.0 / secs;
	double mbi = (b->mbi - a->mbi) / 1024.0 / secs;
	double mbo = (b->mbo - a->mbo) / 1024.0 / secs;

	if (r->o.show_perfdata)
		printf("perfdata:%u,%lu,%lu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f%s\n",
		       b->live, (unsigned long)tx, (unsigned long)rx, kb, mbi,
		       mbo, usc, rtt, cpu, *suffix ? ",average" : "");
	else
		printf("%4u %6lu %6lu %10.2f %10.2f %10.2f %7.2f %8.2f %5.2f%s\n",
		       b->live, (unsigned long)tx, (unsigned long)rx, kb, mbi,
		       mbo, usc, rtt, cpu, suffix);
	fflush(stdout);
}

void report_header(const struct run *r)
{
	take(r, &last);
	if (r->o.show_perfdata)
		printf("perfdata:tsks,tx/s,rx/s,tx+rx K/s,mbi K/s,mbo K/s,tx us/c,rtt us,cpu %%\n");
	else
		printf("%s\n", header);
	fflush(stdout);
}

void report_tick(struct run *r, double secs)
{
	struct snap now;

	take(r, &now);
	if (!r->o.summary_only && secs > 0)
		line(r, &last, &now, secs, "");
	last = now;
}

/* Log-linear buckets: 16 per power of two above 16 ns. */
static unsigned int bucket(uint64_t v)
{
	unsigned int msb;

	if (v < 16)
		return (unsigned int)v;
	msb = 63 - __builtin_clzll(v);
	return (msb - 3) * 16 + ((v >> (msb - 4)) & 15);
}

static uint64_t bucket_low(unsigned int b)
{
	unsigned int msb;

	if (b < 16)
		return b;
	msb = b / 16 + 3;
	return (uint64_t)(16 + b % 16) << (msb - 4);
}

void hist_add(struct stats *st, uint64_t ns)
{
	unsigned int b = bucket(ns);

	if (b >= HIST_FINE)
		b = HIST_FINE - 1;
	st->hist[b]++;
}

static double pct_us(const uint64_t *h, uint64_t n, double p)
{
	uint64_t want = (uint64_t)(p * n + 0.999999), seen = 0;
	unsigned int b;

	if (!n)
		return 0;
	if (!want)
		want = 1;
	for (b = 0; b < HIST_FINE; b++) {
		seen += h[b];
		if (seen >= want)
			return (bucket_low(b) + bucket_low(b + 1)) / 2000.0;
	}
	return 0;
}

static void histogram(const uint64_t *h, uint64_t n)
{
	uint64_t lg[64] = { 0 }, maxc = 0;
	unsigned int b, k, lo = 64, hi = 0;

	for (b = 0; b < HIST_FINE; b++) {
		uint64_t us = bucket_low(b) / 1000;

		if (!h[b])
			continue;
		k = us ? 64 - __builtin_clzll(us) : 0;
		lg[k] += h[b];
	}
	for (k = 0; k < 64; k++) {
		if (!lg[k])
			continue;
		lo = k < lo ? k : lo;
		hi = k;
		maxc = lg[k] > maxc ? lg[k] : maxc;
	}
	printf("RTT histogram (%llu samples):\n", (unsigned long long)n);
	if (!n)
		return;
	printf("  %10s %10s %12s\n", ">= us", "< us", "count");
	for (k = lo; k <= hi; k++) {
		unsigned long long a = k ? 1ULL << (k - 1) : 0;
		unsigned long long z = 1ULL << k;
		int stars = (int)(lg[k] * 40 / maxc);

		printf("  %10llu %10llu %12llu %.*s\n", a, z,
		       (unsigned long long)lg[k], stars,
		       "****************************************");
	}
}

void report_final(struct run *r, double secs, const char *result)
{
	struct snap zero, tot;
	uint64_t h[HIST_FINE] = { 0 };
	unsigned int i, b;
	FILE *f;
	double p50, p90, p99, pmax = 0;

	memset(&zero, 0, sizeof(zero));
	take(r, &tot);
	zero.cpu_us = 0;
	tot.live = r->o.tasks;
	for (i = 0; i < r->o.tasks; i++)
		for (b = 0; b < HIST_FINE; b++)
			h[b] += r->tasks[i].st.hist[b];
	for (b = 0; b < HIST_FINE; b++)
		if (h[b])
			pmax = bucket_low(b + 1) / 1000.0;
	p50 = pct_us(h, tot.rtt_n, 0.50);
	p90 = pct_us(h, tot.rtt_n, 0.90);
	p99 = pct_us(h, tot.rtt_n, 0.99);

	if (secs <= 0)
		secs = 1e-9;
	if (!r->o.show_perfdata)
		printf("---------------------------------------------------------------------------\n");
	line(r, &zero, &tot, secs, " (average)");
	if (r->o.show_histogram)
		histogram(h, tot.rtt_n);
	fflush(stdout);

	if (!r->o.json)
		return;
	f = fopen(r->o.json, "w");
	if (!f) {
		perror(r->o.json);
		return;
	}
	fprintf(f, "{\n");
	fprintf(f, "  \"side\": \"%s\",\n", r->o.active ? "active" : "passive");
	fprintf(f, "  \"result\": \"%s\",\n", result);
	fprintf(f, "  \"tasks\": %u, \"depth\": %u, \"req_bytes\": %u, \"ack_bytes\": %u,\n",
		r->o.tasks, r->o.depth, r->o.req_bytes, r->o.ack_bytes);
	fprintf(f, "  \"one_way\": %s, \"verify\": %s,\n",
		r->o.one_way ? "true" : "false", r->o.verify ? "true" : "false");
	fprintf(f, "  \"seconds\": %.3f,\n", secs);
	fprintf(f, "  \"counts\": { \"tx_req\": %llu, \"rx_req\": %llu, \"tx_ack\": %llu, \"rx_ack\": %llu, \"tx_bytes\": %llu, \"rx_bytes\": %llu },\n",
		(unsigned long long)tot.tx_req, (unsigned long long)tot.rx_req,
		(unsigned long long)tot.tx_ack, (unsigned long long)tot.rx_ack,
		(unsigned long long)tot.tx_bytes,
		(unsigned long long)tot.rx_bytes);
	fprintf(f, "  \"rdma\": { \"bytes\": %u, \"mode\": %u, \"ops_as_responder\": %llu, \"bytes_in\": %llu, \"bytes_out\": %llu, \"map_eagain\": %llu, \"get_mr_eagain\": %llu, \"dropped_resent\": %llu, \"acks_overtaking\": %llu },\n",
		r->o.rdma_bytes, r->o.rdma_mode,
		(unsigned long long)tot.rdma_ops, (unsigned long long)tot.mbi,
		(unsigned long long)tot.mbo,
		(unsigned long long)tot.rdma_eagain,
		(unsigned long long)tot.rdma_getmr_eagain,
		(unsigned long long)tot.rdma_dropped,
		(unsigned long long)tot.acks_overtaking);
	fprintf(f, "  \"rates\": { \"tx_per_s\": %.2f, \"rx_per_s\": %.2f, \"kbytes_per_s\": %.2f, \"mbi_kbytes_per_s\": %.2f, \"mbo_kbytes_per_s\": %.2f, \"tx_us_per_call\": %.2f, \"cpu_pct\": %.2f },\n",
		tot.tx_req / secs, tot.rx_req / secs,
		(tot.tx_bytes + tot.rx_bytes) / 1024.0 / secs,
		tot.mbi / 1024.0 / secs, tot.mbo / 1024.0 / secs,
		tot.send_calls ? tot.send_ns / 1000.0 / tot.send_calls : 0,
		tot.cpu_us / 10000.0 / secs);
	fprintf(f, "  \"rtt_us\": { \"samples\": %llu, \"mean\": %.2f, \"p50\": %.2f, \"p90\": %.2f, \"p99\": %.2f, \"max\": %.2f },\n",
		(unsigned long long)tot.rtt_n,
		tot.rtt_n ? tot.rtt_ns / 1000.0 / tot.rtt_n : 0, p50, p90, p99,
		pmax);
	fprintf(f, "  \"shapes\": { \"sockets\": %u, \"sizes\": %u, \"size_mix\": %s, \"size_mix_seed\": %llu, \"rx_zero\": %llu, \"rx_short\": %llu, \"rx_max\": %llu, \"tx_max\": %llu, \"slow_reader_ms\": %u, \"slow_pauses\": %llu, \"sndbuf_set\": %d, \"rcvbuf_set\": %d },\n",
		r->o.sockets, r->o.nsizes, r->o.size_mix ? "true" : "false",
		(unsigned long long)r->o.mix_seed,
		(unsigned long long)tot.rx_zero,
		(unsigned long long)tot.rx_short,
		(unsigned long long)tot.rx_max, (unsigned long long)tot.tx_max,
		r->o.slow_ms, (unsigned long long)tot.slow_pauses,
		r->o.eff_sndbuf, r->o.eff_rcvbuf);
	fprintf(f, "  \"errors\": { \"failed\": %d, \"eagain\": %llu, \"enobufs\": %llu, \"enomem\": %llu, \"cong_updates\": %llu, \"cong_update_timeouts\": %llu }",
		r->failed ? 1 : 0, (unsigned long long)tot.eagain,
		(unsigned long long)tot.enobufs,
		(unsigned long long)tot.enomem,
		(unsigned long long)tot.cong_updates,
		(unsigned long long)tot.cong_timeouts);
	if (r->failed) {
		char esc[sizeof(r->fail_msg) * 2];
		size_t k, o = 0;

		for (k = 0; r->fail_msg[k] && o < sizeof(esc) - 2; k++) {
			char c = r->fail_msg[k];

			if (c == '"' || c == '\\')
				esc[o++] = '\\';
			esc[o++] = c < ' ' ? ' ' : c;
		}
		esc[o] = 0;
		fprintf(f, ",\n  \"failure\": \"%s\"", esc);
	}
	fprintf(f, "\n}\n");
	fclose(f);
}
