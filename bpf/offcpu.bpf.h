/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BPF side shared by offcputime and offwaketime: which threads count, and when they left. */
#ifndef BPFSCOPE_OFFCPU_BPF_H
#define BPFSCOPE_OFFCPU_BPF_H

#include "common.bpf.h"
#include "offcpu.h"
#include "stackstore.bpf.h"

#define PF_KTHREAD 0x00200000

struct offcpu_losses lost;

const volatile struct offcpu_filter filter = { .min_us = 1, .max_us = -1ULL, .user_stacks = 1,
					       .kernel_stacks = 1 };

/* The thread that blocks: never the idle task, and only as the filter says. */
static __always_inline bool offcpu_wanted(struct task_struct *t, bool btf)
{
	__u32 pid = TASK_FIELD(btf, t, pid), flags = TASK_FIELD(btf, t, flags);
	long state;

	/* An exiting thread's last switch: it never comes back, do not keep a start for it. */
	if (!pid || TASK_FIELD(btf, t, exit_state))
		return false;
	if (filter.tgid && TASK_FIELD(btf, t, tgid) != filter.tgid)
		return false;
	if (filter.tid && pid != filter.tid)
		return false;
	if (filter.user_threads_only && (flags & PF_KTHREAD))
		return false;
	if (filter.kernel_threads_only && !(flags & PF_KTHREAD))
		return false;
	if (filter.filter_state) {
		state = task_state(t, btf);
		if (filter.state_mask == 0 ? state != 0 : !(state & filter.state_mask))
			return false;
	}
	return true;
}

/* The current task's stacks (of process @k), as the filter asks. */
static __always_inline void offcpu_stacks(void *ctx, const struct proc_key *k, __u64 *user,
					  __u64 *kernel)
{
	*user = filter.user_stacks ? stack_take_user(ctx, k) : STACK_NONE;
	*kernel = filter.kernel_stacks ? stack_take(ctx, 0) : STACK_NONE;
}

static __always_inline bool offcpu_in_range(__u64 delta_us)
{
	return delta_us >= filter.min_us && delta_us <= filter.max_us;
}

#endif
