/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The report of a stack tool counting by struct stack_key: text, folded, JSON, SVG, pprof. */
#ifndef BPFSCOPE_STACKREPORT_H
#define BPFSCOPE_STACKREPORT_H

#include <stdbool.h>

#include "flamegraph.h"
#include "pprof.h"

struct cli;
struct stacks;
struct stackset;
struct syms;

struct stackreport {
	const struct cli *cli;
	struct syms *syms;
	struct stacks *stacks;
	int counts_fd;			/* hash: struct stack_key -> __u64 */
	bool user_only, kernel_only;	/* -U, -K */
	bool delimit;			/* -d: "--" / "-" between kernel and user */
	bool annotate_kernel;		/* -a: "_[k]" after kernel frames */
	bool folded;			/* -f */
	const char *svg, *pprof;	/* --svg FILE, --pprof FILE */
	const char *json_value;		/* the JSON name of a count: "samples", "total_us" */
	struct flamegraph_opts flamegraph;
	struct pprof_opts profile;
};

/* Prints every count, largest last as bcc does, and writes the files asked for. */
int stackreport__print(struct stackreport *r);

/* Notes processes found in the counts (a safety net for the BPF side's announcements). */
int stackreport__track(struct stackreport *r);

/* Writes --svg and --pprof files of @set, saying on stderr where; 0 or negative errno. */
int stackreport__write_files(const struct stackset *set, const char *svg, const char *pprof,
			     const struct flamegraph_opts *fg, const struct pprof_opts *pp);

#endif
