/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What offcputime and offwaketime share: bcc's options for them, and the thread filter. */
#ifndef BPFSCOPE_OFFCPU_TOOLS_H
#define BPFSCOPE_OFFCPU_TOOLS_H

#include <argp.h>
#include <stdbool.h>
#include <linux/types.h>

#include "offcpu.h"

struct cli;

struct offcpu_opts {
	pid_t pid, tid;
	bool user_threads, kernel_threads;
	bool user_only, kernel_only;	/* -U, -K */
	bool delimit, folded;
	unsigned long stack_storage;
	unsigned long long min_us, max_us;
	long state;
	bool state_set;
	const char *svg, *pprof;	/* --svg FILE, --pprof FILE */
};

extern struct offcpu_opts offcpu;
extern const struct argp_option offcpu_options[];

/* The options' argp parser; ARGP_ERR_UNKNOWN for keys it does not know. */
error_t offcpu__parse(int key, char *arg, struct argp_state *state);

/* The filter the BPF side reads, from the options. */
struct offcpu_filter offcpu__filter(void);

/* 0, or a printed error when -p/-t names no process. */
int offcpu__check_target(void);

/*
 * bcc's "Tracing off-CPU time (us) of all threads by user + kernel stack
 * ... Hit Ctrl-C to end." line, for @what ("off-CPU time", "blocked time");
 * on stderr with -f or --json.
 */
void offcpu__banner(const struct cli *cli, const char *what);

/* What a run could not count, for offcpu__warn_lost(). */
struct offcpu_lost {
	unsigned long long stacks;	/* stack traces the stack map had no room for */
	unsigned long long starts;	/* periods with no room to note their start */
	unsigned long long ends;	/* periods whose end the kernel never reported */
	unsigned long long keys;	/* periods beyond the totals map's @max_keys */
	unsigned int max_keys;
	const char *key_name;		/* what a totals key is: "stacks", "stack pairs" */
};

/* Warns at exit of each kind of loss in @lost; @periods names what was timed. */
void offcpu__warn_lost(const struct offcpu_lost *lost, const char *periods);

struct syms;
struct ring_buffer;

/*
 * Follows the BPF side's new_pids ring buffer (@fd): each process seen for
 * the first time gets its maps read at once, for symbols that outlive it.
 */
struct ring_buffer *offcpu__follow_pids(int fd, struct syms *syms);

#endif
