// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bcc-compatible histogram text, JSON buckets and percentile estimates. */
#include <inttypes.h>
#include <string.h>

#include "histogram.h"
#include "json.h"

void hist__merge(struct hist *dst, const struct hist *src)
{
	for (int i = 0; i < HIST_SLOTS; i++)
		dst->slots[i] += src->slots[i];
	dst->sum += src->sum;
}

uint64_t hist__total(const struct hist *h)
{
	uint64_t n = 0;

	for (int i = 0; i < HIST_SLOTS; i++)
		n += h->slots[i];
	return n;
}

uint64_t hist__slot_low(int i)
{
	return i == 0 ? 0 : 1ULL << i;
}

uint64_t hist__slot_high(int i)
{
	return i >= 63 ? UINT64_MAX : (1ULL << (i + 1)) - 1;
}

static int last_slot(const struct hist *h)
{
	int last = -1;

	for (int i = 0; i < HIST_SLOTS; i++)
		if (h->slots[i])
			last = i;
	return last;
}

/* bcc's bar: floor(width * val / max) stars, padded to @width. */
static void print_bar(FILE *f, uint64_t val, uint64_t max, int width)
{
	int stars = max ? (int)((double)val * width / max) : 0;

	if (stars > width)
		stars = width;
	fputc('|', f);
	for (int i = 0; i < width; i++)
		fputc(i < stars ? '*' : ' ', f);
	fputs("|\n", f);
}

void hist__print_log2(FILE *f, const struct hist *h, const char *unit)
{
	int last = last_slot(h);
	uint64_t max = 0;
	/* bcc switches layout when its slot index (ours + 1) passes 32. */
	int wide = last >= 32;
	int width = wide ? 20 : 10, stars = wide ? 20 : 40;

	if (last < 0)
		return;
	for (int i = 0; i <= last; i++)
		if (h->slots[i] > max)
			max = h->slots[i];

	fprintf(f, "%*s%-*s : count     distribution\n", wide ? 15 : 5, "", wide ? 29 : 19, unit);
	for (int i = 0; i <= last; i++) {
		fprintf(f, "%*" PRIu64 " -> %-*" PRIu64 " : %-8" PRIu64 " ", width,
			hist__slot_low(i), width, hist__slot_high(i), (uint64_t)h->slots[i]);
		print_bar(f, h->slots[i], max, stars);
	}
}

void hist__print_linear(FILE *f, const uint64_t *counts, int n, uint64_t first,
			uint64_t step, const char *unit)
{
	uint64_t max = 0;
	int last = -1;

	for (int i = 0; i < n; i++) {
		if (counts[i])
			last = i;
		if (counts[i] > max)
			max = counts[i];
	}
	if (last < 0)
		return;
	fprintf(f, "     %-13s : count     distribution\n", unit);
	for (int i = 0; i <= last; i++) {
		fprintf(f, "        %-10" PRIu64 " : %-8" PRIu64 " ", first + i * step, counts[i]);
		print_bar(f, counts[i], max, 40);
	}
}

void hist__print_summary(FILE *f, const struct hist *h, const char *unit)
{
	uint64_t n = hist__total(h);

	if (!n)
		return;
	fprintf(f, "\navg = %llu %s, total: %llu %s, count: %llu\n",
		(unsigned long long)(h->sum / n), unit, (unsigned long long)h->sum, unit,
		(unsigned long long)n);
}

uint64_t hist__percentile(const struct hist *h, double p)
{
	uint64_t total = hist__total(h), seen = 0;
	double target;

	if (!total)
		return 0;
	target = p / 100.0 * total;
	if (target < 1)
		target = 1;
	for (int i = 0; i < HIST_SLOTS; i++) {
		uint64_t n = h->slots[i];

		if (!n)
			continue;
		if (seen + n >= target) {
			double lo = hist__slot_low(i), hi = hist__slot_high(i);
			double v = lo + (hi - lo) * ((target - seen) / n);

			/* (double)UINT64_MAX is 2^64, which converts back to no integer at all. */
			return v >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)v;
		}
		seen += n;
	}
	return hist__max(h);
}

uint64_t hist__max(const struct hist *h)
{
	int last = last_slot(h);

	return last < 0 ? 0 : hist__slot_high(last);
}

void hist__print_percentiles(FILE *f, const struct hist *h, const char *unit)
{
	if (!hist__total(h))
		return;
	fprintf(f, "percentiles (estimated from the buckets):\n");
	fprintf(f, "        p50 = %" PRIu64 " %s\n", hist__percentile(h, 50), unit);
	fprintf(f, "        p90 = %" PRIu64 " %s\n", hist__percentile(h, 90), unit);
	fprintf(f, "        p99 = %" PRIu64 " %s\n", hist__percentile(h, 99), unit);
	fprintf(f, "        max <= %" PRIu64 " %s\n", hist__max(h), unit);
}

void hist__json(struct json *j, const struct hist *h, const char *unit, int percentiles)
{
	int last = last_slot(h);

	json__str(j, "unit", unit);
	json__begin_array(j, "buckets");
	for (int i = 0; i <= last; i++) {
		json__begin_object(j, NULL);
		json__u64(j, "low", hist__slot_low(i));
		json__u64(j, "high", hist__slot_high(i));
		json__u64(j, "count", h->slots[i]);
		json__end_object(j);
	}
	json__end_array(j);
	json__u64(j, "total", hist__total(h));
	json__u64(j, "sum", h->sum);
	if (percentiles) {
		json__u64(j, "p50", hist__percentile(h, 50));
		json__u64(j, "p90", hist__percentile(h, 90));
		json__u64(j, "p99", hist__percentile(h, 99));
		json__u64(j, "max", hist__max(h));
	}
}
