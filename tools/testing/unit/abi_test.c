// SPDX-License-Identifier: GPL-2.0
/*
 * abi_test: our include/uapi/linux/rds.h against the system <linux/rds.h>.
 *
 * abi_sys.c and abi_ours.c build the same table of ABI facts (constant
 * values, type sizes, member offsets) from the two headers; every entry of
 * the system table must be present in ours with identical values.  The
 * list of names the system header declares is generated at build time
 * (gen_abi_names.sh), so a name the table forgets fails the coverage test.
 *
 * Output is TAP; the exit status is 0 only if every test passed.
 */
#include <stdio.h>
#include <string.h>

#include "abi_table.h"

static const char *const gen_names[] = {
#define ABI_GEN_NAMES
#include "abi_gen.h"
#undef ABI_GEN_NAMES
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static unsigned int test_no;
static unsigned int failures;

static void result(int ok, const char *fmt, const char *name)
{
	printf("%s %u - ", ok ? "ok" : "not ok", ++test_no);
	printf(fmt, name);
	putchar('\n');
	if (!ok)
		failures++;
}

static const struct abi_entry *lookup(const struct abi_entry *tab,
				      unsigned int n, const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(tab[i].name, name))
			return &tab[i];
	return NULL;
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* A generated name covers a key; "call M(" covers every "call M(arg)". */
static int covers(const char *gen, const char *key)
{
	size_t len = strlen(gen);

	if (len && gen[len - 1] == '(')
		return starts_with(key, gen);
	return !strcmp(gen, key);
}

static void describe(const char *who, const struct abi_entry *e)
{
	int i;

	if (!e || !e->present) {
		printf("#   %-6s (not defined)\n", who);
		return;
	}
	printf("#   %-6s", who);
	for (i = 0; i < 4 && e->lbl[i]; i++)
		printf(" %s=%lld", e->lbl[i], e->v[i]);
	putchar('\n');
}

static void compare(const struct abi_entry *sys)
{
	const struct abi_entry *ours;
	int ok;

	ours = lookup(abi_ours_table, abi_ours_count, sys->name);
	ok = sys->present && ours && ours->present &&
	     !memcmp(sys->v, ours->v, sizeof(sys->v));
	result(ok, "%s", sys->name);
	if (!ok) {
		describe("system", sys);
		describe("ours", ours);
	}
}

static void check_unique(void)
{
	unsigned int i, j;
	int ok = 1;

	for (i = 0; i < abi_sys_count; i++)
		for (j = i + 1; j < abi_sys_count; j++)
			if (!strcmp(abi_sys_table[i].name,
				    abi_sys_table[j].name)) {
				printf("# duplicate entry: %s\n",
				       abi_sys_table[i].name);
				ok = 0;
			}
	result(ok, "%s", "table: every entry is listed once");
}

/* Everything the system header declares is checked... */
static void check_coverage(void)
{
	unsigned int i, j;
	int ok = 1;

	for (i = 0; i < ARRAY_SIZE(gen_names); i++) {
		for (j = 0; j < abi_sys_count; j++)
			if (covers(gen_names[i], abi_sys_table[j].name))
				break;
		if (j == abi_sys_count) {
			printf("# not checked: %s\n", gen_names[i]);
			ok = 0;
		}
	}
	printf("# the system header declares %zu names\n",
	       ARRAY_SIZE(gen_names));
	result(ok, "%s",
	       "coverage: every name in the system header is checked");
}

/* ...and nothing is checked that the system header does not declare. */
static void check_stale(void)
{
	unsigned int i, j;
	int ok = 1;

	for (j = 0; j < abi_sys_count; j++) {
		for (i = 0; i < ARRAY_SIZE(gen_names); i++)
			if (covers(gen_names[i], abi_sys_table[j].name))
				break;
		if (i == ARRAY_SIZE(gen_names)) {
			printf("# unknown to the system header: %s\n",
			       abi_sys_table[j].name);
			ok = 0;
		}
	}
	result(ok, "%s",
	       "coverage: every checked name is in the system header");
}

int main(void)
{
	unsigned int i;

	printf("TAP version 13\n");
	printf("1..%u\n", abi_sys_count + 3);

	for (i = 0; i < abi_sys_count; i++)
		compare(&abi_sys_table[i]);
	check_unique();
	check_coverage();
	check_stale();

	if (failures)
		printf("# %u of %u tests failed\n", failures, test_no);
	return failures ? 1 : 0;
}
