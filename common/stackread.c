// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading stored stacks back and naming their frames, with the tracer's own frames left out. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "inlines.h"
#include "runtimes/names.h"
#include "runtimes/runtime.h"
#include "stackread.h"
#include "unwind.h"
#include "syms.h"

/* "[libc.so.6]": the name of code that a known binary holds but no symbol names. */
struct module_name {
	struct module_name *next;
	char *module;
	char name[];
};

#define MODULE_NAME_BUCKETS 256

/* A set of stack keys, open addressing; 0 (STACK_NONE) is never a stored key. */
struct keyset {
	__u64 *keys;
	size_t cap, n;		/* cap: a power of two, at least twice the map's size */
};

struct stackread {
	struct syms *syms;
	int fd;
	struct stack_trace trace;
	uint64_t missed;
	struct module_name *modules[MODULE_NAME_BUCKETS];
	/* stackread__prune(): keys read since the last prune, and the map's keys then. */
	bool pruning;
	size_t max_entries;
	struct keyset read, before;
};

struct stackread *stackread__new(struct syms *syms, int stack_map_fd)
{
	struct stackread *st = calloc(1, sizeof(*st));

	if (st) {
		st->syms = syms;
		st->fd = stack_map_fd;
	}
	return st;
}

void stackread__free(struct stackread *st)
{
	if (!st)
		return;
	free(st->read.keys);
	free(st->before.keys);
	for (size_t i = 0; i < MODULE_NAME_BUCKETS; i++)
		for (struct module_name *m = st->modules[i], *next; m; m = next) {
			next = m->next;
			free(m->module);
			free(m);
		}
	free(st);
}

__u64 stackread__seed(void)
{
	__u64 seed = 0;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (__u64)time(NULL) * 0x9e3779b97f4a7c15ULL ^ getpid();
	return seed;
}

uint64_t stackread__missed(const struct stackread *st)
{
	return st->missed;
}

static void keyset_add(struct keyset *ks, __u64 key)
{
	size_t i;

	if (!ks->keys || ks->n >= ks->cap / 2)
		return;
	for (i = key & (ks->cap - 1); ks->keys[i]; i = (i + 1) & (ks->cap - 1))
		if (ks->keys[i] == key)
			return;
	ks->keys[i] = key;
	ks->n++;
}

static bool keyset_has(const struct keyset *ks, __u64 key)
{
	if (!ks->keys)
		return false;
	for (size_t i = key & (ks->cap - 1); ks->keys[i]; i = (i + 1) & (ks->cap - 1))
		if (ks->keys[i] == key)
			return true;
	return false;
}

static void keyset_clear(struct keyset *ks)
{
	if (ks->keys)
		memset(ks->keys, 0, ks->cap * sizeof(*ks->keys));
	ks->n = 0;
}

static int keyset_init(struct keyset *ks, size_t entries)
{
	ks->cap = 16;
	while (ks->cap < 2 * entries + 2)
		ks->cap *= 2;
	ks->keys = calloc(ks->cap, sizeof(*ks->keys));
	return ks->keys ? 0 : -ENOMEM;
}

int stackread__prune(struct stackread *st)
{
	__u64 key, prev = 0, *stale = NULL;
	size_t nstale = 0, cap = 0, total = 0;
	bool first = true;
	int err = 0;

	if (!st->pruning) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		err = bpf_obj_get_info_by_fd(st->fd, &info, &len);
		st->max_entries = info.max_entries;
		if (!err)
			err = keyset_init(&st->read, info.max_entries);
		if (!err)
			err = keyset_init(&st->before, info.max_entries);
		if (err)
			return err;
		st->pruning = true;
	}
	/*
	 * Stacks there at the last prune and read for no count since: stale,
	 * unless a thread off its CPU since then holds one for the count it
	 * will make on its return. So only when the map is half full: then
	 * they make room for stacks that would be lost.
	 */
	while (!bpf_map_get_next_key(st->fd, first ? NULL : &prev, &key)) {
		first = false;
		prev = key;
		total++;
		if (!keyset_has(&st->before, key) || keyset_has(&st->read, key))
			continue;
		if (nstale == cap) {
			__u64 *t = realloc(stale, (cap = cap ? 2 * cap : 256) * sizeof(*t));

			if (!t) {
				err = -ENOMEM;
				break;
			}
			stale = t;
		}
		stale[nstale++] = key;
	}
	for (size_t i = 0; total >= st->max_entries / 2 && i < nstale; i++)
		bpf_map_delete_elem(st->fd, &stale[i]);
	free(stale);
	keyset_clear(&st->read);
	keyset_clear(&st->before);
	first = true;
	while (!bpf_map_get_next_key(st->fd, first ? NULL : &prev, &key)) {
		first = false;
		prev = key;
		keyset_add(&st->before, key);
	}
	return err;
}

static int read_ips(struct stackread *st, __u64 key)
{
	int n = 0;

	if (st->pruning)
		keyset_add(&st->read, key);
	if (key == STACK_LOST || bpf_map_lookup_elem(st->fd, &key, &st->trace))
		return -ENOENT;
	while (n < STACK_MAX_DEPTH && st->trace.ips[n])
		n++;
	return n;
}

