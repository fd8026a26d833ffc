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
	unsigned int symbol_memory_mb;	/* --symbol-memory */
	struct unwind_opts unwind;	/* --unwind, --unwind-memory */
	bool no_demangle;		/* --no-demangle */
	bool containers;		/* --containers */
	bool unwind_given, unwind_memory_given, symbol_memory_given;
	const char *pprof_dir;		/* --pprof-dir DIR: continuous profiles */
	unsigned int pprof_interval;	/* --pprof-interval, seconds */
	unsigned int pprof_keep;	/* --pprof-keep, files */
	bool pprof_interval_given, pprof_keep_given;
};

extern struct stack_opts stack_opts;

/*
 * An argp group for cli's @group: --svg, --pprof, --pprof-dir,
 * --pprof-interval, --pprof-keep, --unwind, --unwind-memory, --debuginfod,
 * --symbol-memory, --no-demangle, --containers.
 */
extern const struct argp stack_opts_argp;

struct syms;

/*
 * Does --svg or --pprof write to the standard output ('-')? Then, as with
 * -f and --json, the tool's opening line goes to stderr: the file is all.
 */
bool stack_opts__stdout_taken(void);

struct cli;

/*
 * A symbolizer as the options ask (its memory, debuginfod, cgroups for the
 * outputs that label by container); NULL once said why.
 */
struct syms *stack_opts__syms(const struct cli *cli);

/* What a stack tool was asked to print, for stack_opts__warn_ignored(). */
struct stack_view {
	bool user_only, kernel_only;	/* -U, -K */
	bool delimit, annotate;		/* -d, -a */
	bool folded, json;		/* -f, --json */
};

/*
 * Warns of the options that the others make moot: -d beside one kind of
 * stack, -a without kernel stacks, the user-stack options with -K or
 * --unwind=fp, --json beside -f (folded output wins), the outputs beside
 * --pprof-dir and its options without it.
 */
void stack_opts__warn_ignored(const struct stack_view *v);

struct run;

/* With --pprof-dir, a report (a profile file) every --pprof-interval. */
void stack_opts__run(struct run *r);

#endif
