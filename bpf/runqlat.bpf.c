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

/* Events lost; user space reports them at exit. */
__u64 lost_starts;	/* a map was full */
__u64 lost_hists;
__u64 lost_untraced;	/* the kernel did not trace the switch that ended a wait */

/*
 * When a task was queued, and its switch count (nvcsw + nivcsw) then: the
 * kernel counts every switch away from a task before it traces it, so a
 * count that moved by the time the wait ends says that the task ran, and
 * left, in between without a sched_switch to it (the development VM's
 * kernel does that now and then): the wait's end was not seen.
 */
struct start {
	__u64 ts;
	__u64 switches;
};

/* tp_btf programs keep them with the task itself... */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct start);
} start_task SEC(".maps");

/* ...raw_tp programs, which get no BTF task pointer, in a hash by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct start);
} start_tid SEC(".maps");

/* The single histogram of a run without grouping: per CPU, no atomics. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} hist_all SEC(".maps");

SWAPPED_HASH(hist_by, __u32, struct runqlat_hist, 10240);

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

static __always_inline struct start *start_of(struct task_struct *t, bool btf, bool create)
{
	__u32 tid;

	if (btf)
		return bpf_task_storage_get(&start_task, t, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = TASK_FIELD(btf, t, pid);
	if (create) {
		static const struct start zero;

		bpf_map_update_elem(&start_tid, &tid, &zero, BPF_NOEXIST);
	}
	return bpf_map_lookup_elem(&start_tid, &tid);
}

static __always_inline __u64 switches(struct task_struct *t, bool btf)
{
	return TASK_FIELD(btf, t, nvcsw) + TASK_FIELD(btf, t, nivcsw);
}

/*
 * @t is queued to run: woken (@woken), or preempted. A task woken while
 * still on its CPU (it had not switched out yet) does not wait: nothing to
 * time, and its next switch is a departure, which the check below would
 * take for an untraced run.
 */
static __always_inline void enqueue(struct task_struct *t, bool woken, bool btf)
{
	struct start *s;
	__u64 n;

	if (!wanted(t, btf))
		return;
	if (woken && TASK_FIELD(btf, t, on_cpu))
		return;
	s = start_of(t, btf, true);
	if (!s) {
		__sync_fetch_and_add(&lost_starts, 1);
		return;
	}
	n = switches(t, btf);
	/* Queued, ran and left since, untraced; a second wakeup before it ran is not that. */
	if (s->ts && s->switches != n)
		__sync_fetch_and_add(&lost_untraced, 1);
	s->ts = bpf_ktime_get_ns();
	s->switches = n;
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
	h = swapped_lookup_or_init(&hist_by, &key, &empty_hist);
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
	struct start *s;
	__u64 delta;
	bool whole;

	/* A task preempted while runnable goes straight back on a run queue. */
	if (task_state(prev, btf) == TASK_RUNNING)
		enqueue(prev, false, btf);

	s = start_of(next, btf, false);
	if (!s || !s->ts)
		return;
	delta = bpf_ktime_get_ns() - s->ts;
	whole = s->switches == switches(next, btf);
	s->ts = 0;
	if (!btf) {
		__u32 tid = TASK_FIELD(btf, next, pid);

		bpf_map_delete_elem(&start_tid, &tid);
	}
	if (!whole) {
		__sync_fetch_and_add(&lost_untraced, 1);
		return;
	}
	record(next, delta, btf);
}

/*
 * @t exits, running: a wait still open ended in a switch onto a CPU the
 * kernel did not trace. A later wait tells that by the switch count; the
 * last one, before the thread ends, has no later one to tell it.
 */
static __always_inline void on_exit(struct task_struct *t, bool btf)
{
	struct start *s = start_of(t, btf, false);

	if (!s)
		return;
	if (s->ts)
		__sync_fetch_and_add(&lost_untraced, 1);
	s->ts = 0;
	if (!btf) {
		__u32 tid = TASK_FIELD(btf, t, pid);

		bpf_map_delete_elem(&start_tid, &tid);
	}
}

/*
 * The switch programs come first: the skeleton attaches in this order, and
 * a wakeup timed before the switch onto a CPU is traced would never end.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(runqlat_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(prev, next, true);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(runqlat_wakeup, struct task_struct *p)
{
	enqueue(p, true, true);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(runqlat_wakeup_new, struct task_struct *p)
{
	enqueue(p, true, true);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(runqlat_exit, struct task_struct *p)
{
	on_exit(p, true);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(runqlat_raw_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	on_switch(prev, next, false);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(runqlat_raw_wakeup, struct task_struct *p)
{
	enqueue(p, true, false);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(runqlat_raw_wakeup_new, struct task_struct *p)
{
	enqueue(p, true, false);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(runqlat_raw_exit, struct task_struct *p)
{
	on_exit(p, false);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
