/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The HotSpot runtime's part of the BPF unwinder: Java frames, which have no CFI and mostly no frame pointer, walked by what the JVM says of its code. */
#ifndef BPFSCOPE_HOTSPOT_BPF_H
#define BPFSCOPE_HOTSPOT_BPF_H

#include "walk.bpf.h"
#include "runtimes/procs.bpf.h"
#include "runtimes/hotspot.h"

/* A walk's HotSpot state: in a map, as v8.bpf.h's, for the verifier to see each value once. */
struct hotspot_scratch {
	__u8 blob[HOTSPOT_BLOB_READ];		/* the blob read last, from its start */
	__u64 interp[HOTSPOT_INTERP_READ / 8];	/* an interpreted frame, from its bcp slot */
	__u64 pair[2];				/* a compiled frame's caller: its fp, then pc */
	__u64 const_method;			/* an interpreted frame's ConstMethod */
	__u64 begin, caller_sp;			/* a blob's code, its caller's stack */
	char name[4];				/* the blob's name, its first bytes */
	__u8 hop;				/* a segment map's byte */
	__u32 frames;				/* Java frames in the walk, to announce */
	__u32 next;				/* the next frame hotspot_announce() looks at */
	struct hotspot_proc proc;
	struct proc_key key;
	__u8 active;			/* the walk's process runs a JVM whose code cache is known */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hotspot_scratch);
} hotspot_scratch SEC(".maps");

#ifndef BPFSCOPE_LEGACY

static __always_inline struct hotspot_scratch *hotspot_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&hotspot_scratch, &zero);
}

static __always_inline __u64 hotspot_word(const __u8 *blob, __u32 off)
{
	if (off > HOTSPOT_BLOB_READ - 8)
		return 0;
	return *(const __u64 *)(blob + off);
}

static __always_inline __s32 hotspot_int(const __u8 *blob, __u32 off)
{
	if (off > HOTSPOT_BLOB_READ - 4)
		return 0;
	return *(const __s32 *)(blob + off);
}

/*
 * The blob whose code holds @pc, by its heap's segment map, read into
 * @s->blob: its address, or 0 (no heap has @pc, or nothing was put there).
 */
static __always_inline __u64 hotspot_blob(struct hotspot_scratch *s, __u64 pc)
{
	const struct hotspot_proc *p = &s->proc;
	const struct hotspot_heap *h = NULL;
	__u64 seg, blob;

	for (int i = 0; i < HOTSPOT_HEAPS; i++)
		if (i < p->l.nheaps && pc >= p->heap[i].lo && pc < p->heap[i].hi)
			h = &p->heap[i];
	if (!h || p->l.log2_segment > 16)
		return 0;
	seg = (pc - h->lo) >> p->l.log2_segment;
	for (int i = 0; i < HOTSPOT_SEG_HOPS; i++) {
		if (bpf_probe_read_user(&s->hop, 1, (const void *)(h->segmap + seg)) ||
		    s->hop == HOTSPOT_SEG_FREE || s->hop > seg)
			return 0;
		if (!s->hop)
			break;
		seg -= s->hop;
	}
	if (s->hop)
		return 0;
	blob = h->lo + (seg << p->l.log2_segment) + p->l.block_header;
	if (bpf_probe_read_user(s->blob, sizeof(s->blob), (const void *)blob))
		return 0;
	return blob;
}

/*
 * Frame @slot of the walk becomes Java frame @v. User space is told of it
 * after the walk (hotspot_announce()): the note takes stack, and this step
 * is the deepest of the walk's calls, whose frames' stacks add up.
 */
static __always_inline void hotspot_put(struct hotspot_scratch *s, __u32 slot, __u64 v)
{
	/* Looked up here, not kept: fewer values live across the step, less stack. */
	__u32 zero = 0;
	struct stack_trace *t = bpf_map_lookup_elem(&stack_scratch, &zero);
	struct unwind_counts *c = bpf_map_lookup_elem(&unwind_counters, &zero);

	__u64 n = slot;

	/* Tested on the register used for the store (unwind_push() says why). */
	barrier_var(n);
	if (!t || !c || n >= STACK_MAX_DEPTH)
		return;
	t->ips[n] = v;
	c->java_frames++;
	s->frames++;
}

