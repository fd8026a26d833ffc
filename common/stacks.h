/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Stacks stored by the BPF side, read back and symbolized into frames, for every stack tool. */
#ifndef BPFSCOPE_STACKS_H
#define BPFSCOPE_STACKS_H

#include <stdint.h>
#include <linux/types.h>

#include "stack_key.h"
#include "stackset.h"

struct syms;
struct stacks;

#define STACKS_MAX_DEPTH STACK_MAX_DEPTH

/* What a hash map entry costs the kernel beyond its key and value (struct htab_elem, rounded up). */
#define STACKS_MAP_OVERHEAD 64

/* Kernel memory for one entry of the stacks map, preallocated. */
#define STACKS_ENTRY_BYTES (sizeof(struct stack_trace) + sizeof(__u64) + STACKS_MAP_OVERHEAD)

/* Reads stacks from @stack_map_fd, a map of struct stack_trace by 64-bit key. */
struct stacks *stacks__new(struct syms *syms, int stack_map_fd);
void stacks__free(struct stacks *st);

/*
 * The frames of stack @key, leaf first, into @out (room for
 * STACKS_MAX_DEPTH). Kernel stacks lose the tracer's own frames
 * (bpf_prog_*, bpf_trace_run*, __bpf_trace_*, __traceiter_*). A stack that
 * was taken but could not be stored (STACK_LOST, or gone from the map) is
 * one frame, "[Missed Kernel Stack]" or "[Missed User Stack]", and is
 * counted; STACK_NONE is no frames. Returns the count.
 */
int stacks__kernel(struct stacks *st, __u64 key, struct frame *out);
int stacks__user(struct stacks *st, const struct proc_key *proc, __u64 key, struct frame *out);

/* A random seed for the BPF side's stack hashes (its stack_seed). */
__u64 stacks__seed(void);

/* Stacks that could not be read back, for the report at exit. */
uint64_t stacks__missed(const struct stacks *st);

#endif
