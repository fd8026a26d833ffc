// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile: sample stacks on a timer or a hardware event and count them in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "stacks.bpf.h"
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
__u64 lost_user_stacks;		/* bpf_get_stackid() failed: map full or hash collision */
__u64 lost_kernel_stacks;

/* -EFAULT means there was no stack to take (a kernel thread's user stack): no loss. */
static __always_inline void count_lost(__s32 id, __u64 *counter)
{
	if (id < 0 && id != -14 /* EFAULT */)
		__sync_fetch_and_add(counter, 1);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 40960);
	__type(key, struct stack_key);
	__type(value, __u64);
} counts SEC(".maps");

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct stack_key key = { .pid = (__u32)id, .tgid = id >> 32 };

	/* The idle task (pid 0 on every CPU) only with -I, and never mixed with a process. */
	if (!key.pid && !include_idle)
		return 0;
	if (target_tgid && key.tgid != target_tgid)
		return 0;
	if (target_tid && key.pid != target_tid)
		return 0;
	if (filter_cgroup &&
	    !task_in_cgroup((struct task_struct *)bpf_get_current_task(), cgroup_id, cgroup_level))
		return 0;
	key.user_stack_id = user_stacks ? bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) : -14;
	/*
	 * On a perf event the kernel stack is the sample's own callchain, which
	 * starts at the interrupted instruction: nothing to add (bcc's Python
	 * profile adds the IP again and so shows the leaf frame twice).
	 */
	key.kernel_stack_id = kernel_stacks ? bpf_get_stackid(ctx, &stacks, 0) : -14;
	count_lost(key.user_stack_id, &lost_user_stacks);
	count_lost(key.kernel_stack_id, &lost_kernel_stacks);
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	if (!stack_count_add(&counts, &key, 1, key.tgid, 0))
		__sync_fetch_and_add(&lost_samples, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
