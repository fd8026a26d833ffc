/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What a stack walk leaves for the runtimes that take it further and for user space: its frames, its state, its counts, its notes. */
#ifndef BPFSCOPE_WALK_BPF_H
#define BPFSCOPE_WALK_BPF_H

#include "stack_key.h"
#include "unwind.h"

/*
 * Processes user space should read now (a struct proc_note each): seen
 * for the first time, so that their maps are read while they live (one
 * that exits before the report would otherwise be [unknown]); or running
 * code where nothing was mapped when their maps were read (dlopen).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} new_pids SEC(".maps");

static __always_inline void proc_announce_value(const struct proc_key *k, __u32 kind, __u64 value)
{
	struct proc_note e = { .proc = *k, .kind = kind, .value = value };

	bpf_ringbuf_output(&new_pids, &e, sizeof(e), 0);
}

static __always_inline void proc_announce(const struct proc_key *k, __u32 kind)
{
	proc_announce_value(k, kind, 0);
}

/* A runtime's frame @v, and its @data slot (0: none), to be named while its process lives. */
static __always_inline void proc_announce_frame(const struct proc_key *k, __u64 v, __u64 data)
{
	struct proc_note e = { .proc = *k, .kind = PROC_RUNTIME_FRAME, .value = v, .data = data };

	bpf_ringbuf_output(&new_pids, &e, sizeof(e), 0);
}

/* Notes not sent, per CPU, by enum notes_lost_kind: said at exit (common/offcpu_opts.c). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NOTES_LOST_KINDS);
	__type(key, __u32);
	__type(value, __u64);
} notes_lost SEC(".maps");

static __always_inline void notes_count_lost(__u32 kind)
{
	__u64 *lost = bpf_map_lookup_elem(&notes_lost, &kind);

	if (lost)
		(*lost)++;
}

/*
 * proc_announce(), counted when the ring is full: for the programs of
 * their own (exec, a new mapping's area). Not in the walk, where the
 * branch tripled the verifier's work on the sampling program (190 ms to
 * 600 ms here); those notes' processes are read at the next check.
 */
static __always_inline void proc_announce_counted(const struct proc_key *k, __u32 kind)
{
	struct proc_note e = { .proc = *k, .kind = kind };

	if (bpf_ringbuf_output(&new_pids, &e, sizeof(e), 0))
		notes_count_lost(NOTES_LOST_FULL);
}

/* Where a stack is taken, before it is stored. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_trace);
} stack_scratch SEC(".maps");

/* How stacks were walked, per CPU: counted at every stack, never contended. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_counts);
} unwind_counters SEC(".maps");

#define UNWIND_COUNT(field)								\
	do {										\
		__u32 zero_ = 0;							\
		struct unwind_counts *c_ = bpf_map_lookup_elem(&unwind_counters, &zero_);	\
											\
		if (c_)									\
			c_->field++;							\
	} while (0)

/*
 * A return address as code: on arm64, one signed by pointer authentication
 * (-mbranch-protection=standard, most arm64 distributions' default) carries
 * its signature in the bits above the 48 of user addresses, which the
 * kernel's own walk strips as well.
 */
#if defined(__TARGET_ARCH_arm64)
#define UNWIND_CODE(ra) ((ra) & ((1ULL << 48) - 1))
#else
#define UNWIND_CODE(ra) (ra)
#endif

/*
 * The stack pointer of each frame of the last walk on this CPU, beside its
 * address in the trace: where a frame's locals lie, between its own and
 * its caller's, for runtimes that keep state there (CPython's entry frames).
 * Its low bit (stack pointers are 8-aligned) says the frame's address was
 * read by the frame-pointer step from the frame before: that frame's own
 * frame pointer was then this stack pointer less the two words (V8's).
 */
#define UNWIND_SP_VIA_FP	1ULL

struct unwind_sps {
	__u64 sp[STACK_MAX_DEPTH];
};

/*
 * How much of the stack one read takes: a read (bpf_probe_read_user())
 * costs some 40 ns whatever its size up to this, about what the rest of a
 * frame's step costs, where a frame needs one or two words (its return
 * address, its caller's frame pointer) and its callers' lie just above
 * it, frames being 16 to a few hundred bytes. A read starts
 * UNWIND_WINDOW_BELOW bytes below the word wanted, as the frame's other
 * words may lie below it (a frame pointer saved under its return
 * address), or at the frame's stack pointer if that is nearer.
 */
#define UNWIND_WINDOW		256
#define UNWIND_WINDOW_BELOW	64

/*
 * The words of the stack a walk may read and still be recalled
 * (walkmemo.bpf.h), and how far above its first stack pointer less
 * UNWIND_WINDOW_BELOW (a word's index there fits a byte): a blocked
 * thread's stack of a dozen frames or so.
 */
#define UNWIND_MEMO_WORDS	24
#define UNWIND_MEMO_SPAN	2048

