/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The BPF user-stack unwinder: call-frame information tables where binaries have them, frame pointers elsewhere. */
#ifndef BPFSCOPE_UNWIND_BPF_H
#define BPFSCOPE_UNWIND_BPF_H

#include "stack_key.h"
#include "unwind.h"
#include "walk.bpf.h"
#include "runtimes/runtimes.bpf.h"

/* Set by user space unless --unwind=fp: UNWIND_CFI_*. */
const volatile __u32 unwind_cfi;

/*
 * Every binary's rows, one range each, in chunks of UNWIND_CHUNK_ROWS that
 * user space creates as it writes rows there (through mmap) and drops
 * after a report once empty: the tables' memory follows what they hold,
 * not their budget. Row i is row i % UNWIND_CHUNK_ROWS of chunk i / UNWIND_CHUNK_ROWS.
 */
struct unwind_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, UNWIND_CHUNK_ROWS);
	/* By size: the inner map's types would be only forward-declared in BTF. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct unwind_row));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct unwind_chunk);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct unwind_build_id);
	__type(value, __u32);
} unwind_build_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct unwind_file_key);
	__type(value, struct unwind_file);
} unwind_files SEC(".maps");

/*
 * Whether stack_on_exit() sends a note at each traced process's exit (its
 * one entry, nonzero: yes). User space wants them only while they buy
 * something: rows for a binary refused for lack of room, or room in a
 * filling processes' map; else each wakes it for nothing, on a host that
 * runs a short-lived process every few milliseconds.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_exit_notes SEC(".maps");

#define UNWIND_BUILD_ID_SLOTS STACK_MAX_DEPTH

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_stack_build_id[UNWIND_BUILD_ID_SLOTS]);
} unwind_build_id_scratch SEC(".maps");

/* Where a walk writes, found again at each step. */
struct unwind_out {
	struct stack_trace *trace;
	struct unwind_sps *sps;
	struct unwind_counts *counts;	/* this CPU's */
};

/* x86-64 register DWARF number @reg of @regs (UNWIND_CFA_REG). */
static __always_inline bool unwind_reg(struct pt_regs *regs, __u32 reg, __u64 *val)
{
#if defined(__TARGET_ARCH_x86)
	switch (reg) {
	case 0: *val = BPF_CORE_READ(regs, ax); return true;
	case 1: *val = BPF_CORE_READ(regs, dx); return true;
	case 2: *val = BPF_CORE_READ(regs, cx); return true;
	case 3: *val = BPF_CORE_READ(regs, bx); return true;
	case 4: *val = BPF_CORE_READ(regs, si); return true;
	case 5: *val = BPF_CORE_READ(regs, di); return true;
	case 8: *val = BPF_CORE_READ(regs, r8); return true;
	case 9: *val = BPF_CORE_READ(regs, r9); return true;
	case 10: *val = BPF_CORE_READ(regs, r10); return true;
	case 11: *val = BPF_CORE_READ(regs, r11); return true;
	case 12: *val = BPF_CORE_READ(regs, r12); return true;
	case 13: *val = BPF_CORE_READ(regs, r13); return true;
	case 14: *val = BPF_CORE_READ(regs, r14); return true;
	case 15: *val = BPF_CORE_READ(regs, r15); return true;
	}
#endif
	return false;
}

static __always_inline bool unwind_read(__u64 *val, __u64 addr)
{
	return !bpf_probe_read_user(val, sizeof(*val), (const void *)addr);
}

/*
 * The word of the user stack at @addr, through the walk's window: read
 * again around @addr when not in it, and directly if even that fails
 * (a window that would reach past the stack's top). Global where the
 * kernel has bpf_loop (global functions take pointers from 5.12): inlined
 * in its six callers, it was checked in each, a tenth of what the walk
 * cost the verifier.
 */
#ifdef BPFSCOPE_LEGACY
static __always_inline
#else
__noinline
#endif
int unwind_read_stack(struct unwind_walk *st, __u64 *val, __u64 addr)
{
	__u64 off, lo;

	if (!st || !val)
		return false;
	off = addr - st->window_lo;
	if (off >= st->window_len || st->window_len - off < 8) {
		lo = addr - st->sp <= UNWIND_WINDOW_BELOW ? st->sp : addr - UNWIND_WINDOW_BELOW;
		if (bpf_probe_read_user(st->window, UNWIND_WINDOW, (const void *)lo)) {
			st->window_len = 0;
			UNWIND_IMPURE(st);
			return unwind_read(val, addr);
		}
		st->window_lo = lo;
		st->window_len = UNWIND_WINDOW;
		off = addr - lo;
	}
	/* Tested on the register used for the load (unwind_push() says why). */
	barrier_var(off);
	if (off > UNWIND_WINDOW - 8)
		return false;
	*val = *(__u64 *)&st->window[off];
	unwind_note_read(st, addr, *val);
	return true;
}

/* Appends @ip to the trace, if there is room. */
static __always_inline bool unwind_push(struct unwind_walk *st, struct unwind_out *out, __u64 ip)
{
	/*
	 * Tested on the register used for the store: clang may test another
	 * copy, or a 32-bit one widened again after the test.
	 */
	__u64 n = st->n;

	barrier_var(n);
	if (n >= STACK_MAX_DEPTH)
		return false;
	out->trace->ips[n] = ip;
	if (out->sps)
		out->sps->sp[n] = st->sp | st->via_fp;
	st->n = n + 1;
	return true;
}


