/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The Ruby runtime's part of the BPF unwinder: each rb_vm_exec frame replaced by the Ruby methods and blocks it runs. */
#ifndef BPFSCOPE_RUBY_BPF_H
#define BPFSCOPE_RUBY_BPF_H

#include "walk.bpf.h"
#include "runtimes/procs.bpf.h"
#include "runtimes/merge.bpf.h"
#include "runtimes/ruby.h"

/* A walk's Ruby state: in a map, as python.bpf.h's. */
struct ruby_scratch {
	__u8 cfp[RUBY_CFP_READ];	/* the control frame read last */
	__u8 loc[RUBY_LOC_READ];	/* ... its iseq's location */
	__u64 env[RUBY_ENV_READ / 8];	/* ... an environment of it: ep[-2], ep[-1], ep[0] */
	__u8 me[RUBY_ME_READ];		/* ... its method entry */
	struct ruby_proc proc;
	struct proc_key key;
	__u64 cfp_addr;			/* the next control frame */
	__u64 cfp_end;			/* ... past the outermost (the VM stack's dummy frame) */
	__u8 pending;			/* the innermost run's first frame is pushed, not run yet */
	__u8 over;			/* ... or its frames are popped: a C function's is innermost */
	__u8 skip;			/* the next rb_vm_exec frame is that run's: left as it is */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ruby_scratch);
} ruby_scratch SEC(".maps");

#ifndef BPFSCOPE_LEGACY

/* A VM stack's bytes walked at most: Ruby's default is 1 MiB of VALUEs. */
#define RUBY_VM_STACK_MAX (64ULL << 20)

static __always_inline struct ruby_scratch *ruby_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ruby_scratch, &zero);
}

/*
 * The class or module defining the method whose frame's environment is in
 * s->env: its method entry is in its method's own environment, out
 * through a block's. 0 where none is found (the top level's, a class
 * body's).
 */
static __always_inline __u64 ruby_owner(struct ruby_scratch *s)
{
	__u64 ep, me;

	for (int i = 0; i < RUBY_ENV_HOPS; i++) {
		if (s->env[2] & RUBY_ENV_FLAG_LOCAL)
			break;
		ep = s->env[1] & ~3ULL;
		if (!ep || bpf_probe_read_user(s->env, sizeof(s->env), (const void *)(ep - 16)))
			return 0;
	}
	if (!(s->env[2] & RUBY_ENV_FLAG_LOCAL))
		return 0;
	me = s->env[0];
	if (!me || (me & 7) || bpf_probe_read_user(s->me, sizeof(s->me), (const void *)me))
		return 0;
	if ((s->me[0] & 0x1f) != RUBY_T_IMEMO || ((s->me[1] >> 4) & 0xf) != RUBY_IMEMO_MENT)
		return 0;
	return runtime_field64(s->me, RUBY_ME_READ, RUBY_ME_OWNER);
}

/* A Ruby frame: iseq @iseq's body, checked by its location; its environment in s->env. */
static __always_inline void ruby_emit_iseq(struct ruby_scratch *s, struct merge_state *m, __u64 iseq)
{
	const struct ruby_layout *l = &s->proc.l;
	__u64 body = 0, v = RUBY_FRAME(0, 0);

	if (iseq && !bpf_probe_read_user(&body, sizeof(body), (const void *)(iseq + l->iseq_body)) &&
	    body && body < RUBY_BODY_MAX && !(body & 7) &&
	    !bpf_probe_read_user(s->loc, sizeof(s->loc), (const void *)(body + l->body_location))) {
		v = RUBY_FRAME(body, ruby_frame_check(runtime_field64(s->loc, RUBY_LOC_READ, 0),
						      runtime_field64(s->loc, RUBY_LOC_READ, 16),
						      runtime_field64(s->loc, RUBY_LOC_READ, 24)));
		runtime_announce(&s->key, v, ruby_owner(s));
	}
	merge_push(m, v);
}

