// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions when things fail: the RDMA device goes away while
 * regions are being registered and freed on it (issue 15, lead 4), and
 * every failure of a registration.  Each host on its own rxe device
 * (RDS_ADDR), no peer needed:
 *
 *   waiter      ib_mr_max = 1, one region registered, a second
 *               RDS_GET_MR asleep waiting for a place: the device is
 *               deleted.  The waiter fails with ENODEV (it must not
 *               register on the dying device), and with its socket
 *               still open the device is released and mr_in_use is back
 *               where it was (before the fix it took the place the flush
 *               gave back, registered after the flush, and kept the
 *               device and its PD past removal).
 *   close_race  sockets with many regions are closed by several threads
 *               while the device is deleted (the flush and the closes
 *               kill the same regions; the flush used to kill one that a
 *               close freed under it): every close returns, the device
 *               is released, mr_in_use is back (a use after free shows on
 *               a KASAN kernel; on others this checks the outcome).
 *
 *   alloc_faults  every failure site of a registration (the region's
 *               allocations, its DMA map and MR on the device, a key the
 *               device gave twice) in turn, with fault_nth: RDS_GET_MR
 *               fails ENOMEM (EBUSY for the key), and nothing stays
 *               pinned, charged (VmLck) or registered; with no site left
 *               it registers.  The key case used to free the region
 *               directly, under a device flush that may hold it.
 *
 * The device cases add the device back and check a region can be
 * registered on it again.
 */
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>

#define TWO_HOST_NAME	"ib_mr_devloss_test"
#include "two_host.h"
#include "rds_harness.h"

#define MR_MAX_PARAM	"/sys/module/rds/parameters/ib_mr_max"
#define FAULT_PARAM	"/sys/module/rds/parameters/fault_nth"
#define RACE_SOCKS	8
#define RACE_MRS	48
#define RACE_ROUNDS	3

static const char *addr, *peer;

static const char *rxe(void)
{
	const char *d = getenv("RDS_RXE");

	return d && *d ? d : "rxe0";
}

static const char *iface(void)
{
	const char *d = getenv("RDS_IFACE");

	return d && *d ? d : "eth0";
}

/* Lines of dmesg that contain what. */
static int dmesg_count(const char *what)
{
	char cmd[256];
	int n = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "dmesg | grep -cF -- '%s'", what);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	pclose(f);
	return n;
}

/* The last line of dmesg with what, in line ("" if none). */
static void dmesg_last(const char *what, char *line, size_t len)
{
	char cmd[256];
	FILE *f;

	line[0] = 0;
	snprintf(cmd, sizeof(cmd), "dmesg | grep -F -- '%s' | tail -n 1",
		 what);
	f = popen(cmd, "r");
	if (!f)
		return;
	if (!fgets(line, len, f))
		line[0] = 0;
	pclose(f);
	line[strcspn(line, "\n")] = 0;
}

/* Up to ms for dmesg to hold more than before lines with what. */
static bool dmesg_wait(const char *what, int before, int ms)
{
	int64_t end = now_ms() + ms;

	do {
		if (dmesg_count(what) > before)
			return true;
		poll(NULL, 0, 100);
	} while (now_ms() < end);
	return false;
}

static int run(const char *fmt, const char *a, const char *b)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	return system(cmd);
}

static long long ctr(const char *key)
{
	char line[2048];

	if (read_counters(line, sizeof(line)) <= 0)
		return -1;
	return counter(line, key);
}

static int param_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static int get_mr(int fd, const void *a, uint64_t len, uint64_t *cookie)
{
	struct rds_get_mr_args mr = {
		.vec = { .addr = (uintptr_t)a, .bytes = len },
		.cookie_addr = (uintptr_t)cookie,
	};

	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr)) ? errno : 0;
}

/* The device is back, taken by rds and active; a region registers on it. */
static void readd(struct __test_metadata *_metadata)
{
	char what[64], buf[64];
	uint64_t cookie;
	int before, fd, ret = -1;
	int64_t end;

	snprintf(what, sizeof(what), "rds: %s: added", rxe());
	before = dmesg_count(what);
	ASSERT_EQ(0, run("rdma link add %s type rxe netdev %s", rxe(), iface()));
	ASSERT_TRUE(dmesg_wait(what, before, 20000));
	/* Until the address resolves to the new device: ENODEV. */
	fd = rds_bound(addr, 0);
	ASSERT_LE(0, fd);
	end = now_ms() + 20000;
	while ((ret = get_mr(fd, buf, sizeof(buf), &cookie)) == ENODEV &&
	       now_ms() < end)
		poll(NULL, 0, 200);
	EXPECT_EQ(0, ret) TH_LOG("RDS_GET_MR on the device added again: %s",
				 strerror(ret));
	close(fd);
}

