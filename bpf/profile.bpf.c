// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile: sample stacks on a timer or a hardware event and count them in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"

const volatile bool filter_cgroup;
const volatile __u64 cgroup_id;
const volatile int cgroup_level;

/* --cgroup: the processes that exec elsewhere are not read. */
#define STACK_EXEC_WANTED(t) (!filter_cgroup || task_in_cgroup(t, cgroup_id, cgroup_level))

#include "stackstore.bpf.h"
#include "profile.h"

const volatile pid_t target_tgid;
const volatile pid_t target_tid;
const volatile bool include_idle;
const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
/* --wall: on-CPU samples count the microseconds each stands for, and time off CPU is counted too. */
const volatile bool wall;
const volatile __u64 sample_us;
const volatile __u64 min_block_us;	/* --min-block */
struct wall_losses wall_lost;

/* Data lost in the kernel; user space reports it at exit. */
__u64 lost_samples;		/* the counts map was full */
__u64 lost_user_stacks;		/* the stacks map was full */
__u64 lost_kernel_stacks;

static __always_inline void count_lost(__u64 stack, __u64 *counter)
{
	if (stack == STACK_LOST)
		__sync_fetch_and_add(counter, 1);
}

/* Samples per stack; with --wall, microseconds. */
SWAPPED_HASH(counts, struct stack_key, __u64, 40960);

/* --wall: a thread off CPU, since when and as what. */
struct wall_period {
	__u64 start;		/* counted up to here (it left, or a report cut); 0 while it runs */
	__u64 left;		/* when it left the CPU, for --min-block */
	__u64 ran_ns;		/* its time on CPU then (se.sum_exec_runtime) */
	__u64 rest_ns;		/* what its last periods had beyond whole microseconds */
	struct stack_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wall_period);
} wall_periods SEC(".maps");

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	struct stack_key key = { .tid = (__u32)id, .proc.tgid = id >> 32,
				 .state = wall ? WALL_RUNNING : WALL_NONE };

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
	if (!stack_count_add(&counts, &key, wall ? sample_us : 1, &key.proc, NULL))
		__sync_fetch_and_add(&lost_samples, 1);
	return 0;
}

/*
 * --wall's programs. The legacy object has them too, so that both have the
 * same maps in the same places, but never loads them: --wall needs Linux
 * 5.17's object (task storage for tracing programs, the atomics below).
 */
static __always_inline bool wall_wanted(struct task_struct *t)
{
	/* Not the idle task, nor an exiting thread's last switch: it never comes back. */
	if (!t->pid || t->exit_state)
		return false;
	if (target_tgid && t->tgid != target_tgid)
		return false;
	if (target_tid && t->pid != target_tid)
		return false;
	return !filter_cgroup || task_in_cgroup(t, cgroup_id, cgroup_level);
}

/* The kernel's task states (include/linux/sched.h), stable since 2.6. */
#define TASK_INTERRUPTIBLE	0x0001
#define TASK_UNINTERRUPTIBLE	0x0002
#define __TASK_STOPPED		0x0004
#define __TASK_TRACED		0x0008
#define TASK_NOLOAD		0x0400

static __always_inline __u32 wall_state_of(long state, bool preempted)
{
	/* Preempted while it was about to sleep: still on the run queue. */
	if (preempted || !state)
		return WALL_RUNNABLE;
	if (state & TASK_INTERRUPTIBLE)
		return WALL_SLEEPING;
	/* TASK_IDLE: an uninterruptible wait that is no load, a kernel thread's idle. */
	if (state & TASK_UNINTERRUPTIBLE)
		return state & TASK_NOLOAD ? WALL_SLEEPING : WALL_UNINTERRUPTIBLE;
	if (state & (__TASK_STOPPED | __TASK_TRACED))
		return WALL_STOPPED;
	return WALL_OTHER;
}

#define PF_KTHREAD	0x00200000
#define TS_COMPAT	0x0002		/* x86: in a 32-bit system call */

/*
 * The system call @t is in, as its number + 1 (0: none), from the registers
 * it entered the kernel with. A kernel thread has none; a user worker's
 * (io_uring, vhost) are zeroed, stack pointer and all.
 */
static __always_inline __u16 wall_syscall_of(struct task_struct *t)
{
	struct pt_regs *regs;
	long nr;

	if (t->flags & PF_KTHREAD)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs || !BPF_CORE_READ(regs, sp))
		return 0;
	/*
	 * As /proc/PID/syscall reads it: every entry but a system call's
	 * leaves -1 there (x86's faults once their error code is taken).
	 */
#if defined(__TARGET_ARCH_x86)
	/* A 32-bit call's number is of another table. */
	if (BPF_CORE_READ(t, thread_info.status) & TS_COMPAT)
		return 0;
	nr = BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	nr = BPF_CORE_READ(regs, syscallno);
#else
	nr = -1;
#endif
	return nr >= 0 && nr < SYSCALL_MAX ? nr + 1 : 0;
}

/*
 * A period is counted by whoever takes its start: the switch that ends it
 * (an exchange with 0) or a report's cut (a compare-and-exchange with the
 * cut's time), never both. The legacy object, never loaded with --wall,
 * has plain stores instead: kernels before 5.12 refuse these atomics.
 */
