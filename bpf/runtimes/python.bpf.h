/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The Python runtime's part of the BPF unwinder: a CPython interpreter loop's frame replaced by the Python frames it runs. */
#ifndef BPFSCOPE_PYTHON_BPF_H
#define BPFSCOPE_PYTHON_BPF_H

#include "walk.bpf.h"
#include "runtimes/procs.bpf.h"
#include "runtimes/merge.bpf.h"
#include "runtimes/python.h"

/*
 * Each thread's PyThreadState, by pid_tgid, once found in its
 * interpreter's list of threads; checked against the thread at each use.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} py_threads SEC(".maps");

/*
 * A walk's Python state and a copy of its process's interpreter. Kept here rather than on the
 * stack, where the verifier would tell every value apart (each index,
 * each flag) and follow the walk once for each: here they are unknown
 * but bounded, and one look at a step serves all.
 */
struct py_scratch {
	__u8 frame[PY_FRAME_READ];
	__u8 code[PY_CODE_READ];
	struct py_proc proc;
	struct proc_key key;
	__u64 next;		/* the next Python frame; 0: none */
	__u64 cframe;		/* 3.11: the _PyCFrame of the loop call the next frame is in */
	__u64 outer;		/* 3.11: the frame the loop call further out is at */
	__u64 hi;		/* the loop frame being replaced: its caller's stack pointer, above its C locals */
	__u64 stack_lo, stack_hi;	/* the walk's stack: its first and last frames' stack pointers */
	__u64 interp, tstate;		/* the thread search's place (0: its list's end), */
	__u64 thread;			/* ... and what it found: the current thread's state */
	__u64 chain;			/* 3.9, 3.10: the next frame the chain's count reaches */
	__u64 seg_next, seg_cframe;	/* where its replacing began: next and cframe, */
	__u32 seg_nout;			/* ... and the merged stack's depth */
	__u32 nin;		/* the native walk's depth */
	__u32 unlinked;		/* 3.9, 3.10: the innermost loop frames that have no frame linked in */
	__u32 evals, linked;	/* ... counted: loop frames, and frames in the chain */
	__u32 ns_tid;		/* the walk's thread's id in its own PID namespace */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

#ifndef BPFSCOPE_LEGACY

/*
 * Steps of the search for the current thread's state, at most: a thread
 * or an interpreter (the main one and subinterpreters) a step.
 */
#define PY_THREAD_SEARCH_STEPS 2048

static __always_inline __u64 py_read(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/*
 * The current thread's id as gettid() gives it in its own PID namespace,
 * where CPython took it: a container's process keeps other ids than the
 * host's. 0 if it cannot be read.
 */
static __always_inline __u32 py_ns_tid(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct pid *pid = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	int nr = 0;

	/* The namespaces nest 32 deep at most (MAX_PID_NS_LEVEL). */
	if (level >= 32 || bpf_core_read(&nr, sizeof(nr), &pid->numbers[level].nr))
		return 0;
	return nr;
}

/*
 * Is @tstate the walk's thread's? By the thread id it keeps (3.11 on), in
 * the thread's PID namespace, else by its pthread_t, which glibc and musl
 * place at the thread pointer (x86-64) or one struct pthread below it
 * (arm64).
 */
static __always_inline bool py_is_current(const struct py_scratch *s, __u64 tstate)
{
	const struct py_proc *py = &s->proc;

	if (!tstate)
		return false;
	if (py->l.tstate_native_tid != PY_NO_FIELD)
		return s->ns_tid && (__u32)py_read(tstate + py->l.tstate_native_tid) == s->ns_tid;
	return unwind_thread_pointer() - py_read(tstate + py->l.tstate_thread_id) < 4096;
}

static __always_inline struct py_scratch *py_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&py_scratch, &zero);
}

/*
 * One step of the search for the current thread's state in @s->proc's
 * interpreters (a thread, or the next interpreter's first); 0 to go on. A
 * global function, which the verifier checks once.
 */
