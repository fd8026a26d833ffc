/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The Perl runtime's part of the BPF unwinder: the loop's frame replaced by the subs its contexts call. */
#ifndef BPFSCOPE_PERL_BPF_H
#define BPFSCOPE_PERL_BPF_H

#include "walk.bpf.h"
#include "runtimes/procs.bpf.h"
#include "runtimes/perl.h"

/* A walk's Perl state and the stack its frames are merged into: in a map, as python.bpf.h's. */
struct perl_scratch {
	__u8 si[PERL_SI_READ];		/* the stack info read last */
	__u8 cx[PERL_CX_READ];		/* ... the context */
	__u8 cv[PERL_CV_READ];		/* ... the body of its CV */
	struct perl_proc proc;
	struct proc_key key;
	struct stack_trace out;		/* the stack, Perl frames in */
	__u64 si_addr;			/* the stack info whose contexts are next; 0: none */
	__u64 cxstack;			/* ... its contexts */
	__s64 cxix;			/* ... the next one's index; -1: the stack info further out's */
	__u64 native;			/* the loop's frame being replaced */
	__u32 in, nin, nout;
	__u8 active;			/* the walk's process runs Perl */
	__u8 replacing;			/* a loop's frame, a context a step */
	__u8 pushed;			/* ... which one did take the place of */
	__u8 done;			/* the contexts are all out: later loop frames stay */
	__u8 cut;			/* the merged stack had no room for all */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perl_scratch);
} perl_scratch SEC(".maps");

#ifndef BPFSCOPE_LEGACY

/* Contexts of one stack info walked at most (a recursion deeper than the stack's slots is cut). */
#define PERL_CXIX_MAX (1 << 20)

static __always_inline struct perl_scratch *perl_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&perl_scratch, &zero);
}

/* Appends @v to the merged stack, if there is room. */
static __always_inline void perl_emit(struct perl_scratch *s, __u64 v)
{
	__u32 o = s->nout;

	if (o >= STACK_MAX_DEPTH) {
		s->cut = 1;
		return;
	}
	s->out.ips[o] = v;
	s->nout = o + 1;
}

/* The loop's frame is replaced, or kept where no Perl frame took its place; the contexts are all out. */
static __always_inline void perl_replaced(struct perl_scratch *s)
{
	s->replacing = 0;
	s->done = 1;
	if (!s->pushed)
		perl_emit(s, s->native);
}

/* Stack info @si's contexts next, from its innermost; 0 when it cannot be read. */
static __always_inline int perl_stack_info(struct perl_scratch *s, __u64 si)
{
	const struct perl_layout *l = &s->proc.l;

	s->si_addr = si;
	if (!si || bpf_probe_read_user(s->si, sizeof(s->si), (const void *)si))
		return -1;
	s->cxstack = runtime_field64(s->si, PERL_SI_READ, l->si_cxstack);
	s->cxix = (__s32)runtime_field64(s->si, PERL_SI_READ, l->si_cxix);
	return 0;
}

/* A sub's frame: CV @cv, checked by its body's GV, file and first op. */
static __always_inline void perl_emit_cv(struct perl_scratch *s, __u64 cv)
{
	const struct perl_layout *l = &s->proc.l;
	__u64 body = 0, v = PERL_FRAME(0, 0);

	if (cv && cv < PERL_CV_MAX && !(cv & 7) &&
	    !bpf_probe_read_user(&body, sizeof(body), (const void *)cv) && body &&
	    !bpf_probe_read_user(s->cv, sizeof(s->cv), (const void *)body)) {
		v = PERL_FRAME(cv, perl_frame_check(runtime_field64(s->cv, PERL_CV_READ, l->cv_gv),
						    runtime_field64(s->cv, PERL_CV_READ, l->cv_file),
						    runtime_field64(s->cv, PERL_CV_READ, l->cv_start)));
		runtime_announce(&s->key, v, 0);
	}
	perl_emit(s, v);
	s->pushed = 1;
}

/*
 * One step of replacing the loop's frame: the next context, innermost
 * first, through every stack info out to the first: a sub's call is
 * pushed, any other (a loop, a block, an eval) passed.
 */
static __always_inline void perl_replace_step(struct perl_scratch *s)
{
	const struct perl_layout *l = &s->proc.l;
	__u64 at;

	if (s->cxix < 0) {
		if (perl_stack_info(s, runtime_field64(s->si, PERL_SI_READ, l->si_prev)))
			perl_replaced(s);
		return;
	}
	if (s->cxix >= PERL_CXIX_MAX)
		return perl_replaced(s);
	at = s->cxstack + (__u64)s->cxix * l->cx_size;
	s->cxix--;
	if (bpf_probe_read_user(s->cx, sizeof(s->cx), (const void *)at)) {
		perl_emit(s, PERL_FRAME(0, 0));
		s->pushed = 1;
		return perl_replaced(s);
	}
	switch (s->cx[0] & PERL_CX_TYPE_MASK) {
	case PERL_CXT_SUB:
	case PERL_CXT_FORMAT:
		perl_emit_cv(s, runtime_field64(s->cx, PERL_CX_READ, l->cx_cv));
		break;
	}
}

