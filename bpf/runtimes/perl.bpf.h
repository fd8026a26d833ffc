/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The Perl runtime's part of the BPF unwinder: the loop's frame replaced by the subs its contexts call. */
#ifndef BPFSCOPE_PERL_BPF_H
#define BPFSCOPE_PERL_BPF_H

#include "walk.bpf.h"
#include "runtimes/procs.bpf.h"
#include "runtimes/merge.bpf.h"
#include "runtimes/perl.h"

/* A walk's Perl state: in a map, as python.bpf.h's. */
struct perl_scratch {
	__u8 si[PERL_SI_READ];		/* the stack info read last */
	__u8 cx[PERL_CX_READ];		/* ... the context */
	__u8 cv[PERL_CV_READ];		/* ... the body of its CV */
	struct perl_proc proc;
	struct proc_key key;
	__u64 si_addr;			/* the stack info whose contexts are next; 0: none */
	__u64 cxstack;			/* ... its contexts */
	__s64 cxix;			/* ... the next one's index; -1: the stack info further out's */
	__u8 done;			/* the contexts are all out: later loop frames stay */
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

/* The loop's frame is replaced, or kept where no Perl frame took its place; the contexts are all out. */
static __always_inline void perl_replaced(struct perl_scratch *s, struct merge_state *m)
{
	s->done = 1;
	merge_replaced(m);
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
static __always_inline void perl_emit_cv(struct perl_scratch *s, struct merge_state *m, __u64 cv)
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
	merge_push(m, v);
}

/*
 * One step of replacing the loop's frame: the next context, innermost
 * first, through every stack info out to the first: a sub's call is
 * pushed, any other (a loop, a block, an eval) passed.
 */
static __always_inline void perl_replace_step(struct merge_state *m)
{
	struct perl_scratch *s = perl_state();
	const struct perl_layout *l;
	__u64 at;

	if (!s)
		return merge_replaced(m);
	l = &s->proc.l;
	if (s->cxix < 0) {
		if (perl_stack_info(s, runtime_field64(s->si, PERL_SI_READ, l->si_prev)))
			perl_replaced(s, m);
		return;
	}
	if (s->cxix >= PERL_CXIX_MAX)
		return perl_replaced(s, m);
	at = s->cxstack + (__u64)s->cxix * l->cx_size;
	s->cxix--;
	if (bpf_probe_read_user(s->cx, sizeof(s->cx), (const void *)at)) {
		merge_push(m, PERL_FRAME(0, 0));
		return perl_replaced(s, m);
	}
	switch (s->cx[0] & PERL_CX_TYPE_MASK) {
	case PERL_CXT_SUB:
	case PERL_CXT_FORMAT:
		perl_emit_cv(s, m, runtime_field64(s->cx, PERL_CX_READ, l->cx_cv));
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

/*
 * Native frame @v: every sub of the thread in place of the innermost loop
 * frame (the contexts do not say which loop call, an XS function's
 * callback or a sort block's, each is of); the loop frames further out stay.
 */
static __always_inline int perl_frame(struct merge_state *m, __u64 v)
{
	struct perl_scratch *s = perl_state();

	return s && !s->done && perl_in_loop(&s->proc, v) ? MERGE_REPLACE : MERGE_KEEP;
}

/*
 * A walk of process @k starts (@p: its runtime, or NULL): if it runs Perl,
 * Perl's frames are merged in from the thread's interpreter's stack info.
 */
__noinline int perl_start(const struct proc_key *k, struct runtime_proc *p)
{
	struct perl_scratch *s = perl_state();
	struct merge_state *m = merge_state();
	__u64 interp = 0, si = 0;

	if (!s || !m || !k || !p || p->runtime != RUNTIME_PERL)
		return 0;
	s->si_addr = 0;
	s->done = 0;
	s->proc = p->perl;
	s->key = *k;
	if (bpf_probe_read_user(&interp, sizeof(interp),
				(const void *)(unwind_thread_pointer() + s->proc.context)) || !interp ||
	    bpf_probe_read_user(&si, sizeof(si),
				(const void *)(interp + s->proc.l.interp_stackinfo)))
		return 0;
	if (!perl_stack_info(s, si))
		m->runtime = RUNTIME_PERL;
	return 0;
}

#endif /* BPFSCOPE_LEGACY */

#endif
