/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The runtimes the native walk hands its stack to: each puts its interpreter's functions in place of the loop that runs them. */
#ifndef BPFSCOPE_RUNTIMES_BPF_H
#define BPFSCOPE_RUNTIMES_BPF_H

#include "walk.bpf.h"
#include "runtimes/merge.bpf.h"
#include "runtimes/python.bpf.h"
#include "runtimes/v8.bpf.h"
#include "runtimes/hotspot.bpf.h"
#include "runtimes/php.bpf.h"
#include "runtimes/perl.bpf.h"
#include "runtimes/ruby.bpf.h"

/* BPFSCOPE_NO_RUNTIMES: the native walk alone, for what the runtimes cost it (tests/bench). */
#if !defined(BPFSCOPE_LEGACY) && !defined(BPFSCOPE_NO_RUNTIMES)

/*
 * A walk of process @k begins: the runtime it runs, if any (one lookup
 * for all: runtime_procs has one entry a process), readies its part. True
 * if it runs one.
 */
static __always_inline bool runtimes_start(const struct proc_key *k)
{
	struct merge_state *m = merge_state();
	struct runtime_proc *p = runtime_proc_of(k);

	if (m)
		m->runtime = 0;
	py_start(k, p);
	v8_start(k, p);
	hotspot_start(k, p);
	php_start(k, p);
	perl_start(k, p);
	ruby_start(k, p);
	return p && p->runtime;
}

/*
 * The walk is at code without CFI (@bcp: the first frame's bytecode
 * pointer register, or 0): a runtime whose code it is (a JVM's compiled
 * Java) steps to its caller: 0, or 1 to end the walk there. -1: none's,
 * frame pointers then.
 */
static __always_inline int runtimes_step(__u64 bcp)
{
	int r = hotspot_step(bcp);

	return r >= 0 ? r : v8_step();
}

/* What the merge does with native frame @v, the walk's @j-th, as the runtime that merges says. */
static __always_inline int runtimes_frame(struct merge_state *m, __u64 v, __u32 j)
{
	switch (m->runtime) {
	case RUNTIME_PYTHON:
		return py_frame(m, v, j);
	case RUNTIME_PHP:
		return php_frame(m, v);
	case RUNTIME_PERL:
		return perl_frame(m, v);
	case RUNTIME_RUBY:
		return ruby_frame(m, v, j);
	}
	return MERGE_KEEP;
}

/* One step of replacing a loop's frame: the runtime's next frame, or the end of them. */
static __always_inline void runtimes_replace_step(struct merge_state *m)
{
	switch (m->runtime) {
	case RUNTIME_PYTHON:
		return py_replace_step(m);
	case RUNTIME_PHP:
		return php_replace_step(m);
	case RUNTIME_PERL:
		return perl_replace_step(m);
	case RUNTIME_RUBY:
		return ruby_replace_step(m);
	}
	merge_replaced(m);
}

/* The merge of a walk of @n frames begins: a runtime readies what it needs of the walk's stack. */
static __always_inline void runtimes_merge_begin(struct merge_state *m, int n)
{
	if (m->runtime == RUNTIME_PYTHON)
		py_merge_begin(n);
}

/* The merge ends while a loop's frame is being replaced: it is, as far as its runtime got. */
static __always_inline void runtimes_replaced(struct merge_state *m)
{
	if (m->runtime == RUNTIME_PYTHON)
		return py_replaced(m);
	merge_replaced(m);
}

/* One step of the merge: a runtime's frame, or the next native frame; 1 to stop. A global function, checked once. */
__noinline int runtimes_merge_one(void)
{
	struct merge_state *m = merge_state();
	struct stack_trace *in;
	__u32 zero = 0, j;
	__u64 v;

	in = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!m || !in || m->cut)
		return 1;
	if (m->replacing) {
		runtimes_replace_step(m);
		return 0;
	}
	j = m->in;
	if (j >= m->nin || j >= STACK_MAX_DEPTH)
		return 1;
	v = in->ips[j];
	switch (runtimes_frame(m, v, j)) {
	case MERGE_BEFORE:
		m->replacing = 1;
		m->pushed = 1;
		return 0;
	case MERGE_REPLACE:
		m->replacing = 1;
		m->pushed = 0;
		m->native = v;
		break;
	case MERGE_DROP:
		break;
	default:
		merge_emit(m, v);
	}
	m->in = j + 1;
	return 0;
}

static long runtimes_merge_step(__u32 i, void *arg)
{
	return runtimes_merge_one() != 0;
}

/*
 * After the native walk of @n frames into @t (stack_scratch's): each frame
 * of the loop of the runtime the process runs becomes the frames of its
 * own that loop runs. The new depth.
 */
static __always_inline int runtimes_merge_loops(struct stack_trace *t, int n)
{
	struct merge_state *m = merge_state();
	bool deeper;

	if (!m)
		return n;
	if (m->runtime && n > 0 && n <= STACK_MAX_DEPTH) {
		deeper = n == STACK_MAX_DEPTH && (t->ips[STACK_MAX_DEPTH - 1] & UNWIND_DEEPER) &&
			 t->ips[STACK_MAX_DEPTH - 1] < UNWIND_MARK_NO_CFI;
		if (deeper)
			t->ips[STACK_MAX_DEPTH - 1] &= ~UNWIND_DEEPER;
		m->in = m->nout = 0;
		m->nin = n;
		m->replacing = m->cut = 0;
		runtimes_merge_begin(m, n);
		/* Every native frame, and a runtime's frame for each slot and as many passed. */
		bpf_loop(3 * STACK_MAX_DEPTH, runtimes_merge_step, NULL, 0);
		if (m->replacing && !m->cut)
			runtimes_replaced(m);
		bpf_probe_read_kernel(t, sizeof(*t), &m->out);
		if ((deeper || m->cut) && m->nout == STACK_MAX_DEPTH &&
		    t->ips[STACK_MAX_DEPTH - 1] < UNWIND_MARK_NO_CFI)
			t->ips[STACK_MAX_DEPTH - 1] |= UNWIND_DEEPER;
	} else {
		m->nout = n;
	}
	/* Read back from the map: one depth for the verifier to follow, however the merge went. */
	return m->nout;
}

/*
 * The native walk of @n frames is in @t (this CPU's stack_scratch): each
 * runtime's frames take the place of its interpreter's, and user space is
 * told of those it names while the process lives. The new depth.
 * A process runs one runtime: the others leave the stack as it is.
 */
static __always_inline int runtimes_merge(struct stack_trace *t, int n)
{
	return hotspot_announce(runtimes_merge_loops(t, v8_merge(t, n)));
}

#else

/* Before 5.17 no runtime's frames are walked or merged: that takes bpf_loop. */
static __always_inline bool runtimes_start(const struct proc_key *k)
{
	return false;
}

static __always_inline int runtimes_step(__u64 bcp)
{
	return -1;
}

static __always_inline int runtimes_merge(struct stack_trace *t, int n)
{
	return n;
}

#endif /* BPFSCOPE_LEGACY, BPFSCOPE_NO_RUNTIMES */

#endif
