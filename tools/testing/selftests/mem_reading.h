/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory readings of the two-host memory selftests (ib_memory_test,
 * scale_drv): /proc/meminfo's MemFree, Slab, SUnreclaim and VmallocUsed,
 * /proc/slabinfo (objects per cache, at /sys/kernel/slab/NAME/object_size:
 * without the red zones and tracking of slub_debug, which the guests boot
 * with), ib_rx_pages and the ib_counters line, each after sync and
 * drop_caches.  Include two_host.h first.
 */
#ifndef _MEM_READING_H
#define _MEM_READING_H

#define MAX_CACHES	1024
#define RX_PAGES	"/sys/module/rds/parameters/ib_rx_pages"

struct cache {
	char name[64];
	long long objs;			/* active objects */
	long long objsize;		/* the object's own size */
	long long bytes;		/* slabs held: num_slabs * pages */
};

struct reading {
	long long memfree, slab, sunreclaim, vmalloc;	/* KiB */
	bool meminfo_ok;
	struct cache *caches;
	unsigned int ncaches;
	long long slab_obj_bytes, slab_bytes;
	bool slabinfo_ok;
	long long rx_pages;		/* -1: unreadable */
	char counters[2048];
};

static inline void drop_caches(void)
{
	FILE *f;

	sync();
	f = fopen("/proc/sys/vm/drop_caches", "w");
	if (!f) {
		note("/proc/sys/vm/drop_caches: %s (not dropped)",
		     strerror(errno));
		return;
	}
	fputs("3\n", f);
	if (fclose(f))
		note("/proc/sys/vm/drop_caches: %s", strerror(errno));
}

static inline void read_meminfo(struct reading *r)
{
	char line[256];
	int found = 0;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f) {
		note("/proc/meminfo: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		long long v;

		if (sscanf(line, "MemFree: %lld", &v) == 1) {
			r->memfree = v;
			found++;
		} else if (sscanf(line, "Slab: %lld", &v) == 1) {
			r->slab = v;
			found++;
		} else if (sscanf(line, "SUnreclaim: %lld", &v) == 1) {
			r->sunreclaim = v;
			found++;
		} else if (sscanf(line, "VmallocUsed: %lld", &v) == 1) {
			r->vmalloc = v;
			found++;
		}
	}
	fclose(f);
	r->meminfo_ok = found == 4;
	if (!r->meminfo_ok)
		note("/proc/meminfo: %d of MemFree, Slab, SUnreclaim, VmallocUsed found",
		     found);
}

/* /proc/slabinfo 2.x: name active num objsize perslab pagesperslab
 * : tunables ... : slabdata active_slabs num_slabs sharedavail
 */
