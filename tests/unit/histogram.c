// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Prints histograms of synthetic data through common/histogram.c, for
 * tests/common.bats to compare with bcc's layout: cases no real event can
 * reach (values past 2^32, the last u64 slot, empty histograms).
 * usage: histogram CASE
 */
#include <stdio.h>
#include <string.h>

#include "histogram.h"
#include "json.h"

static void add(struct hist *h, uint64_t v, uint64_t n)
{
	int slot = v ? 63 - __builtin_clzll(v) : 0;

	h->slots[slot] += n;
	h->sum += v * n;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	struct hist h = {};
	struct json j;

	if (!strcmp(c, "small")) {
		add(&h, 0, 1);
		add(&h, 1, 2);
		add(&h, 5, 10);
		add(&h, 100, 4);
		hist__print_log2(stdout, &h, "usecs");
	} else if (!strcmp(c, "wide")) {
		add(&h, 3, 7);
		add(&h, 1ULL << 40, 1);
		hist__print_log2(stdout, &h, "nsecs");
	} else if (!strcmp(c, "top")) {
		add(&h, UINT64_MAX, 1);
		hist__print_log2(stdout, &h, "nsecs");
		hist__print_percentiles(stdout, &h, "nsecs");
		json__begin_line(&j, stdout);
		hist__json(&j, &h, "nsecs", 0);
		json__end_line(&j);
	} else if (!strcmp(c, "empty")) {
		hist__print_log2(stdout, &h, "usecs");
		hist__print_percentiles(stdout, &h, "usecs");
	} else if (!strcmp(c, "percentiles")) {
		add(&h, 10, 50);	/* slot 8..15 */
		add(&h, 100, 40);	/* slot 64..127 */
		add(&h, 1000, 10);	/* slot 512..1023 */
		hist__print_percentiles(stdout, &h, "usecs");
	} else if (!strcmp(c, "linear")) {
		uint64_t counts[] = { 1, 0, 4, 2 };

		hist__print_linear(stdout, counts, 4, 0, 1, "slot");
	} else if (!strcmp(c, "json")) {
		add(&h, 5, 3);
		json__begin_line(&j, stdout);
		json__str(&j, "comm", "a\"b\\c\n");
		hist__json(&j, &h, "usecs", 1);
		json__end_line(&j);
	} else {
		fprintf(stderr, "unknown case '%s'\n", c);
		return 2;
	}
	return 0;
}
