/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Helpers every BPF program shares: histogram slots, task filters, CO-RE fixes. */
#ifndef BPFSCOPE_COMMON_BPF_H
#define BPFSCOPE_COMMON_BPF_H

#include "hist.h"

#define TASK_RUNNING 0
#define MAX_CGROUP_LEVEL 64

/* floor(log2(v)), 0 for v == 0; BPF has no count-leading-zeros instruction. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	return r | (__u32)(v >> 1);
}

static __always_inline __u32 hist_slot(__u64 v)
{
	__u32 slot = log2_u64(v);

	/*
	 * Bound the finished value: left to itself clang masks one term of
	 * log2_u64()'s ORs, and verifiers before 6.x's OR bounds tracking
	 * (6.1's among them) then see an unbounded index.
	 */
	barrier_var(slot);
	return slot & (HIST_SLOTS - 1);
}

/* For a histogram only this CPU writes (per-CPU maps): no atomics needed. */
static __always_inline void hist_add_local(struct hist *h, __u64 v)
{
	h->slots[hist_slot(v)]++;
	h->sum += v;
}

/* For a histogram in a shared map, updated from any CPU. */
static __always_inline void hist_add_shared(struct hist *h, __u64 v)
{
	__sync_fetch_and_add(&h->slots[hist_slot(v)], 1);
	__sync_fetch_and_add(&h->sum, v);
}

/*
 * Looks @key up in @map, creating it from @init (a global, since values
 * such as struct hist do not fit the 512-byte BPF stack) when missing.
 * NULL when the map is full.
 */
static __always_inline void *map_lookup_or_init(void *map, const void *key, const void *init)
{
	void *val = bpf_map_lookup_elem(map, key);
	long err;

	if (val)
		return val;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another CPU created it */)
		return NULL;
	return bpf_map_lookup_elem(map, key);
}

/*
 * A hash map that user space takes whole without losing an update: two of
 * it, NAME_a and NAME_b, behind NAME, a one-slot array of maps. Programs
 * update the one in the slot. User space puts the other in the slot, a
 * map-in-map update the kernel returns from only once no program that
 * could still hold the first is running, and then reads and empties the
 * first (common/maps.h, swapped__take). Deleting entries while programs
 * still update them through pointers taken before would lose those updates.
 */
#define SWAPPED_HASH(name, key_type, value_type, entries)			\
	struct name##_map {							\
		__uint(type, BPF_MAP_TYPE_HASH);				\
		__uint(max_entries, entries);					\
		__type(key, key_type);						\
		__type(value, value_type);					\
	};									\
	struct name##_map name##_a SEC(".maps"), name##_b SEC(".maps");		\
	struct {								\
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);			\
		__uint(max_entries, 1);						\
		__type(key, __u32);						\
		__array(values, struct name##_map);				\
	} name SEC(".maps") = { .values = { &name##_a } }

/* map_lookup_or_init() in the map a SWAPPED_HASH's slot holds now. */
static __always_inline void *swapped_lookup_or_init(void *slot, const void *key, const void *init)
{
	__u32 zero = 0;
	void *map = bpf_map_lookup_elem(slot, &zero);

	return map ? map_lookup_or_init(map, key, init) : NULL;
}

/* task_struct::state was renamed __state in 5.14. */
struct task_struct___pre_5_14 {
	volatile long state;
} __attribute__((preserve_access_index));

/*
 * Programs given BTF task pointers (tp_btf, fentry) may load fields
 * directly; raw_tp and kprobe programs need a helper call per read. Callers
 * pass a constant @btf, so each program keeps only its own path.
 */
#define TASK_FIELD(btf, t, field) ((btf) ? (t)->field : BPF_CORE_READ(t, field))

/*
 * The current task, for CO-RE reads: a BTF pointer from 5.11, an untyped
 * one on the legacy BPF side (kernels before 5.17, Makefile), which must
 * also load on 5.10, where bpf_get_current_task_btf does not exist.
 */
#ifdef BPFSCOPE_LEGACY
#define current_task() ((struct task_struct *)bpf_get_current_task())
#else
#define current_task() bpf_get_current_task_btf()
#endif

static __always_inline long task_state(struct task_struct *t, bool btf)
{
	struct task_struct___pre_5_14 *old = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return TASK_FIELD(btf, t, __state);
	return TASK_FIELD(btf, old, state);
}

/*
 * Keeps @kept, a row's name, the one its task goes by now, @now (16
 * bytes, TASK_COMM_LEN). Named once at its first event, a process started
 * while traced would keep its parent's: it waits, reads and faults before
 * its exec renames it.
 */
static __always_inline void comm_keep(char *kept, const char *now)
{
	bool same = true;

	for (int i = 0; i < 16; i++)
		same &= kept[i] == now[i];
	if (!same)
		__builtin_memcpy(kept, now, 16);
}

/* cgroup::ancestor_ids[] (ids) became cgroup::ancestors[] (pointers) in 5.19/6.0. */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* Is cgroup @cgrp the cgroup v2 group @id (at hierarchy @level) or below it? */
static __always_inline bool cgroup_under(struct cgroup *cgrp, __u64 id, int level)
{
	struct cgroup *anc;
	__u64 anc_id;

	if (!cgrp || level < 0 || level >= MAX_CGROUP_LEVEL)
		return false;
	if (BPF_CORE_READ(cgrp, level) < level)
		return false;
	if (bpf_core_field_exists(cgrp->ancestors)) {
		if (bpf_core_read(&anc, sizeof(anc), &cgrp->ancestors[level]))
			return false;
		return BPF_CORE_READ(anc, kn, id) == id;
	}
	if (bpf_core_read(&anc_id, sizeof(anc_id),
			  &((struct cgroup___ids *)cgrp)->ancestor_ids[level]))
		return false;
	return anc_id == id;
}

/*
 * Is task @t in the cgroup v2 group @id (at hierarchy @level) or below it?
 * Reads the task's own cgroup, not current's: callers filter the task they
 * measure, which in scheduler hooks is often not the one running.
 */
static __always_inline bool task_in_cgroup(struct task_struct *t, __u64 id, int level)
{
	return cgroup_under(BPF_CORE_READ(t, cgroups, dfl_cgrp), id, level);
}

static __always_inline __u32 task_pidns(struct task_struct *t)
{
	return BPF_CORE_READ(t, nsproxy, pid_ns_for_children, ns.inum);
}

#endif