static inline void read_slabinfo(struct reading *r)
{
	long page = sysconf(_SC_PAGESIZE);
	char line[512];
	FILE *f;

	r->caches = calloc(MAX_CACHES, sizeof(*r->caches));
	if (!r->caches)
		return;
	f = fopen("/proc/slabinfo", "r");
	if (!f) {
		note("/proc/slabinfo: %s (slab totals from /proc/meminfo only)",
		     strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		long long active, num, objsize, perslab, pages, aslabs, nslabs;
		char name[64];
		struct cache *c;

		if (sscanf(line, "%63s %lld %lld %lld %lld %lld : tunables %*d %*d %*d : slabdata %lld %lld",
			   name, &active, &num, &objsize, &perslab, &pages,
			   &aslabs, &nslabs) != 8)
			continue;
		r->slab_obj_bytes += active * objsize;
		r->slab_bytes += nslabs * pages * page;
		if (r->ncaches == MAX_CACHES)
			continue;
		c = &r->caches[r->ncaches++];
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->objs = active;
		c->objsize = objsize;
		c->bytes = nslabs * pages * page;
	}
	fclose(f);
	r->slabinfo_ok = r->ncaches > 0;
}

static inline long long read_rx_pages(void)
{
	long long v = -1;
	FILE *f = fopen(RX_PAGES, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static inline void take_reading(struct reading *r)
{
	memset(r, 0, sizeof(*r));
	drop_caches();
	read_meminfo(r);
	read_slabinfo(r);
	r->rx_pages = read_rx_pages();
	read_counters(r->counters, sizeof(r->counters));
}

static inline void free_reading(struct reading *r)
{
	free(r->caches);
	r->caches = NULL;
}

static inline const struct cache *find_cache(const struct reading *r,
				      const char *name)
{
	unsigned int i;

	for (i = 0; i < r->ncaches; i++)
		if (!strcmp(r->caches[i].name, name))
			return &r->caches[i];
	return NULL;
}

/* Active objects of one slab cache, -1 when unknown. */
static inline long long cache_objs(const char *name)
{
	struct reading r;
	const struct cache *c;
	long long n;

	memset(&r, 0, sizeof(r));
	read_slabinfo(&r);
	c = find_cache(&r, name);
	n = c ? c->objs : -1;
	free_reading(&r);
	return n;
}

/* The object's own size (SLUB sysfs), else slabinfo's (with debug). */
static inline long long object_size(const struct cache *c)
{
	char path[160];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/object_size",
		 c->name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v > 0 ? v : c->objsize;
}

/*
 * Closed RDS sockets are freed after an RCU grace period (SOCK_RCU_FREE),
 * their inodes too: wait (up to 10 s) until the "RDS" cache is back to
 * what it held in the first reading, so the last reading holds only the
 * connections.
 */
static inline void wait_socks_freed(const struct reading *before)
{
	const struct cache *c = find_cache(before, "RDS");
	int64_t t0 = now_ms(), deadline = t0 + 10000;
	long long n = -1;

	if (!c)
		return;
	while (now_ms() < deadline) {
		n = cache_objs("RDS");
		if (n <= c->objs)
			return;
		poll(NULL, 0, 100);
	}
	note("the RDS sock cache holds %lld objects 10 s after closing the sockets, %lld before they were opened",
	     n, c->objs);
}

/* "X.Y" of v / n, or "n/a" when n is 0. */
static inline const char *per(long long v, unsigned int n, char *buf, size_t len)
{
	if (!n)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f", (double)v / n);
	return buf;
}

/*
 * The counters of ib_counters line b that differ from line a, as
 * " key +delta" pairs in line ("" when none moved).
 */
static inline void counters_moved(const char *a, const char *b, char *line,
				  size_t len)
{
	const char *p = b;
	char key[64];
	size_t off = 0;

	line[0] = 0;
	while (*p && off < len) {
		size_t kl = strcspn(p, "= ");
		long long va, vb;

		if (p[kl] == '=' && kl < sizeof(key)) {
			memcpy(key, p, kl);
			key[kl] = 0;
			vb = counter(b, key);
			va = counter(a, key);
			if (va >= 0 && vb != va)
				off += snprintf(line + off, len - off,
						" %s %+lld", key, vb - va);
		}
		p += strcspn(p, " ");
		p += strspn(p, " ");
	}
}

/* The ib_counters that moved from a to b; flags resets and bad frames
 * (while n connections were set up).
 */
static inline void report_counters(int host, const struct reading *a,
				   const struct reading *b, unsigned int n)
{
	char line[1024];
	long long bad, resets;

	counters_moved(a->counters, b->counters, line, sizeof(line));
	note("host %d: ib_counters moved:%s", host, *line ? line : " none");
	bad = counter(b->counters, "bad_frames") -
	      counter(a->counters, "bad_frames");
	resets = counter(b->counters, "resets") - counter(a->counters, "resets");
	if (bad > 0 || resets > 0)
		note("host %d: WARNING: %lld bad frames and %lld resets while %u connections were set up (see dmesg)",
		     host, bad, resets, n);
}

#endif
