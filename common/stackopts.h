/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The options every stack tool shares: its files, how user stacks are walked and named. */
#ifndef BPFSCOPE_STACKOPTS_H
#define BPFSCOPE_STACKOPTS_H

#include <argp.h>
#include <stdbool.h>

#include "unwinder.h"

struct stack_opts {
	const char *svg, *pprof;	/* --svg FILE, --pprof FILE; "-": the standard output */
	unsigned int debuginfod;	/* --debuginfod[=SECONDS]; 0: off */
	struct unwind_opts unwind;	/* --unwind, --unwind-memory */
	bool unwind_given, unwind_memory_given;
};

extern struct stack_opts stack_opts;

/* An argp group for cli's @group: --svg, --pprof, --unwind, --unwind-memory, --debuginfod. */
extern const struct argp stack_opts_argp;

/* What a stack tool was asked to print, for stack_opts__warn_ignored(). */
struct stack_view {
	bool user_only, kernel_only;	/* -U, -K */
	bool delimit, annotate;		/* -d, -a */
	bool folded, json;		/* -f, --json */
};

/*
 * Warns of the options that the others make moot: -d beside one kind of
 * stack, -a without kernel stacks, the user-stack options with -K or
 * --unwind=fp, --json beside -f (folded output wins).
 */
void stack_opts__warn_ignored(const struct stack_view *v);

#endif
