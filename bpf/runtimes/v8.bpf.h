/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The V8 runtime's part of the BPF unwinder: each JavaScript frame the native walk passed through (by frame pointer) named by its function. */
#ifndef BPFSCOPE_V8_BPF_H
#define BPFSCOPE_V8_BPF_H

#include "walk.bpf.h"
#include "runtimes/procs.bpf.h"
#include "runtimes/v8.h"

/*
 * A walk's V8 state and the stack its frames are merged into: in a map,
 * as python.bpf.h's, for the verifier to see each value once.
 */
struct v8_scratch {
	__u64 frame[2];			/* fp - 16: the function, then the context */
	__u8 obj[V8_OBJECT_READ];	/* the object read last */
	struct v8_proc proc;
	struct proc_key key;
	struct stack_trace out;		/* the stack, JavaScript frames in */
	__u32 in, nin, nout;
	/* The maps a walk met, and their instance types: a stack's functions share a few. */
	__u64 map[V8_MAPS_KEPT];
	__u16 map_type[V8_MAPS_KEPT];
	__u32 maps;			/* maps met: the next is kept at maps % V8_MAPS_KEPT */
	__u8 active;			/* the walk's process runs V8 */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct v8_scratch);
} v8_scratch SEC(".maps");

#ifndef BPFSCOPE_LEGACY

static __always_inline struct v8_scratch *v8_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&v8_scratch, &zero);
}

