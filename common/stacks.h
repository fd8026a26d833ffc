/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Stack ids from a BPF stack map to symbolized frames, for every stack tool. */
#ifndef BPFSCOPE_STACKS_H
#define BPFSCOPE_STACKS_H

#include <stdint.h>
#include <sys/types.h>

#include "stackset.h"

struct syms;
struct stacks;

#define STACKS_MAX_DEPTH 127	/* the kernel's PERF_MAX_STACK_DEPTH */

struct stacks *stacks__new(struct syms *syms, int stack_map_fd);
void stacks__free(struct stacks *st);

/*
 * The frames of stack @id, leaf first, into @out (room for STACKS_MAX_DEPTH).
 * Kernel stacks lose the tracer's own frames (bpf_prog_*, bpf_trace_run*,
 * __bpf_trace_*, __traceiter_*). A stack that could not be taken (a full
 * map, a hash collision) is one frame, "[Missed Kernel Stack]" or
 * "[Missed User Stack]", and is counted; -EFAULT, a task with no user
 * stack (kernel threads), is no frames. Returns the count.
 */
int stacks__kernel(struct stacks *st, int id, struct frame *out);
int stacks__user(struct stacks *st, pid_t tgid, int id, struct frame *out);

/* Stacks that could not be taken, for the report at exit. */
uint64_t stacks__missed(const struct stacks *st);

/* Is @id a stack that could not be taken (not merely absent)? */
static inline int stacks__id_lost(int id)
{
	return id < 0 && id != -14 /* EFAULT */;
}

#endif