/*
 * An interpreted frame: its Method and bytecode pointer below its frame
 * pointer, its caller's frame pointer, pc and stack pointer (the sender's,
 * which the interpreter keeps: an adapter may have grown the stack since)
 * around it. @bcp is the live one of the first frame, in a register (0: none).
 */
static __always_inline int hotspot_interpreted(struct hotspot_scratch *s, struct unwind_walk *st,
					       __u64 bcp)
{
	const __u64 *w = s->interp;
	__u64 fp = st->fp, method, bci = HOTSPOT_BCI_NONE, sender_sp;

	if (fp < st->sp || (fp & 7) || fp < HOTSPOT_INTERP_LOW ||
	    bpf_probe_read_user(s->interp, sizeof(s->interp), (const void *)(fp - HOTSPOT_INTERP_LOW)))
		return -1;
	method = w[(HOTSPOT_INTERP_LOW + HOTSPOT_INTERP_METHOD * 8) / 8];
	if (!st->exact)
		bcp = w[(HOTSPOT_INTERP_LOW + HOTSPOT_INTERP_BCP * 8) / 8];
	sender_sp = w[(HOTSPOT_INTERP_LOW + HOTSPOT_INTERP_SENDER_SP * 8) / 8];
	if (!method || (method & 7) || method >= 1ULL << 48)
		return -1;
	if (bcp && !bpf_probe_read_user(&s->const_method, sizeof(s->const_method),
					(const void *)(method + s->proc.l.method_const)) &&
	    bcp - s->const_method - s->proc.l.const_size < HOTSPOT_BCI_NONE)
		bci = bcp - s->const_method - s->proc.l.const_size;
	hotspot_put(s, st->n - 1, HOTSPOT_INTERP_FRAME(method, bci));
	/*
	 * Up the stack, but not always above this frame's record: arm64's
	 * interpreter keeps its machine sp below its expression stack, and
	 * builds a callee's frame from the expression stack down, over it.
	 */
	if (sender_sp <= st->sp || (sender_sp & 7))
		return 1;
	st->fp = w[HOTSPOT_INTERP_LOW / 8];
	st->ip = UNWIND_CODE(w[HOTSPOT_INTERP_LOW / 8 + 1]);
	st->sp = sender_sp;
	st->exact = 0;
	return st->ip ? 0 : 1;
}

/*
 * One frame of the JVM's code without CFI (compiled Java, stubs, the
 * interpreter), where the walk just pushed its pc: 0 when it stepped to
 * the caller, 1 to end the walk there, -1 when the code is not the JVM's
 * (frame pointers then). @bcp: the first frame's bytecode pointer register.
 */
