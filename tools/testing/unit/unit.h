/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the table-driven unit tests share: TAP lines, a failure counter
 * that keeps going after a failure (the first 20 are printed), and a
 * seeded xorshift generator whose seed each test prints.
 */
#ifndef _RDS_UNIT_H
#define _RDS_UNIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

static int failures;
static int tap_n;
static bool quiet;	/* a negative control runs: its failures are expected */

#define EXPECT(cond, fmt, ...) do {					\
	if (!(cond)) {							\
		if (++failures < 20 && !quiet)				\
			printf("# FAIL %s:%d: " fmt "\n", __FILE__,	\
			       __LINE__, ##__VA_ARGS__);		\
	}								\
} while (0)

/* One TAP line: ok unless failures grew past before. */
static inline void report(const char *name, int before)
{
	printf("%sok %d %s\n", failures > before ? "not " : "", ++tap_n, name);
}

static uint64_t rng = 1;

static inline uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#endif /* _RDS_UNIT_H */
