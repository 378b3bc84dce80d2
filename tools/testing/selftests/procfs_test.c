// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/rds on one host (loopback connections):
 *
 *   connections  after a message each way at TOS_A over 127.0.0.1 and
 *                ::1, one line per connection: the header first, the
 *                addresses, the TOS, transport loopback, state up,
 *                credits and generation "-" (loopback has none), nothing
 *                queued, unacknowledged or retransmitted, no reset.
 *   stats        the same names in the same order as RDS_INFO_COUNTERS,
 *                each value between the one read before and the one read
 *                after (a quiet system: at most the deltas between).
 *   netns        a new namespace sees its own connection (TOS_B) and not
 *                the first namespace's, which sees its own and not the
 *                new one's; the new one's devices file is the header
 *                alone and it has no stats file (the counters are the
 *                host's).
 *   unprivileged nobody (uid 65534) reads the three files, mode 0444.
 */
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>

#include "rds_test.h"
#include "rds_harness.h"
#include "rds_proc.h"

#define PORT	4790
#define TOS_A	77
#define TOS_B	78

/* A message from a socket at addr:port (TOS tos) to one at addr:port+1;
 * 0 once it was received.
 */
static int exchange(const char *addr, int port, unsigned char tos, bool v6)
{
	int a, b, ret = -1;
	char c = 'p';

	if (v6) {
		struct sockaddr_in6 sa = rds_sin6(addr, port, 0);
		struct sockaddr_in6 sb = rds_sin6(addr, port + 1, 0);

		a = rds_socket();
		b = rds_socket();
		if (a < 0 || b < 0 ||
		    bind(a, (struct sockaddr *)&sa, sizeof(sa)) ||
		    bind(b, (struct sockaddr *)&sb, sizeof(sb)) ||
		    ioctl(a, SIOCRDSSETTOS, &tos) ||
		    sendto(a, &c, 1, 0, (struct sockaddr *)&sb,
			   sizeof(sb)) != 1 ||
		    recv(b, &c, 1, 0) != 1)
			goto out;
	} else {
		struct sockaddr_in sb = rds_sin(addr, port + 1);

		a = rds_bound(addr, port);
		b = rds_bound(addr, port + 1);
		if (a < 0 || b < 0 || ioctl(a, SIOCRDSSETTOS, &tos) ||
		    rds_sendto(a, &c, 1, 0, &sb) != 1 ||
		    rds_recvfrom(b, &c, 1, 0, NULL) != 1)
			goto out;
	}
	ret = 0;
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return ret;
}

/* The loopback connection addr -> addr with tos, checked column by column. */
#define EXPECT_LOOP_LINE(text, addr, tos) do {				\
	struct proc_conn _c;						\
									\
	ASSERT_EQ(1, proc_conn_find(text, addr, addr, tos, NULL, &_c))	\
		TH_LOG("no single line %s -> %s tos %u in:\n%s", addr,	\
		       addr, tos, text);				\
	EXPECT_STREQ("loopback", _c.transport);				\
	EXPECT_STREQ("up", _c.state);					\
	EXPECT_GE(600UL, _c.secs);					\
	EXPECT_STREQ("-", _c.credits);					\
	EXPECT_EQ(0U, _c.queued);					\
	EXPECT_EQ(0U, _c.unacked);					\
	EXPECT_EQ(0ULL, _c.retransmitted);				\
	EXPECT_STREQ("-", _c.generation);				\
	EXPECT_STREQ("-", _c.last_reset);				\
} while (0)

TEST(connections)
{
	char *text;

	ASSERT_EQ(0, exchange("127.0.0.1", PORT, TOS_A, false))
		TH_LOG("loopback exchange: %s", strerror(errno));
	ASSERT_EQ(0, exchange("::1", PORT, TOS_A, true))
		TH_LOG("::1 exchange: %s", strerror(errno));
	text = proc_read(PROC_CONNS);
	ASSERT_NE(NULL, text) TH_LOG("%s: %s", PROC_CONNS, strerror(errno));
	EXPECT_TRUE(proc_header_is(text, PROC_CONNS_HDR))
		TH_LOG("header: %.*s", (int)strcspn(text, "\n"), text);
	EXPECT_LOOP_LINE(text, "127.0.0.1", TOS_A);
	EXPECT_LOOP_LINE(text, "::1", TOS_A);
	free(text);
}

/* RDS_INFO_COUNTERS of fd: n records (malloc'ed), NULL on error. */
static struct rds_info_counter *counters(int fd, unsigned int *n)
{
	void *buf;
	socklen_t len;

	if (rds_info_get(fd, RDS_INFO_COUNTERS, &buf, &len) !=
	    (int)sizeof(struct rds_info_counter)) {
		free(buf);
		return NULL;
	}
	*n = len / sizeof(struct rds_info_counter);
	return buf;
}