/*
 * Row @idx. Its chunk is looked up at each call (an array of maps' lookup
 * the kernel inlines): kept from the call before, the search's every step
 * had one more way to go, which the verifier followed (1.3 ms of the
 * sampling program's load, for 3% more of a deep walk's BPF time).
 */
static __always_inline struct unwind_row *unwind_row_at(__u32 idx)
{
	__u32 c = idx / UNWIND_CHUNK_ROWS, i = idx % UNWIND_CHUNK_ROWS;
	void *chunk = bpf_map_lookup_elem(&unwind_rows, &c);

	return chunk ? bpf_map_lookup_elem(chunk, &i) : NULL;
}

/*
 * The index of the row in force at @pc: the last of rows[first, first + n)
 * whose pc is at most @pc; -1 if none. Global, so that the verifier checks
 * its bisection once: inlined, its steps were checked again in every state
 * the walk reached it with, a third of what the walk cost to load (with
 * unwind_mapping_search() and stack_hash(), profile_sample went from
 * 129,712 instructions verified to 48,390 on 6.18, 225,826 to 88,653 on
 * 6.12, where the guest's emulated verifier took 3.3 s for it, now 1.7).
 * Its arguments are scalars, which global functions of 5.10 may take.
 * The steps stay spelled out, which the verifier checks one by one: as a
 * bpf_loop() callback, checked once, a step a call cost a walk of 60
 * frames 1.6 times the BPF time, and four steps a call 1.3 times.
 */
