// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile: sample stacks on a timer or a hardware event and count them in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "stackstore.bpf.h"
#include "profile.h"

const volatile pid_t target_tgid;
const volatile pid_t target_tid;
const volatile bool include_idle;
const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
const volatile bool filter_cgroup;
const volatile __u64 cgroup_id;
const volatile int cgroup_level;

/* Data lost in the kernel; user space reports it at exit. */
__u64 lost_samples;		/* the counts map was full */
__u64 lost_user_stacks;		/* the stacks map was full */
__u64 lost_kernel_stacks;

static __always_inline void count_lost(__u64 stack, __u64 *counter)
{
	if (stack == STACK_LOST)
		__sync_fetch_and_add(counter, 1);
}

/* Samples per stack. */
SWAPPED_HASH(counts, struct stack_key, __u64, 40960);

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	struct stack_key key = { .tid = (__u32)id, .proc.tgid = id >> 32 };

	/* The idle task (pid 0 on every CPU) only with -I, and never mixed with a process. */
	if (!key.tid && !include_idle)
		return 0;
	if (target_tgid && key.proc.tgid != target_tgid)
		return 0;
	if (target_tid && key.tid != target_tid)
		return 0;
	if (filter_cgroup && !task_in_cgroup(task, cgroup_id, cgroup_level))
		return 0;
	if (key.tid)
		proc_key_of(task, &key.proc);
	key.user_stack = user_stacks && key.tid ? stack_take_user(ctx, &key.proc) : STACK_NONE;
	/*
	 * On a perf event the kernel stack is the sample's own callchain, which
	 * starts at the interrupted instruction: nothing to add (bcc's Python
	 * profile adds the IP again and so shows the leaf frame twice).
	 */
	key.kernel_stack = kernel_stacks ? stack_take(ctx, 0) : STACK_NONE;
	count_lost(key.user_stack, &lost_user_stacks);
	count_lost(key.kernel_stack, &lost_kernel_stacks);
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	if (!stack_count_add(&counts, &key, 1, &key.proc, NULL))
		__sync_fetch_and_add(&lost_samples, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