TEST(stats)
{
	struct rds_info_counter *before, *after;
	unsigned int nb, na, i, lines;
	int fd = rds_socket();
	char *text, *line, name[64];
	unsigned long long v, lo, hi;

	ASSERT_LE(0, fd);
	before = counters(fd, &nb);
	ASSERT_NE(NULL, before);
	text = proc_read(PROC_STATS);
	ASSERT_NE(NULL, text) TH_LOG("%s: %s", PROC_STATS, strerror(errno));
	after = counters(fd, &na);
	ASSERT_NE(NULL, after);
	ASSERT_EQ(nb, na);

	lines = proc_lines(text);
	EXPECT_EQ(nb, lines);
	line = text;
	for (i = 0; i < nb && i < lines; i++) {
		ASSERT_EQ(2, sscanf(line, "%63s %llu", name, &v))
			TH_LOG("line %u: %.*s", i + 1,
			       (int)strcspn(line, "\n"), line);
		EXPECT_STREQ((char *)before[i].name, name);
		EXPECT_STREQ((char *)after[i].name, name);
		lo = before[i].value < after[i].value ? before[i].value :
							after[i].value;
		hi = before[i].value ^ after[i].value ^ lo;
		EXPECT_TRUE(v >= lo && v <= hi)
			TH_LOG("%s: %llu, RDS_INFO_COUNTERS %llu then %llu",
			       name, v, (unsigned long long)before[i].value,
			       (unsigned long long)after[i].value);
		line = strchr(line, '\n') + 1;
	}
	free(text);
	free(before);
	free(after);
	close(fd);
}

TEST(netns)
{
	int ns0 = open("/proc/self/ns/net", O_RDONLY);
	struct proc_conn c;
	char *text;

	ASSERT_LE(0, ns0);
	ASSERT_EQ(0, exchange("127.0.0.1", PORT + 2, TOS_A, false));

	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	/* the sockets stay open: the namespace and its connection with them */
	int a = rds_bound("127.0.0.1", PORT + 4);
	int b = rds_bound("127.0.0.1", PORT + 5);
	struct sockaddr_in sb = rds_sin("127.0.0.1", PORT + 5);
	unsigned char tos = TOS_B;
	char ch = 'n';

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, ioctl(a, SIOCRDSSETTOS, &tos));
	ASSERT_EQ(1, rds_sendto(a, &ch, 1, 0, &sb));
	ASSERT_EQ(1, rds_recvfrom(b, &ch, 1, 0, NULL));

	text = proc_read(PROC_CONNS);
	ASSERT_NE(NULL, text) TH_LOG("new namespace: %s", strerror(errno));
	EXPECT_TRUE(proc_header_is(text, PROC_CONNS_HDR));
	EXPECT_LOOP_LINE(text, "127.0.0.1", TOS_B);
	EXPECT_EQ(0, proc_conn_find(text, "127.0.0.1", "127.0.0.1", TOS_A,
				    NULL, &c))
		TH_LOG("the first namespace's connection seen:\n%s", text);
	free(text);

	text = proc_read(PROC_DEVICES);
	ASSERT_NE(NULL, text);
	EXPECT_TRUE(proc_header_is(text, PROC_DEVICES_HDR));
	EXPECT_EQ(1, proc_lines(text)) TH_LOG("devices:\n%s", text);
	free(text);

	EXPECT_EQ(NULL, proc_read(PROC_STATS));
	EXPECT_EQ(ENOENT, errno);

	/* back in the first namespace, the new one still alive */
	ASSERT_EQ(0, setns(ns0, CLONE_NEWNET));
	text = proc_read(PROC_CONNS);
	ASSERT_NE(NULL, text);
	EXPECT_LOOP_LINE(text, "127.0.0.1", TOS_A);
	EXPECT_EQ(0, proc_conn_find(text, "127.0.0.1", "127.0.0.1", TOS_B,
				    NULL, &c))
		TH_LOG("the new namespace's connection seen:\n%s", text);
	free(text);
	close(a);
	close(b);
	close(ns0);
}

TEST(unprivileged)
{
	static const char *const files[] = {
		PROC_CONNS, PROC_DEVICES, PROC_STATS,
	};
	struct stat st;
	unsigned int i;
	int status;
	pid_t pid;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, stat(files[i], &st)) TH_LOG("%s", files[i]);
		EXPECT_EQ((mode_t)(S_IFREG | 0444), st.st_mode)
			TH_LOG("%s: mode %o", files[i], st.st_mode);
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int bad = 0;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		for (i = 0; i < 3; i++) {
			char *text = proc_read(files[i]);

			if (!text || proc_lines(text) < 1) {
				printf("# nobody: %s: %s\n", files[i],
				       text ? "empty" : strerror(errno));
				bad |= 1 << i;
			}
			free(text);
		}
		fflush(stdout);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("nobody could not read them");
}

TEST_HARNESS_MAIN