__noinline int py_thread_one(void)
{
	struct py_scratch *s = py_state();
	const struct py_proc *py;

	if (!s)
		return 1;
	py = &s->proc;
	if (!s->tstate) {
		s->interp = py_read(s->interp + py->l.interp_next);
		if (!s->interp)
			return 1;
		s->tstate = py_read(s->interp + py->l.interp_threads);
		return 0;
	}
	if (py_is_current(s, s->tstate)) {
		s->thread = s->tstate;
		return 1;
	}
	s->tstate = py_read(s->tstate + py->l.tstate_next);
	return 0;
}

static long py_thread_step(__u32 i, void *arg)
{
	return py_thread_one() != 0;
}

/*
 * The current thread's PyThreadState: as found before, if it still is
 * this thread's, else from its interpreters' lists of threads. 0 when it
 * has none (a thread Python never ran on).
 */
static __always_inline __u64 py_thread_state(struct py_scratch *s)
{
	const struct py_proc *py = &s->proc;
	__u64 key = bpf_get_current_pid_tgid(), *cached;

	cached = bpf_map_lookup_elem(&py_threads, &key);
	if (cached && py_is_current(s, *cached))
		return *cached;
	s->interp = py_read(py->runtime + py->l.interp_head);
	if (!s->interp)
		return 0;
	s->tstate = py_read(s->interp + py->l.interp_threads);
	s->thread = 0;
	bpf_loop(PY_THREAD_SEARCH_STEPS, py_thread_step, NULL, 0);
	if (s->thread)
		bpf_map_update_elem(&py_threads, &key, &s->thread, BPF_ANY);
	return s->thread;
}

/*
 * The innermost Python frame of the current thread into @s->next, 0 if
 * none; 3.11's _PyCFrame it is of into @s->cframe.
 */
static __always_inline void py_first_frame(struct py_scratch *s)
{
	const struct py_proc *py = &s->proc;
	__u64 tstate = py_thread_state(s), frame;

	s->next = s->cframe = 0;
	if (!tstate)
		return;
	frame = py_read(tstate + py->l.tstate_frame);
	if (frame && py->l.cframe_frame != PY_NO_FIELD) {
		if (py->l.cframe_previous != PY_NO_FIELD)
			s->cframe = frame;
		frame = py_read(frame + py->l.cframe_frame);
	}
	s->next = frame;
}

/* Is frame @v (as the native walk keeps it: by file) in the interpreter loop? */
static __always_inline bool py_in_eval(const struct py_proc *py, __u64 v)
{
	bool in = false;

	for (int i = 0; i < PY_EVAL_RANGES; i++)
		in |= v >= py->eval[i][0] && v < py->eval[i][1];
	return in;
}

/*
 * The frame of code object @code, checked to be one (its type is
 * PyCode_Type); "[unknown python]" when it is not, or cannot be read.
 */
static __always_inline void py_emit_code(struct py_scratch *s, struct merge_state *m, __u64 code)
{
	const struct py_proc *py = &s->proc;
	__u64 v = UNWIND_MARK_PY_UNKNOWN, name, file;
	__u32 line;

	if (code < PY_CODE_MAX && !(code & 7) &&
	    !bpf_probe_read_user(s->code, sizeof(s->code), (const void *)code) &&
	    runtime_field64(s->code, PY_CODE_READ, 8) == py->code_type) {
		name = runtime_field64(s->code, PY_CODE_READ, py->l.code_name);
		file = runtime_field64(s->code, PY_CODE_READ, py->l.code_filename);
		line = runtime_field32(s->code, PY_CODE_READ, py->l.code_firstlineno);
		v = PY_FRAME(code, py_frame_check(name, file, line));
	}
	merge_push(m, v);
	if (v == UNWIND_MARK_PY_UNKNOWN)
		UNWIND_COUNT(py_unknown);
	else
		runtime_announce(&s->key, v, 0);
}

/* The loop's frame is replaced, or kept where no Python frame took its place. */
static __always_inline void py_replaced(struct merge_state *m)
{
	if (m->pushed)
		UNWIND_COUNT(py_loops);
	merge_replaced(m);
}

/*
 * A loop call's frames end at @marker, its entry frame (3.12 on) or its
 * _PyCFrame (3.11): a local of the loop's C frame. One further out on the
 * stack is an outer call's, and the Python frames read since are that
 * call's: this one has not linked its own in yet, or has unlinked them
 * already (its first and last instructions). Taken back then, for the
 * loop frames further out; this one stays as it is.
 */
