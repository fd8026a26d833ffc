/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BPF side of every stack tool: stacks stored by hash, processes named, new ones announced. */
#ifndef BPFSCOPE_STACKSTORE_BPF_H
#define BPFSCOPE_STACKSTORE_BPF_H

#include "stack_key.h"
#include "walk.bpf.h"
#include "unwind.bpf.h"
#include "walkmemo.bpf.h"

/*
 * Random, from user space: an unprivileged user who cannot know it cannot
 * aim a forged stack's hash at another's.
 */
const volatile __u64 stack_seed;

/*
 * Stacks by a 64-bit hash of their frames. Not a stack trace map: with
 * that, two stacks in one hash bucket lose the second (about one in eight
 * of 4,096 distinct stacks in 16,384 buckets), and no other unwinder can
 * store what it found there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct stack_trace);
} stacks SEC(".maps");


/*
 * @h mixed with @t's first @depth frames. A global function where the
 * kernel takes pointers in their arguments (5.12; the legacy object's
 * kernels do not), so that the verifier checks its loop once, not again
 * for every state a tool's program reaches a stack_put() with.
 */
#ifdef BPFSCOPE_LEGACY
static __always_inline
#else
__noinline
#endif
__u64 stack_hash(const struct stack_trace *t, __u32 depth, __u64 h)
{
	if (!t)
		return h;
	for (__u32 i = 0; i < STACK_MAX_DEPTH; i++) {
		if (i >= depth)
			break;
		h = (h ^ t->ips[i]) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
	}
	return h;
}

/* Stores @t's first @depth frames; its key, or STACK_LOST when the map is full. */
static __always_inline __u64 stack_put(struct stack_trace *t, __u32 depth)
{
	__u64 h = stack_hash(t, depth, stack_seed ^ depth);
	long err;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	if (h <= STACK_LOST)
		h += 2;
	/* Tested on the register used for the store: clang may test another copy. */
	barrier_var(depth);
	if (depth < STACK_MAX_DEPTH)
		t->ips[depth] = 0;
	if (bpf_map_lookup_elem(&stacks, &h))
		return h;
	err = bpf_map_update_elem(&stacks, &h, t, BPF_NOEXIST);
	return err && err != -17 /* EEXIST: another CPU stored it */ ? STACK_LOST : h;
}

/* @t as a stack helper filled it, @n bytes or an error: stored, or why not. */
static __always_inline __u64 stack_store(struct stack_trace *t, long n)
{
	if (n <= 0)
		return n == 0 || n == -14 /* EFAULT */ ? STACK_NONE : STACK_LOST;
	return stack_put(t, (__u32)n / sizeof(__u64));
}

/*
 * The current stack (user space with BPF_F_USER_STACK, else the kernel's),
 * stored: its key, STACK_NONE when there is none (a kernel thread's user
 * stack), or STACK_LOST.
 */
static __always_inline __u64 stack_take(void *ctx, __u64 flags)
{
	struct stack_trace *t;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!t)
		return STACK_LOST;
	return stack_store(t, bpf_get_stack(ctx, t->ips, sizeof(t->ips), flags));
}

/* The kernel stack of @task, off CPU (bpf_get_task_stack), as stack_take() gives it. */
static __always_inline __u64 stack_take_task(struct task_struct *task)
{
	struct stack_trace *t;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!t)
		return STACK_LOST;
	return stack_store(t, bpf_get_task_stack(task, t->ips, sizeof(t->ips), 0));
}

/*
 * The current task's user stack, for process @k: walked with its CFI tables
 * where user space has made them (and the kernel can), else by the kernel's
 * frame-pointer walk. A key as stack_take() gives.
 */
static __always_inline __u64 stack_take_user(void *ctx, const struct proc_key *k)
{
	if (unwind_cfi) {
		struct stack_trace *t;
		struct pt_regs *regs;
		__u32 zero = 0;
		int n;

		t = bpf_map_lookup_elem(&stack_scratch, &zero);
		if (!t)
			return STACK_LOST;
		/* Its user registers, saved where it entered the kernel (or was interrupted). */
		regs = unwind_user_regs();
		if (!regs) {
			/* A kernel thread has none to find. */
			if (BPF_CORE_READ(current_task(), mm))
				UNWIND_COUNT(no_regs);
			return stack_take(ctx, BPF_F_USER_STACK);
		}
		n = unwind_user(regs, k, t);
#ifdef BPFSCOPE_LEGACY
		if (n < 0) {
			UNWIND_COUNT(fp);
			return stack_take(ctx, BPF_F_USER_STACK);
		}
#else
		if (n < 0)
			n = unwind_by_build_id(ctx, t);
#endif
		return n ? stack_put(t, n) : STACK_NONE;
	}
	return stack_take(ctx, BPF_F_USER_STACK);
}

#ifndef BPFSCOPE_LEGACY
/*
 * As stack_take_user(), of the current thread as it leaves the CPU:
 * recalled from its last walk where that walk would find the same stack
 * again (walkmemo.bpf.h), and kept for its next departure otherwise.
 */
static __always_inline __u64 stack_take_user_leaving(void *ctx, const struct proc_key *k)
{
	struct pt_regs *regs;
	__u64 key;

	if (!unwind_cfi)
		return stack_take_user(ctx, k);
	regs = unwind_user_regs();
	if (!regs || !walk_memo_in_syscall(regs))
		return stack_take_user(ctx, k);
	key = walk_memo_recall(regs, k);
	/* Still stored: user space may have emptied the map since. */
	if (key && bpf_map_lookup_elem(&stacks, &key)) {
		UNWIND_COUNT(cfi);
		UNWIND_COUNT(recalled);
		return key;
	}
	key = stack_take_user(ctx, k);
	walk_memo_keep(regs, key);
	return key;
}
#else
#define stack_take_user_leaving stack_take_user
#endif

