// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offcputime: time threads spend blocked, by the stack they blocked in, summed in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "offcpu.bpf.h"
#include "offcputime.h"

struct start {
	struct offcpu_period period;
	struct stack_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct start);
} start_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct start);
} start_tid SEC(".maps");

/* Microseconds off CPU per stack. */
SWAPPED_HASH(totals, struct stack_key, __u64, 10240);

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

static __always_inline int on_switch(void *ctx, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	struct stack_key key;
	struct start *s;
	__u64 now = bpf_ktime_get_ns(), delta;
	bool counted;

	/* prev is going off CPU, and is current: its stacks are the ones to take. */
	if (offcpu_thread_wanted(prev, btf)) {
		counted = offcpu_state_wanted(prev, btf);
		s = start_of(prev, btf, counted);
		if (s) {
			offcpu_leave(&s->period, prev, btf);
			if (counted) {
				s->period.ts = now;
				s->key.tid = TASK_FIELD(btf, prev, pid);
				proc_key_of(prev, &s->key.proc);
				offcpu_stacks(ctx, &s->key.proc, &s->key.user_stack,
					      &s->key.kernel_stack);
				bpf_get_current_comm(s->key.comm, sizeof(s->key.comm));
			}
		} else if (counted) {
			__sync_fetch_and_add(&lost.starts, 1);
		}
	}

	s = start_of(next, btf, false);
	if (!s)
		return 0;
	delta = (now - s->period.ts) / 1000;
	counted = offcpu_return(&s->period, next, btf);
	key = s->key;
	if (!btf) {
		__u32 tid = TASK_FIELD(btf, next, pid);

		bpf_map_delete_elem(&start_tid, &tid);
	}
	if (!counted || !offcpu_in_range(delta))
		return 0;
	if (!stack_count_add(&totals, &key, delta, &key.proc, NULL))
		__sync_fetch_and_add(&lost.keys, 1);
	return 0;
}

static __always_inline void on_exit(struct task_struct *t, bool btf)
{
	struct start *s = start_of(t, btf, false);
	__u32 tid;

	if (!s)
		return;
	offcpu_exit(&s->period);
	if (!btf) {
		tid = TASK_FIELD(btf, t, pid);
		bpf_map_delete_elem(&start_tid, &tid);
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcputime_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, prev, next, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcputime_raw_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, prev, next, false);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(offcputime_exit, struct task_struct *p)
{
	on_exit(p, true);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(offcputime_raw_exit, struct task_struct *p)
{
	on_exit(p, false);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
