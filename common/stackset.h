/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A set of weighted, symbolized stacks: what stack tools collect and every output reads. */
#ifndef BPFSCOPE_STACKSET_H
#define BPFSCOPE_STACKSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum frame_kind {
	FRAME_ROOT,		/* the process name at the root, as bcc folds it */
	FRAME_USER,
	FRAME_KERNEL,
	FRAME_JIT,		/* from a /tmp/perf-PID.map */
	FRAME_INLINE,		/* a call inlined in the user frame after it (leaf first), same address */
	FRAME_PYTHON,		/* a Python function: "name (file.py:line)" */
	FRAME_JS,		/* a JavaScript function: "name (file.js:line)" */
	FRAME_JAVA,		/* a Java method: "pkg.Class.method (File.java:line)" */
	FRAME_PHP,		/* a PHP function: "Class::method (file.php:line)" */
	FRAME_PERL,		/* a Perl sub: "Package::sub (file.pl:line)" */
	FRAME_RUBY,		/* a Ruby method or block: "Class#method (file.rb:line)" */
	FRAME_SEPARATOR,	/* "-" between user and kernel, "--" before a waker */
	FRAME_UNKNOWN,		/* "[unknown]", "[vdso]" (no symbol), "[Missed User Stack]", ... */
	FRAME_STATE,		/* profile --wall: what the thread was doing, "[sleeping]" */
	FRAME_SYSCALL,		/* profile --wall: the system call it left the CPU in, "[sys_read]" */
	/*
	 * Where the process runs, before its root: "[container 1a2b3c4d5e6f]"
	 * (.func its whole id) or "[cgroup /system.slice/nginx.service]";
	 * .file its cgroup's path. A label of the stack (pprof's, JSON's),
	 * and its first frame only where asked (--containers).
	 */
	FRAME_CONTAINER,
};

/*
 * A kind's name in JSON: "user", "kernel", "jit", "inlined", "python", "js",
 * "java", "php", "perl", "ruby", "separator", "state", "syscall", "container",
 * "unknown".
 */
const char *frame_kind__name(enum frame_kind kind);

/* Is it a runtime's frame (a Python function, a Java method...)? */
static inline bool frame_kind__runtime(enum frame_kind kind)
{
	return kind == FRAME_PYTHON || kind == FRAME_JS || kind == FRAME_JAVA || kind == FRAME_PHP ||
	       kind == FRAME_PERL || kind == FRAME_RUBY;
}

struct frame {
	const char *name;	/* as printed: "vfs_read", "main", "[unknown]", "--" */
	enum frame_kind kind;
	uint64_t addr;		/* run-time address; 0 where there is none */
	const char *module;	/* binary path or kernel module; NULL if none */
	const char *build_id;	/* hex; NULL if unknown */
	const char *func;	/* its function's own name, where @name says more (Python's); NULL: @name */
	const char *system_name;	/* as the binary spells it (C++'s mangled); NULL: @func or @name */
	const char *file;	/* its function's source file, where known (Go's pclntab) */
	uint32_t line;		/* ... and the line the function starts at, or is at; 0 unknown */
};

/*
 * A distinct frame of a set is kept once, however many stacks hold it: a
 * stack is an array of frame numbers (100,000 stacks of 35 frames would
 * take 140 MB as frames, 14 MB as numbers).
 */
struct stack {
	const uint32_t *frames;		/* frame numbers, root first, leaf last */
	size_t n;
	uint64_t value;			/* samples, or time in the set's unit */
};

struct stackset;

struct stackset *stackset__new(void);
void stackset__free(struct stackset *s);

/*
 * Adds @value to the stack @frames[0..@n), root first. Stacks with the same
 * frame names and kinds merge; strings are copied. 0 or -ENOMEM.
 */
int stackset__add(struct stackset *s, const struct frame *frames, size_t n, uint64_t value);

size_t stackset__len(const struct stackset *s);

/*
 * Frame number @id of the set (every id of a stack is one). Frames with the
 * same name, kind, module and build-id are one frame, with the address,
 * file and line of the first seen. Numbers run from 0 to stackset__frames() - 1.
 */
const struct frame *stackset__frame(const struct stackset *s, uint32_t id);
size_t stackset__frames(const struct stackset *s);
uint64_t stackset__total(const struct stackset *s);

/*
 * Has any stack of @s a frame of @kind? Then stackset__without() makes a
 * set without them, where stacks that differed only there are one.
 */
bool stackset__has(const struct stackset *s, enum frame_kind kind);
struct stackset *stackset__without(const struct stackset *s, enum frame_kind kind);

/* Orders stacks by value, largest first (ties by name), for every reader. */
void stackset__sort(struct stackset *s);
const struct stack *stackset__get(const struct stackset *s, size_t i);

/*
 * Writes "root;frame;...;leaf value" lines, the input of flamegraph.pl,
 * speedscope and inferno. In names ';' becomes ':', ' ' becomes '_', and
 * control characters and bytes that are not UTF-8 "\xHH", so that no name
 * can split or forge a line.
 */
int stackset__write_folded(const struct stackset *s, FILE *f);

#endif
