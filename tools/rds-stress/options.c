// SPDX-License-Identifier: GPL-2.0
/*
 * Command line of rds-stress, the option block (--show-params) and the
 * text form of the run's options that the active side sends to the
 * passive side over the control connection.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "rds_stress.h"

enum {
	OPT_RDMA_USE_ONCE = 256, OPT_RDMA_USE_GET_MR, OPT_RDMA_USE_FENCE,
	OPT_SHOW_PARAMS, OPT_SHOW_PERFDATA, OPT_SHOW_HISTOGRAM, OPT_JSON,
	OPT_CONNECT_RETRIES, OPT_CONG_MONITOR, OPT_NO_VERIFY, OPT_TRANSPORT,
	OPT_SNDBUF, OPT_RCVBUF, OPT_SIZES, OPT_SIZE_MIX, OPT_SHOW_SIZES,
	OPT_SOCKETS, OPT_SLOW_READER, OPT_DRAIN_TIMEOUT, OPT_ENOMEM_RETRY,
};

static const struct option longopts[] = {
	{ "recv-addr",		required_argument, NULL, 'r' },
	{ "send-addr",		required_argument, NULL, 's' },
	{ "port",		required_argument, NULL, 'p' },
	{ "req-bytes",		required_argument, NULL, 'q' },
	{ "ack-bytes",		required_argument, NULL, 'a' },
	{ "depth",		required_argument, NULL, 'd' },
	{ "tasks",		required_argument, NULL, 't' },
	{ "time",		required_argument, NULL, 'T' },
	{ "one-way",		no_argument,	   NULL, 'o' },
	{ "tos",		required_argument, NULL, 'Q' },
	{ "rdma-bytes",		required_argument, NULL, 'D' },
	{ "rdma-buffers",	required_argument, NULL, 'I' },
	{ "rdma-mode",		required_argument, NULL, 'M' },
	{ "rdma-use-once",	required_argument, NULL, OPT_RDMA_USE_ONCE },
	{ "rdma-use-get-mr",	required_argument, NULL, OPT_RDMA_USE_GET_MR },
	{ "rdma-use-fence",	required_argument, NULL, OPT_RDMA_USE_FENCE },
	{ "verify",		no_argument,	   NULL, 'v' },
	{ "no-verify",		no_argument,	   NULL, OPT_NO_VERIFY },
	{ "report-summary",	no_argument,	   NULL, 'z' },
	{ "show-params",	no_argument,	   NULL, OPT_SHOW_PARAMS },
	{ "show-perfdata",	no_argument,	   NULL, OPT_SHOW_PERFDATA },
	{ "show-histogram",	no_argument,	   NULL, OPT_SHOW_HISTOGRAM },
	{ "json",		required_argument, NULL, OPT_JSON },
	{ "connect-retries",	required_argument, NULL, OPT_CONNECT_RETRIES },
	{ "use-cong-monitor",	required_argument, NULL, OPT_CONG_MONITOR },
	{ "transport",		required_argument, NULL, OPT_TRANSPORT },
	{ "sndbuf",		required_argument, NULL, OPT_SNDBUF },
	{ "rcvbuf",		required_argument, NULL, OPT_RCVBUF },
	{ "sizes",		required_argument, NULL, OPT_SIZES },
	{ "size-mix",		required_argument, NULL, OPT_SIZE_MIX },
	{ "show-sizes",		required_argument, NULL, OPT_SHOW_SIZES },
	{ "sockets",		required_argument, NULL, OPT_SOCKETS },
	{ "slow-reader",	required_argument, NULL, OPT_SLOW_READER },
	{ "drain-timeout",	required_argument, NULL, OPT_DRAIN_TIMEOUT },
	{ "enomem-retry",	no_argument,	   NULL, OPT_ENOMEM_RETRY },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: rds-stress [-r addr] [-p port]                      (passive side)\n"
"       rds-stress [-r addr] -s peer [-p port] [options]    (active side)\n"
"\n"
"  -r, --recv-addr A        local address of the RDS and control sockets\n"
"                           (IPv4 or IPv6; link-local: fe80::1%%eth0)\n"
"  -s, --send-addr A        the passive side's address (makes this active)\n"
"  -p, --port N             TCP control port (4000); task i binds N+1+i\n"
"                           (socket k of S: N+1+i*S+k)\n"
"  -q, --req-bytes N        request size, K/M/G suffixes (1024)\n"
"  -a, --ack-bytes N        ack size (%u, the header)\n"
"  -d, --depth N            outstanding requests per flow (1)\n"
"  -t, --tasks N            tasks per side, full mesh of t x t flows (1)\n"
"  -T, --time S             seconds to run, 0 = until interrupted (0)\n"
"  -o, --one-way            only the active side sends requests\n"
"  -Q, --tos N              type of service (SIOCRDSSETTOS after bind)\n"
"  -D, --rdma-bytes N       RDMA bytes per request (0 = no RDMA)\n"
"  -I, --rdma-buffers N     local iovecs per RDMA (1)\n"
"  -M, --rdma-mode N        0 alternate read/write, 1 read, 2 write\n"
"      --rdma-use-once 0|1  RDS_RDMA_USE_ONCE on the MR (0)\n"
"      --rdma-use-get-mr 0|1  RDS_GET_MR + RDMA_DEST instead of RDMA_MAP (0)\n"
"      --rdma-use-fence 0|1 RDS_RDMA_FENCE on reads (1)\n"
"  -v, --verify             verify every message (the default)\n"
"      --no-verify          check sequence and addressing only\n"
"  -z, --report-summary     print only the summary\n"
"      --show-params        print the option block\n"
"      --show-perfdata      machine-readable per-second lines\n"
"      --show-histogram     log2 histogram of round-trip times\n"
"      --json FILE          machine-readable summary\n"
"      --connect-retries N  retry the control connection N times (0)\n"
"      --use-cong-monitor 0|1  RDS_CONG_MONITOR (1)\n"
"      --transport ib|tcp   pin the RDS transport (SO_RDS_TRANSPORT)\n"
"      --sndbuf N, --rcvbuf N  socket buffers of both sides (default: what\n"
"                           is in flight); a small rcvbuf causes congestion\n"
"      --sizes LIST         request sizes cycled per request, comma list with\n"
"                           K/M suffixes, 0 to 1M (0,1,4096,4097,64K,1M)\n"
"      --size-mix SEED|random  request sizes drawn from SEED: boundaries (the\n"
"                           --sizes list, or the built-in one) and uniform\n"
"                           sizes up to -q; the seed is printed, and replays\n"
"      --show-sizes N       print the first N request sizes of flow 0->0, exit\n"
"      --sockets N          RDS sockets per task, flows spread over them (1)\n"
"      --slow-reader MS     the passive side reads nothing for MS ms of every\n"
"                           second: receive queues fill up and drain (0)\n"
"      --drain-timeout S    after the run, how long the last requests may\n"
"                           take to be acked, both sides (30)\n"
"      --enomem-retry       a send that fails ENOMEM is counted and tried\n"
"                           again (allocation-failure injection tests)\n"
"\n"
"Exit status: 0 success, 1 runtime or verification failure, 2 usage.\n",
		HDR_BYTES);
}

int parse_size(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	}
	if (*end || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* "0,1,4K,1M": up to MAX_SIZES sizes of at most 1M. */
