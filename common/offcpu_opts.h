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
	unsigned long stack_storage;	/* stacks the kernel keeps */
	unsigned long hash_storage;	/* totals it keeps */
	unsigned long long min_us, max_us;
	long state;
	bool state_set;
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
 * 0, or a printed error when --svg or --pprof cannot be written, or the
 * storage sizes ask for more memory than the machine has to give (a totals
 * entry's key is @key_size bytes).
 */
int offcpu__check_files(size_t key_size);

/*
 * bcc's "Tracing off-CPU time (us) of all threads by user + kernel stack
 * ... Hit Ctrl-C to end." line, for @what ("off-CPU time", "blocked time");
 * on stderr with -f or --json.
 */
void offcpu__banner(const struct cli *cli, const char *what);

struct stackread;
struct stackreport;
struct swapped;
struct bpf_map;
struct unwinder;
struct unwind_bpf;
struct syms;
struct bpf_map;

/*
 * Before loading: how user stacks are walked (unwind__configure() for the
 * options); 1 for CFI, 0 for frame pointers, or negative errno (said).
 */
int offcpu__unwind_setup(const struct unwind_bpf *m);

/* After loading, with CFI: the unwinder, with -p's process's tables made now. NULL, errno. */
struct unwinder *offcpu__unwinder(struct syms *syms, const struct unwind_bpf *m);

/*
 * Fills what offcputime and offwaketime report alike into @r: the options,
 * the stacks of @stacks_fd, the totals of @totals_fd, off-CPU microseconds
 * for pprof. The tool adds its titles and, for another key, its ops. 0 or
 * -ENOMEM.
 */
/* Sizes the two maps of a SWAPPED_HASH of totals: --hash-storage-size, the second 1 without --pprof-dir. */
void offcpu__size_totals(struct bpf_map *a, struct bpf_map *b);

int offcpu__report_init(struct stackreport *r, const struct cli *cli, struct syms *syms,
			int stacks_fd, const struct swapped *totals);

/*
 * Where the start of each thread's period is kept: with the task (tp_btf
 * programs, @btf) or in a hash by thread id (raw_tp); the other map is not
 * created, or made small. What -v says of the choice.
 */
void offcpu__thread_maps(struct bpf_map *task_storage, struct bpf_map *by_tid, bool btf);
const char *offcpu__method(bool btf);

/*
 * Warns at exit of what a run could not count: the BPF side's @lost, the
 * stack traces @stacks had no room for, periods beyond the @totals map.
 * @periods names what was timed, @keys what a totals entry is.
 */
void offcpu__warn_lost(const struct offcpu_losses *lost, const struct stackread *stacks,
		       const struct bpf_map *totals, const char *periods, const char *keys);

struct syms;
struct ring_buffer;

/*
 * Follows the BPF side's new_pids ring buffer (@fd): each process seen for
 * the first time gets its maps read at once, for symbols that outlive it.
 */
struct ring_buffer *offcpu__follow_pids(int fd, struct syms *syms);

/* Says how many of those notes the ring had no room for (@lost, its per-CPU count). */
void offcpu__warn_notes_lost(const struct bpf_map *lost);

#endif
