/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Processes that run a runtime's interpreter, as user space found them: each runtime's walk starts from its entry. */
#ifndef BPFSCOPE_PROCS_BPF_H
#define BPFSCOPE_PROCS_BPF_H

#include "walk.bpf.h"
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
 * Process @k's entry if it runs a runtime in this image of it: an entry
 * made from /proc, which tells neither exec count nor start in
 * nanoseconds, is bound to the image of the first walk that finds it.
 */
static __always_inline struct runtime_proc *runtime_proc_of(const struct proc_key *k)
{
	__u32 tgid = k->tgid;
	struct runtime_proc *p = bpf_map_lookup_elem(&runtime_procs, &tgid);

	if (!p)
		return NULL;
	if (p->exec_id == UNWIND_EXEC_ANY) {
		p->start_ns = k->start_ns;
		p->exec_id = k->exec_id;
	}
	if (p->exec_id != k->exec_id || p->start_ns != k->start_ns)
		return NULL;
	return p;
}

/*
 * A field of a copy of a runtime's structure (@size bytes at @buf) at byte
 * @off, as its layout in user space says: 0 where the layout points past
 * the copy, which the verifier then knows it cannot.
 */
static __always_inline __u64 runtime_field64(const __u8 *buf, __u32 size, __u32 off)
{
	if (off > size - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __u32 runtime_field32(const __u8 *buf, __u32 size, __u32 off)
{
	if (off > size - 4)
		return 0;
	return *(const __u32 *)(buf + off);
}

static __always_inline __u8 runtime_field8(const __u8 *buf, __u32 size, __u32 off)
{
	if (off > size - 1)
		return 0;
	return buf[off];
}

/*
 * Runtime frames announced to user space, which reads their names while
 * the process lives: per CPU, by a hash of the frame, its data and its
 * process; a slot taken by another is announced again, which user space
 * takes as seen.
 */
#define RUNTIME_SEEN_SLOTS 4096

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[RUNTIME_SEEN_SLOTS]);
} runtime_seen SEC(".maps");

/* Tells user space of runtime frame @v (and its @data) of process @k, unless this CPU told it lately. */
static __always_inline void runtime_announce(const struct proc_key *k, __u64 v, __u64 data)
{
	__u64 tag = v ^ data * 0xbf58476d1ce4e5b9ULL ^ k->start_ns * 0x9e3779b97f4a7c15ULL ^
		    k->tgid, *slot;
	__u64 (*seen)[RUNTIME_SEEN_SLOTS];
	__u32 zero = 0, i;

	seen = bpf_map_lookup_elem(&runtime_seen, &zero);
	if (!seen)
		return;
	i = (tag ^ tag >> 29) & (RUNTIME_SEEN_SLOTS - 1);
	slot = &(*seen)[i];
	if (*slot == tag)
		return;
	*slot = tag;
	proc_announce_frame(k, v, data);
}

#endif
