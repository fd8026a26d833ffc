/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Symbol names as their language writes them: C++ (Itanium ABI) and Rust, by libiberty. */
#ifndef BPFSCOPE_DEMANGLE_H
#define BPFSCOPE_DEMANGLE_H

#include <stdbool.h>

/* The longest demangled name kept: a longer one (templates) is left mangled. */
#define DEMANGLE_MAX_NAME (64u << 10)

/* Could @name be mangled: C++ and Rust legacy ("_Z"), Rust v0 ("_R")? */
static inline bool demangle__candidate(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/*
 * @name demangled, with its parameters, in memory the caller frees; NULL
 * when it is no C++ or Rust name, or its reading is longer than
 * DEMANGLE_MAX_NAME. Names come from files anyone may have written.
 */
char *demangle(const char *name);

#endif