/* Deletes the device: 0 once it is removed and rds released it. */
/* How often the log said the device was released (dev_released()'s
 * baseline).  It runs three programs: take it before a timed step.
 */
static int released_count(void)
{
	char what[64];

	snprintf(what, sizeof(what), "rds: %s: released", rxe());
	return dmesg_count(what);
}

/* rdma link delete, one program started directly (no shell): on a debug
 * kernel a program takes seconds to start, and the waiter case must
 * delete the device within the module's cap on a GET_MR wait (10 s).
 */
static int delete_dev_now(void)
{
	char *argv[] = { "rdma", "link", "delete", (char *)rxe(), NULL };
	extern char **environ;
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, "rdma", NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int delete_dev(int *released_before)
{
	*released_before = released_count();
	return delete_dev_now();
}

static bool dev_released(int before, int ms)
{
	char what[64];

	snprintf(what, sizeof(what), "rds: %s: released", rxe());
	return dmesg_wait(what, before, ms);
}

static bool in_use_back(long long base, int ms)
{
	int64_t end = now_ms() + ms;

	do {
		if (ctr("mr_in_use") <= base)
			return true;
		poll(NULL, 0, 100);
	} while (now_ms() < end);
	return false;
}

FIXTURE(devloss)
{
	char mr_max[32];
	long long in_use0;
};

FIXTURE_SETUP(devloss)
{
	FILE *f;

	single_host(&addr, &peer);	/* each host on its own device */
	if (access(IB_COUNTERS, R_OK))
		SKIP(return, "no IB transport");
	self->mr_max[0] = 0;
	f = fopen(MR_MAX_PARAM, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(self->mr_max, sizeof(self->mr_max), f));
	fclose(f);
	self->in_use0 = ctr("mr_in_use");
	ASSERT_LE(0, self->in_use0);
}

FIXTURE_TEARDOWN(devloss)
{
	if (self->mr_max[0])
		EXPECT_EQ(0, param_write(MR_MAX_PARAM, self->mr_max));
}

struct waiter {
	int fd;
	void *buf;
	int ret;
	int64_t ms;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	int64_t t0 = now_ms();
	uint64_t cookie;

	w->ret = get_mr(w->fd, w->buf, 4096, &cookie);
	w->ms = now_ms() - t0;
	return NULL;
}

TEST_F_TIMEOUT(devloss, waiter, 120)
{
	/* the waiter must still wait when the device goes */
	struct timeval tv = { .tv_sec = 10 * time_scale() };
	struct waiter w = { .ret = -1 };
	long long waits;
	uint64_t cookie;
	pthread_t th;
	int a, rel;
	void *buf;

	buf = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, 2 * 4096);
	ASSERT_EQ(0, param_write(MR_MAX_PARAM, "1"));
	a = rds_bound(addr, 0);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, get_mr(a, buf, 4096, &cookie));
	w.fd = rds_bound(addr, 0);
	ASSERT_LE(0, w.fd);
	ASSERT_EQ(0, setsockopt(w.fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
				sizeof(tv)));
	w.buf = (char *)buf + 4096;
	rel = released_count();
	waits = ctr("mr_waits");
	ASSERT_EQ(0, pthread_create(&th, NULL, waiter_main, &w));
	/* The waiter counts its wait right before it sleeps. */
	while (ctr("mr_waits") <= waits)
		poll(NULL, 0, 20);
	poll(NULL, 0, 200);

	ASSERT_EQ(0, delete_dev_now());
	pthread_join(th, NULL);
	note("waiter: RDS_GET_MR returned %s after %.1f s",
	     w.ret ? strerror(w.ret) : "0 (registered)", w.ms / 1000.0);
	EXPECT_EQ(ENODEV, w.ret);
	/* Both sockets still open: nothing may hold the device now. */
	EXPECT_TRUE(dev_released(rel, 10000))
		TH_LOG("%s not released while the waiter's socket is open",
		       rxe());
	EXPECT_TRUE(in_use_back(self->in_use0, 10000))
		TH_LOG("mr_in_use %lld, was %lld", ctr("mr_in_use"),
		       self->in_use0);
	close(w.fd);
	close(a);
	EXPECT_TRUE(in_use_back(self->in_use0, 10000));
	ASSERT_EQ(0, param_write(MR_MAX_PARAM, self->mr_max));
	readd(_metadata);
	munmap(buf, 2 * 4096);
}

struct closer {
	pthread_barrier_t *go;
	int fd;
	int ret;
};

static void *closer_main(void *arg)
{
	struct closer *c = arg;

	pthread_barrier_wait(c->go);
	c->ret = close(c->fd);
	return NULL;
}

