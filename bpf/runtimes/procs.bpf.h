/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Processes that run a runtime's interpreter, as user space found them: each runtime's walk starts from its entry. */
#ifndef BPFSCOPE_PROCS_BPF_H
#define BPFSCOPE_PROCS_BPF_H

#include "stack_key.h"
#include "runtimes/runtime_proc.h"

/* By tgid; sized by user space (common/unwinder.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct runtime_proc);
} runtime_procs SEC(".maps");

/*
 * Process @k's entry if it runs runtime @runtime in this image of it: an
 * entry made from /proc, which tells neither exec count nor start in
 * nanoseconds, is bound to the image of the first walk that finds it.
 */
static __always_inline struct runtime_proc *runtime_proc_of(const struct proc_key *k,
							  __u32 runtime)
{
	__u32 tgid = k->tgid;
	struct runtime_proc *p = bpf_map_lookup_elem(&runtime_procs, &tgid);

	if (!p || p->runtime != runtime)
		return NULL;
	if (p->exec_id == UNWIND_EXEC_ANY) {
		p->start_ns = k->start_ns;
		p->exec_id = k->exec_id;
	}
	if (p->exec_id != k->exec_id || p->start_ns != k->start_ns)
		return NULL;
	return p;
}

#endif
