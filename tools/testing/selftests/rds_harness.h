/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kselftest_harness.h (from the kernel sources, at build time) with the
 * harness's time scale: every test's timeout (30 s, or its
 * TEST_F_TIMEOUT) is multiplied by RDS_TIME_SCALE, which run-tests sets
 * for slow kernels (debug builds under TCG), as it scales the plans'.
 * Include this instead of kselftest_harness.h.
 */
#ifndef RDS_HARNESS_H
#define RDS_HARNESS_H

#include <stdlib.h>

#include "kselftest_harness.h"

static inline void rds_harness_scale(void)
{
	const char *e = getenv("RDS_TIME_SCALE");
	int scale = e ? atoi(e) : 1;
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	if (scale <= 1 || scale > 100)
		return;
	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout *= scale;
}

#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN \
	static void __attribute__((constructor)) \
	__constructor_order_last(void) \
	{ \
		if (!__constructor_order) \
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	} \
	int main(int argc, char **argv) \
	{ \
		rds_harness_scale(); \
		return test_harness_run(argc, argv); \
	}

#endif
