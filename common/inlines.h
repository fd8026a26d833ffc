/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The calls inlined at an address of a binary, from its DWARF, as perf and addr2line -i show them. */
#ifndef BPFSCOPE_INLINES_H
#define BPFSCOPE_INLINES_H

#include <stdbool.h>
#include <stdint.h>

struct inlines;

/* Calls inlined into one another at one address, at most. */
#define INLINES_MAX_DEPTH 16

/*
 * Reads the DWARF of the ELF file on @fd, which it takes: NULL (and @fd
 * closed) when there is none, a section is larger than it will read, or it
 * needs a file it does not open here (split DWARF's .dwo, DWARF 5's
 * supplementary file). A dwz alt file (.gnu_debugaltlink) is opened inside
 * @rootfd (the root of the process that maps the binary; -1: ours).
 * With @demangle, a C++ or Rust function is named by its linkage name,
 * demangled, as where it is not inlined.
 */
struct inlines *inlines__open(int fd, int rootfd, bool demangle);

/* An inlined call's function: its name, and its symbol where it has one (C++'s, Rust's). */
struct inline_name {
	const char *name;
	const char *linkage;	/* NULL: none */
};

/*
 * The functions inlined at @vaddr (the ELF's virtual address), innermost
 * first, into @names, at most @max: their number. The names live as long
 * as @in.
 */
int inlines__find(struct inlines *in, uint64_t vaddr, struct inline_name *names, int max);

/* The memory it holds, or may come to hold (libdw reads a debug section whole), in bytes. */
uint64_t inlines__bytes(const struct inlines *in);

void inlines__free(struct inlines *in);

#endif