__noinline long unwind_row_search(__u32 first, __u32 n, __u32 pc)
{
	__u32 lo = first, hi = first + n;
	struct unwind_row *r;

	if (!n || hi < first)
		return -1;
	/* UNWIND_MAX_BINARY_ROWS per binary at most: user space refuses more. */
	for (int i = 0; i < UNWIND_ROW_SEARCH_STEPS; i++) {
		__u32 mid;

		if (hi - lo <= 1)
			break;
		mid = lo + (hi - lo) / 2;
		r = unwind_row_at(mid);
		if (!r)
			return -1;
		if (r->pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	r = unwind_row_at(lo);
	return r && r->pc <= pc ? lo : -1;
}

/*
 * The index of @p's mapping holding @ip, by bisection of the sorted table;
 * -1 if none. Global, for what unwind_row_search() says, where the kernel
 * takes a pointer among a global function's arguments (5.12).
 */
#ifdef BPFSCOPE_LEGACY
static __always_inline
#else
__noinline
#endif
long unwind_mapping_search(const struct unwind_proc *p, __u64 ip)
{
	__u32 lo = 0, hi;

	if (!p)
		return -1;
	hi = p->nmaps;
	if (hi > UNWIND_MAX_MAPPINGS)
		return -1;
	for (int i = 0; i < 9; i++) {
		const struct unwind_mapping *m;
		__u32 mid;

		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		m = &p->maps[mid & (UNWIND_MAX_MAPPINGS - 1)];
		if (ip < m->start)
			hi = mid;
		else if (ip >= m->end)
			lo = mid + 1;
		else
			return mid & (UNWIND_MAX_MAPPINGS - 1);
	}
	return -1;
}

/* The mapping holding @ip, as unwind_mapping_search() finds it. */
static __always_inline struct unwind_mapping *unwind_find_mapping(struct unwind_proc *p, __u64 ip)
{
	long i = unwind_mapping_search(p, ip);

	return p && i >= 0 ? &p->maps[i & (UNWIND_MAX_MAPPINGS - 1)] : NULL;
}

/* The row in force at @pc, as unwind_row_search() finds it. */
static __always_inline struct unwind_row *unwind_find_row(__u32 first, __u32 n, __u32 pc)
{
	long i = unwind_row_search(first, n, pc);

	return i < 0 ? NULL : unwind_row_at(i);
}

/* Ends the walk, with @mark after the last frame (0: none, the stack is whole). */
static __always_inline long unwind_stop(struct unwind_walk *st, struct unwind_out *out, __u64 mark)
{
	if (mark)
		unwind_push(st, out, mark);
	if (mark) {
		out->counts->truncated++;
		UNWIND_IMPURE(st);
	}
	st->done = 1;
	return 1;
}

/*
 * A frame without CFI whose frame pointer is zero is the outermost only at
 * the very top of the main thread's stack, where ld.so's entry (which has
 * no CFI, and clears it) runs: elsewhere code built without frame pointers
 * may have left a zero there as well as anything else, and the stack goes on.
 */
static __always_inline bool unwind_at_stack_top(struct unwind_walk *st)
{
	struct task_struct *task = current_task();
	__u64 top = BPF_CORE_READ(task, mm, start_stack);

	/* start_stack is where the kernel left argc, the first stack pointer. */
	return top && st->sp + 16 >= top;
}

/*
 * One frame up by frame pointers, where there is no CFI: the caller's frame
 * pointer and return address are saved just above this frame's. A chain
 * that does not lead up the stack is not followed, nor one whose return
 * address is in no code (unwind_step checks it): the walk ends marked
 * rather than invent frames.
 */
static __always_inline long unwind_fp_step(struct unwind_walk *st, struct unwind_out *out)
{
	__u64 fp = st->fp, next_fp, ra;

	UNWIND_IMPURE(st);
	if (!fp)
		return unwind_stop(st, out, unwind_at_stack_top(st) ? 0 : UNWIND_MARK_NO_CFI);
	if (fp < st->sp || (fp & 7) || !unwind_read_stack(st, &ra, fp + 8) ||
	    !unwind_read_stack(st, &next_fp, fp))
		return unwind_stop(st, out, UNWIND_MARK_NO_CFI);
	/* A zeroed frame record ends a chain (arm64's _start leaves one). */
	if (!ra)
		return unwind_stop(st, out, 0);
	st->sp = fp + 16;
	st->fp = next_fp;
	st->ip = UNWIND_CODE(ra);
	st->exact = 0;
	st->via_fp = 1;
	return 0;
}

/* x86-64 and arm64 as Debian builds them. */
#define UNWIND_PAGE_SHIFT 12

/*
 * The interpreter's bytecode pointer in the first frame's registers, which
 * a JVM's frame has in its slot only once it calls (x86-64's r13; arm64's
 * registers are not kept past the first step's start).
 */
#if defined(__TARGET_ARCH_x86)
#define UNWIND_BCP(regs)	((regs) ? BPF_CORE_READ((regs), r13) : 0)
#else
#define UNWIND_BCP(regs)	0
#endif

/* Code without CFI: a runtime's own (a JVM's), walked as it says, else by frame pointers. */
static __always_inline long unwind_nocfi_step(struct unwind_walk *st, struct unwind_out *out,
					      __u64 bcp)
{
	int r = runtimes_step(bcp);

	UNWIND_IMPURE(st);
	if (r < 0)
		return unwind_fp_step(st, out);
	return r ? unwind_stop(st, out, UNWIND_MARK_JAVA) : 0;
}

#ifndef BPFSCOPE_LEGACY

/* bpf_find_vma()'s callback: @vma's rows into @arg (a mapping), if user space has seen its file. */
static long unwind_vma_found(struct task_struct *task, struct vm_area_struct *vma, void *arg)
{
	struct unwind_mapping *late = arg;
	struct unwind_file_key key = {};
	struct unwind_file *f;
	struct file *file;
	__u64 off;

	file = BPF_CORE_READ(vma, vm_file);
	if (!file)
		return 0;
	key.ino = BPF_CORE_READ(file, f_inode, i_ino);
	key.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	f = bpf_map_lookup_elem(&unwind_files, &key);
	if (!f)
		return 0;
	off = BPF_CORE_READ(vma, vm_pgoff) << UNWIND_PAGE_SHIFT;
	if (off < f->seg_off || off - f->seg_off >= f->seg_size)
		return 0;
	late->start = BPF_CORE_READ(vma, vm_start);
	late->end = BPF_CORE_READ(vma, vm_end);
	late->bias = late->start - off + f->delta;
	late->first = f->first;
	late->n = f->n;
	late->id = off >> 32 ? UNWIND_NO_FILE : f->id;
	late->off = off;
	return 0;
}

/*
 * The mapping of code mapped since the process's maps were read (ld.so
 * loading libraries just after exec, dlopen), from the kernel: once per
 * walk, all it allows (in interrupt context it can unlock the mm only by
 * irq_work, one at a time), which covers the usual case, one new library.
 */
static __always_inline struct unwind_mapping *unwind_late_mapping(struct unwind_walk *st)
{
	if (!st->looked_up) {
		/* On the stack: a callback's argument may be nothing else. */
		struct unwind_mapping late = {};

		st->looked_up = 1;
		bpf_find_vma(bpf_get_current_task_btf(), st->ip, unwind_vma_found, &late, 0);
		st->late = late;
	}
	if (st->late.n && st->ip >= st->late.start && st->ip < st->late.end)
		return &st->late;
	return NULL;
}

#else

/* Before 5.17 there is no bpf_find_vma(): such code is walked by frame pointers. */
static __always_inline struct unwind_mapping *unwind_late_mapping(struct unwind_walk *st)
{
	return NULL;
}

#endif

/*
 * The frame just pushed, in mapping @m: as file and offset, so that it is
 * named even if its process exits before its maps are read, or maps other
 * code at that address before the report.
 */
static __always_inline void unwind_file_frame(struct unwind_walk *st, struct unwind_out *out,
					      const struct unwind_mapping *m)
{
	__u64 n = st->n - 1;

	/* 64 bits: a 32-bit index is widened again after the check, unchecked. */
	barrier_var(n);
	if (n >= STACK_MAX_DEPTH || m->id > UNWIND_FILE_ID_MASK)
		return;
	out->trace->ips[n] = UNWIND_FILE_FRAME | (__u64)m->id << UNWIND_FILE_OFF_BITS |
			    ((st->ip - m->start + m->off) & ((1ULL << UNWIND_FILE_OFF_BITS) - 1));
}

/* Code @k (entry @p) mapped since its maps were read (dlopen): have them read again, once. */
static __always_inline void unwind_ask(struct unwind_proc *p, struct unwind_counts *c,
				       const struct proc_key *k)
{
	/* Not read yet: its first count announces it. */
	if (!p)
		return;
	c->unmapped++;
	if (!p->asked) {
		p->asked = 1;
		proc_announce(k, PROC_MAPS_CHANGED);
	}
}

/*
 * The registers a signal frame saved, from the stack pointer the signal
 * trampoline runs with. x86-64: the kernel's rt_sigframe leaves struct
 * ucontext there, its mcontext 40 bytes in (uc_flags, uc_link, uc_stack).
 * arm64: struct rt_sigframe is siginfo (128 bytes), then ucontext, whose
 * mcontext (16-byte aligned, 176 bytes in) holds fault_address, regs[31],
 * sp and pc; the link register is x30.
 */
#if defined(__TARGET_ARCH_arm64)
#define SIGFRAME_REGS	(128 + 176 + 8)
#define SIGFRAME_BP	(SIGFRAME_REGS + 29 * 8)
#define SIGFRAME_LR	(SIGFRAME_REGS + 30 * 8)
#define SIGFRAME_SP	(SIGFRAME_REGS + 31 * 8)
#define SIGFRAME_IP	(SIGFRAME_REGS + 32 * 8)
#else
#define SIGFRAME_BP	(40 + 80)
#define SIGFRAME_SP	(40 + 120)
#define SIGFRAME_IP	(40 + 128)
#endif

/*
 * CPython's -X perf trampolines on x86-64: copies of (endbr64;) sub $8,
 * %rsp; call *%rcx; add $8, %rsp; ret before 3.14, of (endbr64;) push
 * %rbp; mov %rsp, %rbp; call *%rcx; pop %rbp; ret since. Is @code, the
 * bytes at a first frame's ip, one of the instructions around the call,
 * where the return address is at the top of the stack and the caller's
 * frame pointer still in its register?
 */
static __always_inline bool unwind_trampoline_entry(__u64 code)
{
	__u8 op = code;

	return op == 0xf3 || op == 0x55 || op == 0xc3 || (code & 0xffffff) == 0xec8348;
}

/*
 * A cgo call's C code ran on the thread's stack (g0's), where asmcgocall
 * left, at the bottom of its frame, how deep in the goroutine's stack it
 * was called (stack.hi - sp, which survives the stack being copied
 * meanwhile) and the goroutine, whose g begins with stack.lo, stack.hi.
 * From there the walk goes on up the goroutine's stack, lower in memory:
 * the one step down a walk takes, checked against the goroutine's bounds.
 */
/* Goroutine @g's stack, [*lo, *hi), if it reads as one. */
static __always_inline bool unwind_go_stack(__u64 g, __u64 *lo, __u64 *hi)
{
	return unwind_read(lo, g) && unwind_read(hi, g + 8) && *hi > *lo &&
	       *hi - *lo <= (1ULL << 30);
}

/*
 * Back in the goroutine's stack at @sp, where a runtime assembly function
 * that switched stacks was: its caller's return address there, after the
 * caller's frame pointer if the function pushed one first (x86-64 Go 1.21
 * on, the row's RA slot 1); on arm64, at the bottom of the function's own
 * frame of 8 * RA slot bytes, the caller's frame pointer below it.
 */
static __always_inline bool unwind_go_return(struct unwind_walk *st, const struct unwind_row *r,
					     __u64 sp)
{
	__u64 fp = st->fp, ra;

#if defined(__TARGET_ARCH_arm64)
	if (!unwind_read(&ra, sp) || !unwind_read(&fp, sp - 8) || !ra)
		return false;
	st->sp = sp + 8 * UNWIND_ROW_RA_SLOT(r);
	st->ra = 0;
#else
	if (UNWIND_ROW_RA_SLOT(r)) {
		if (!unwind_read(&fp, sp))
			return false;
		sp += 8;
	}
	if (!unwind_read(&ra, sp) || !ra)
		return false;
	st->sp = sp + 8;
#endif
	st->fp = fp;
	st->ip = UNWIND_CODE(ra);
	st->exact = 0;
	return true;
}

static __always_inline bool unwind_go_cgocall(struct unwind_walk *st, const struct unwind_row *r)
{
	__u64 depth, g, lo, hi, sp;

	if (!unwind_read(&depth, st->sp + r->cfa_off) || !unwind_read(&g, st->sp + 8 * r->fp_slot) ||
	    !unwind_go_stack(g, &lo, &hi))
		return false;
	sp = hi - depth;
	if (depth > hi - lo || (sp & 7))
		return false;
	return unwind_go_return(st, r, sp);
}

/*
 * mcall(fn) saved where its caller was in the goroutine's g.sched (sp,
 * pc, then bp), and called fn(g) on the thread's stack, g at the bottom
 * of its frame: a parked goroutine's thread, in the scheduler, leads back
 * into the goroutine's stack, as Go's own traceback goes. 1 when it did;
 * -1 when another thread has resumed the goroutine since (gogo clears
 * g.sched.sp), which leaves nothing to go back to; 0 when g is not one.
 */
static __always_inline int unwind_go_mcall(struct unwind_walk *st, const struct unwind_row *r)
{
	__u64 g, lo, hi, sched, sp, pc, fp;

	if (!unwind_read(&g, st->sp) || !unwind_go_stack(g, &lo, &hi))
		return 0;
	sched = g + r->cfa_off;
	if (!unwind_read(&sp, sched) || !unwind_read(&pc, sched + 8) ||
	    !unwind_read(&fp, sched + 8 * r->fp_slot))
		return 0;
	if (!sp)
		return -1;
	if (sp < lo || sp >= hi || (sp & 7) || !pc)
		return 0;
	st->sp = sp;
	st->fp = fp;
	st->ip = pc;
	st->exact = 0;
	return 1;
}

/*
 * systemstack(fn) ran fn on the thread's stack, having saved where it
 * was in the goroutine's g.sched: the goroutine is its thread's (m's)
 * current one, found from the thread's g (g0's now), as systemstack
 * itself finds it to go back. g.m at 48 bytes, m.curg at cfa_off,
 * g.sched.sp at 8 * fp_slot (its code says, unwind.h). The thread's g is
 * where the thread pointer says on x86-64; on arm64, in x28, which Go
 * code keeps for nothing else (C code may not: the reads check it).
 */
static __always_inline bool unwind_go_systemstack(struct unwind_walk *st,
						  const struct unwind_row *r)
{
	__u64 g, m, curg, lo, hi, sp;

#if defined(__TARGET_ARCH_arm64)
	g = st->g;
#else
	if (!unwind_read(&g, unwind_thread_pointer() - 8))
		return false;
#endif
	if (!unwind_read(&m, g + 48) ||
	    !unwind_read(&curg, m + r->cfa_off) || !unwind_go_stack(curg, &lo, &hi) ||
	    !unwind_read(&sp, curg + 8 * r->fp_slot) || sp < lo || sp >= hi || (sp & 7))
		return false;
	return unwind_go_return(st, r, sp);
}

/*
 * Frame @i of the walk: pushed, and the registers of its caller's found.
 * 1 when the walk is done; -1 when the first frame is in no binary the
 * tables know (not read yet, or mapped since), whose walk is better left
 * to the kernel's, by build-id.
 */
static __always_inline long unwind_step(struct unwind_walk *st, struct unwind_out *out, __u32 i)
{
	struct unwind_mapping *m;
	struct unwind_row *r;
	__u64 cfa, ra = 0, pc;
	bool fp_saved;
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs;
#endif

	if (st->done)
		return 1;
#if defined(__TARGET_ARCH_x86)
	regs = (struct pt_regs *)st->regs;
	st->regs = 0;
#endif
	/*
	 * Every slot holds a frame and there is one more: the last frame
	 * carries a flag that says the stack went on (unwind.h).
	 */
	if (st->n >= STACK_MAX_DEPTH) {
		UNWIND_IMPURE(st);
		out->trace->ips[STACK_MAX_DEPTH - 1] |= UNWIND_DEEPER;
		out->counts->truncated++;
		st->done = 1;
		return 1;
	}
	if (st->ip >= st->map.start && st->ip < st->map.end) {
		m = &st->map;
	} else {
		struct unwind_proc *p = NULL;

		/* An entry replaced since the walk began is of the same process. */
		if (st->has_proc)
			p = bpf_map_lookup_elem(&unwind_procs, &st->key.tgid);
		m = unwind_find_mapping(p, st->ip);
		if (m) {
			if (!m->n && m->first >= UNWIND_LAZY_ASKED) {
				st->lazy = 1;
				UNWIND_IMPURE(st);
				if (m->first == UNWIND_LAZY) {
					m->first = UNWIND_LAZY_ASKED;
					proc_announce_value(&st->key, PROC_BINARY_WANTED, m->id);
				}
			}
			st->map = *m;
			m = &st->map;
		} else {
			UNWIND_IMPURE(st);
			unwind_ask(p, out->counts, &st->key);
			m = unwind_late_mapping(st);
			if (!m && !i)
				return -1;
			/*
			 * A frame pointer chain that leads out of all code the
			 * process has mapped was no chain (code without frame
			 * pointers keeps anything in that register): not a frame.
			 */
			if (!m && st->via_fp && p)
				return unwind_stop(st, out, UNWIND_MARK_NO_CFI);
		}
	}
	if (!unwind_push(st, out, st->ip))
		return unwind_stop(st, out, 0);
	st->via_fp = 0;
	if (!m)
		return unwind_nocfi_step(st, out, UNWIND_BCP(regs));
	unwind_file_frame(st, out, m);
	/* A return address is the instruction after a call, maybe in the next function. */
	pc = st->ip - m->bias - (st->exact ? 0 : 1);
	r = unwind_find_row(m->first, m->n, (__u32)pc);
#if defined(__TARGET_ARCH_arm64)
	/*
	 * The first frame, in a binary with CFI but outside its functions: a
	 * PLT stub, which has none on arm64 and leaves sp, fp and x30 alone.
	 */
	if ((!r || UNWIND_ROW_CFA(r) == UNWIND_NONE) && st->exact && m->n && st->ra &&
	    st->ra != st->ip) {
		st->ip = UNWIND_CODE(st->ra);
		st->ra = 0;
		st->exact = 0;
		return 0;
	}
#endif
	if (!r || UNWIND_ROW_CFA(r) == UNWIND_NONE)
		return unwind_nocfi_step(st, out, UNWIND_BCP(regs));
	fp_saved = UNWIND_ROW_FP_SAVED(r);
	/* Rules that read more than the stack's words, or registers a memo does not keep. */
	switch (UNWIND_ROW_CFA(r)) {
	case UNWIND_CFA_SP:
	case UNWIND_CFA_FP:
	case UNWIND_CFA_PLT:
	case UNWIND_CFA_SP_RA_LOW:
	case UNWIND_END:
		break;
	default:
		UNWIND_IMPURE(st);
	}
	switch (UNWIND_ROW_CFA(r)) {
	case UNWIND_CFA_SP:
		cfa = st->sp + r->cfa_off;
		break;
	case UNWIND_CFA_FP:
		cfa = st->fp + r->cfa_off;
		UNWIND_FP_USED(st);
		break;
	case UNWIND_CFA_PLT:
		cfa = st->sp + 8 + ((st->ip & 15) >= (__u64)r->cfa_off ? 8 : 0);
		break;
#if defined(__TARGET_ARCH_x86)
	/*
	 * Rows user space builds for x86-64 only: compiled there only, as
	 * every case here multiplies what the verifier walks (on the
	 * emulated arm64 guest, offcputime's check took 297 s with them, 57
	 * without).
	 */
	case UNWIND_CFA_SP_DEREF:
		if (!unwind_read(&cfa, st->sp + UNWIND_DEREF_OFF(r)))
			return unwind_stop(st, out, UNWIND_MARK_READ);
		cfa += UNWIND_DEREF_ADD(r);
		break;
	case UNWIND_CFA_FP_DEREF:
		/* The caller's frame pointer at fp: read after the CFA, which needs this one. */
		if (!unwind_read(&cfa, st->fp + UNWIND_DEREF_OFF(r)) ||
		    !unwind_read(&st->fp, st->fp))
			return unwind_stop(st, out, UNWIND_MARK_READ);
		cfa += UNWIND_DEREF_ADD(r);
		fp_saved = false;
		break;
	case UNWIND_CFA_REG:
		if (!regs || !unwind_reg(regs, UNWIND_REG_NUM(r), &cfa))
			return unwind_stop(st, out, UNWIND_MARK_UNSUPPORTED);
		cfa += UNWIND_REG_OFF(r);
		break;
#endif
	case UNWIND_CFA_TRAMPOLINE:
		cfa = st->sp + 16;
		if (st->exact && unwind_read(&ra, st->ip) && unwind_trampoline_entry(ra)) {
			cfa = st->sp + 8;
			fp_saved = false;
		} else if (st->exact && (ra & 0xffffff) == 0xe58948) {
			fp_saved = false;	/* mov %rsp, %rbp: pushed, not yet moved */
		}
		break;
	case UNWIND_SIGNAL:
		if (!unwind_read(&st->fp, st->sp + SIGFRAME_BP) ||
		    !unwind_read(&ra, st->sp + SIGFRAME_IP) ||
#if defined(__TARGET_ARCH_arm64)
		    /* The interrupted code may be a leaf, its return address in x30. */
		    !unwind_read(&st->ra, st->sp + SIGFRAME_LR) ||
#endif
		    !unwind_read(&st->sp, st->sp + SIGFRAME_SP))
			return unwind_stop(st, out, UNWIND_MARK_READ);
		/* The interrupted instruction itself, not a return address. */
		st->ip = ra;
		st->exact = 1;
		return 0;
	case UNWIND_CFA_SP_RA_LOW:
		cfa = st->sp + r->cfa_off;
		if (!r->cfa_off) {
			ra = st->ra;
		} else if (!unwind_read_stack(st, &st->fp, st->sp - 8) ||
			   !unwind_read_stack(st, &ra, st->sp)) {
			return unwind_stop(st, out, UNWIND_MARK_READ);
		}
		if (!ra || cfa < st->sp)
			return unwind_stop(st, out, ra ? UNWIND_MARK_UNSUPPORTED : 0);
		st->sp = cfa;
		st->ip = UNWIND_CODE(ra);
		st->exact = 0;
		return 0;
	case UNWIND_CFA_GO_CGOCALL:
		/* Stopped in it, the stack may not be switched yet (or back). */
		if (st->exact || !unwind_go_cgocall(st, r))
			return unwind_fp_step(st, out);
		return 0;
	case UNWIND_CFA_GO_MCALL:
		if (st->exact)
			return unwind_fp_step(st, out);
		switch (unwind_go_mcall(st, r)) {
		case 1:
			return 0;
		case -1:
			return unwind_stop(st, out, UNWIND_MARK_GO_RESUMED);
		}
		return unwind_fp_step(st, out);
	case UNWIND_CFA_GO_SYSTEMSTACK:
		if (st->exact || !unwind_go_systemstack(st, r))
			return unwind_fp_step(st, out);
		return 0;
	case UNWIND_END:
		return unwind_stop(st, out, 0);
	default:
		return unwind_stop(st, out, UNWIND_MARK_UNSUPPORTED);
	}
	/*
	 * The caller's frame is above this one, or the table is not this
	 * code's; level with it only where the return address is still in
	 * the link register (an arm64 function that has not saved it yet).
	 */
	if (cfa < st->sp || (cfa == st->sp && UNWIND_ROW_RA_SLOT(r)))
		return unwind_stop(st, out, UNWIND_MARK_UNSUPPORTED);
	if (UNWIND_ROW_RA_SLOT(r)) {
		if (!unwind_read_stack(st, &ra, cfa + UNWIND_ROW_RA_OFF(r)))
			return unwind_stop(st, out, UNWIND_MARK_READ);
	} else {
		ra = st->ra;	/* still in the link register, once */
		st->ra = 0;
	}
	if (fp_saved && !unwind_read_stack(st, &st->fp, cfa + UNWIND_ROW_FP_OFF(r)))
		return unwind_stop(st, out, UNWIND_MARK_READ);
	if (!ra)
		return unwind_stop(st, out, 0);
	st->sp = cfa;
	st->ip = UNWIND_CODE(ra);
	st->exact = 0;
	return 0;
}

#ifdef BPFSCOPE_LEGACY

/* The user code segment, which 64-bit user registers hold (x86-64). */
#define UNWIND_USER_CS 0x33

/*
 * The current task's user registers before 5.15, which has no
 * bpf_task_pt_regs(): as task_pt_regs() finds them, at the top of its
 * kernel stack (THREAD_SIZE, 16 KiB on both arches unless KASAN doubles
 * it); x86-64 with FRED keeps 16 bytes above them, which the user code
 * segment they hold tells. NULL if neither place holds them (a kernel
 * thread, KASAN): the walk is then the kernel's.
 */
static __always_inline struct pt_regs *unwind_user_regs(void)
{
	__u64 top = (__u64)BPF_CORE_READ(current_task(), stack) + 16384 -
		    bpf_core_type_size(struct pt_regs);
	struct pt_regs *regs = (struct pt_regs *)top;

	if (unwind_cfi & UNWIND_CFI_NO_REGS)
		return NULL;
#if defined(__TARGET_ARCH_x86)
	if ((__u16)BPF_CORE_READ(regs, cs) == UNWIND_USER_CS)
		return regs;
	regs = (struct pt_regs *)(top - 16);
	if ((__u16)BPF_CORE_READ(regs, cs) == UNWIND_USER_CS)
		return regs;
	return NULL;
#else
	/* EL0, the mode user code runs in, and a stack. */
	if ((BPF_CORE_READ(regs, pstate) & 0xf) || !BPF_CORE_READ(regs, sp))
		return NULL;
	return regs;
#endif
}

#else

static __always_inline struct pt_regs *unwind_user_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

#endif

/*
 * Process @k's entry, if its maps were read for this program image. Made
 * from /proc (for -p, before tracing), which tells neither exec count nor
 * start in nanoseconds, the first walk binds it to its image; an entry of
 * an earlier image (just exec'd, not read yet) is none: the walk has only
 * what the kernel says of the first frame's mapping.
 */
static __always_inline struct unwind_proc *unwind_proc_of(const struct proc_key *k)
{
	__u32 tgid = k->tgid;
	struct unwind_proc *p = bpf_map_lookup_elem(&unwind_procs, &tgid);

	if (p && p->exec_id == UNWIND_EXEC_ANY) {
		p->start_ns = k->start_ns;
		p->exec_id = k->exec_id;
	}
	if (p && (p->exec_id != k->exec_id || p->start_ns != k->start_ns))
		return NULL;
	return p;
}

/* @st at the first frame, of process @k, whose user registers are @regs. */
static __always_inline void unwind_begin(struct unwind_walk *st, struct pt_regs *regs,
					 const struct proc_key *k)
{
	st->ip = PT_REGS_IP_CORE(regs);
	st->sp = PT_REGS_SP_CORE(regs);
	st->fp = PT_REGS_FP_CORE(regs);
#if defined(__TARGET_ARCH_arm64)
	st->ra = BPF_CORE_READ(regs, regs[30]);
	st->g = BPF_CORE_READ(regs, regs[28]);
#endif
	st->exact = 1;
#if defined(__TARGET_ARCH_x86)
	st->regs = (__u64)regs;
#endif
	st->key = *k;
#ifndef BPFSCOPE_LEGACY
	st->memo_base = st->sp - UNWIND_WINDOW_BELOW;
#endif
}

/*
 * One step of the walk, a global function: the verifier checks it once,
 * with what the steps before left in this CPU's unwind_scratch, rather than
 * again for each frame and each state a program reaches the walk in (as
 * a bpf_loop callback, and inlined, it was: offcputime's and profile's
 * programs then took twice as long to load). As unwind_step() says.
 */
__noinline int unwind_step_kept(__u32 i)
{
	struct unwind_scratch *sc;
	struct unwind_out out;
	__u32 zero = 0;

	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	out.trace = bpf_map_lookup_elem(&stack_scratch, &zero);
	out.counts = bpf_map_lookup_elem(&unwind_counters, &zero);
	if (!sc || !out.trace || !out.counts)
		return 1;
	out.sps = &sc->sps;
	return unwind_step(&sc->walk, &out, i);
}

#ifndef BPFSCOPE_LEGACY

static long unwind_steps_step(__u32 i, void *done)
{
	*(long *)done = unwind_step_kept(i);
	return *(long *)done != 0;
}

/*
 * The walk's steps, one more than there are slots (whether the stack goes
 * on): 1, or -1 (unwind_step()). A bpf_loop(), whose callback the verifier
 * checks once, where it followed the loop spelled out step by step.
 */
static __always_inline long unwind_steps(void)
{
	long done = 0;

	bpf_loop(STACK_MAX_DEPTH + 1, unwind_steps_step, &done, 0);
	return done;
}

#else

static __always_inline long unwind_steps(void)
{
	long done = 0;

	for (__u32 i = 0; i < STACK_MAX_DEPTH + 1 && !done; i++)
		done = unwind_step_kept(i);
	return done;
}

#endif

/*
 * Walks the current task's user stack into @t, this CPU's stack_scratch
 * (where the steps write), with the tables of process @k, from registers
 * @regs (its user registers), each step a call the verifier has checked
 * once. The depth, or -1 when the first frame is in no binary the tables
 * know.
 */
static __always_inline int unwind_user(struct pt_regs *regs, const struct proc_key *k,
				       struct stack_trace *t)
{
	struct unwind_counts *counts;
	struct unwind_scratch *sc;
	struct unwind_walk *st;
	struct unwind_proc *p;
	__u32 zero = 0;
	long done;

	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	counts = bpf_map_lookup_elem(&unwind_counters, &zero);
	if (!sc || !counts)
		return 0;
	st = &sc->walk;
	__builtin_memset(st, 0, UNWIND_WALK_BEGIN);
	unwind_begin(st, regs, k);
	p = unwind_proc_of(k);
	st->has_proc = p != NULL;
	/* A runtime's frames are read from its own structures, which no memo checks. */
	if (runtimes_start(k) || !p)
		UNWIND_IMPURE(st);
#ifndef BPFSCOPE_LEGACY
	st->gen = p ? p->gen : 0;
#endif
	if (!st->ip)
		return 0;
	done = unwind_steps();
	if (done < 0)
		return -1;
	counts->cfi++;
	counts->lazy += st->lazy;
	return runtimes_merge(t, st->n);
}

#ifndef BPFSCOPE_LEGACY

/* unwind_by_build_id()'s walk: the stack, and its depth. */
struct unwind_by_build_id {
	struct stack_trace *trace;
	__u32 n;
};

static long unwind_build_id_frame(__u32 i, void *arg)
{
	struct bpf_stack_build_id (*all)[UNWIND_BUILD_ID_SLOTS];
	struct unwind_by_build_id *st = arg;
	__u32 zero = 0, *num, id = UNWIND_FILE_ID_MASK;
	struct bpf_stack_build_id *b;
	__u64 slot = i;

	if (i >= st->n)
		return 1;
	/*
	 * The compiler may index with an unchecked copy of i: check the one
	 * it indexes with, hidden from it so the check stays.
	 */
	barrier_var(slot);
	if (slot >= STACK_MAX_DEPTH)
		return 1;
	all = bpf_map_lookup_elem(&unwind_build_id_scratch, &zero);
	if (!all)
		return 1;
	b = &(*all)[slot];
	if (b->status != BPF_STACK_BUILD_ID_VALID) {
		st->trace->ips[slot] = b->ip;
		return 0;
	}
	num = bpf_map_lookup_elem(&unwind_build_ids, b->build_id);
	if (num)
		id = *num;
	st->trace->ips[slot] = UNWIND_FILE_FRAME | (__u64)(id & UNWIND_FILE_ID_MASK) << UNWIND_FILE_OFF_BITS |
			       (b->offset & ((1ULL << UNWIND_FILE_OFF_BITS) - 1));
	return 0;
}

/*
 * The kernel's frame-pointer walk of the current user stack, each frame as
 * build-id and offset where the kernel could read them: a process without
 * mappings yet (a short-lived one may exit before they are read) still has
 * its frames named from binaries seen in other processes. The depth.
 */
static __always_inline int unwind_by_build_id(void *ctx, struct stack_trace *t)
{
	struct bpf_stack_build_id (*all)[UNWIND_BUILD_ID_SLOTS];
	struct unwind_by_build_id st = { .trace = t };
	__u32 zero = 0;
	long n;

	all = bpf_map_lookup_elem(&unwind_build_id_scratch, &zero);
	if (!all)
		return 0;
	n = bpf_get_stack(ctx, all, STACK_MAX_DEPTH * sizeof((*all)[0]),
			  BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	if (n <= 0)
		return 0;
	st.n = n / sizeof((*all)[0]);
	bpf_loop(STACK_MAX_DEPTH, unwind_build_id_frame, &st, 0);
	UNWIND_COUNT(by_build_id);
	return st.n;
}

#endif /* BPFSCOPE_LEGACY */

/*
 * @p's mapping @i, if there is one. The index is checked on the register
 * the access uses: the compiler may otherwise check another copy.
 */
static __always_inline struct unwind_mapping *unwind_mapping_at(struct unwind_proc *p, __u64 i)
{
	barrier_var(i);
	if (i >= UNWIND_MAX_MAPPINGS || i >= p->nmaps)
		return NULL;
	return &p->maps[i];
}

/*
 * The first of process @tgid's mappings that ends after @addr; its number
 * of mappings if none. Global, and by pid (a scalar, which the global
 * functions of 5.10 may take): inlined, its bisection was checked again
 * for each way it could go, and stack_on_new_area took 8 ms to load, a
 * tenth of the tool's start (now 2).
 */
__noinline long unwind_mapping_after(__u32 tgid, __u64 addr)
{
	struct unwind_proc *p = bpf_map_lookup_elem(&unwind_procs, &tgid);
	__u32 lo = 0, hi;

	if (!p)
		return UNWIND_MAX_MAPPINGS;
	hi = p->nmaps;
	if (hi > UNWIND_MAX_MAPPINGS)
		return UNWIND_MAX_MAPPINGS;
	for (int i = 0; i < 9 && lo < hi; i++) {
		__u32 mid = (lo + hi) / 2;
		struct unwind_mapping *m = unwind_mapping_at(p, mid);

		if (m && m->end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A library's code is one mapping: an munmap() that takes more is rare. */
#define UNWIND_FORGET_MAX 8

/* @p changed here, not by user space, if @forgot: no walk's memo of before holds. */
static __always_inline bool unwind_forgot(struct unwind_proc *p, bool forgot)
{
	if (forgot)
		p->gen = 0;
	return forgot;
}

/*
 * Forgets the mappings in [start, end) of process @tgid (entry @p),
 * unmapped since (dlclose): code mapped there next is another binary,
 * which the walk must find from the kernel (unwind_late_mapping), not
 * take for this one. Each is left empty where it was, so that the table
 * stays sorted for the walkers running meanwhile; past UNWIND_FORGET_MAX
 * of them, all of @p's are forgotten until its maps are read again.
 * Whether any was. (An entry replaced while this runs is of maps read
 * since, which do not hold what was unmapped.)
 */
static __always_inline bool unwind_forget(__u32 tgid, struct unwind_proc *p, __u64 start,
					  __u64 end)
{
	__u32 first = unwind_mapping_after(tgid, start);
	struct unwind_mapping *m;
	bool forgot = false;

	for (int i = 0; i < UNWIND_FORGET_MAX; i++) {
		m = unwind_mapping_at(p, first + i);

		if (!m || m->start >= end)
			return unwind_forgot(p, forgot);
		if (m->end <= m->start)
			continue;
		m->n = 0;
		m->id = UNWIND_NO_FILE;
		m->end = m->start;
		forgot = true;
	}
	m = unwind_mapping_at(p, first + UNWIND_FORGET_MAX);
	if (m && m->start < end) {
		p->nmaps = 0;
		forgot = true;
	}
	return unwind_forgot(p, forgot);
}

#endif
