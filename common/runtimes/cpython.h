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

#endif
