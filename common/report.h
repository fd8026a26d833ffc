/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One histogram of a report, as bcc's text or as a JSON line, with the tool's labels. */
#ifndef BPFSCOPE_REPORT_H
#define BPFSCOPE_REPORT_H

#include <stdbool.h>
#include <time.h>

#include "hist.h"

struct cli;

struct label {
	const char *key;	/* "pid", "disk", "flags", "function" ... */
	const char *str;	/* the value as a string, or NULL for @num */
	long long num;
};

struct hist_report {
	const struct cli *cli;	/* --json, -T, --percentiles */
	time_t when;
	const char *unit;	/* "usecs", "msecs", "nsecs" */
	bool summary;		/* bcc's "avg = ..., total: ..., count: ..." line (-e) */
	/* --prometheus: the histogram bpfscope_TOOL_@metric and what it measures, how. */
	const char *metric;	/* "wait_seconds" */
	const char *help;
};

/*
 * Prints @h: in text, "\n" and @title (e.g. "disk = vda") when given, the
 * log2 histogram, then the summary and percentiles when asked; with --json,
 * one line holding the labels, "time" (with -T), the buckets and totals.
 * With --prometheus, adds it to the exposition's series instead.
 */
void report__hist(const struct hist_report *r, const struct hist *h, const char *title,
		  const struct label *labels, int nlabels);

/*
 * What starts a text report: the blank line bcc prints and, with -T,
 * the time. Nothing in JSON mode or with --prometheus.
 */
void report__begin(const struct cli *cli, time_t when);

#endif