int parse_sizes(const char *s, uint32_t *v, uint32_t *n)
{
	char item[32];
	const char *p = s;

	*n = 0;
	for (;;) {
		size_t l = strcspn(p, ",");

		if (!l || l >= sizeof(item) || *n == MAX_SIZES)
			return -1;
		memcpy(item, p, l);
		item[l] = 0;
		if (parse_size(item, &v[*n]) || v[*n] > MAX_MSG_BYTES)
			return -1;
		(*n)++;
		p += l;
		if (!*p)
			return 0;
		p++;
	}
}

/* The built-in boundaries of --size-mix (without --sizes). */
static const uint32_t mix_bounds[] = {
	0, 1, 79, 80, 81, 1023, 1024, 4047, 4048, 4095, 4096, 4097, 8191,
	8192, 8193, 65535, 65536, 65537, (1U << 20) - 1, 1U << 20,
};

/* The boundaries --size-mix draws from: those up to -q. */
void sizes_setup(struct options *o)
{
	const uint32_t *b = o->nsizes ? o->sizes : mix_bounds;
	uint32_t n = o->nsizes ? o->nsizes :
		     sizeof(mix_bounds) / sizeof(mix_bounds[0]), i;

	o->nmix = 0;
	if (!o->size_mix)
		return;
	for (i = 0; i < n; i++)
		if (b[i] <= o->req_bytes)
			o->mix[o->nmix++] = b[i];
}