static __always_inline void py_loop_end(struct py_scratch *s, struct merge_state *m, __u64 marker)
{
	if (marker >= s->hi && marker < s->stack_hi) {
		m->nout = s->seg_nout;
		s->next = s->seg_next;
		s->cframe = s->seg_cframe;
		m->pushed = 0;
	}
	py_replaced(m);
}

/*
 * One step of replacing the loop's frame: the next Python frame of the
 * chain pushed, or (an entry frame, no function's) passed. Before 3.11 a
 * loop call runs one frame; after, the frames up to the entry frame that
 * starts the call, or to the one marked as its first.
 */
static __always_inline void py_replace_step(struct merge_state *m)
{
	struct py_scratch *s = py_state();
	const struct py_proc *py;
	__u64 frame, code;
	bool last;

	if (!s || !(frame = s->next))
		return py_replaced(m);
	py = &s->proc;
	/*
	 * 3.11: the frame the loop call further out is at, reached before
	 * this call's entry frame. This call is in its first instructions,
	 * which set its _PyCFrame before the frame it runs: what was read
	 * came from an earlier call's leftovers there, the frame it is about
	 * to run first (the same slot of the frame stack, its link to its
	 * caller not set yet). The frames read so far are this call's, the
	 * rest the outer's; without this, the outer call's frames went to
	 * this one, and the outer loop frame was left unnamed (up to 0.9% of
	 * a test's samples).
	 */
	if (frame == s->outer) {
		code = s->cframe;
		s->cframe = py_read(code + py->l.cframe_previous);
		return py_loop_end(s, m, code);
	}
	if (bpf_probe_read_user(s->frame, sizeof(s->frame), (const void *)frame)) {
		/* Lost: the loop calls further out keep their own frames. */
		s->next = 0;
		py_emit_code(s, m, 0);
		return py_replaced(m);
	}
	s->next = runtime_field64(s->frame, PY_FRAME_READ, py->l.frame_previous);
	code = runtime_field64(s->frame, PY_FRAME_READ, py->l.frame_code) & ~(__u64)py->l.code_tag;
	if (py->l.frames == PY_FRAMES_OBJECT) {
		py_emit_code(s, m, code);
		return py_replaced(m);
	}
	/*
	 * An entry frame lives on the C stack; one elsewhere is a shim the
	 * interpreter pushed among a call's frames (3.14's for __init__), passed.
	 */
	if (py->l.frame_owner != PY_NO_FIELD &&
	    runtime_field8(s->frame, PY_FRAME_READ, py->l.frame_owner) >= py->l.owner_entry) {
		if (frame >= s->stack_lo && frame < s->stack_hi)
			py_loop_end(s, m, frame);
		return;
	}
	last = py->l.frame_entry != PY_NO_FIELD &&
	       runtime_field8(s->frame, PY_FRAME_READ, py->l.frame_entry);
	/* No code object (3.13's None in a frame that is no function's): passed. */
	if (code)
		py_emit_code(s, m, code);
	if (last) {
		code = s->cframe;
		s->cframe = py_read(code + py->l.cframe_previous);
		py_loop_end(s, m, code);
	}
}

/*
 * Native frame @v, the walk's @j-th: each frame of the interpreter loop
 * the Python frames that call of it was running, but for the innermost
 * that have none linked in yet.
 */
static __always_inline int py_frame(struct merge_state *m, __u64 v, __u32 j)
{
	struct py_scratch *s = py_state();
	struct unwind_scratch *sc;
	__u32 zero = 0;
	__u64 up;

	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!s || !sc || !s->next || !py_in_eval(&s->proc, v))
		return MERGE_KEEP;
	if (s->unlinked) {
		s->unlinked--;
		return MERGE_KEEP;
	}
	s->seg_next = s->next;
	s->seg_cframe = s->cframe;
	s->seg_nout = m->nout;
	s->outer = 0;
	if (s->proc.l.cframe_previous != PY_NO_FIELD && s->cframe)
		s->outer = py_read(py_read(s->cframe + s->proc.l.cframe_previous) +
				   s->proc.l.cframe_frame);
	s->hi = ~0ULL;
	up = (__u64)j + 1;
	/* Tested on the register used for the load: clang may test another copy. */
	barrier_var(up);
	if (up < s->nin && up < STACK_MAX_DEPTH)
		s->hi = sc->sps.sp[up] & ~UNWIND_SP_VIA_FP;
	return MERGE_REPLACE;
}