/*
 * One step of replacing an rb_vm_exec frame: the next control frame out.
 * A Ruby method's or block's is pushed, a C function's passed (its own
 * native frames are in the stack); the frame rb_vm_exec was entered for
 * (FINISH) is its last.
 */
static __always_inline void ruby_replace_step(struct merge_state *m)
{
	struct ruby_scratch *s = ruby_state();
	const struct ruby_layout *l;
	__u64 at, pc, ep, flags;

	if (!s || (at = s->cfp_addr) >= s->cfp_end)
		return merge_replaced(m);
	l = &s->proc.l;
	s->cfp_addr = at + l->cfp_size;
	if (bpf_probe_read_user(s->cfp, sizeof(s->cfp), (const void *)at)) {
		s->cfp_addr = s->cfp_end;
		return merge_replaced(m);
	}
	pc = runtime_field64(s->cfp, RUBY_CFP_READ, l->cfp_pc);
	ep = runtime_field64(s->cfp, RUBY_CFP_READ, l->cfp_ep);
	if (ep < 16 || bpf_probe_read_user(s->env, sizeof(s->env), (const void *)(ep - 16))) {
		s->cfp_addr = s->cfp_end;
		return merge_replaced(m);
	}
	flags = s->env[2];
	if (pc && !(flags & RUBY_FRAME_FLAG_CFRAME))
		ruby_emit_iseq(s, m, runtime_field64(s->cfp, RUBY_CFP_READ, l->cfp_iseq));
	if (flags & RUBY_FRAME_FLAG_FINISH)
		merge_replaced(m);
}

/* Is frame @v (as the native walk keeps it: by file) in one of @ranges? */
static __always_inline bool ruby_in(const __u64 (*ranges)[2], __u64 v)
{
	bool in = false;

	for (int i = 0; i < RUBY_LOOP_RANGES; i++)
		in |= v >= ranges[i][0] && v < ranges[i][1];
	return in;
}

/*
 * Has the innermost run begun, its first frame's pc still at its start?
 * Then the walk's innermost frame is a helper that rb_vm_exec or the VM
 * loop called, one or two frames out. A run about to begin is two C
 * functions further at least: the one that called into Ruby, and its way
 * to the frame it pushed (rb_yield ...).
 */
static __always_inline bool ruby_begun(struct ruby_scratch *s, struct merge_state *m)
{
	struct stack_trace *t;
	__u32 zero = 0;
	bool vm = false;

	t = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!t)
		return false;
	for (__u32 j = 1; j <= 2; j++)
		vm |= m->nin > j && (ruby_in(s->proc.core, t->ips[j]) || ruby_in(s->proc.loop, t->ips[j]));
	return vm;
}

/* Native frame @v, the walk's @j-th: each rb_vm_exec frame the Ruby frames of its run. */
static __always_inline int ruby_frame(struct merge_state *m, __u64 v, __u32 j)
{
	struct ruby_scratch *s = ruby_state();

	if (!s)
		return MERGE_KEEP;
	/*
	 * A run about to start (its first frame pushed, the thread on its way
	 * into rb_vm_exec): its frames innermost, before any native one.
	 */
	if (j == 0 && s->pending && !ruby_in(s->proc.core, v) && !ruby_in(s->proc.loop, v)) {
		s->pending = 0;
		if (!ruby_begun(s, m))
			return MERGE_BEFORE;
	}
	/*
	 * The thread in the VM while a C function's frame is the innermost:
	 * the run it is in has popped its frames, on its way out (the C
	 * function called it): that rb_vm_exec frame stays as it is.
	 */
	if (j == 0 && s->over && (ruby_in(s->proc.core, v) || ruby_in(s->proc.loop, v))) {
		s->over = 0;
		s->skip = 1;
	}
	/* vm_exec_core's frame goes with the rb_vm_exec frame that called it. */
	if (ruby_in(s->proc.core, v))
		return MERGE_DROP;
	if (s->skip && ruby_in(s->proc.loop, v)) {
		s->skip = 0;
		return MERGE_KEEP;
	}
	if (s->cfp_addr < s->cfp_end && ruby_in(s->proc.loop, v))
		return MERGE_REPLACE;
	return MERGE_KEEP;
}

