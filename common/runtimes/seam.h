/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What each runtime gives the seam (runtime.c): its calls, over types of its own. */
#ifndef BPFSCOPE_SEAM_H
#define BPFSCOPE_SEAM_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stack_key.h"
#include "stackset.h"
#include "runtimes/names.h"
#include "unwind.h"
#include "runtimes/runtime_proc.h"

/* One of its frames to be named, as the seam hands it to the runtime's read_name. */
struct runtime_read {
	const struct proc_key *p;	/* the frame's process */
	const void *binary;		/* the runtime's view of its interpreter: its probe()'s */
	uint64_t bias;			/* ... its load bias */
	uint64_t v, data;		/* the frame, and its data slot */
};

/*
 * One runtime. @binary is its own view of one of its interpreters' binaries:
 * the seam hands it back to the runtime it came from, and to no other.
 */
struct runtime_ops {
	const char *name;	/* "python": BPFSCOPE_DISABLE=NAME leaves it native */
	enum runtime_id id;	/* its frames' and process entries' number */

	/* Is the ELF file open on @fd (@elf), at @path, one of its interpreters? */
	void *(*probe)(int fd, Elf *elf, const char *path);
	void (*binary_free)(void *binary);
	/*
	 * What its BPF walk needs of process @pid, which maps @binary at load
	 * bias @bias: 0, or negative errno (-EAGAIN: not ready yet, as a JVM
	 * that has not made its code cache; @out is written as it is, for
	 * its walk to ask for the process to be read again).
	 */
	int (*bpf_proc)(const void *binary, pid_t pid, uint64_t bias, uint32_t id,
			struct runtime_proc *out);
	/* Optional: is [@start, @end) of process @pid its trampolines? (runtime__trampolines) */
	bool (*trampolines)(const void *binary, pid_t pid, uint64_t start, uint64_t end,
			    struct unwind_row *row);
	/* Optional: is a perf map's @name one of its trampolines? */
	bool (*trampoline_name)(const char *name);

	/* Its frames, as the reports print them. */
	enum frame_kind frame_kind;
	/* The words its losses are said in at exit; .unknown names a frame it could not name. */
	const struct frame_names_words *words;
	/* Reads a frame's name: @ctx is a const struct runtime_read *. */
	frame_name_read_fn read_name;
	/* Its frames named by themselves, their data slot only what the walk said of one the first time. */
	bool named_by_frame;
};

/* The runtimes, each its own room: cpython.c, v8.c, hotspot.c, php.c, perl.c,
 * ruby.c. */
extern const struct runtime_ops python_runtime;
extern const struct runtime_ops v8_runtime;
extern const struct runtime_ops hotspot_runtime;
extern const struct runtime_ops php_runtime;
extern const struct runtime_ops perl_runtime;
extern const struct runtime_ops ruby_runtime;

#endif