__noinline int hotspot_step(__u64 bcp)
{
	struct hotspot_scratch *s = hotspot_state();
	struct unwind_scratch *sc;
	struct unwind_walk *st;
	__u32 zero = 0;
	__u64 pc, name;
	__s32 frame_size;
	int kind;

	/*
	 * The deepest of the walk's calls, whose stacks add up (512 bytes in
	 * all): what it keeps between reads is in @s, not on its stack.
	 */
	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!s || !sc || !s->active)
		return -1;
	st = &sc->walk;
	pc = st->ip;
	if (pc < s->proc.lo || pc >= s->proc.hi || !st->n)
		return -1;
	if (pc >= s->proc.interp_lo && pc < s->proc.interp_hi)
		return hotspot_interpreted(s, st, bcp);
	if (!hotspot_blob(s, pc))
		return -1;
	s->begin = hotspot_word(s->blob, s->proc.l.blob_code_begin);
	name = hotspot_word(s->blob, s->proc.l.blob_name);
	if (pc < s->begin || pc >= hotspot_word(s->blob, s->proc.l.blob_code_end) ||
	    bpf_probe_read_user(s->name, sizeof(s->name), (const void *)name))
		return -1;
	/* "nmethod", "native nmethod": a Java method's code, or a native method's wrapper. */
	kind = s->name[0] == 'n' && (s->name[1] == 'm' || s->name[1] == 'a') ?
		       HOTSPOT_COMPILED : HOTSPOT_STUB;
	hotspot_put(s, st->n - 1,
		    HOTSPOT_CODE_FRAME(kind, pc - s->proc.lo, kind == HOTSPOT_COMPILED ?
				       hotspot_int(s->blob, s->proc.l.nm_compile_id) : 0));
	frame_size = hotspot_int(s->blob, s->proc.l.blob_frame_size);
	if (s->name[0] == 'v' && s->name[1] == 't') {
		/* No frame of its own (vtable and itable stubs): called, it left only its return. */
		s->caller_sp = st->sp + 8;
		if (bpf_probe_read_user(&s->pair[1], 8, (const void *)st->sp))
			return 1;
		s->pair[0] = st->fp;
	} else if (frame_size <= 0) {
		/* A frame by its frame pointer (the call stub, the other stubs' buffers). */
		if (st->fp < st->sp || (st->fp & 7) ||
		    bpf_probe_read_user(s->pair, sizeof(s->pair), (const void *)st->fp))
			return 1;
		s->caller_sp = st->fp + 16;
	} else {
		/* Sampled before its frame is made (or being unmade): where its caller is is not known. */
		if (st->exact && pc - s->begin <
				 (__u64)hotspot_int(s->blob, s->proc.l.blob_frame_complete))
			return 1;
		s->caller_sp = st->sp + (__u64)frame_size * 8;
		if (frame_size > 4096 ||
		    bpf_probe_read_user(s->pair, sizeof(s->pair), (const void *)(s->caller_sp - 16)))
			return 1;
	}
	st->fp = s->pair[0];
	st->ip = UNWIND_CODE(s->pair[1]);
	st->sp = s->caller_sp;
	st->exact = 0;
	return st->ip ? 0 : 1;
}

/* A walk of process @k starts (@p: its runtime, or NULL): HotSpot's part of it is on if the process runs a JVM. */
__noinline int hotspot_start(const struct proc_key *k, struct runtime_proc *p)
{
	struct hotspot_scratch *s = hotspot_state();

	if (!s)
		return 0;
	s->active = 0;
	if (!k || !p || p->runtime != RUNTIME_HOTSPOT)
		return 0;
	/* A JVM still starting when it was read: its maps read again, and it with them. */
	if (!p->hotspot.l.nheaps) {
		__u64 now = bpf_ktime_get_ns();

		if (now - p->hotspot.asked_ns > HOTSPOT_ASK_NS) {
			p->hotspot.asked_ns = now;
			proc_announce(k, PROC_MAPS_CHANGED);
		}
		return 0;
	}
	s->proc = p->hotspot;
	s->key = *k;
	s->frames = 0;
	s->active = 1;
	return 0;
}

/* One frame of the walk: user space is told of it if it is a Java frame; 1 to stop. */
__noinline int hotspot_announce_one(void)
{
	struct hotspot_scratch *s = hotspot_state();
	struct stack_trace *t;
	__u32 zero = 0, i;
	__u64 v;

	t = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!s || !t)
		return 1;
	i = s->next;
	if (i >= STACK_MAX_DEPTH)
		return 1;
	s->next = i + 1;
	v = t->ips[i];
	if (UNWIND_IS_RUNTIME_FRAME(v) && RUNTIME_FRAME_ID(v) == RUNTIME_HOTSPOT)
		runtime_announce(&s->key, v, 0);
	return 0;
}

static long hotspot_announce_step(__u32 i, void *arg)
{
	return hotspot_announce_one() != 0;
}

/* After the walk of @n frames: user space is told of its Java frames, to name them while the JVM lives. */
static __always_inline int hotspot_announce(int n)
{
	struct hotspot_scratch *s = hotspot_state();

	if (!s || !s->active || !s->frames || n <= 0 || n > STACK_MAX_DEPTH)
		return n;
	s->next = 0;
	bpf_loop(n, hotspot_announce_step, NULL, 0);
	return n;
}

#endif /* BPFSCOPE_LEGACY */

#endif