/* The C stack the walk of @n frames went through, from its first frame's stack pointer. */
static __always_inline void py_stack_bounds(struct py_scratch *s, int n)
{
	struct unwind_scratch *sc;
	__u32 zero = 0, last = n - 1;

	sc = bpf_map_lookup_elem(&unwind_scratch, &zero);
	s->stack_lo = s->stack_hi = 0;
	/* Tested on the register used for the load: clang may test another copy. */
	barrier_var(last);
	if (!sc || last >= STACK_MAX_DEPTH)
		return;
	s->stack_lo = sc->sps.sp[0] & ~UNWIND_SP_VIA_FP;
	s->stack_hi = sc->sps.sp[last] & ~UNWIND_SP_VIA_FP;
}

/*
 * One step of py_count_unlinked(): the walk's frames, one a step, those in
 * the loop counted; then the frames linked in the chain, up to as many; 0
 * to go on. A global function, which the verifier checks once: as two
 * bpf_loop() callbacks, the counts took it 1 ms of the sampling program's load.
 */
__noinline int py_count_one(__u32 i)
{
	struct py_scratch *s = py_state();
	struct stack_trace *in;
	__u32 zero = 0;
	__u64 j = i;

	in = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!s || !in)
		return 1;
	/* Tested on the register used for the load: clang may test another copy. */
	barrier_var(j);
	if (j < s->nin) {
		if (j >= STACK_MAX_DEPTH)
			return 1;
		s->evals += py_in_eval(&s->proc, in->ips[j]);
		return 0;
	}
	if (!s->chain || s->linked >= s->evals)
		return 1;
	s->linked++;
	s->chain = py_read(s->chain + s->proc.l.frame_previous);
	return 0;
}

static long py_count_step(__u32 i, void *arg)
{
	return py_count_one(i) != 0;
}

/*
 * 3.9 and 3.10 run a frame object a loop call, linked in a few
 * instructions after the call begins and unlinked a few before it ends:
 * fewer frames in the chain than loop frames on the stack leave the
 * innermost loop frames without one. (3.11 on run many frames a call;
 * py_loop_end() finds where each call's end on the C stack instead.)
 */
static __always_inline void py_count_unlinked(struct py_scratch *s)
{
	s->unlinked = s->evals = s->linked = 0;
	if (s->proc.l.frames != PY_FRAMES_OBJECT)
		return;
	s->chain = s->next;
	bpf_loop(2 * STACK_MAX_DEPTH, py_count_step, NULL, 0);
	if (s->evals > s->linked)
		s->unlinked = s->evals - s->linked;
}

/* The merge of a walk of @n frames begins: where its stack lies, and the loop frames with no frame linked in. */
static __always_inline void py_merge_begin(int n)
{
	struct py_scratch *s = py_state();

	if (!s)
		return;
	s->nin = n;
	py_stack_bounds(s, n);
	py_count_unlinked(s);
}

/*
 * A walk of process @k starts (@p: its runtime, or NULL): if it runs
 * CPython, Python's frames are merged in from the thread's innermost one.
 * A global function: the verifier checks it once, and its caller goes on
 * from one state whichever way it went (static, it was checked in the
 * caller's state, 1 ms more of the sampling program's load).
 */
__noinline int py_start(const struct proc_key *k, struct runtime_proc *p)
{
	struct py_scratch *s = py_state();
	struct merge_state *m = merge_state();

	if (!s || !m || !k || !p || p->runtime != RUNTIME_PYTHON)
		return 0;
	s->proc = p->py;
	s->key = *k;
	s->ns_tid = py_ns_tid();
	py_first_frame(s);
	if (!s->next)
		UNWIND_COUNT(py_no_thread);
	m->runtime = RUNTIME_PYTHON;
	return 0;
}

#endif /* BPFSCOPE_LEGACY */

#endif