static __always_inline __u64 v8_word(const __u8 *buf, __u32 off)
{
	if (off > V8_OBJECT_READ - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline bool v8_heap(__u64 v)
{
	return (v & V8_TAG_MASK) == V8_HEAP_TAG && v < V8_OBJECT_MAX;
}

/*
 * Heap object @tagged's first V8_OBJECT_READ bytes into @s->obj, and its
 * instance type (by its map); 0 when it is no heap object or cannot be read.
 */
static __always_inline __u16 v8_object(struct v8_scratch *s, __u64 tagged)
{
	__u64 map;
	__u16 type = 0;
	__u32 i;

	if (!v8_heap(tagged) ||
	    bpf_probe_read_user(s->obj, sizeof(s->obj), (const void *)(tagged - V8_HEAP_TAG)))
		return 0;
	map = v8_word(s->obj, 0);
	if (!v8_heap(map))
		return 0;
	for (i = 0; i < V8_MAPS_KEPT; i++)
		if (s->map[i] == map)
			return s->map_type[i];
	if (bpf_probe_read_user(&type, sizeof(type),
				(const void *)(map - V8_HEAP_TAG + s->proc.l.map_instance_type)))
		return 0;
	i = s->maps++ % V8_MAPS_KEPT;
	s->map[i] = map;
	s->map_type[i] = type;
	return type;
}

/* Appends @v to the merged stack (it has room: one frame for each native one). */
static __always_inline void v8_emit(struct v8_scratch *s, __u64 v)
{
	__u32 o = s->nout;

	if (o >= STACK_MAX_DEPTH)
		return;
	s->out.ips[o] = v;
	s->nout = o + 1;
}

/*
 * Native frame @v, left by the frame-pointer step from frame pointer @fp
 * (@exact: @v is where it was, not a return address): a JavaScript
 * function's frame (its Context and JSFunction below @fp) becomes that
 * function's; any other (a typed frame's marker, no function) stays as it
 * is.
 */
static __always_inline void v8_frame(struct v8_scratch *s, __u64 v, __u64 fp, bool exact)
{
	const struct v8_layout *l = &s->proc.l;
	__u64 fn, shared, name, script;
	__u16 type;

	if (fp < V8_FRAME_LOW || (fp & 7) ||
	    bpf_probe_read_user(s->frame, sizeof(s->frame), (const void *)(fp - V8_FRAME_LOW)) ||
	    !v8_heap(s->frame[1]))
		return v8_emit(s, v);
	fn = s->frame[0];
	type = v8_object(s, fn);
	if (!type || type < l->type_function_first || type > l->type_function_last)
		return v8_emit(s, v);
	shared = v8_word(s->obj, l->function_shared);
	if (v8_object(s, shared) != l->type_shared) {
		UNWIND_COUNT(js_unknown);
		return v8_emit(s, UNWIND_MARK_JS_UNKNOWN);
	}
	name = v8_word(s->obj, l->shared_name);
	script = v8_word(s->obj, l->shared_script);
	/*
	 * In no file: code V8 compiled for it, optimized code maybe, whose
	 * inlined calls only the address tells. A file's code (the
	 * interpreter's) runs every function: there the function tells.
	 */
	if (!UNWIND_IS_FILE_FRAME(v) && v <= V8_PC_MASK) {
		v = V8_CODE_FRAME(exact ? v : v - 1, v8_frame_check(name, script));
		runtime_announce(&s->key, v, shared - V8_HEAP_TAG);
	} else {
		v = V8_FRAME(shared - V8_HEAP_TAG, v8_frame_check(name, script));
		runtime_announce(&s->key, v, 0);
	}
	v8_emit(s, v);
	UNWIND_COUNT(js_frames);
}

/* One step of the merge: the next native frame, or its JavaScript one; 1 to stop. */
__noinline int v8_merge_one(void)
{
	struct v8_scratch *s = v8_state();
	struct unwind_scratch *sc;
	struct stack_trace *in;
	__u32 zero = 0, j;
	__u64 v, up, sp;

	in = bpf_map_lookup_elem(&stack_scratch, &zero);
	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!s || !in || !sc)
		return 1;
	j = s->in;
	if (j >= s->nin || j >= STACK_MAX_DEPTH)
		return 1;
	s->in = j + 1;
	v = in->ips[j];
	up = (__u64)j + 1;
	/* Tested on the register used for the load: clang may test another copy. */
	barrier_var(up);
	if (up >= s->nin || up >= STACK_MAX_DEPTH || UNWIND_IS_RUNTIME_FRAME(v) ||
	    v >= UNWIND_MARK_NO_CFI) {
		v8_emit(s, v);
		return 0;
	}
	/* Only a frame left by its frame pointer: its caller's stack pointer less two words. */
	sp = sc->sps.sp[up];
	if (!(sp & UNWIND_SP_VIA_FP)) {
		v8_emit(s, v);
		return 0;
	}
	v8_frame(s, v, (sp & ~UNWIND_SP_VIA_FP) - 16, j == 0);
	return 0;
}

static long v8_merge_step(__u32 i, void *arg)
{
	return v8_merge_one() != 0;
}

/*
 * After the native walk of @n frames into @t (stack_scratch's): each
 * JavaScript frame in it becomes its function's, one for one. The depth.
 */
static __always_inline int v8_merge(struct stack_trace *t, int n)
{
	struct v8_scratch *s = v8_state();

	if (!s || !s->active || n <= 1 || n > STACK_MAX_DEPTH)
		return n;
	s->in = s->nout = 0;
	s->nin = n;
	/* Kept for one walk only: the collector frees maps, and their memory is reused. */
	__builtin_memset(s->map, 0, sizeof(s->map));
	s->maps = 0;
	bpf_loop(STACK_MAX_DEPTH, v8_merge_step, NULL, 0);
	bpf_probe_read_kernel(t, sizeof(*t), &s->out);
	return n;
}

/*
 * The walk is at code without CFI, whose frame pointer is @st->fp: where
 * that is JSEntry's frame (arm64), steps to its C++ caller, whose stack
 * pointer is past the registers it saved, not past the frame record as
 * frame pointers alone would have it: 0. -1: frame pointers, as ever.
 */
#if defined(__TARGET_ARCH_arm64)
__noinline int v8_step(void)
{
	struct v8_scratch *s = v8_state();
	struct unwind_scratch *sc;
	struct unwind_walk *st;
	__u32 zero = 0;
	__u64 w[4], marker;

	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!s || !sc || !s->active || !s->proc.l.entry_type)
		return -1;
	st = &sc->walk;
	/* fp - 16, fp - 8 (the marker), then the frame record: the caller's fp and lr. */
	if (st->fp < st->sp + 16 || (st->fp & 7) ||
	    bpf_probe_read_user(w, sizeof(w), (const void *)(st->fp - 16)))
		return -1;
	marker = w[1];
	if (marker != (__u64)s->proc.l.entry_type << 1 &&
	    marker != (__u64)s->proc.l.construct_entry_type << 1)
		return -1;
	if (!w[3])
		return -1;
	st->sp = st->fp + V8_ENTRY_SAVED;
	st->fp = w[2];
	st->ip = UNWIND_CODE(w[3]);
	st->exact = 0;
	st->via_fp = 1;
	return 0;
}
#else
static __always_inline int v8_step(void)
{
	return -1;
}
#endif

/* A walk of process @k starts (@p: its runtime, or NULL): V8's part of it is on if the process runs V8. */
__noinline int v8_start(const struct proc_key *k, struct runtime_proc *p)
{
	struct v8_scratch *s = v8_state();

	if (!s)
		return 0;
	s->active = 0;
	if (!k || !p || p->runtime != RUNTIME_V8)
		return 0;
	s->proc = p->v8;
	s->key = *k;
	s->active = 1;
	return 0;
}

#endif /* BPFSCOPE_LEGACY */

#endif
