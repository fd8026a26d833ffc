/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --prometheus: what a histogram tool counts, accumulated since start and served at /metrics. */
#ifndef BPFSCOPE_PROM_H
#define BPFSCOPE_PROM_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "hist.h"

struct label;

/* Default of --prometheus-series: label sets each metric keeps apart. */
#define PROM_SERIES_DEFAULT 200

/*
 * Starts serving /metrics on @listen ("[ADDR:]PORT", localhost without
 * ADDR; port 0 picks a free one) from libmicrohttpd's own thread, and says
 * where on stdout. cli__parse() calls it for --prometheus: a busy port
 * fails before anything is loaded, and metrics are empty until collected. Each metric keeps at most @max_series label sets; later
 * ones are added up in one series whose labels all say "[other]", and
 * counted. 0, or a negative errno after saying what failed.
 */
int prom__start(const char *listen, unsigned int max_series);
/* Is @listen "[ADDR:]PORT" as prom__start() takes it? */
bool prom__valid_listen(const char *listen);
void prom__stop(void);
bool prom__active(void);
/* The port it serves on (the one picked, where port 0 asked for one); 0 when not serving. */
unsigned int prom__port(void);

/*
 * Adds @h, counted in @unit ("nsecs", "usecs", "msecs"), to the histogram
 * bpfscope_TOOL_@metric (e.g. "wait_seconds") under @labels. Histograms
 * are deltas: the tools take them out of their maps each collection.
 */
void prom__add_hist(const char *metric, const char *help, const struct label *labels,
		    int nlabels, const struct hist *h, const char *unit);

/* Adds @delta to the counter bpfscope_TOOL_@metric (e.g. "lookups_total"). */
void prom__add_counter(const char *metric, const char *help, const struct label *labels,
		       int nlabels, uint64_t delta);

/*
 * Sets the counter bpfscope_TOOL_lost_total{reason=@reason} to @total, what
 * the BPF side could not count so far (a full map, an untraced switch).
 */
void prom__lost(const char *reason, uint64_t total);

#endif
