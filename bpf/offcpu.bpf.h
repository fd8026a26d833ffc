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

/* A thread the filter asks for: never the idle task, nor an exiting thread. */
static __always_inline bool offcpu_thread_wanted(struct task_struct *t, bool btf)
{
	__u32 pid = TASK_FIELD(btf, t, pid), flags = TASK_FIELD(btf, t, flags);

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
	return true;
}

/* Does this departure of @t count, by the state it leaves in (--state)? */
static __always_inline bool offcpu_state_wanted(struct task_struct *t, bool btf)
{
	long state;

	if (!filter.filter_state)
		return true;
	state = task_state(t, btf);
	return filter.state_mask == 0 ? state == 0 : (state & filter.state_mask);
}

/*
 * When a thread left the CPU, and how many times it had by then. The
 * kernel counts each switch away from a thread (nvcsw + nivcsw) just
 * before it traces it, so a count that moved more than the traced
 * switches say is a departure, or a return, the kernel did not trace: the
 * periods around it are dropped and counted rather than timed wrong.
 */
struct offcpu_period {
	__u64 ts;		/* when it left the CPU; 0 while it runs */
	__u64 switches;		/* its count when last seen; 0 before */
};

static __always_inline __u64 offcpu_switches(struct task_struct *t, bool btf)
{
	return TASK_FIELD(btf, t, nvcsw) + TASK_FIELD(btf, t, nivcsw);
}

/* @t, current, leaves the CPU: its count includes this switch already. */
static __always_inline void offcpu_leave(struct offcpu_period *p, struct task_struct *t, bool btf)
{
	__u64 n = offcpu_switches(t, btf), seen = p->switches;

	/*
	 * Seen last leaving (still off, as far as we know): its return, and
	 * whatever came between, untraced. Seen last returning: departures
	 * since, each a whole period, untraced.
	 */
	if (seen && n > seen)
		__sync_fetch_and_add(&lost.untraced, n - seen - (p->ts ? 0 : 1));
	else if (p->ts)
		__sync_fetch_and_add(&lost.untraced, 1);
	p->switches = n;
	p->ts = 0;
}

/*
 * @t is back on a CPU: true if the period it was off for is whole (its
 * start traced, no untraced switch since), to be counted; it is closed.
 */
static __always_inline bool offcpu_return(struct offcpu_period *p, struct task_struct *t, bool btf)
{
	__u64 n = offcpu_switches(t, btf), seen = p->switches;
	bool whole = p->ts != 0;

	if (seen && n != seen) {
		/* Left untraced n - seen times; the open period spans them too. */
		__sync_fetch_and_add(&lost.untraced, n - seen + (p->ts ? 1 : 0));
		whole = false;
	}
	p->switches = n;
	p->ts = 0;
	return whole;
}

/*
 * @t exits, running: a period still open ended in a return the kernel did
 * not trace. A later departure tells that by the switch count; the last
 * period, before the thread ends, has no later one to tell it.
 */
static __always_inline void offcpu_exit(struct offcpu_period *p)
{
	if (p->ts)
		__sync_fetch_and_add(&lost.untraced, 1);
	p->ts = 0;
}

/* The current task's stacks (of process @k), as the filter asks. */
static __always_inline void offcpu_stacks(void *ctx, const struct proc_key *k, __u64 *user,
					  __u64 *kernel)
{
	*user = filter.user_stacks ? stack_take_user_leaving(ctx, k) : STACK_NONE;
	*kernel = filter.kernel_stacks ? stack_take(ctx, 0) : STACK_NONE;
}

static __always_inline bool offcpu_in_range(__u64 delta_us)
{
	return delta_us >= filter.min_us && delta_us <= filter.max_us;
}

#endif
