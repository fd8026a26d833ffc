/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The runtimes the native walk hands its stack to: each puts its interpreter's functions in place of the loop that runs them. */
#ifndef BPFSCOPE_RUNTIMES_BPF_H
#define BPFSCOPE_RUNTIMES_BPF_H

#include "walk.bpf.h"
#include "runtimes/python.bpf.h"
#include "runtimes/v8.bpf.h"
#include "runtimes/hotspot.bpf.h"
#include "runtimes/php.bpf.h"
#include "runtimes/perl.bpf.h"
#include "runtimes/ruby.bpf.h"

/* A walk of process @k begins: a runtime that runs there readies its part. */
static __always_inline void runtimes_start(const struct proc_key *k)
{
	py_start(k);
	v8_start(k);
	hotspot_start(k);
	php_start(k);
	perl_start(k);
	ruby_start(k);
}

/*
 * The walk is at code without CFI (@bcp: the first frame's bytecode
 * pointer register, or 0): a runtime whose code it is (a JVM's compiled
 * Java) steps to its caller: 0, or 1 to end the walk there. -1: none's,
 * frame pointers then.
 */
static __always_inline int runtimes_step(__u64 bcp)
{
	return hotspot_step(bcp);
}

/*
 * The native walk of @n frames is in @t (this CPU's stack_scratch): each
 * runtime's frames take the place of its interpreter's, and user space is
 * told of those it names while the process lives. The new depth.
 * A process runs one runtime (runtime_procs has one entry a process):
 * the others leave the stack as it is.
 */
static __always_inline int runtimes_merge(struct stack_trace *t, int n)
{
	return hotspot_announce(ruby_merge(t, perl_merge(t, php_merge(t, v8_merge(t,
							 py_merge(t, n))))));
}

#endif
