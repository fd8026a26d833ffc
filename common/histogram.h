/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Printing histograms the way bcc does, as JSON, and their estimated percentiles. */
#ifndef BPFSCOPE_HISTOGRAM_H
#define BPFSCOPE_HISTOGRAM_H

#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "hist.h"

struct json;

/* Adds @src's counts into @dst (per-CPU copies, intervals). */
void hist__merge(struct hist *dst, const struct hist *src);
uint64_t hist__total(const struct hist *h);

/* Bounds of slot @i: [low, high], both inclusive. */
uint64_t hist__slot_low(int i);
uint64_t hist__slot_high(int i);

/*
 * bcc's log2 layout: "     usecs : count     distribution" with 40-star
 * bars, switching to the wide layout when values pass 2^32. Prints nothing
 * for an empty histogram, as bcc does.
 */
void hist__print_log2(FILE *f, const struct hist *h, const char *unit);

/* bcc's linear layout; bucket i is labelled @first + i * @step. */
void hist__print_linear(FILE *f, const uint64_t *counts, int n, uint64_t first,
			uint64_t step, const char *unit);

/*
 * Percentile @p (0..100) estimated from the buckets: the value where the
 * running count crosses p%, interpolated linearly inside its bucket. The
 * maximum is the upper bound of the highest non-empty bucket.
 */
/* bcc's extended line: "avg = A usecs, total: T usecs, count: N". */
void hist__print_summary(FILE *f, const struct hist *h, const char *unit);

uint64_t hist__percentile(const struct hist *h, double p);
uint64_t hist__max(const struct hist *h);
void hist__print_percentiles(FILE *f, const struct hist *h, const char *unit);

/*
 * Adds "unit", "buckets" (one {"low","high","count"} per text row), "total"
 * and "sum" to the open JSON object; with @percentiles also "p50", "p90",
 * "p99" and "max".
 */
void hist__json(struct json *j, const struct hist *h, const char *unit, int percentiles);

#endif