/* The longest message of the run. */
uint32_t max_msg(const struct options *o)
{
	uint32_t m = o->ack_bytes > o->req_bytes ? o->ack_bytes :
		     o->req_bytes, i;

	if (o->nsizes && !o->size_mix) {
		m = o->ack_bytes;
		for (i = 0; i < o->nsizes; i++)
			if (o->sizes[i] > m)
				m = o->sizes[i];
	}
	return m;
}

static int parse_u32(const char *s, uint32_t *out, uint32_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		return -1;
	*out = v;
	return 0;
}

#define BAD(...) do {					\
	fprintf(stderr, "rds-stress: " __VA_ARGS__);	\
	fputc('\n', stderr);				\
	return -1;					\
} while (0)

/* Returns 0, or -1 after printing why (exit 2), or 1 for --help. */
int options_parse(struct options *o, int argc, char **argv)
{
	uint32_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = 4000;
	o->req_bytes = 1024;
	o->ack_bytes = HDR_BYTES;
	o->depth = 1;
	o->tasks = 1;
	o->cong_monitor = 1;
	o->rdma_buffers = 1;
	o->rdma_use_fence = 1;
	o->verify = 1;
	o->transport = -1;
	o->sockets = 1;
	o->drain_s = 30;

	while ((c = getopt_long(argc, argv, "r:s:p:q:a:d:t:T:oQ:D:I:M:vzh",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (addr_parse(optarg, &o->laddr))
				BAD("-r %s: not an IPv4 or IPv6 address (a link-local one with %%scope)",
				    optarg);
			o->have_laddr = 1;
			break;
		case 's':
			if (addr_parse(optarg, &o->peer))
				BAD("-s %s: not an IPv4 or IPv6 address (a link-local one with %%scope)",
				    optarg);
			o->active = 1;
			break;
		case 'p':
			if (parse_u32(optarg, &v, 65535 - 1 - MAX_TASKS) || !v)
				BAD("-p %s: not a port (1-%u)", optarg,
				    65535 - 1 - MAX_TASKS);
			o->port = (uint16_t)v;
			break;
		case 'q':
			if (parse_size(optarg, &o->req_bytes))
				BAD("-q %s: not a size", optarg);
			break;
		case 'a':
			if (parse_size(optarg, &o->ack_bytes))
				BAD("-a %s: not a size", optarg);
			break;
		case 'd':
			if (parse_u32(optarg, &o->depth, MAX_DEPTH) || !o->depth)
				BAD("-d %s: depth must be 1-%u", optarg,
				    MAX_DEPTH);
			break;
		case 't':
			if (parse_u32(optarg, &o->tasks, MAX_TASKS) || !o->tasks)
				BAD("-t %s: tasks must be 1-%u", optarg,
				    MAX_TASKS);
			break;
		case 'T':
			if (parse_u32(optarg, &o->time_s, 86400 * 365))
				BAD("-T %s: not a number of seconds", optarg);
			break;
		case 'o':
			o->one_way = 1;
			break;
		case 'Q':
			if (parse_u32(optarg, &v, 255))
				BAD("-Q %s: TOS must be 0-255", optarg);
			o->tos = (uint8_t)v;
			break;
		case 'D':
			if (parse_size(optarg, &o->rdma_bytes) ||
			    o->rdma_bytes > MAX_MSG_BYTES)
				BAD("-D %s: RDMA size must be at most 1M",
				    optarg);
			break;
		case 'I':
			if (parse_u32(optarg, &o->rdma_buffers, 1024) ||
			    !o->rdma_buffers)
				BAD("-I %s: must be 1-1024", optarg);
			break;
		case 'M':
			if (parse_u32(optarg, &o->rdma_mode, 2))
				BAD("-M %s: mode must be 0, 1 or 2", optarg);
			break;
		case OPT_RDMA_USE_ONCE:
		case OPT_RDMA_USE_GET_MR:
		case OPT_RDMA_USE_FENCE:
		case OPT_CONG_MONITOR:
			if (parse_u32(optarg, &v, 1))
				BAD("--%s %s: must be 0 or 1",
				    c == OPT_RDMA_USE_ONCE ? "rdma-use-once" :
				    c == OPT_RDMA_USE_GET_MR ? "rdma-use-get-mr" :
				    c == OPT_RDMA_USE_FENCE ? "rdma-use-fence" :
				    "use-cong-monitor", optarg);
			if (c == OPT_RDMA_USE_ONCE)
				o->rdma_use_once = v;
			else if (c == OPT_RDMA_USE_GET_MR)
				o->rdma_use_get_mr = v;
			else if (c == OPT_RDMA_USE_FENCE)
				o->rdma_use_fence = v;
			else
				o->cong_monitor = v;
			break;
		case 'v':
			o->verify = 1;
			break;
		case OPT_NO_VERIFY:
			o->verify = 0;
			break;
		case 'z':
			o->summary_only = 1;
			break;
		case OPT_SHOW_PARAMS:
			o->show_params = 1;
			break;
		case OPT_SHOW_PERFDATA:
			o->show_perfdata = 1;
			break;
		case OPT_SHOW_HISTOGRAM:
			o->show_histogram = 1;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_CONNECT_RETRIES:
			if (parse_u32(optarg, &o->connect_retries, 100000))
				BAD("--connect-retries %s: not a count",
				    optarg);
			break;
		case OPT_TRANSPORT:
			if (!strcmp(optarg, "ib"))
				o->transport = 0;	/* RDS_TRANS_IB */
			else if (!strcmp(optarg, "tcp"))
				o->transport = 2;	/* RDS_TRANS_TCP */
			else
				BAD("--transport %s: ib or tcp", optarg);
			break;
		case OPT_SNDBUF:
		case OPT_RCVBUF:
			if (parse_size(optarg, &v) || v > (256U << 20))
				BAD("--%s %s: a size up to 256M",
				    c == OPT_SNDBUF ? "sndbuf" : "rcvbuf",
				    optarg);
			if (c == OPT_SNDBUF)
				o->sndbuf = v;
			else
				o->rcvbuf = v;
			break;
		case OPT_SIZES:
			if (parse_sizes(optarg, o->sizes, &o->nsizes))
				BAD("--sizes %s: a comma list of up to %u sizes, 0 to 1M",
				    optarg, MAX_SIZES);
			break;
		case OPT_SIZE_MIX:
			o->size_mix = 1;
			if (!strcmp(optarg, "random"))
				o->mix_seed = 0, o->size_mix = 2;
			else if (parse_u64(optarg, &o->mix_seed))
				BAD("--size-mix %s: a seed (a number) or 'random'",
				    optarg);
			break;
		case OPT_SHOW_SIZES:
			if (parse_u32(optarg, &o->show_sizes, 1000000) ||
			    !o->show_sizes)
				BAD("--show-sizes %s: a count, 1-1000000",
				    optarg);
			break;
		case OPT_SOCKETS:
			if (parse_u32(optarg, &o->sockets, MAX_SOCKETS) ||
			    !o->sockets)
				BAD("--sockets %s: must be 1-%u", optarg,
				    MAX_SOCKETS);
			break;
		case OPT_SLOW_READER:
			if (parse_u32(optarg, &o->slow_ms, 999))
				BAD("--slow-reader %s: milliseconds of each second, 0-999",
				    optarg);
			break;
		case OPT_ENOMEM_RETRY:
			o->enomem_retry = 1;
			break;
		case OPT_DRAIN_TIMEOUT:
			if (parse_u32(optarg, &o->drain_s, 86400) || !o->drain_s)
				BAD("--drain-timeout %s: seconds, 1-86400", optarg);
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc)
		BAD("unexpected argument '%s' (see --help)", argv[optind]);
	if (o->have_laddr && o->active && o->laddr.family != o->peer.family)
		BAD("-r and -s: addresses of different families (RDS connects IPv4 to IPv4, IPv6 to IPv6)");
	if (o->req_bytes < HDR_BYTES || o->req_bytes > MAX_MSG_BYTES)
		BAD("-q %u: requests must be %u bytes (the header) to 1M",
		    o->req_bytes, HDR_BYTES);
	if (o->ack_bytes < HDR_BYTES || o->ack_bytes > MAX_MSG_BYTES)
		BAD("-a %u: acks must be %u bytes (the header) to 1M",
		    o->ack_bytes, HDR_BYTES);
	if (o->tasks * o->sockets > MAX_PORTS ||
	    o->port + o->tasks * o->sockets > 65535)
		BAD("-t %u x --sockets %u: %u RDS ports from %u: at most %u, below 65536",
		    o->tasks, o->sockets, o->tasks * o->sockets, o->port + 1,
		    MAX_PORTS);
	if (o->rdma_bytes && (o->nsizes || o->size_mix || o->sockets > 1))
		BAD("-D goes with neither --sizes, --size-mix nor --sockets");
	sizes_setup(o);
	/* RDS refuses a message above its send buffer (sk_sndbuf / 2). */
	if (o->sndbuf && max_msg(o) > o->sndbuf)
		BAD("--sndbuf %u: RDS refuses messages above it (EMSGSIZE), the run's largest is %u",
		    o->sndbuf, max_msg(o));
	return 0;
}

void options_show(const struct options *o, FILE *f)
{
	char l[ADDR_STRLEN] = "auto", p[ADDR_STRLEN] = "-";

	if (o->have_laddr)
		addr_str(&o->laddr, l, sizeof(l));
	if (o->active)
		addr_str(&o->peer, p, sizeof(p));
	fprintf(f, "Options:\n");
	fprintf(f, "  %-16s %s\n", "side", o->active ? "active" : "passive");
	fprintf(f, "  %-16s %s\n", "local address", l);
	fprintf(f, "  %-16s %s\n", "peer address", p);
	fprintf(f, "  %-16s %u (RDS ports %u-%u)\n", "control port", o->port,
		o->port + 1, o->port + o->tasks * o->sockets);
	fprintf(f, "  %-16s %u\n", "tasks", o->tasks);
	fprintf(f, "  %-16s %u\n", "sockets/task", o->sockets);
	fprintf(f, "  %-16s %u\n", "depth", o->depth);
	fprintf(f, "  %-16s %u\n", "req bytes", o->req_bytes);
	if (o->nsizes && !o->size_mix) {
		uint32_t i;

		fprintf(f, "  %-16s", "req sizes");
		for (i = 0; i < o->nsizes; i++)
			fprintf(f, "%s%u", i ? "," : " ", o->sizes[i]);
		fprintf(f, " (cycled)\n");
	}
	if (o->size_mix)
		fprintf(f, "  %-16s seed %llu, %u boundaries, uniform up to %u\n",
			"req size mix", (unsigned long long)o->mix_seed,
			o->nmix, o->req_bytes);
	fprintf(f, "  %-16s %u\n", "ack bytes", o->ack_bytes);
	fprintf(f, "  %-16s %u\n", "time (s)", o->time_s);
	fprintf(f, "  %-16s %s\n", "one way", o->one_way ? "yes" : "no");
	fprintf(f, "  %-16s %u\n", "tos", o->tos);
	fprintf(f, "  %-16s %s\n", "cong monitor", o->cong_monitor ? "on" : "off");
	fprintf(f, "  %-16s %s\n", "transport", o->transport < 0 ? "auto" :
		o->transport == 0 ? "ib" : "tcp");
	fprintf(f, "  %-16s %u (kernel: %d)\n", "sndbuf", o->sndbuf,
		o->eff_sndbuf);
	fprintf(f, "  %-16s %u (kernel: %d)\n", "rcvbuf", o->rcvbuf,
		o->eff_rcvbuf);
	fprintf(f, "  %-16s %u\n", "slow reader ms", o->slow_ms);
	fprintf(f, "  %-16s %u\n", "drain timeout s", o->drain_s);
	fprintf(f, "  %-16s %u\n", "rdma bytes", o->rdma_bytes);
	fprintf(f, "  %-16s %u\n", "rdma buffers", o->rdma_buffers);
	fprintf(f, "  %-16s %u\n", "rdma mode", o->rdma_mode);
	fprintf(f, "  %-16s %d\n", "rdma use once", o->rdma_use_once);
	fprintf(f, "  %-16s %d\n", "rdma use get mr", o->rdma_use_get_mr);
	fprintf(f, "  %-16s %d\n", "rdma use fence", o->rdma_use_fence);
	fprintf(f, "  %-16s %s\n", "verify", o->verify ? "on" : "off");
	fprintf(f, "  %-16s %016llx\n", "run id", (unsigned long long)o->run_id);
}

/* The options the passive side takes from the active side. */
int options_to_text(const struct options *o, const struct rs_addr *addr,
		    char *buf, size_t len)
{
	struct rs_addr unscoped = *addr;
	char a[ADDR_STRLEN];
	int n, m;
	uint32_t i;

	/* a scope id is this host's interface index: the peer has its own */
	unscoped.scope = 0;
	addr_str(&unscoped, a, sizeof(a));
	n = snprintf(buf, len,
		     "addr=%s\nreq=%u\nack=%u\ndepth=%u\ntasks=%u\ntime=%u\n"
		     "oneway=%d\ntos=%u\ncong=%d\ntransport=%d\nrdma=%u\n"
		     "rdmabufs=%u\nrdmamode=%u\nonce=%d\ngetmr=%d\nfence=%d\n"
		     "verify=%d\nrunid=%llu\nsndbuf=%u\nrcvbuf=%u\n",
		     a, o->req_bytes, o->ack_bytes, o->depth, o->tasks,
		     o->time_s, o->one_way, o->tos, o->cong_monitor,
		     o->transport, o->rdma_bytes, o->rdma_buffers,
		     o->rdma_mode, o->rdma_use_once, o->rdma_use_get_mr,
		     o->rdma_use_fence, o->verify,
		     (unsigned long long)o->run_id, o->sndbuf, o->rcvbuf);
	if (n < 0 || (size_t)n >= len)
		return -1;
	m = snprintf(buf + n, len - n,
		     "sockets=%u\nslow=%u\nmix=%d\nseed=%llu\ndrain=%u\n"
		     "enomem=%d\n",
		     o->sockets, o->slow_ms, o->size_mix,
		     (unsigned long long)o->mix_seed, o->drain_s,
		     o->enomem_retry);
	if (m < 0 || (size_t)(n += m) >= len)
		return -1;
	for (i = 0; i < o->nsizes; i++) {
		m = snprintf(buf + n, len - n, "%s%u%s", i ? "," : "sizes=",
			     o->sizes[i], i + 1 == o->nsizes ? "\n" : "");
		if (m < 0 || (size_t)(n += m) >= len)
			return -1;
	}
	return n;
}

int options_from_text(struct options *o, struct rs_addr *addr,
		      const char *text)
{
	char key[32], val[1024];
	const char *p = text;
	int seen = 0, n;

	o->nsizes = 0;		/* sent only when there is a list */
	while (*p) {
		unsigned long long v;

		if (sscanf(p, "%31[^=]=%1023[^\n]%n", key, val, &n) != 2)
			return -1;
		p += n;
		if (*p == '\n')
			p++;
		if (!strcmp(key, "addr")) {
			if (addr_parse(val, addr) || addr->scope)
				return -1;
			seen++;
			continue;
		}
		if (!strcmp(key, "transport")) {
			o->transport = atoi(val);
			continue;
		}
		if (!strcmp(key, "sizes")) {
			if (parse_sizes(val, o->sizes, &o->nsizes))
				return -1;
			continue;
		}
		v = strtoull(val, NULL, 10);
		if (!strcmp(key, "req"))
			o->req_bytes = v;
		else if (!strcmp(key, "ack"))
			o->ack_bytes = v;
		else if (!strcmp(key, "depth"))
			o->depth = v;
		else if (!strcmp(key, "tasks"))
			o->tasks = v;
		else if (!strcmp(key, "time"))
			o->time_s = v;
		else if (!strcmp(key, "oneway"))
			o->one_way = v;
		else if (!strcmp(key, "tos"))
			o->tos = v;
		else if (!strcmp(key, "cong"))
			o->cong_monitor = v;
		else if (!strcmp(key, "rdma"))
			o->rdma_bytes = v;
		else if (!strcmp(key, "rdmabufs"))
			o->rdma_buffers = v;
		else if (!strcmp(key, "rdmamode"))
			o->rdma_mode = v;
		else if (!strcmp(key, "once"))
			o->rdma_use_once = v;
		else if (!strcmp(key, "getmr"))
			o->rdma_use_get_mr = v;
		else if (!strcmp(key, "fence"))
			o->rdma_use_fence = v;
		else if (!strcmp(key, "verify"))
			o->verify = v;
		else if (!strcmp(key, "runid"))
			o->run_id = v;
		else if (!strcmp(key, "sndbuf"))
			o->sndbuf = v;
		else if (!strcmp(key, "rcvbuf"))
			o->rcvbuf = v;
		else if (!strcmp(key, "sockets"))
			o->sockets = v;
		else if (!strcmp(key, "slow"))
			o->slow_ms = v;
		else if (!strcmp(key, "mix"))
			o->size_mix = v;
		else if (!strcmp(key, "seed"))
			o->mix_seed = v;
		else if (!strcmp(key, "drain"))
			o->drain_s = v;
		else if (!strcmp(key, "enomem"))
			o->enomem_retry = !!v;
		else
			return -1;
	}
	if (!seen || !o->tasks || o->tasks > MAX_TASKS || !o->depth ||
	    o->depth > MAX_DEPTH || o->req_bytes < HDR_BYTES ||
	    o->req_bytes > MAX_MSG_BYTES || o->ack_bytes < HDR_BYTES ||
	    o->ack_bytes > MAX_MSG_BYTES || !o->sockets ||
	    o->sockets > MAX_SOCKETS || o->tasks * o->sockets > MAX_PORTS ||
	    o->slow_ms > 999 || !o->drain_s || o->drain_s > 86400)
		return -1;
	sizes_setup(o);
	return 0;
}
