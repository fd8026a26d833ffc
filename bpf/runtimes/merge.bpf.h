/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The merge an interpreter's runtime makes of the native walk: the stack copied over, each frame of its loop replaced by the functions it runs. */
#ifndef BPFSCOPE_MERGE_BPF_H
#define BPFSCOPE_MERGE_BPF_H

#include "walk.bpf.h"

/*
 * One merge a walk, by the runtime the process runs (runtimes.bpf.h's
 * runtimes_frame() and runtimes_replace_step() say whose steps it takes):
 * in a map, as the stack is too large for BPF's.
 */
struct merge_state {
	struct stack_trace out;		/* the stack, the runtime's frames in */
	__u64 native;			/* the loop's frame being replaced */
	__u32 in, nin, nout;
	__u32 runtime;			/* enum runtime_id; 0: the walk's stack stays as it is */
	__u8 replacing;			/* a loop's frame, one of the runtime's frames a step */
	__u8 pushed;			/* ... which one did take the place of */
	__u8 cut;			/* the merged stack had no room for all */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct merge_state);
} merge_scratch SEC(".maps");

/* What the merge does with the native walk's next frame, as its runtime says. */
enum merge_action {
	MERGE_KEEP,		/* copied over */
	MERGE_DROP,		/* left out */
	MERGE_REPLACE,		/* the runtime's frames in its place, itself where none */
	MERGE_BEFORE,		/* the runtime's frames first, then the frame is asked of again */
};

static __always_inline struct merge_state *merge_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&merge_scratch, &zero);
}

/* Appends @v to the merged stack, if there is room. */
static __always_inline void merge_emit(struct merge_state *m, __u64 v)
{
	__u32 o = m->nout;

	if (o >= STACK_MAX_DEPTH) {
		m->cut = 1;
		return;
	}
	m->out.ips[o] = v;
	m->nout = o + 1;
}

/* One of the runtime's frames, in place of the loop's. */
static __always_inline void merge_push(struct merge_state *m, __u64 v)
{
	merge_emit(m, v);
	m->pushed = 1;
}

/* The loop's frame is replaced, or kept where none of the runtime's took its place. */
static __always_inline void merge_replaced(struct merge_state *m)
{
	m->replacing = 0;
	if (!m->pushed)
		merge_emit(m, m->native);
}

#endif
