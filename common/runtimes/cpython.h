/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* CPython: its interpreter found in a binary, and its frames named from a running process's memory. */
#ifndef BPFSCOPE_CPYTHON_H
#define BPFSCOPE_CPYTHON_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "stack_key.h"
#include "unwind.h"
#include "runtimes/python.h"

/* CPython as one binary (python3.X, libpython3.X.so) holds it. */
struct py_binary;

/*
 * Is the ELF file open on @fd (@elf) a CPython interpreter? Its
 * description, or NULL: not CPython, or a version whose structures are not
 * known (said once with -v, by @path; its frames stay native).
 */
struct py_binary *python__probe(int fd, Elf *elf, const char *path);
void python__binary_free(struct py_binary *pb);

/* "3.11", for messages. */
const char *python__version(const struct py_binary *pb);

/*
 * What the BPF walk needs of a process that maps @pb at load bias @bias
 * (run-time address less the ELF's own), the binary being the symbolizer's
 * number @id.
 */
void python__bpf_proc(const struct py_binary *pb, uint64_t bias, uint32_t id,
		      struct py_proc *out);

/*
 * Is the anonymous code at [@start, @end) of process @pid, which runs
 * @pb, its perf trampolines (python -X perf, 3.12 on)? On x86-64 they keep
 * no frame pointer: *@row says where their caller's frame is.
 */
bool python__trampolines(const struct py_binary *pb, pid_t pid, uint64_t start, uint64_t end,
			 struct unwind_row *row);

/* A Python frame's name, as the reports print it, and where its function is. */
struct py_name {
	const char *name;	/* "stilton (cheeses.py:7)" */
	const char *func;	/* "stilton": its qualified name (3.11 on), else its name */
	const char *file;	/* its code object's file, as Python has it */
	uint32_t line;		/* its first line */
};

/* The names of the Python frames of processes, read while they live. */
struct py_names;

struct py_names *py_names__new(void);
void py_names__free(struct py_names *n);

/*
 * Keeps at most @bytes of names (a share of the symbolizer's budget:
 * they cannot be read again once their process is gone, so they are
 * never let go, only refused); 0: no bound but the count of names.
 */
void py_names__set_limit(struct py_names *n, size_t bytes);
/* What the names take now. */
size_t py_names__bytes(const struct py_names *n);

/*
 * Frame @v (bpf/runtimes/python.h) of process @p, whose interpreter is @pb at load
 * bias @bias: its name, read from the process's memory now if not known
 * yet, and kept. NULL when it cannot be (the process is gone, or the code
 * object is no longer the one the frame was taken from).
 */
const struct py_name *py_names__get(struct py_names *n, const struct proc_key *p,
				    const struct py_binary *pb, uint64_t bias, uint64_t v);

/* Forgets what it holds of processes for which @gone says yes: runs without end stay bounded. */
void py_names__forget(struct py_names *n, bool (*gone)(void *ctx, const struct proc_key *p),
		      void *ctx);

/* Says, at exit, what could not be named. */
void py_names__warn_losses(const struct py_names *n);

#endif
