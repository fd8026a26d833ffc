/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The CFI unwinder's user side: binaries' tables and processes' mappings, kept in BPF maps. */
#ifndef BPFSCOPE_UNWINDER_H
#define BPFSCOPE_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "unwind.h"

struct argp_state;
struct bpf_map;
struct bpf_program;
struct syms;

enum unwind_method {
	UNWIND_AUTO,	/* CFI where binaries have it, else frame pointers */
	UNWIND_FP,	/* the kernel's frame-pointer walk only */
	UNWIND_DWARF,	/* the same, as perf --call-graph names it: every kernel walks CFI */
};

/* What --unwind and --unwind-memory set, shared by the stack tools. */
struct unwind_opts {
	enum unwind_method method;
	unsigned long memory_mb;	/* for tables and processes' mappings */
};

#define UNWIND_DEFAULT_MEMORY_MB 32

/* Parses --unwind METHOD (auto, fp, dwarf) for an argp parser. */
enum unwind_method unwind__parse_method(struct argp_state *state, const char *arg);

/* The unwinder's part of a stack tool's BPF object (bpf/unwind.bpf.h, bpf/stackstore.bpf.h). */
struct unwind_bpf {
	struct bpf_map *rows, *procs, *build_ids, *files;
	struct bpf_program *on_exec, *on_exit, *on_new_area;
	struct bpf_map *runtime_procs;	/* the runtimes' (bpf/runtimes/procs.bpf.h) */
	struct bpf_map *counts;		/* struct unwind_counts, per CPU */
	struct bpf_map *exit_notes;
	struct bpf_map *walk_memos;	/* bpf/walkmemo.bpf.h */
};

#define UNWIND_BPF(skel)                                                                   \
	((struct unwind_bpf){ (skel)->maps.unwind_rows, (skel)->maps.unwind_procs,          \
			      (skel)->maps.unwind_build_ids, (skel)->maps.unwind_files,     \
			      (skel)->progs.stack_on_exec, (skel)->progs.stack_on_exit,     \
			      (skel)->progs.stack_on_new_area,                              \
			      (skel)->maps.runtime_procs, (skel)->maps.unwind_counters,     \
			      (skel)->maps.unwind_exit_notes, (skel)->maps.walk_memos })

/*
 * Before the BPF object is loaded: decides whether user stacks are walked
 * with CFI (@o's method: every kernel can), and sizes the maps for it,
 * for one process (-p) or the whole system. With -v says which. Returns 1
 * for CFI, 0 for frame pointers.
 */
int unwind__configure(const struct unwind_opts *o, const struct unwind_bpf *b, bool one_process);

struct unwinder;

/*
 * After loading: fills the maps for every binary and process @syms sees
 * from now on, and (whole system) has processes read as they exec. NULL
 * and errno on failure.
 */
struct unwinder *unwinder__new(struct syms *syms, const struct unwind_bpf *b);

/* Says on stderr, at exit, what did not fit and how stacks were walked. */
void unwinder__warn_losses(const struct unwinder *u);

/* Stops following @syms and execs, and frees the tables' user-side records. */
void unwinder__free(struct unwinder *u);

#endif
