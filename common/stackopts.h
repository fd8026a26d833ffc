/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The options every stack tool shares: its files, how user stacks are walked and named. */
#ifndef BPFSCOPE_STACKOPTS_H
#define BPFSCOPE_STACKOPTS_H

#include <argp.h>

#include "unwinder.h"

struct stack_opts {
	const char *svg, *pprof;	/* --svg FILE, --pprof FILE; "-": the standard output */
	unsigned int debuginfod;	/* --debuginfod[=SECONDS]; 0: off */
	struct unwind_opts unwind;	/* --unwind, --unwind-memory */
};

extern struct stack_opts stack_opts;

/* An argp group for cli's @group: --svg, --pprof, --unwind, --unwind-memory, --debuginfod. */
extern const struct argp stack_opts_argp;

#endif
