/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A thread's last user stack walks, recalled when it leaves the CPU again from where one began. */
#ifndef BPFSCOPE_WALKMEMO_BPF_H
#define BPFSCOPE_WALKMEMO_BPF_H

#include "unwind.bpf.h"

/*
 * A walk finds what it found before where it begins from the same
 * registers, reads the same words of the stack, and has the same tables of
 * its process: it is a function of those alone. A thread that blocks
 * again and again in the same places (a pool's worker on its condition
 * variable, then on the mutex it takes on waking) then has its stack known
 * from one read of the stack, not walked again frame by frame. Kept only
 * of walks that read nothing else and used no other register: native
 * frames by their CFI; not through a runtime's frames, frame pointers, a
 * signal frame, or code mapped since the tables were made.
 *
 * The words are kept as their offsets and a hash of their values: 64 bits,
 * as the stacks map's keys are. A thread can only make its own memo find
 * its own stack of before.
 */
struct walk_memo {
	struct proc_key key;
	__u64 ip, sp, fp, ra;	/* the registers it began with (fp if a CFA was fp; ra on arm64) */
	__u64 stack;		/* the key it stored the stack by; 0: none */
	__u64 sum;		/* of the words it read, in that order */
	__u32 gen;		/* of the process's entry in unwind_procs */
	__u16 reach;		/* bytes above sp - UNWIND_WINDOW_BELOW the words lie in */
	__u8 nreads;
	__u8 fp_used;
	__u8 word[UNWIND_MEMO_WORDS];	/* each word's index above sp - UNWIND_WINDOW_BELOW */
};

/* A thread's memos, one for each of a few places it blocks in, by where each began. */
#define WALK_MEMO_SLOTS 8

struct walk_memo_slots {
	struct walk_memo slot[WALK_MEMO_SLOTS];
};

/* In the legacy object too (the maps of both are the same), where it is never made. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct walk_memo_slots);
} walk_memos SEC(".maps");

#ifndef BPFSCOPE_LEGACY

static __always_inline __u64 walk_memo_ra(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(regs, regs[30]);
#else
	return 0;
#endif
}

/*
 * Whether the thread entered the kernel by a system call, whose user
 * registers stay as they were while it waits in it: one taken from user
 * code by an interrupt rarely stops at the same instruction twice.
 */
static __always_inline bool walk_memo_in_syscall(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(regs, syscallno) >= 0;
#else
	return (long)BPF_CORE_READ(regs, orig_ax) >= 0;
#endif
}

/* The current thread's memo of walks from @regs, made if @flags say so. */
static __always_inline struct walk_memo *walk_memo_of(struct pt_regs *regs, __u64 flags)
{
	__u64 ip = PT_REGS_IP_CORE(regs), sp = PT_REGS_SP_CORE(regs);
	struct walk_memo_slots *m;

	m = bpf_task_storage_get(&walk_memos, bpf_get_current_task_btf(), 0, flags);
	return m ? &m->slot[(ip ^ ip >> 7 ^ sp >> 4) & (WALK_MEMO_SLOTS - 1)] : NULL;
}

/*
 * The stack key of the current thread's last walk from user registers
 * @regs, if walking process @k's stack again would find that stack; else 0.
 */
static __always_inline __u64 walk_memo_recall(struct pt_regs *regs, const struct proc_key *k)
{
	struct walk_memo *w = walk_memo_of(regs, 0);
	struct unwind_scratch *sc;
	struct unwind_proc *p;
	__u64 reach, sum = 0;
	__u32 zero = 0;

	if (!w || !w->stack || w->key.tgid != k->tgid || w->key.exec_id != k->exec_id ||
	    w->key.start_ns != k->start_ns)
		return 0;
	if (w->ip != PT_REGS_IP_CORE(regs) || w->sp != PT_REGS_SP_CORE(regs) ||
	    (w->fp_used && w->fp != PT_REGS_FP_CORE(regs)) || w->ra != walk_memo_ra(regs))
		return 0;
	p = bpf_map_lookup_elem(&unwind_procs, &w->key.tgid);
	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!p || p->gen != w->gen || !sc)
		return 0;
	reach = w->reach;
	/* Tested on the register the call is given (unwind_push() says why). */
	barrier_var(reach);
	if (reach > UNWIND_MEMO_SPAN)
		return 0;
	if (reach && bpf_probe_read_user(sc->recall, reach,
					 (const void *)(w->sp - UNWIND_WINDOW_BELOW)))
		return 0;
	for (__u32 i = 0; i < UNWIND_MEMO_WORDS; i++) {
		__u32 off;

		if (i >= w->nreads)
			break;
		off = w->word[i] * 8;
		barrier_var(off);
		if (off > UNWIND_MEMO_SPAN - 8)
			return 0;
		sum = unwind_memo_mix(sum, *(__u64 *)&sc->recall[off]);
	}
	return sum == w->sum ? w->stack : 0;
}

/* Keeps this CPU's walk just done from @regs, whose stack is stored as @stack, for the current thread. */
static __always_inline void walk_memo_keep(struct pt_regs *regs, __u64 stack)
{
	struct unwind_scratch *sc;
	struct unwind_walk *st;
	struct walk_memo *w;
	__u32 zero = 0;

	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	/* Gen 0: the entry changed since user space wrote it (unwind_forget()). */
	if (!sc || stack <= STACK_LOST || sc->walk.impure || !sc->walk.gen)
		return;
	st = &sc->walk;
	w = walk_memo_of(regs, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!w)
		return;
	w->key = st->key;
	w->ip = PT_REGS_IP_CORE(regs);
	w->sp = PT_REGS_SP_CORE(regs);
	w->fp = PT_REGS_FP_CORE(regs);
	w->ra = walk_memo_ra(regs);
	w->sum = st->read_sum;
	w->gen = st->gen;
	w->reach = st->reach;
	w->nreads = st->nreads;
	w->fp_used = st->fp_used;
	__builtin_memcpy(w->word, st->read_word, sizeof(w->word));
	w->stack = stack;
}

#endif /* BPFSCOPE_LEGACY */

#endif
