/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Stacks stored by the BPF side, read back and symbolized into frames, for every stack tool. */
#ifndef BPFSCOPE_STACKREAD_H
#define BPFSCOPE_STACKREAD_H

#include <stdint.h>
#include <linux/types.h>

#include "stack_key.h"
#include "stackset.h"

struct syms;
struct stackread;

/* What a hash map entry costs the kernel beyond its key and value (struct htab_elem, rounded up). */
#define STACKREAD_MAP_OVERHEAD 64

/* Kernel memory for one entry of the stacks map, preallocated. */
#define STACKREAD_ENTRY_BYTES (sizeof(struct stack_trace) + sizeof(__u64) + STACKREAD_MAP_OVERHEAD)

/* Reads stacks from @stack_map_fd, a map of struct stack_trace by 64-bit key. */
struct stackread *stackread__new(struct syms *syms, int stack_map_fd);
void stackread__free(struct stackread *st);

/* A user stack's frames with the calls inlined at them, at most. */
#define STACKREAD_MAX_USER (2 * STACK_MAX_DEPTH)

/*
 * The frames of stack @key, leaf first, into @out (room for
 * STACK_MAX_DEPTH; for user stacks STACKREAD_MAX_USER, with a frame for
 * each inlined call, FRAME_INLINE, before the frame it is inlined in,
 * where the binary has DWARF). Kernel stacks lose the tracer's own frames
 * (bpf_prog_*, bpf_trace_run*, __bpf_trace_*, __traceiter_*). A stack that
 * was taken but could not be stored (STACK_LOST, or gone from the map) is
 * one frame, "[Missed Kernel Stack]" or "[Missed User Stack]", and is
 * counted; STACK_NONE is no frames. A user address in a known binary that
 * no symbol covers is named by the binary, "[libc.so.6]"; one in no binary
 * "[unknown]". Returns the count.
 */
int stackread__kernel(struct stackread *st, __u64 key, struct frame *out);
int stackread__user(struct stackread *st, const struct proc_key *proc, __u64 key, struct frame *out);

/*
 * For runs without end (--pprof-dir): once the stacks map is half full,
 * deletes those that were there at the last call and that no count read
 * since used, so that the map does not fill with stacks of the past. A
 * stack deleted just as it comes back, or held by a thread off its CPU
 * since before the last call, is missed once, and counted
 * (stackread__missed). The first call only notes what the map holds. 0 or
 * negative errno.
 */
int stackread__prune(struct stackread *st);

/* A random seed for the BPF side's stack hashes (its stack_seed). */
__u64 stackread__seed(void);

/* Stacks that could not be read back, for the report at exit. */
uint64_t stackread__missed(const struct stackread *st);

#endif