/* task_struct::start_boottime was real_start_time before 5.5. */
struct task_struct___pre_5_5 {
	__u64 real_start_time;
} __attribute__((preserve_access_index));

/* Which process @t belongs to, as struct proc_key names it. */
static __always_inline void proc_key_of(struct task_struct *t, struct proc_key *k)
{
	struct task_struct *leader = BPF_CORE_READ(t, group_leader);

	k->tgid = BPF_CORE_READ(t, tgid);
	/* The leader's: an exec makes its thread the leader, with a new count. */
	k->exec_id = BPF_CORE_READ(leader, self_exec_id);
	if (bpf_core_field_exists(leader->start_boottime))
		k->start_ns = BPF_CORE_READ(leader, start_boottime);
	else
		k->start_ns = BPF_CORE_READ((struct task_struct___pre_5_5 *)leader, real_start_time);
}

/*
 * A process that has just exec'd, while stacks are walked with CFI (user
 * space loads this only then): its maps are read while it is still in its
 * loader, so its first samples, maybe its only ones, are walked whole.
 */
#ifndef STACK_EXEC_WANTED
#define STACK_EXEC_WANTED(task) true
#endif

/*
 * When the next exec note may be sent, at EXEC_NOTE_RATE: a clock that
 * runs ahead of the kernel's by a step per note, up to a burst. CPUs
 * racing to move it may let a note more through, never fewer.
 */
__u64 exec_note_at;

static __always_inline bool exec_note_allowed(void)
{
	__u64 now = bpf_ktime_get_ns(), step = 1000000000ULL / EXEC_NOTE_RATE;
	__u64 at = exec_note_at;

	if (at < now)
		at = now;
	if (at - now >= EXEC_NOTE_BURST * step)
		return false;
	exec_note_at = at + step;
	return true;
}

SEC("raw_tp/sched_process_exec")
int stack_on_exec(void *ctx)
{
	struct task_struct *task = current_task();
	struct proc_key k;

	/* A tool that traces some tasks only says which (STACK_EXEC_WANTED). */
	if (!STACK_EXEC_WANTED(task))
		return 0;
	if (!exec_note_allowed()) {
		notes_count_lost(NOTES_LOST_RATE);
		return 0;
	}
	proc_key_of(task, &k);
	proc_announce_counted(&k, PROC_EXEC);
	return 0;
}

/*
 * A process the unwinder has tables for has exited (its last thread): the
 * rows only it used can go now, where a binary refused for lack of room
 * waits for them, not when a sweep of /proc next finds it gone (the sweep,
 * a file read a process, is spaced out by seconds); and its entry, where
 * the map fills. Only while user space asks (unwind_exit_notes). User
 * space loads this only with CFI tables, system-wide.
 */
SEC("raw_tp/sched_process_exit")
int stack_on_exit(void *ctx)
{
	struct task_struct *task = current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0, *wanted;
	struct proc_key k;

	wanted = bpf_map_lookup_elem(&unwind_exit_notes, &zero);
	if (!wanted || !*wanted)
		return 0;
	/* do_exit() counts the thread out of signal->live before this tracepoint. */
	if (BPF_CORE_READ(task, signal, live.counter) ||
	    !bpf_map_lookup_elem(&unwind_procs, &tgid))
		return 0;
	/*
	 * Sent as the others are, waking user space if it has read them all:
	 * one sent without a wakeup, left in the ring, would keep the next
	 * exec's note from waking it (the kernel wakes only a reader that has
	 * caught up), and that process would exit before it is read.
	 */
	proc_key_of(task, &k);
	proc_announce_counted(&k, PROC_EXITED);
	return 0;
}

/*
 * The kernel found room for a new mapping of the current process (its
 * get_unmapped_area(), for an mmap() without MAP_FIXED: ld.so reserving
 * a library's span): [addr, addr + length) is free, so whatever the
 * unwinder's table of the process still has there was unmapped (dlclose).
 * Those mappings are forgotten, and the process's maps read again, so that
 * the library loaded there is not walked with the old one's table, nor
 * named by its symbols. User space loads this only with CFI tables.
 */
SEC("tracepoint/mmap/vm_unmapped_area")
int stack_on_new_area(struct trace_event_raw_vm_unmapped_area *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 addr = ctx->addr, len = ctx->length;
	struct unwind_proc *p;
	struct proc_key k;

	/* An error (-ENOMEM) found no room. */
	if (addr >= -4095UL)
		return 0;
	p = bpf_map_lookup_elem(&unwind_procs, &tgid);
	if (!p || !unwind_forget(tgid, p, addr, addr + len))
		return 0;
	proc_key_of(current_task(), &k);
	proc_announce_counted(&k, PROC_MAPS_CHANGED);
	return 0;
}

/*
 * Adds @delta to @key's total in the map SWAPPED_HASH @slot holds now; a
 * new entry announces @proc (and @other).
 */
static __always_inline bool stack_count_add(void *slot, const void *key, __u64 delta,
					    const struct proc_key *proc,
					    const struct proc_key *other)
{
	__u32 first = 0;
	void *totals = bpf_map_lookup_elem(slot, &first);
	__u64 zero = 0, *total;

	if (!totals)
		return false;
	total = bpf_map_lookup_elem(totals, key);

	if (!total) {
		if (bpf_map_update_elem(totals, key, &zero, BPF_NOEXIST) == 0) {
			proc_announce(proc, PROC_SEEN);
			if (other && other->tgid && other->tgid != proc->tgid)
				proc_announce(other, PROC_SEEN);
		}
		total = bpf_map_lookup_elem(totals, key);
		if (!total)
			return false;
	}
	__sync_fetch_and_add(total, delta);
	return true;
}

#endif
