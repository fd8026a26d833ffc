/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared libraries loaded the first time their feature is used: a run without it never maps or relocates them. */
#ifndef BPFSCOPE_LAZYLIB_H
#define BPFSCOPE_LAZYLIB_H

#include <stdbool.h>
#include <stddef.h>

/*
 * One function of a library, and where its address goes in the caller's
 * table of function pointers. Where the build links the library, the
 * address is the linker's; otherwise dlsym() is asked for it by name, so
 * that naming it here does not make the library a dependency.
 */
struct lazysym {
	const char *name;
	size_t off;
	void *linked;
};

#define LAZYSYM_LINKED(table, field, fn) { #fn, offsetof(table, field), (void *)(fn) }
#define LAZYSYM_LOADED(table, field, fn) { #fn, offsetof(table, field), NULL }

/* A static build links every library it uses. */
#ifdef BPFSCOPE_STATIC
#define LAZYSYM LAZYSYM_LINKED
#else
#define LAZYSYM LAZYSYM_LOADED
#endif

struct lazylib {
	const char *soname;
	const struct lazysym *syms;
	size_t nsyms;
	void *table;		/* the caller's, filled by lazylib__load() */
	/* its state, kept by lazylib__load() */
	int err;
	char why[160];
	void *handle;
	bool done;
};

/*
 * Fills @lib's table, loading @lib->soname the first time: 0, or -ENOENT
 * (lazylib__why() says why) every time after a failed first try. Safe to
 * call from any thread.
 */
int lazylib__load(struct lazylib *lib);

/*
 * Unmaps @lib if it was loaded (a later lazylib__load() loads it again),
 * where its memory outweighs loading it again: no caller may be using it.
 */
void lazylib__unload(struct lazylib *lib);

/* Why the load failed: the loader's own words. */
const char *lazylib__why(const struct lazylib *lib);

#endif