/*
 * Where a walk is: the registers of the frame it is in, and what it found.
 * It lies in this CPU's unwind_scratch, where each step (a call of
 * unwind_step_kept()) takes it up as the last left it: scalars only, as a
 * map cannot keep pointers.
 */
struct unwind_walk {
	__u64 ip, sp, fp;
	__u64 ra;		/* arm64: the link register, until a frame's CFI says where it went */
#if defined(__TARGET_ARCH_arm64)
	__u64 g;		/* the first frame's x28, Go's g register */
#endif
	__u64 regs;		/* the first frame's registers (struct pt_regs *), until its step */
	__u32 n;
	__u8 exact;		/* ip is an exact address (the first frame, after a signal), not a return */
	__u8 via_fp;		/* ip was read from a frame-pointer chain, not found by CFI */
	__u8 done;
	__u8 has_proc;		/* the process has an entry, looked up when a frame leaves @map */
	__u8 lazy;		/* a frame was in a big library without rows yet (frame pointers) */
	struct proc_key key;
	/*
	 * The last frame's mapping, copied: most callers are in their
	 * callee's binary, whose frames then need neither the process's
	 * entry nor a search of its mappings.
	 */
	struct unwind_mapping map;
#ifndef BPFSCOPE_LEGACY
	__u32 looked_up;	/* the kernel was asked for the mapping of an address */
	struct unwind_mapping late;	/* what it said, if the binary is known: .n rows, or none */
	/* What the walk read, for a memo of it: words read_word[0, nreads) from memo_base. */
	__u64 memo_base;	/* the first stack pointer less UNWIND_WINDOW_BELOW */
	__u64 read_sum;		/* the words' values, hashed in the order read */
	__u32 gen;		/* of the process's entry when it began */
	__u16 reach;		/* bytes from memo_base the reads took */
	__u8 nreads;
	__u8 impure;		/* it depended on more than its registers and those reads */
	__u8 fp_used;		/* a frame's CFA was its frame pointer: the first one's counts */
	__u8 read_word[UNWIND_MEMO_WORDS];
#endif
	/* The stack read last: window[0, window_len) is what lies at window_lo. */
	__u64 window_lo;
	__u32 window_len;
	__u8 window[UNWIND_WINDOW];
};

/* What a walk begins with: all its state but the window's bytes. */
#define UNWIND_WALK_BEGIN __builtin_offsetof(struct unwind_walk, window)

/*
 * This CPU's walk: its frames' stack pointers, and its state between its
 * steps. One map, as each costs the tool a file descriptor (a tool run
 * under a low limit keeps them for binaries), and a step a lookup.
 */
struct unwind_scratch {
	struct unwind_sps sps;
	struct unwind_walk walk;
#ifndef BPFSCOPE_LEGACY
	__u8 recall[UNWIND_MEMO_SPAN];	/* the stack as a memo's check reads it again */
#endif
};

#ifndef BPFSCOPE_LEGACY
/* The walk cannot be recalled from what it read: it read or used more. */
#define UNWIND_IMPURE(st) ((st)->impure = 1)
/* A frame's CFA was its frame pointer: the one the walk began with counts. */
#define UNWIND_FP_USED(st) ((st)->fp_used = 1)

/* @sum with one more word of the stack, @val: as stack_hash() mixes frames. */
static __always_inline __u64 unwind_memo_mix(__u64 sum, __u64 val)
{
	sum = (sum ^ val) * 0x9e3779b97f4a7c15ULL;
	return sum ^ sum >> 32;
}

/* The walk read @val at @addr of the stack: kept for its memo, if there is room. */
static __always_inline void unwind_note_read(struct unwind_walk *st, __u64 addr, __u64 val)
{
	__u64 off = addr - st->memo_base;
	__u32 i = st->nreads;

	if (off > UNWIND_MEMO_SPAN - 8 || (off & 7) || i >= UNWIND_MEMO_WORDS) {
		st->impure = 1;
		return;
	}
	barrier_var(i);
	if (i >= UNWIND_MEMO_WORDS)
		return;
	st->read_word[i] = off / 8;
	st->read_sum = unwind_memo_mix(st->read_sum, val);
	st->nreads = i + 1;
	if (off + 8 > st->reach)
		st->reach = off + 8;
}
#else
#define UNWIND_IMPURE(st) ((void)(st))
#define UNWIND_FP_USED(st) ((void)(st))
static __always_inline void unwind_note_read(struct unwind_walk *st, __u64 addr, __u64 val)
{
}
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_scratch);
} unwind_scratch SEC(".maps");

/*
 * The current thread's pointer: its pthread_t is there (x86-64) or just
 * above (arm64), Go's g just below (x86-64).
 */
static __always_inline __u64 unwind_thread_pointer(void)
{
	struct task_struct *task = current_task();

#if defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(task, thread.uw.tp_value);
#else
	return BPF_CORE_READ(task, thread.fsbase);
#endif
}

#endif
