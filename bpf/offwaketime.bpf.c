// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offwaketime: blocked time by the blocked thread's stack and the stack of its waker. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "offcpu.bpf.h"
#include "offwaketime.h"

/*
 * Per thread: when it left the CPU and its stacks then (written as it
 * blocks), and who woke it (written by the wakeup, in the waker's context).
 * The two halves of the key are never written by both: a wakeup can run on
 * another CPU while the thread is still on its way off this one.
 */
struct blocked {
	struct offcpu_period period;
	__u64 woken;		/* a waker is recorded since it last ran */
	struct offwake_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct blocked);
} blocked_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct blocked);
} blocked_tid SEC(".maps");

/* Microseconds blocked per pair of stacks. */
SWAPPED_HASH(totals, struct offwake_key, __u64, 10240);

static __always_inline struct blocked *blocked_of(struct task_struct *t, bool btf, bool create)
{
	__u32 tid;

	if (btf)
		return bpf_task_storage_get(&blocked_task, t, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = TASK_FIELD(btf, t, pid);
	if (create) {
		static const struct blocked zero;

		bpf_map_update_elem(&blocked_tid, &tid, &zero, BPF_NOEXIST);
	}
	return bpf_map_lookup_elem(&blocked_tid, &tid);
}

/*
 * sched_waking runs in the waker's context: current is the waker, @p the
 * thread it wakes. So the stacks taken here are the waker's, recorded with
 * the wakee -- never the other way round.
 */
static __always_inline int on_waking(void *ctx, struct task_struct *p, bool btf)
{
	struct blocked *b = blocked_of(p, btf, false);

	/*
	 * A thread we have seen leave a CPU. Maybe not yet this time: the
	 * wakeup can come before its switch is traced, and still ends the wait.
	 */
	if (!b)
		return 0;
	b->key.waker_tid = (__u32)bpf_get_current_pid_tgid();
	proc_key_of((struct task_struct *)bpf_get_current_task(), &b->key.waker_proc);
	offcpu_stacks(ctx, &b->key.waker_proc, &b->key.waker_user_stack,
		      &b->key.waker_kernel_stack);
	bpf_get_current_comm(b->key.waker, sizeof(b->key.waker));
	b->woken = 1;
	return 0;
}

static __always_inline int on_switch(void *ctx, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u64 now = bpf_ktime_get_ns(), delta, woken;
	struct blocked *b;
	bool counted;

	/* prev blocks now: its stacks are current's. */
	if (offcpu_thread_wanted(prev, btf)) {
		counted = offcpu_state_wanted(prev, btf);
		b = blocked_of(prev, btf, counted);
		if (b)
			offcpu_leave(&b->period, prev, btf);
		if (b && counted) {
			b->period.ts = now;
			b->key.target_tid = TASK_FIELD(btf, prev, pid);
			proc_key_of(prev, &b->key.target_proc);
			offcpu_stacks(ctx, &b->key.target_proc, &b->key.target_user_stack,
				      &b->key.target_kernel_stack);
			bpf_get_current_comm(b->key.target, sizeof(b->key.target));
			/*
			 * Preempted, not blocked: it is put back without a waker,
			 * and a wakeup it took without sleeping is not this one's.
			 */
			if (task_state(prev, btf) == TASK_RUNNING)
				b->woken = 0;
		} else if (counted) {
			__sync_fetch_and_add(&lost.starts, 1);
		}
	}

	b = blocked_of(next, btf, false);
	if (!b)
		return 0;
	delta = (now - b->period.ts) / 1000;
	counted = offcpu_return(&b->period, next, btf);
	woken = b->woken;
	b->woken = 0;
	/*
	 * Counted under its key where it lies, not a copy: the walk's steps,
	 * called from here, share the stack's 512 bytes with this program.
	 * Before the hash entry goes (kernels without task storage).
	 */
	if (counted && woken && offcpu_in_range(delta) &&
	    !stack_count_add(&totals, &b->key, delta, &b->key.target_proc, &b->key.waker_proc))
		__sync_fetch_and_add(&lost.keys, 1);
	if (!btf) {
		__u32 tid = TASK_FIELD(btf, next, pid);

		bpf_map_delete_elem(&blocked_tid, &tid);
	}
	return 0;
}

static __always_inline void on_exit(struct task_struct *t, bool btf)
{
	struct blocked *b = blocked_of(t, btf, false);
	__u32 tid;

	if (!b)
		return;
	offcpu_exit(&b->period);
	if (!btf) {
		tid = TASK_FIELD(btf, t, pid);
		bpf_map_delete_elem(&blocked_tid, &tid);
	}
}

SEC("tp_btf/sched_waking")
int BPF_PROG(offwaketime_waking, struct task_struct *p)
{
	return on_waking(ctx, p, true);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offwaketime_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, prev, next, true);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(offwaketime_raw_waking, struct task_struct *p)
{
	return on_waking(ctx, p, false);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offwaketime_raw_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, prev, next, false);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(offwaketime_exit, struct task_struct *p)
{
	on_exit(p, true);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(offwaketime_raw_exit, struct task_struct *p)
{
	on_exit(p, false);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
