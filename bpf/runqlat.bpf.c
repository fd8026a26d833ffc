// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* runqlat: how long tasks wait on a run queue, from wakeup (or preemption) to running. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "runqlat.h"

const volatile enum runqlat_group group = GROUP_NONE;
const volatile __u64 unit_ns = 1000;
const volatile pid_t target_tgid;
const volatile bool filter_cgroup;
const volatile __u64 cgroup_id;
const volatile int cgroup_level;

/* Events lost because a map was full; user space reports them at exit. */
__u64 lost_starts;
__u64 lost_hists;

/* Wakeup times. tp_btf programs keep them with the task itself... */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} start_task SEC(".maps");

/* ...raw_tp programs, which get no BTF task pointer, in a hash by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} start_tid SEC(".maps");

/* The single histogram of a run without grouping: per CPU, no atomics. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} hist_all SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct runqlat_hist);
} hist_by SEC(".maps");

static const struct runqlat_hist empty_hist;

static __always_inline bool wanted(struct task_struct *t, bool btf)
{
	if (!TASK_FIELD(btf, t, pid))	/* the idle task never waits for a CPU */
		return false;
	if (target_tgid && TASK_FIELD(btf, t, tgid) != target_tgid)
		return false;
	if (filter_cgroup && !task_in_cgroup(t, cgroup_id, cgroup_level))
		return false;
	return true;
}

static __always_inline __u64 *start_of(struct task_struct *t, bool btf, bool create)
{
	__u32 tid;

	if (btf)
		return bpf_task_storage_get(&start_task, t, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = TASK_FIELD(btf, t, pid);
	if (create) {
		__u64 zero = 0;

		bpf_map_update_elem(&start_tid, &tid, &zero, BPF_NOEXIST);
	}
	return bpf_map_lookup_elem(&start_tid, &tid);
}

static __always_inline void enqueue(struct task_struct *t, bool btf)
{
	__u64 *ts;

	if (!wanted(t, btf))
		return;
	ts = start_of(t, btf, true);
	if (ts)
		*ts = bpf_ktime_get_ns();
	else
		__sync_fetch_and_add(&lost_starts, 1);
}

static __always_inline void record(struct task_struct *t, __u64 delta, bool btf)
{
	struct runqlat_hist *h;
	struct hist *all;
	__u32 key = 0;

	delta /= unit_ns;
	if (group == GROUP_NONE) {
		all = bpf_map_lookup_elem(&hist_all, &key);
		if (all)
			hist_add_local(all, delta);
		return;
	}
	if (group == GROUP_PIDNS)
		key = task_pidns(t);
	else if (group == GROUP_THREAD)
		key = TASK_FIELD(btf, t, pid);
	else
		key = TASK_FIELD(btf, t, tgid);
	h = map_lookup_or_init(&hist_by, &key, &empty_hist);
	if (!h) {
		__sync_fetch_and_add(&lost_hists, 1);
		return;
	}
	if (!h->comm[0] && group != GROUP_PIDNS) {
		if (group == GROUP_THREAD)
			bpf_probe_read_kernel_str(h->comm, sizeof(h->comm), &t->comm);
		else
			bpf_probe_read_kernel_str(h->comm, sizeof(h->comm),
						  &BPF_CORE_READ(t, group_leader)->comm);
	}
	hist_add_shared(&h->hist, delta);
}

static __always_inline void on_switch(struct task_struct *prev, struct task_struct *next,
				      bool btf)
{
	__u64 *ts, delta;

	/* A task preempted while runnable goes straight back on a run queue. */
	if (task_state(prev, btf) == TASK_RUNNING)
		enqueue(prev, btf);

	ts = start_of(next, btf, false);
	if (!ts || !*ts)
		return;
	delta = bpf_ktime_get_ns() - *ts;
	*ts = 0;
	if (!btf) {
		__u32 tid = TASK_FIELD(btf, next, pid);

		bpf_map_delete_elem(&start_tid, &tid);
	}
	record(next, delta, btf);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(runqlat_wakeup, struct task_struct *p)
{
	enqueue(p, true);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(runqlat_wakeup_new, struct task_struct *p)
{
	enqueue(p, true);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(runqlat_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(prev, next, true);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(runqlat_raw_wakeup, struct task_struct *p)
{
	enqueue(p, false);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(runqlat_raw_wakeup_new, struct task_struct *p)
{
	enqueue(p, false);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(runqlat_raw_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	on_switch(prev, next, false);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