#ifndef BPFSCOPE_LEGACY
#define wall_take(p) __sync_lock_test_and_set(&(p)->start, 0)
#define wall_cut(p, seen, now) (__sync_val_compare_and_swap(&(p)->start, seen, now) == (seen))
#define wall_open(p, now) __sync_lock_test_and_set(&(p)->start, now)
#define wall_close(p, seen) (__sync_val_compare_and_swap(&(p)->start, seen, 0) == (seen))
#else
#define wall_take(p) ({ __u64 s_ = (p)->start; (p)->start = 0; s_; })
#define wall_cut(p, seen, now) ({ (p)->start = now; true; })
#define wall_open(p, now) ((p)->start = now)
#define wall_close(p, seen) ({ (p)->start = 0; true; })
#endif

/* Counts @ns of @key's period (its stacks, or [short] when it began too recently). */
static __always_inline void wall_count(struct wall_period *p, const struct stack_key *k, __u64 ns,
				       __u64 now)
{
	struct stack_key key = *k;
	__u64 us;

	ns += p->rest_ns;
	us = ns / 1000;
	p->rest_ns = ns - us * 1000;
	if (now - p->left < min_block_us * 1000) {
		key.user_stack = STACK_NONE;
		key.kernel_stack = STACK_NONE;
		key.state = WALL_SHORT;
		key.syscall = 0;
	}
	if (!stack_count_add(&counts, &key, us, &key.proc, NULL))
		__sync_fetch_and_add(&wall_lost.keys, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(profile_wall_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct wall_period *p;

	/* prev leaves, and is current: its stacks are the ones to take. */
	if (wall_wanted(prev)) {
		p = bpf_task_storage_get(&wall_periods, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (p) {
			__u64 ran = prev->se.sum_exec_runtime, start = wall_take(p);

			/*
			 * Still open: it came back without a switch this program
			 * saw (on 6.18 under load, up to a second, after a
			 * throttled real-time thread), or saw without its
			 * storage. Its time off CPU since is what was not its own.
			 */
			if (start && now - start > ran - p->ran_ns)
				wall_count(p, &p->key, now - start - (ran - p->ran_ns), now);
			p->left = now;
			p->ran_ns = ran;
			p->key.tid = prev->pid;
			p->key.state = wall_state_of(task_state(prev, true), preempt);
			p->key.syscall = wall_syscall_of(prev);
			proc_key_of(prev, &p->key.proc);
			p->key.user_stack = user_stacks ?
				stack_take_user_leaving(ctx, &p->key.proc) : STACK_NONE;
			p->key.kernel_stack = kernel_stacks ? stack_take(ctx, 0) : STACK_NONE;
			count_lost(p->key.user_stack, &lost_user_stacks);
			count_lost(p->key.kernel_stack, &lost_kernel_stacks);
			bpf_get_current_comm(p->key.comm, sizeof(p->key.comm));
			wall_open(p, now);	/* after the key: a cut reads it then */
		} else {
			__sync_fetch_and_add(&wall_lost.starts, 1);
		}
	}
	/* No storage, or none to be had just now: the next departure counts the period. */
	p = bpf_task_storage_get(&wall_periods, next, 0, 0);
	if (p) {
		__u64 start = wall_take(p);

		if (start)
			wall_count(p, &p->key, now - start, now);
	}
	return 0;
}

/*
 * Every thread, read at start and at each report. A thread off CPU counts
 * its period up to now (the report has it, the rest goes to the next); one
 * off CPU since before tracing began, without a period, has it begin now,
 * with the kernel stack it waits in (no other thread's user stack can be
 * walked from here).
 */
SEC("iter/task")
int profile_wall_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	__u64 now = bpf_ktime_get_ns(), start, ran;
	struct wall_period *p;
	struct stack_key key;

	if (!t || !wall_wanted(t))
		return 0;
	p = bpf_task_storage_get(&wall_periods, t, 0, 0);
	if (p) {
		start = p->start;
		key = p->key;	/* before the cut: a switch may write the next period's after it */
		if (!start)
			return 0;
		/*
		 * It has run since it left (off CPU its runtime stands still):
		 * its return went untraced. Closed as its departure would.
		 */
		ran = t->se.sum_exec_runtime - p->ran_ns;
		if (ran) {
			if (wall_close(p, start) && now - start > ran)
				wall_count(p, &key, now - start - ran, now);
			return 0;
		}
		if (wall_cut(p, start, now))
			wall_count(p, &key, now - start, now);
		return 0;
	}
	if (t->on_cpu)
		return 0;
	p = bpf_task_storage_get(&wall_periods, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* Seen by the switch program meanwhile: it has left or come back since. */
	if (!p || p->key.tid)
		return 0;
	p->left = now;
	p->ran_ns = t->se.sum_exec_runtime;
	p->key.tid = t->pid;
	p->key.state = wall_state_of(task_state(t, true), false);
	p->key.syscall = wall_syscall_of(t);
	proc_key_of(t, &p->key.proc);
	p->key.user_stack = STACK_NONE;
	p->key.kernel_stack = kernel_stacks ? stack_take_task(t) : STACK_NONE;
	count_lost(p->key.kernel_stack, &lost_kernel_stacks);
	bpf_probe_read_kernel_str(p->key.comm, sizeof(p->key.comm), t->comm);
	wall_open(p, now);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