/*
 * A walk of process @k starts (@p: its runtime, or NULL): if it runs Ruby
 * and the thread has an execution context (ruby_current_ec, in libruby's
 * thread-local block, found through the thread's DTV), Ruby's frames are
 * merged in from its innermost control frame.
 */
__noinline int ruby_start(const struct proc_key *k, struct runtime_proc *p)
{
	struct ruby_scratch *s = ruby_state();
	struct merge_state *m = merge_state();
	__u64 dtv = 0, block = 0, ec = 0, stack[3] = {}, end, iseq, body = 0, start = 0;

	if (!s || !m || !k || !p || p->runtime != RUNTIME_RUBY)
		return 0;
	/* Read while the loader was still loading libruby: its maps read again, and it with them. */
	if (!p->ruby.modid) {
		__u64 now = bpf_ktime_get_ns();

		if (now - p->ruby.asked_ns > RUBY_ASK_NS) {
			p->ruby.asked_ns = now;
			proc_announce(k, PROC_MAPS_CHANGED);
		}
		return 0;
	}
	s->proc = p->ruby;
	s->key = *k;
	if (bpf_probe_read_user(&dtv, sizeof(dtv),
				(const void *)(unwind_thread_pointer() + s->proc.dtv)) || !dtv ||
	    s->proc.modid > 4096 ||
	    bpf_probe_read_user(&block, sizeof(block), (const void *)(dtv + 16 * s->proc.modid)) ||
	    !block || block == (__u64)-1 ||
	    bpf_probe_read_user(&ec, sizeof(ec), (const void *)(block + s->proc.ec)) || !ec ||
	    bpf_probe_read_user(stack, sizeof(stack), (const void *)ec))
		return 0;
	/* Control frames grow down from the VM stack's top, the outermost a dummy. */
	if (stack[1] > RUBY_VM_STACK_MAX / 8 || !s->proc.l.cfp_size)
		return 0;
	end = stack[0] + stack[1] * 8 - s->proc.l.cfp_size;
	if (stack[2] < stack[0] || stack[2] >= end)
		return 0;
	s->cfp_addr = stack[2];
	s->cfp_end = end;
	m->runtime = RUNTIME_RUBY;
	/* Is the innermost frame a run's first, at its first instruction, or a C function's? */
	s->pending = s->over = s->skip = 0;
	if (bpf_probe_read_user(s->cfp, sizeof(s->cfp), (const void *)stack[2]) ||
	    bpf_probe_read_user(s->env, sizeof(s->env),
				(const void *)(runtime_field64(s->cfp, RUBY_CFP_READ,
							       s->proc.l.cfp_ep) - 16)))
		return 0;
	s->over = !!(s->env[2] & RUBY_FRAME_FLAG_CFRAME);
	if ((s->env[2] & (RUBY_FRAME_FLAG_FINISH | RUBY_FRAME_FLAG_CFRAME)) == RUBY_FRAME_FLAG_FINISH &&
	    (iseq = runtime_field64(s->cfp, RUBY_CFP_READ, s->proc.l.cfp_iseq)) &&
	    !bpf_probe_read_user(&body, sizeof(body), (const void *)(iseq + s->proc.l.iseq_body)) &&
	    !bpf_probe_read_user(&start, sizeof(start), (const void *)(body + RUBY_BODY_ENCODED)))
		s->pending = start && runtime_field64(s->cfp, RUBY_CFP_READ, s->proc.l.cfp_pc) == start;
	return 0;
}

#endif /* BPFSCOPE_LEGACY */

#endif
