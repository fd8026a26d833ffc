/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The PHP runtime's part of the BPF unwinder: a Zend VM loop's frame replaced by the PHP functions it runs. */
#ifndef BPFSCOPE_PHP_BPF_H
#define BPFSCOPE_PHP_BPF_H

#include "walk.bpf.h"
#include "runtimes/procs.bpf.h"
#include "runtimes/php.h"

/* A walk's PHP state and the stack its frames are merged into: in a map, as python.bpf.h's. */
struct php_scratch {
	__u8 call[PHP_CALL_READ];	/* the zend_execute_data read last */
	__u8 func[PHP_FUNC_READ];	/* ... and its function */
	struct php_proc proc;
	struct proc_key key;
	struct stack_trace out;		/* the stack, PHP frames in */
	__u64 next;			/* the next call of the chain; 0: none */
	__u64 native;			/* the loop's frame being replaced */
	__u32 in, nin, nout;
	__u8 active;			/* the walk's process runs PHP */
	__u8 replacing;			/* a loop's frame, a call a step */
	__u8 pushed;			/* ... which one did take the place of */
	__u8 cut;			/* the merged stack had no room for all */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct php_scratch);
} php_scratch SEC(".maps");

#ifndef BPFSCOPE_LEGACY

static __always_inline struct php_scratch *php_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&php_scratch, &zero);
}

/* Appends @v to the merged stack, if there is room. */
static __always_inline void php_emit(struct php_scratch *s, __u64 v)
{
	__u32 o = s->nout;

	if (o >= STACK_MAX_DEPTH) {
		s->cut = 1;
		return;
	}
	s->out.ips[o] = v;
	s->nout = o + 1;
}

/* The loop's frame is replaced, or kept where no PHP frame took its place. */
static __always_inline void php_replaced(struct php_scratch *s)
{
	s->replacing = 0;
	if (!s->pushed)
		php_emit(s, s->native);
}

/*
 * One step of replacing the loop's frame: the next call of the chain.
 * A PHP function's (or a file's code) is pushed; a C function's is passed,
 * its own native frame being in the stack already. The loop's calls end
 * with the one it was entered for (ZEND_CALL_TOP); the rest are an outer
 * loop's.
 */
static __always_inline void php_replace_step(struct php_scratch *s)
{
	const struct php_layout *l = &s->proc.l;
	__u64 call = s->next, func, name, file, v;
	__u32 info, line;
	__u8 type;

	if (!call)
		return php_replaced(s);
	if (bpf_probe_read_user(s->call, sizeof(s->call), (const void *)call)) {
		/* Lost: the loop frames further out keep their own frames. */
		s->next = 0;
		php_emit(s, PHP_FRAME(0, 0));
		s->pushed = 1;
		return php_replaced(s);
	}
	s->next = runtime_field64(s->call, PHP_CALL_READ, l->call_prev);
	func = runtime_field64(s->call, PHP_CALL_READ, l->call_func);
	info = runtime_field32(s->call, PHP_CALL_READ, l->call_info);
	if (!func)
		return;
	if (func >= PHP_FUNC_MAX || (func & 7) ||
	    bpf_probe_read_user(s->func, sizeof(s->func), (const void *)func)) {
		s->next = 0;
		php_emit(s, PHP_FRAME(0, 0));
		s->pushed = 1;
		return php_replaced(s);
	}
	type = s->func[0];
	if (type != PHP_USER_FUNCTION && type != PHP_EVAL_CODE)
		return;
	name = runtime_field64(s->func, PHP_FUNC_READ, l->func_name);
	file = runtime_field64(s->func, PHP_FUNC_READ, l->func_file);
	line = runtime_field32(s->func, PHP_FUNC_READ, l->func_line);
	v = PHP_FRAME(func, php_frame_check(name, file, line));
	php_emit(s, v);
	s->pushed = 1;
	runtime_announce(&s->key, v, 0);
	if (info & PHP_CALL_TOP)
		php_replaced(s);
}

/* Is frame @v (as the native walk keeps it: by file, or by address) in the VM's loop or its JIT's code? */
static __always_inline bool php_in_loop(const struct php_proc *php, __u64 v)
{
	bool in = v >= php->jit[0] && v < php->jit[1];

	for (int i = 0; i < PHP_LOOP_RANGES; i++)
		in |= v >= php->loop[i][0] && v < php->loop[i][1];
	return in;
}

/* One step of the merge: a PHP frame, or the next native frame; 1 to stop. A global function, checked once. */
__noinline int php_merge_one(void)
{
	struct php_scratch *s = php_state();
	struct stack_trace *in;
	__u32 zero = 0, j;
	__u64 v;

	in = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!s || !in || s->cut)
		return 1;
	if (s->replacing) {
		php_replace_step(s);
		return 0;
	}
	j = s->in;
	if (j >= s->nin || j >= STACK_MAX_DEPTH)
		return 1;
	s->in = j + 1;
	v = in->ips[j];
	if (s->next && php_in_loop(&s->proc, v)) {
		s->replacing = 1;
		s->pushed = 0;
		s->native = v;
		return 0;
	}
	php_emit(s, v);
	return 0;
}

static long php_merge_step(__u32 i, void *arg)
{
	return php_merge_one() != 0;
}

/*
 * After the native walk of @n frames into @t (stack_scratch's): each frame
 * of the VM's loop becomes the PHP frames that call of it was running,
 * from the current call outwards. The new depth.
 */
static __always_inline int php_merge(struct stack_trace *t, int n)
{
	struct php_scratch *s = php_state();
	bool deeper;

	if (!s)
		return n;
	if (s->active && s->next && n > 0 && n <= STACK_MAX_DEPTH) {
		deeper = n == STACK_MAX_DEPTH && (t->ips[STACK_MAX_DEPTH - 1] & UNWIND_DEEPER) &&
			 t->ips[STACK_MAX_DEPTH - 1] < UNWIND_MARK_NO_CFI;
		if (deeper)
			t->ips[STACK_MAX_DEPTH - 1] &= ~UNWIND_DEEPER;
		s->in = s->nout = 0;
		s->nin = n;
		s->replacing = s->cut = 0;
		/* Every native frame, and a call for each slot and as many passed. */
		bpf_loop(3 * STACK_MAX_DEPTH, php_merge_step, NULL, 0);
		if (s->replacing && !s->cut)
			php_replaced(s);
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

/* A walk of process @k starts: PHP's part of it is on if the process runs PHP (this image of it). */
__noinline int php_start(const struct proc_key *k)
{
	struct php_scratch *s = php_state();
	struct runtime_proc *p;

	if (!s)
		return 0;
	s->active = 0;
	s->next = 0;
	if (!k)
		return 0;
	p = runtime_proc_of(k, RUNTIME_PHP);
	if (!p)
		return 0;
	s->proc = p->php;
	s->key = *k;
	bpf_probe_read_user(&s->next, sizeof(s->next), (const void *)s->proc.current);
	s->active = 1;
	return 0;
}

#else

/* Before 5.17 no runtime's frames are merged: that takes bpf_loop. */
static __always_inline void php_start(const struct proc_key *k)
{
}

static __always_inline int php_merge(struct stack_trace *t, int n)
{
	return n;
}

#endif /* BPFSCOPE_LEGACY */

#endif
