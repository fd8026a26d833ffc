/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The PHP runtime's part of the BPF unwinder: a Zend VM loop's frame replaced by the PHP functions it runs. */
#ifndef BPFSCOPE_PHP_BPF_H
#define BPFSCOPE_PHP_BPF_H

#include "walk.bpf.h"
#include "runtimes/procs.bpf.h"
#include "runtimes/merge.bpf.h"
#include "runtimes/php.h"

/* A walk's PHP state: in a map, as python.bpf.h's. */
struct php_scratch {
	__u8 call[PHP_CALL_READ];	/* the zend_execute_data read last */
	__u8 func[PHP_FUNC_READ];	/* ... and its function */
	struct php_proc proc;
	struct proc_key key;
	__u64 next;			/* the next call of the chain; 0: none */
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

/*
 * One step of replacing the loop's frame: the next call of the chain.
 * A PHP function's (or a file's code) is pushed; a C function's is passed,
 * its own native frame being in the stack already. The loop's calls end
 * with the one it was entered for (ZEND_CALL_TOP); the rest are an outer
 * loop's.
 */
static __always_inline void php_replace_step(struct merge_state *m)
{
	struct php_scratch *s = php_state();
	const struct php_layout *l;
	__u64 call, func, name, file, v;
	__u32 info, line;
	__u8 type;

	if (!s || !(call = s->next))
		return merge_replaced(m);
	l = &s->proc.l;
	if (bpf_probe_read_user(s->call, sizeof(s->call), (const void *)call)) {
		/* Lost: the loop frames further out keep their own frames. */
		s->next = 0;
		merge_push(m, PHP_FRAME(0, 0));
		return merge_replaced(m);
	}
	s->next = runtime_field64(s->call, PHP_CALL_READ, l->call_prev);
	func = runtime_field64(s->call, PHP_CALL_READ, l->call_func);
	info = runtime_field32(s->call, PHP_CALL_READ, l->call_info);
	if (!func)
		return;
	if (func >= PHP_FUNC_MAX || (func & 7) ||
	    bpf_probe_read_user(s->func, sizeof(s->func), (const void *)func)) {
		s->next = 0;
		merge_push(m, PHP_FRAME(0, 0));
		return merge_replaced(m);
	}
	type = s->func[0];
	if (type != PHP_USER_FUNCTION && type != PHP_EVAL_CODE)
		return;
	name = runtime_field64(s->func, PHP_FUNC_READ, l->func_name);
	file = runtime_field64(s->func, PHP_FUNC_READ, l->func_file);
	line = runtime_field32(s->func, PHP_FUNC_READ, l->func_line);
	v = PHP_FRAME(func, php_frame_check(name, file, line));
	merge_push(m, v);
	runtime_announce(&s->key, v, 0);
	if (info & PHP_CALL_TOP)
		merge_replaced(m);
}

/* Is frame @v (as the native walk keeps it: by file, or by address) in the VM's loop or its JIT's code? */
static __always_inline bool php_in_loop(const struct php_proc *php, __u64 v)
{
	bool in = v >= php->jit[0] && v < php->jit[1];

	for (int i = 0; i < PHP_LOOP_RANGES; i++)
		in |= v >= php->loop[i][0] && v < php->loop[i][1];
	return in;
}

/* Native frame @v: each of the VM's loop frames the PHP calls it runs, while the chain goes on. */
static __always_inline int php_frame(struct merge_state *m, __u64 v)
{
	struct php_scratch *s = php_state();

	return s && s->next && php_in_loop(&s->proc, v) ? MERGE_REPLACE : MERGE_KEEP;
}

/*
 * A walk of process @k starts (@p: its runtime, or NULL): if it runs PHP,
 * PHP's frames are merged in from the current call.
 */
__noinline int php_start(const struct proc_key *k, struct runtime_proc *p)
{
	struct php_scratch *s = php_state();
	struct merge_state *m = merge_state();

	if (!s || !m || !k || !p || p->runtime != RUNTIME_PHP)
		return 0;
	s->next = 0;
	s->proc = p->php;
	s->key = *k;
	bpf_probe_read_user(&s->next, sizeof(s->next), (const void *)s->proc.current);
	if (s->next)
		m->runtime = RUNTIME_PHP;
	return 0;
}

#endif /* BPFSCOPE_LEGACY */

#endif