TEST_F_TIMEOUT(devloss, close_race, 300)
{
	struct closer c[RACE_SOCKS];
	pthread_t th[RACE_SOCKS];
	pthread_barrier_t go;
	int round, i, j, rel;
	uint64_t cookie;
	size_t len = (size_t)RACE_SOCKS * RACE_MRS * 4096;
	char *buf;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 2, len);
	for (round = 0; round < RACE_ROUNDS; round++) {
		ASSERT_EQ(0, pthread_barrier_init(&go, NULL, RACE_SOCKS + 1));
		for (i = 0; i < RACE_SOCKS; i++) {
			c[i].go = &go;
			c[i].fd = rds_bound(addr, 0);
			ASSERT_LE(0, c[i].fd);
			for (j = 0; j < RACE_MRS; j++)
				ASSERT_EQ(0, get_mr(c[i].fd,
						    buf + ((size_t)i * RACE_MRS + j) * 4096,
						    4096, &cookie));
		}
		for (i = 0; i < RACE_SOCKS; i++)
			ASSERT_EQ(0, pthread_create(&th[i], NULL, closer_main,
						    &c[i]));
		/* Half the closes go first, so that the flush meets
		 * regions being freed.
		 */
		pthread_barrier_wait(&go);
		poll(NULL, 0, round * 5);
		ASSERT_EQ(0, delete_dev(&rel));
		for (i = 0; i < RACE_SOCKS; i++) {
			pthread_join(th[i], NULL);
			EXPECT_EQ(0, c[i].ret);
		}
		pthread_barrier_destroy(&go);
		EXPECT_TRUE(dev_released(rel, 10000))
			TH_LOG("round %d: %s not released", round, rxe());
		EXPECT_TRUE(in_use_back(self->in_use0, 10000))
			TH_LOG("round %d: mr_in_use %lld, was %lld", round,
			       ctr("mr_in_use"), self->in_use0);
		note("close_race: round %d: mr_frees %lld", round,
		     ctr("mr_frees"));
		readd(_metadata);
	}
	munmap(buf, len);
}

/* VmLck of this process in kB (pages charged to RLIMIT_MEMLOCK), -1 if
 * unreadable.
 */
static long vm_locked_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

TEST_F_TIMEOUT(devloss, alloc_faults, 120)
{
	const char *what = "rds: fault injected";
	int fd, n, sites = 0, busy = 0, before, ret = -1;
	long lck0;
	uint64_t cookie;
	struct rds_free_mr_args fr = { 0 };
	char *buf, v[16], line[256];

	buf = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 3, 3 * 4096);
	fd = rds_bound(addr, 0);
	ASSERT_LE(0, fd);
	lck0 = vm_locked_kb();
	ASSERT_LE(0, lck0);
	for (n = 1; n <= 30; n++) {
		before = dmesg_count(what);
		snprintf(v, sizeof(v), "%d", n);
		ASSERT_EQ(0, param_write(FAULT_PARAM, v));
		ret = get_mr(fd, buf + 100, 2 * 4096, &cookie);
		ASSERT_EQ(0, param_write(FAULT_PARAM, "0"));
		if (dmesg_count(what) == before)
			break;
		sites++;
		busy += ret == EBUSY;
		dmesg_last(what, line, sizeof(line));
		note("alloc_faults: fault %d: RDS_GET_MR %s; %s", n,
		     ret ? strerror(ret) : "succeeded", line);
		/* an idle host: the fault is the registration's own */
		EXPECT_TRUE(strstr(line, "(rds_mr_create") ||
			    strstr(line, "(rds_ib_mr_register"))
			TH_LOG("fault %d hit %s", n, line);
		EXPECT_TRUE(ret == ENOMEM || ret == EBUSY)
			TH_LOG("fault %d: RDS_GET_MR gave %s", n,
			       ret ? strerror(ret) : "success");
		/* nothing stays pinned, charged or registered */
		EXPECT_EQ(lck0, vm_locked_kb()) TH_LOG("fault %d", n);
		EXPECT_TRUE(in_use_back(self->in_use0, 10000))
			TH_LOG("fault %d: mr_in_use %lld, was %lld", n,
			       ctr("mr_in_use"), self->in_use0);
	}
	note("alloc_faults: %d failure sites, then RDS_GET_MR %s", sites,
	     ret ? strerror(ret) : "succeeded");
	EXPECT_EQ(0, ret) TH_LOG("with no fault left to inject");
	/* the region's allocations, its device's (DMA map, MR) and the key */
	EXPECT_LE(6, sites);
	EXPECT_EQ(1, busy) TH_LOG("the key-taken site gives EBUSY");
	EXPECT_LT(lck0, vm_locked_kb());
	fr.cookie = cookie;
	EXPECT_EQ(0, setsockopt(fd, SOL_RDS, RDS_FREE_MR, &fr, sizeof(fr)));
	EXPECT_EQ(lck0, vm_locked_kb());
	close(fd);
	EXPECT_TRUE(in_use_back(self->in_use0, 10000));
	munmap(buf, 3 * 4096);
}

TEST_HARNESS_MAIN
