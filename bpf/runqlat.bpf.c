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

/* When every program was attached (CLOCK_MONOTONIC): a thread born later is traced from birth. */
__u64 traced_since;

/*
 * A thread's last traced event and its switch count (nvcsw + nivcsw) then.
 * The kernel counts every switch away from a thread just before it traces
 * it; the development VM's kernel now and then traces no switch onto a CPU,
 * and now and then neither that nor the wakeup before it. Each departure
 * begins a wait and each wait ends on a CPU, so a count that moved more
 * than the traced events say marks a wait with no traced end: it is left
 * out, counted and said, rather than stretched into the next one.
 */
struct start {
	__u64 ts;		/* queued since, or 0: on a CPU since the last traced switch in */
	__u64 switches;		/* the count at that enqueue or switch in */
	__u64 born;		/* raw_tp: the thread's start_time, as tids are reused */
	bool seen;		/* an event of this thread was traced */
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
	static const struct start zero;
	struct start *s;
	__u64 born;
	__u32 tid;

	if (btf)
		return bpf_task_storage_get(&start_task, t, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = TASK_FIELD(btf, t, pid);
	if (create)
		bpf_map_update_elem(&start_tid, &tid, &zero, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&start_tid, &tid);
	if (!s)
		return NULL;
	/* An entry a thread left behind under its old tid (exec from a non-leader thread). */
	born = BPF_CORE_READ(t, start_time);
	if (s->born != born) {
		*s = zero;
		s->born = born;
	}
	return s;
}

static __always_inline __u64 switches(struct task_struct *t, bool btf)
{
	return TASK_FIELD(btf, t, nvcsw) + TASK_FIELD(btf, t, nivcsw);
}

/*
 * Did a wait of @s's thread end with no traced switch onto a CPU, its
 * switch count now @n, @running (switched in, or exiting) or being queued?
 * Queued at count q, it left the CPU again since (so it had come back);
 * on a CPU since count c, it left more than the one departure that queues
 * it now (or, running, any).
 */
static __always_inline bool untraced_return(const struct start *s, __u64 n, bool running)
{
	if (!s->seen)
		return false;
	if (s->ts)
		return n != s->switches;
	return n > s->switches + !running;
}

/*
 * @t is queued to run: woken (@woken), or preempted. A task woken while
 * still on its CPU (it had not switched out yet) does not wait: nothing to
 * time; should it leave the CPU next, it leaves runnable, a preemption.
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
	/* Woken again before it ran: it has waited since the first. */
	if (s->ts && s->switches == n)
		return;
	/*
	 * First seen at a departure, though born while traced: the first wait,
	 * from sched_wakeup_new, went untraced (the cgroup filter may first
	 * see a thread moved into it later).
	 */
	if (untraced_return(s, n, false) ||
	    (!s->seen && n && !filter_cgroup && traced_since &&
	     TASK_FIELD(btf, t, start_time) > traced_since))
		__sync_fetch_and_add(&lost_untraced, 1);
	s->ts = bpf_ktime_get_ns();
	s->switches = n;
	s->seen = true;
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
	if (group != GROUP_PIDNS) {
		char comm[TASK_COMM_LEN];
		long err;

		if (group == GROUP_THREAD)
			err = bpf_probe_read_kernel(comm, sizeof(comm), &t->comm);
		else
			err = bpf_probe_read_kernel(comm, sizeof(comm),
						    &BPF_CORE_READ(t, group_leader)->comm);
		if (!err)
			comm_keep(h->comm, comm);
	}
	hist_add_shared(&h->hist, delta);
}

static __always_inline void on_switch(bool preempt, struct task_struct *prev,
				      struct task_struct *next, bool btf)
{
	struct start *s;
	__u64 n;

	/*
	 * A task preempted stays on its run queue, whatever its state: one
	 * preempted between setting TASK_INTERRUPTIBLE and schedule() waits too.
	 */
	if (preempt || task_state(prev, btf) == TASK_RUNNING)
		enqueue(prev, false, btf);

	/*
	 * Back on a CPU with no traced enqueue since it left is not taken for a
	 * lost wakeup: such a rule counted hundreds beside a ping-pong on
	 * Debian's 5.10, 6.1 and 6.12 guests, where ftrace shows a sched_wakeup
	 * before every such switch in and this program's counts match ftrace's.
	 */
	s = start_of(next, btf, false);
	if (!s || !s->seen)
		return;
	n = switches(next, btf);
	if (s->ts && s->switches == n)
		record(next, bpf_ktime_get_ns() - s->ts, btf);
	else if (s->ts)
		__sync_fetch_and_add(&lost_untraced, 1);
	s->ts = 0;
	s->switches = n;
}

/*
 * @t exits, on a CPU: any return to a CPU its count shows since the last
 * traced event went untraced, and no later event of the thread will tell.
 */
static __always_inline void on_exit(struct task_struct *t, bool btf)
{
	struct start *s = start_of(t, btf, false);

	if (!s)
		return;
	if (untraced_return(s, switches(t, btf), true))
		__sync_fetch_and_add(&lost_untraced, 1);
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
	on_switch(preempt, prev, next, true);
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
	on_switch(preempt, prev, next, false);
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
