// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Demangling C++ and Rust names through libiberty, as perf and gdb do. */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "demangle.h"

/*
 * Rust's legacy names are C++'s ("_ZN...17h<hash>E"): libiberty's Rust
 * reader is asked first, as its cplus_demangle() does. That function is not
 * called itself: for a name neither reads it goes on to Ada's reader, which
 * allocates with xmalloc() and would exit the tool on a failed allocation.
 */
char *demangle(const char *name)
{
	char *d;

	if (!demangle__candidate(name))
		return NULL;
	/* Without DMGL_VERBOSE: no hash, as Rust writes the path. */
	d = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (!d && name[1] == 'Z')
		d = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI);
	if (d && strlen(d) > DEMANGLE_MAX_NAME) {
		free(d);
		d = NULL;
	}
	return d;
}