static int missed(struct stackread *st, struct frame *out, bool kernel)
{
	st->missed++;
	out[0] = (struct frame){
		.name = kernel ? "[Missed Kernel Stack]" : "[Missed User Stack]",
		.kind = FRAME_UNKNOWN,
	};
	return 1;
}

/* The program that took the stack, and the tracepoint plumbing that ran it. */
static bool tracer_frame(const char *name)
{
	static const char *const prefixes[] = {
		"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "bpf_get_stack",
		"__bpf_prog_run",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

int stackread__kernel(struct stackread *st, __u64 key, struct frame *out)
{
	int n, k = 0;
	bool leading = true;

	if (key == STACK_NONE)
		return 0;
	n = read_ips(st, key);
	if (n < 0)
		return missed(st, out, true);
	for (int i = 0; i < n; i++) {
		struct sym_info si;

		syms__kernel(st->syms, st->trace.ips[i], &si);
		if (leading && si.name && tracer_frame(si.name))
			continue;
		leading = false;
		out[k++] = (struct frame){
			.name = si.name ? si.name : SYM_UNKNOWN_NAME,
			.kind = si.name ? FRAME_KERNEL : FRAME_UNKNOWN,
			.addr = st->trace.ips[i],
			.module = si.module,
		};
	}
	return k;
}

/* What ended a stack the unwinder could not finish, in place of a frame. */
static const char *unwind_mark(__u64 ip)
{
	switch (ip) {
	case UNWIND_MARK_NO_CFI:
		return "[truncated: no CFI, no frame pointer]";
	case UNWIND_MARK_UNSUPPORTED:
		return "[truncated: CFI not followed]";
	case UNWIND_MARK_READ:
		return "[truncated: stack not readable]";
	case UNWIND_MARK_PY_UNKNOWN:
		return runtime__unknown_name(RUNTIME_FRAME(RUNTIME_PYTHON, 0));
	case UNWIND_MARK_JS_UNKNOWN:
		return runtime__unknown_name(RUNTIME_FRAME(RUNTIME_V8, 0));
	case UNWIND_MARK_GO_RESUMED:
		return "[truncated: goroutine resumed elsewhere]";
	case UNWIND_MARK_JAVA:
		return "[truncated: Java frame not followed]";
	}
	return NULL;
}

/*
 * What an address in @module that no symbol covers is called: "[module]",
 * as FlameGraph's stackcollapse-perf.pl names such frames, so that a flame
 * graph still says where the time went (the vdso's unexported clock reads,
 * a stripped library). Each module's name is made once and kept.
 */
static const char *unnamed_in(struct stackread *st, const char *module)
{
	unsigned int h = 5381;
	struct module_name *m;
	size_t len;

	if (!module || !*module)
		return SYM_UNKNOWN_NAME;
	for (const char *c = module; *c; c++)
		h = h * 33 + (unsigned char)*c;
	h %= MODULE_NAME_BUCKETS;
	for (m = st->modules[h]; m; m = m->next)
		if (!strcmp(m->module, module))
			return m->name;
	len = strlen(module);
	m = malloc(sizeof(*m) + len + 3);
	if (!m || !(m->module = strdup(module))) {
		free(m);
		return SYM_UNKNOWN_NAME;
	}
	/* "[vdso]" is bracketed already. */
	if (module[0] == '[' && module[len - 1] == ']')
		memcpy(m->name, module, len + 1);
	else
		snprintf(m->name, len + 3, "[%s]", module);
	m->next = st->modules[h];
	st->modules[h] = m;
	return m->name;
}

/*
 * A runtime's trampolines (CPython's -X perf) name the function whose
 * frame is beside them: where the runtime's own frames are in the stack
 * (named or not),
 * they would say each twice. The stack's new length.
 */
static int drop_trampolines(struct frame *f, int n)
{
	int k = 0;
	bool runtime = false;

	for (int i = 0; i < n && !runtime; i++)
		runtime = frame_kind__runtime(f[i].kind) || runtime__is_unknown_name(f[i].name);
	if (!runtime)
		return n;
	for (int i = 0; i < n; i++)
		if (f[i].kind != FRAME_JIT || !runtime__trampoline_name(f[i].name))
			f[k++] = f[i];
	return k;
}

/*
 * A goroutine's frames above runtime.mcall are read from its g.sched when
 * the stack is taken: if another thread resumed the goroutine since, and it
 * parked again or entered a system call (which saves g.sched too), they say
 * where it is now, not where it was when this thread's mcall ran (gogo
 * clears g.sched.sp only while it runs). The function mcall ran tells:
 * park_m is gopark's alone, and gopark calls nothing else through mcall
 * (exitsyscall0 is exitsyscall's, gopreempt_m the preemptions'). Frames
 * after such a mismatch are marked, not shown as this thread's. The
 * stack's new length.
 */
static int drop_stale_goroutine(struct frame *f, int n)
{
	for (int i = 1; i + 1 < n; i++) {
		bool park_m = !strcmp(f[i - 1].name, "runtime.park_m");
		bool gopark = !strcmp(f[i + 1].name, "runtime.gopark");

		if (f[i].kind != FRAME_USER || strcmp(f[i].name, "runtime.mcall") ||
		    f[i + 1].kind != FRAME_USER || park_m == gopark)
			continue;
		f[i + 1] = (struct frame){ .name = unwind_mark(UNWIND_MARK_GO_RESUMED),
					   .kind = FRAME_UNKNOWN };
		return i + 2;
	}
	return n;
}

/* Said after the last frame of a stack the unwinder found deeper than it keeps. */
#define DEEPER_MARK "[truncated: deeper than 127 frames]"
_Static_assert(STACK_MAX_DEPTH == 127, "DEEPER_MARK names the depth");

int stackread__user(struct stackread *st, const struct proc_key *proc, __u64 key, struct frame *out)
{
	int n, k = 0, deeper = 0;

	if (key == STACK_NONE)
		return 0;
	n = read_ips(st, key);
	if (n < 0)
		return missed(st, out, false);
	if (n == STACK_MAX_DEPTH && !unwind_mark(st->trace.ips[n - 1]) &&
	    (st->trace.ips[n - 1] & UNWIND_DEEPER)) {
		st->trace.ips[n - 1] &= ~UNWIND_DEEPER;
		deeper = 1;
	}
	for (int i = 0; i < n; i++) {
		const char *mark = unwind_mark(st->trace.ips[i]);
		struct sym_source src[INLINES_MAX_DEPTH + 1];
		__u64 addr = st->trace.ips[i];
		struct sym_info si;
		int ns, room;

		if (mark) {
			out[k++] = (struct frame){ .name = mark, .kind = FRAME_UNKNOWN };
			continue;
		}
		if (UNWIND_IS_RUNTIME_FRAME(addr)) {
			struct runtime_frame rf;
			__u64 data = 0;

			/* Its data slot, where a runtime's frame takes two: one frame. */
			if (i + 1 < n && UNWIND_IS_RUNTIME_FRAME(st->trace.ips[i + 1]) &&
			    RUNTIME_FRAME_ID(st->trace.ips[i + 1]) == RUNTIME_DATA)
				data = st->trace.ips[++i];
			if (RUNTIME_FRAME_ID(addr) == RUNTIME_DATA ||
			    syms__runtime_frame(st->syms, proc, addr, data, &rf)) {
				out[k++] = (struct frame){ .name = runtime__unknown_name(addr),
							   .kind = FRAME_UNKNOWN };
				continue;
			}
			/* Its inlined calls, innermost first, as far as room is kept for the rest. */
			room = STACKREAD_MAX_USER - k - (n - i) - deeper;
			for (uint32_t j = 0; j < rf.ninlined && (int)j < room; j++) {
				const struct frame_name *in = &rf.inlined[j];

				out[k++] = (struct frame){ .name = in->name, .kind = FRAME_INLINE,
							   .func = in->func, .file = in->file,
							   .line = in->line };
			}
			out[k++] = (struct frame){ .name = rf.name, .kind = rf.kind, .func = rf.func,
						   .file = rf.file, .line = rf.line };
			continue;
		}
		/* A frame by file keeps its offset in the file as its address (pprof's). */
		if (UNWIND_IS_FILE_FRAME(addr)) {
			__u32 id = (addr >> UNWIND_FILE_OFF_BITS) & UNWIND_FILE_ID_MASK;

			addr &= (1ULL << UNWIND_FILE_OFF_BITS) - 1;
			syms__file_offset(st->syms, id, addr, &si);
		} else {
			syms__user(st->syms, proc, addr, &si);
		}
		/* Room kept for every real frame still to come, and the mark. */
		room = STACKREAD_MAX_USER - k - (n - i - 1) - deeper;
		ns = syms__source(&si, i == 0, src, room < INLINES_MAX_DEPTH + 1 ? room :
						   INLINES_MAX_DEPTH + 1);
		if (!ns) {
			out[k++] = (struct frame){
				.name = unnamed_in(st, si.module),
				.kind = FRAME_UNKNOWN,
				.addr = addr,
				.module = si.path,
				.build_id = si.build_id,
			};
			continue;
		}
		/* The inlined calls, innermost first, then the frame they are in. */
		for (int j = 0; j < ns; j++)
			out[k++] = (struct frame){
				.name = src[j].name,
				.kind = j < ns - 1 ? FRAME_INLINE :
					si.kind == SYM_JIT ? FRAME_JIT : FRAME_USER,
				.addr = addr,
				.module = si.path,
				.build_id = si.build_id,
				.file = src[j].file,
				.line = src[j].line,
				.system_name = src[j].raw,
			};
	}
	if (deeper)
		out[k++] = (struct frame){ .name = DEEPER_MARK, .kind = FRAME_UNKNOWN };
	return drop_trampolines(out, drop_stale_goroutine(out, k));
}