/* Is frame @v (as the native walk keeps it: by file) in the loop? */
static __always_inline bool perl_in_loop(const struct perl_proc *perl, __u64 v)
{
	bool in = false;

	for (int i = 0; i < PERL_LOOP_RANGES; i++)
		in |= v >= perl->loop[i][0] && v < perl->loop[i][1];
	return in;
}

/* One step of the merge: a Perl frame, or the next native frame; 1 to stop. A global function, checked once. */
__noinline int perl_merge_one(void)
{
	struct perl_scratch *s = perl_state();
	struct stack_trace *in;
	__u32 zero = 0, j;
	__u64 v;

	in = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!s || !in || s->cut)
		return 1;
	if (s->replacing) {
		perl_replace_step(s);
		return 0;
	}
	j = s->in;
	if (j >= s->nin || j >= STACK_MAX_DEPTH)
		return 1;
	s->in = j + 1;
	v = in->ips[j];
	/*
	 * Every sub of the thread in place of the innermost loop frame: the
	 * contexts do not say which loop call (an XS function's callback, a
	 * sort block's) each is of.
	 */
	if (!s->done && perl_in_loop(&s->proc, v)) {
		s->replacing = 1;
		s->pushed = 0;
		s->native = v;
		return 0;
	}
	perl_emit(s, v);
	return 0;
}

static long perl_merge_step(__u32 i, void *arg)
{
	return perl_merge_one() != 0;
}

/*
 * After the native walk of @n frames into @t (stack_scratch's): the
 * innermost frame of the loop becomes the subs the thread's contexts
 * call, innermost first. The new depth.
 */
static __always_inline int perl_merge(struct stack_trace *t, int n)
{
	struct perl_scratch *s = perl_state();
	bool deeper;

	if (!s)
		return n;
	if (s->active && s->si_addr && n > 0 && n <= STACK_MAX_DEPTH) {
		deeper = n == STACK_MAX_DEPTH && (t->ips[STACK_MAX_DEPTH - 1] & UNWIND_DEEPER) &&
			 t->ips[STACK_MAX_DEPTH - 1] < UNWIND_MARK_NO_CFI;
		if (deeper)
			t->ips[STACK_MAX_DEPTH - 1] &= ~UNWIND_DEEPER;
		s->in = s->nout = 0;
		s->nin = n;
		s->replacing = s->cut = s->done = 0;
		/* Every native frame, and a context for each slot and as many passed. */
		bpf_loop(3 * STACK_MAX_DEPTH, perl_merge_step, NULL, 0);
		if (s->replacing && !s->cut)
			perl_replaced(s);
		bpf_probe_read_kernel(t, sizeof(*t), &s->out);
		if ((deeper || s->cut) && s->nout == STACK_MAX_DEPTH &&
		    t->ips[STACK_MAX_DEPTH - 1] < UNWIND_MARK_NO_CFI)
			t->ips[STACK_MAX_DEPTH - 1] |= UNWIND_DEEPER;
	} else {
		s->nout = n;
	}
	/* Read back from the map: one depth for the verifier to follow, however the merge went. */
	return s->nout;
}

/*
 * A walk of process @k starts: Perl's part of it is on if the process runs
 * Perl (this image of it), from the thread's interpreter's stack info.
 */
__noinline int perl_start(const struct proc_key *k)
{
	struct perl_scratch *s = perl_state();
	struct runtime_proc *p;
	__u64 interp = 0, si = 0;

	if (!s)
		return 0;
	s->active = 0;
	s->si_addr = 0;
	if (!k)
		return 0;
	p = runtime_proc_of(k, RUNTIME_PERL);
	if (!p)
		return 0;
	s->proc = p->perl;
	s->key = *k;
	if (bpf_probe_read_user(&interp, sizeof(interp),
				(const void *)(unwind_thread_pointer() + s->proc.context)) || !interp ||
	    bpf_probe_read_user(&si, sizeof(si),
				(const void *)(interp + s->proc.l.interp_stackinfo)))
		return 0;
	perl_stack_info(s, si);
	s->active = 1;
	return 0;
}

#else

/* Before 5.17 no runtime's frames are merged: that takes bpf_loop. */
static __always_inline void perl_start(const struct proc_key *k)
{
}

static __always_inline int perl_merge(struct stack_trace *t, int n)
{
	return n;
}

#endif /* BPFSCOPE_LEGACY */

#endif
