/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Interpreted runtimes beside native code: found in binaries, walked by the BPF unwinder, named in reports. */
#ifndef BPFSCOPE_RUNTIME_H
#define BPFSCOPE_RUNTIME_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "stack_key.h"
#include "stackset.h"
#include "unwind.h"

/*
 * An interpreter as one binary holds it (CPython: python3.X, or
 * libpython3.X.so). Each runtime (common/runtimes/) tells its own.
 */
struct runtime_binary;

/* Is the ELF file open on @fd (@elf), at @path, an interpreter of a runtime known here? */
struct runtime_binary *runtime__probe(int fd, Elf *elf, const char *path);
void runtime__binary_free(struct runtime_binary *rb);

/* The runtimes' map in a stack tool's BPF object (bpf/runtimes/procs.bpf.h). */
struct runtime_bpf {
	int procs_fd;		/* -1: none (the legacy walk merges no runtime's frames) */
};

/*
 * Process @tgid maps @rb (NULL: none) at load bias @bias, the binary being
 * the symbolizer's number @id: the BPF walk is told, or (NULL) forgets
 * it. 0, or negative errno (-E2BIG: no room; -EAGAIN: the runtime is not
 * ready in it yet, as a JVM still starting).
 */
int runtime__process(const struct runtime_bpf *b, __u32 tgid, const struct runtime_binary *rb,
		     uint64_t bias, uint32_t id);

/*
 * Does the anonymous code at [@start, @end) of process @pid, which runs
 * @rb, hold the runtime's own trampolines (CPython's -X perf, on x86-64)?
 * Then *@row is how to walk a frame anywhere in them.
 */
bool runtime__trampolines(const struct runtime_binary *rb, pid_t pid, uint64_t start,
			  uint64_t end, struct unwind_row *row);

/*
 * Is @name, a JIT frame's (from a perf map), one of a runtime's
 * trampolines, which only repeat the runtime frame beside them? (CPython
 * -X perf's "py::function:file".)
 */
bool runtime__trampoline_name(const char *name);

struct frame_name;

/* What the reports need of a runtime's frame. */
struct runtime_frame {
	const char *name;	/* as printed: "stilton (cheeses.py:7)" */
	const char *func;	/* the function's own name: "stilton" */
	const char *file;	/* its function's file; NULL if unknown */
	uint32_t line;		/* its function's first line; 0 if unknown */
	enum frame_kind kind;	/* FRAME_PYTHON, FRAME_JS, FRAME_JAVA, FRAME_PHP, FRAME_PERL, FRAME_RUBY */
	/* Calls inlined into it, innermost first (a JVM's compiled code). */
	const struct frame_name *inlined;
	uint32_t ninlined;
};

/* The names of runtimes' frames, read from processes while they live. */
struct runtime_names;

struct runtime_names *runtime_names__new(void);
void runtime_names__free(struct runtime_names *n);
/* Keeps at most @bytes of names; what they take now. */
void runtime_names__set_limit(struct runtime_names *n, size_t bytes);
size_t runtime_names__bytes(const struct runtime_names *n);

/*
 * Runtime frame @v (unwind.h's UNWIND_RUNTIME_FRAME) and its data slot
 * @data (0 for none) of process @p, whose interpreter is @rb at load bias
 * @bias (NULL: not known now, so only a name read before will do). 0, or
 * -ENOENT: not to be named.
 */
int runtime_names__get(struct runtime_names *n, const struct proc_key *p,
		       const struct runtime_binary *rb, uint64_t bias, uint64_t v, uint64_t data,
		       struct runtime_frame *out);

/* Forgets the names of the processes for which @gone says yes. */
void runtime_names__forget(struct runtime_names *n,
			   bool (*gone)(void *ctx, const struct proc_key *p), void *ctx);

/*
 * What a runtime frame @v (or its mark) not named is printed as: "[unknown
 * python]", "[unknown js]"; and is @name one of those (the same pointer)?
 */
const char *runtime__unknown_name(uint64_t v);
bool runtime__is_unknown_name(const char *name);

/* Says, at exit, which frames could not be named. */
void runtime_names__warn_losses(const struct runtime_names *n);

#endif
