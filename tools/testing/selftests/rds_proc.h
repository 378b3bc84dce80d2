/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading /proc/net/rds (Documentation/socket-layer.md): a whole file, the
 * lines of connections and devices parsed, stats as name/value pairs.
 */
#ifndef _RDS_PROC_H
#define _RDS_PROC_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROC_CONNS	"/proc/net/rds/connections"
#define PROC_DEVICES	"/proc/net/rds/devices"
#define PROC_STATS	"/proc/net/rds/stats"
#define PROC_CONNS_HDR	"local remote tos transport state secs credits queued unacked retransmitted generation last_reset"
#define PROC_DEVICES_HDR "device receive srq_buffers srq_posted srq_free srq_retiring srq_max srq_stranded grants mr_used mr_max connections accepting"

/* The whole of path, NUL-terminated (malloc'ed), or NULL with errno set. */
static inline char *proc_read(const char *path)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *nbuf;
	ssize_t n = 0;
	int fd, err;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		err = errno;
		free(buf);
		errno = err;
		return NULL;
	}
	for (;;) {
		if (len + 1 >= cap) {
			nbuf = realloc(buf, cap * 2);
			if (!nbuf)
				break;
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	err = errno;
	close(fd);
	if (n < 0) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

/* The number of lines of text. */
static inline int proc_lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* The first line of text equals hdr. */
static inline int proc_header_is(const char *text, const char *hdr)
{
	size_t n = strlen(hdr);

	return !strncmp(text, hdr, n) && text[n] == '\n';
}

struct proc_conn {
	char		local[64];
	char		remote[64];
	unsigned int	tos;
	char		transport[32];
	char		state[16];
	unsigned long	secs;
	char		credits[32];	/* "avail/granted" or "-" */
	unsigned int	queued;
	unsigned int	unacked;
	unsigned long long retransmitted;
	char		generation[16];	/* 8 hex digits or "-" */
	char		last_reset[128];
};

/* Parse one line of connections; 1 if it has every column. */
static inline int proc_conn_parse(const char *line, struct proc_conn *c)
{
	memset(c, 0, sizeof(*c));
	return sscanf(line, "%63s %63s %u %31s %15s %lu %31s %u %u %llu %15s %127[^\n]",
		      c->local, c->remote, &c->tos, c->transport, c->state,
		      &c->secs, c->credits, &c->queued, &c->unacked,
		      &c->retransmitted, c->generation, c->last_reset) == 12;
}

/* How many lines of a connections text are local -> remote with tos (and
 * transport, if not NULL); the last one in *out.  -1: a line that does
 * not parse.
 */
static inline int proc_conn_find(const char *text, const char *local,
				 const char *remote, unsigned int tos,
				 const char *transport, struct proc_conn *out)
{
	const char *line = strchr(text, '\n');
	struct proc_conn c;
	int found = 0;

	while (line && line[1]) {
		line++;
		if (!proc_conn_parse(line, &c))
			return -1;
		if (!strcmp(c.local, local) && !strcmp(c.remote, remote) &&
		    c.tos == tos &&
		    (!transport || !strcmp(c.transport, transport))) {
			*out = c;
			found++;
		}
		line = strchr(line, '\n');
	}
	return found;
}

struct proc_dev {
	char		name[64];
	char		receive[32];
	/* -1: "-" (no SRQ) */
	long long	buffers, posted, free, retiring, max, stranded;
	unsigned long long grants;
	long long	mr_used;
	unsigned long long mr_max;
	unsigned int	conns;
	int		accepting;	/* passive attempts in flight */
};

static inline long long proc_num_or_dash(const char *s)
{
	return strcmp(s, "-") ? strtoll(s, NULL, 10) : -1;
}

/* The devices line of name: 1 found, 0 not, -1 a line that does not parse. */
static inline int proc_dev_find(const char *text, const char *name,
				struct proc_dev *d)
{
	const char *line = strchr(text, '\n');
	char b[24], p[24], f[24], r[24], m[24], s[24];

	while (line && line[1]) {
		line++;
		memset(d, 0, sizeof(*d));
		if (sscanf(line,
			   "%63s %31s %23s %23s %23s %23s %23s %23s %llu %lld %llu %u %d",
			   d->name, d->receive, b, p, f, r, m, s, &d->grants,
			   &d->mr_used, &d->mr_max, &d->conns,
			   &d->accepting) != 13)
			return -1;
		if (!strcmp(d->name, name)) {
			d->buffers = proc_num_or_dash(b);
			d->posted = proc_num_or_dash(p);
			d->free = proc_num_or_dash(f);
			d->retiring = proc_num_or_dash(r);
			d->max = proc_num_or_dash(m);
			d->stranded = proc_num_or_dash(s);
			return 1;
		}
		line = strchr(line, '\n');
	}
	return 0;
}

/* The value of name in a stats text, -1 if absent. */
static inline long long proc_stat(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *line = text;

	while (line && *line) {
		if (!strncmp(line, name, n) && line[n] == ' ')
			return strtoll(line + n + 1, NULL, 10);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -1;
}

#endif /* _RDS_PROC_H */
