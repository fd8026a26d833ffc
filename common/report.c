// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Printing a labelled histogram as text or JSON, the way every histogram tool reports. */
#include <stdio.h>

#include "cli.h"
#include "escape.h"
#include "histogram.h"
#include "json.h"
#include "prom.h"
#include "report.h"
#include "run.h"

void report__begin(const struct cli *cli, time_t when)
{
	if (cli->json || prom__active())
		return;
	putchar('\n');
	if (cli->timestamp) {
		run__print_time(stdout, when);
		putchar('\n');
	}
}

void report__hist(const struct hist_report *r, const struct hist *h, const char *title,
		  const struct label *labels, int nlabels)
{
	const struct cli *cli = r->cli;

	if (prom__active()) {
		prom__add_hist(r->metric, r->help, labels, nlabels, h, r->unit);
		return;
	}
	if (cli->json) {
		struct json j;

		json__begin_line(&j, stdout);
		if (cli->timestamp) {
			char t[16];
			FILE *m = fmemopen(t, sizeof(t), "w");

			run__print_time(m, r->when);
			fclose(m);
			json__str(&j, "time", t);
		}
		for (int i = 0; i < nlabels; i++) {
			if (labels[i].str)
				json__str(&j, labels[i].key, labels[i].str);
			else
				json__i64(&j, labels[i].key, labels[i].num);
		}
		hist__json(&j, h, r->unit, cli->percentiles);
		if (r->summary && hist__total(h))
			json__u64(&j, "avg", h->sum / hist__total(h));
		json__end_line(&j);
		return;
	}
	if (title) {
		/* Titles carry names other users chose: process names, paths, symbols. */
		putchar('\n');
		escape__print(stdout, title, ESCAPE_TEXT);
		putchar('\n');
	}
	hist__print_log2(stdout, h, r->unit);
	if (r->summary)
		hist__print_summary(stdout, h, r->unit);
	if (cli->percentiles)
		hist__print_percentiles(stdout, h, r->unit);
}
