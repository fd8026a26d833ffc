/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The report of a stack tool: counts by key read back, as text, folded, JSON, SVG and pprof. */
#ifndef BPFSCOPE_STACKREPORT_H
#define BPFSCOPE_STACKREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "flamegraph.h"
#include "maps.h"
#include "pprof.h"
#include "stack_key.h"
#include "stackread.h"
#include "stackset.h"

struct argp_state;
struct cli;
struct json;
struct stackread;
struct syms;
struct stackreport;

/* Room for the frames of one thread: kernel, "-", user with inlined calls. */
#define STACKREPORT_MAX_THREAD (STACK_MAX_DEPTH + 1 + STACKREAD_MAX_USER)

/* Room for the frames of one folded key: offwaketime's two threads, and names. */
#define STACKREPORT_MAX_FRAMES (2 * STACKREPORT_MAX_THREAD + 8)

/*
 * What a tool's key means. The default, for struct stack_key, is used when
 * the tool gives none (profile, offcputime).
 */
struct stackreport_ops {
	/* Root-first frames of @key for folded output and files; their count. */
	size_t (*fold)(struct stackreport *r, const void *key, struct frame *out);
	/* bcc's multi-line text for one count. */
	void (*print_text)(struct stackreport *r, const void *key, uint64_t value);
	/* The fields of a JSON line other than the frames, which @fold gave. */
	void (*json_fields)(struct stackreport *r, const void *key, uint64_t value,
			    struct json *j);
	/* Tracks (syms__track) the processes @key names. */
	void (*track)(struct stackreport *r, const void *key);
};

struct stackreport {
	const struct cli *cli;
	struct syms *syms;
	struct stackread *stacks;
	struct swapped counts;		/* SWAPPED_HASH: key -> __u64 */
	size_t key_size;		/* 0: sizeof(struct stack_key) */
	const struct stackreport_ops *ops;	/* NULL: struct stack_key's */
	bool user_only, kernel_only;	/* -U, -K */
	bool delimit;			/* -d: "--" / "-" between kernel and user */
	bool annotate_kernel;		/* -a: "_[k]" after kernel frames */
	bool folded;			/* -f */
	bool containers;		/* --containers: where each process runs starts its stacks */
	const char *svg, *pprof;	/* --svg FILE, --pprof FILE; "-" is stdout */
	/*
	 * --pprof-dir: each report is a profile file in this directory, of
	 * what was counted since the last (profile.time_nanos on), taken out
	 * of the maps; at most @pprof_keep files are kept.
	 */
	const char *pprof_dir;
	unsigned int pprof_keep;
	const char *json_value;		/* the JSON name of a count: "samples", "total_us" */
	struct flamegraph_opts flamegraph;
	struct pprof_opts profile;
	void *ctx;			/* the tool's, for its ops */
};

/*
 * Prints every count, largest last as bcc does, and writes the files asked
 * for. Says what went wrong itself; 0 or negative errno.
 */
int stackreport__print(struct stackreport *r);

/*
 * Notes processes found in the counts (a safety net for the BPF side's
 * announcements), and reads the maps the BPF side asked for again. About
 * once a second.
 */
int stackreport__track(struct stackreport *r);

/*
 * The frames of one thread's stacks, leaf first: kernel, then (with -d) a
 * "-" delimiter, then user; kernel frames with "_[k]" under -a. Returns the
 * count written to @out (room for STACKREPORT_MAX_THREAD).
 */
size_t stackreport__thread(struct stackreport *r, const struct proc_key *proc,
			   __u64 user_stack, __u64 kernel_stack, struct frame *out);

/*
 * Where process @proc runs, as the frame before a stack's root
 * (FRAME_CONTAINER), into @out: 1, or 0 when it is not known (nor asked
 * for: stack_opts__syms()). A fold begins with it: JSON and pprof take it
 * as a label, the other outputs as a frame only with --containers.
 */
size_t stackreport__container(struct stackreport *r, const struct proc_key *proc,
			      struct frame *out);

/* The frame that names a thread's state in profile --wall ("[sleeping]"); NULL for none. */
const char *stackreport__state_name(unsigned int state);

/* Prints frames @f[0..@n) in bcc's text layout: one indented line each, "--" for a delimiter. */
void stackreport__print_frames(const struct frame *f, size_t n);

/*
 * For an argp parser's end: --svg and --pprof must differ, and "-" (the
 * standard output) only where nothing else is printed there (-f, --json).
 */
void stackreport__check_args(struct argp_state *state, const char *svg, const char *pprof,
			     bool stdout_taken);

/* Before tracing: can the files be written (in @pprof_dir)? Says why not; 0 or negative errno. */
int stackreport__check_files(const char *svg, const char *pprof, const char *pprof_dir);

#endif
