/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Go's own symbol table (pclntab): function names, files, lines and inlined calls, stripped or not. */
#ifndef BPFSCOPE_GOPCLNTAB_H
#define BPFSCOPE_GOPCLNTAB_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct gopclntab;

/* The most of a binary's read-only data held to read its pclntab and inline trees. */
#define GOPCLNTAB_MAX_BYTES (512u << 20)
/* Loadable segments a Go binary may have, and table headers tried where none is named. */
#define GOPCLNTAB_MAX_SEGMENTS 16
#define GOPCLNTAB_MAX_CANDIDATES 64

/*
 * Reads the pclntab of the Go binary open on @fd (@elf is it): found by
 * its .gopclntab section or, without section headers, by its header in the
 * read-only segments. -ENOENT: not Go (or no pclntab). -ENOTSUP: a layout
 * it does not read (Go before 1.16, or newer than it knows); @why says
 * which. -EFBIG: larger than GOPCLNTAB_MAX_BYTES. -EINVAL: malformed.
 * What it needs is copied: @fd may close after.
 */
int gopclntab__open(int fd, Elf *elf, struct gopclntab **out, const char **why);
/* The memory it holds (the segments it read), in bytes. */
uint64_t gopclntab__bytes(const struct gopclntab *t);

void gopclntab__free(struct gopclntab *t);

/* "1.16-1.17", "1.18-1.19" or "1.20+": which layout the table has. */
const char *gopclntab__layout(const struct gopclntab *t);

/* runtime's funcFlag: where Go's own traceback stops, and functions that switch stacks. */
#define GOFUNC_TOPFRAME	(1u << 0)
#define GOFUNC_SPWRITE	(1u << 1)

/* A function of the table: its name and code [entry, end), as virtual addresses. */
struct gofunc {
	const char *name;
	uint64_t entry, end;
	unsigned int flags;	/* GOFUNC_*; for Go 1.16-1.17, from the names of the runtime's */
};

size_t gopclntab__count(const struct gopclntab *t);
int gopclntab__func(const struct gopclntab *t, size_t i, struct gofunc *f);

/*
 * How far the stack pointer is below its value at the entry of function
 * @i (the return address not counted) over its code: @fn is called for
 * each run, in order, with the run's first address; it stops the walk by
 * returning non-zero, which is then returned. 0, or -EINVAL.
 */
int gopclntab__sp(const struct gopclntab *t, size_t i,
		  int (*fn)(void *ctx, uint64_t pc, int32_t sp), void *ctx);

/* A source frame: a function, its file, and the line of the address in it. */
struct goframe {
	const char *name;
	const char *file;	/* NULL when unknown */
	int32_t line;		/* at the address; 0 when unknown */
	int32_t start_line;	/* of the function's declaration; 0 when unknown (Go < 1.20) */
};

/*
 * The source frames at virtual address @pc: the calls inlined there,
 * innermost first, then the function they are in, at most @max. Their
 * number; 0 when no function holds @pc. Strings live as long as @t.
 */
int gopclntab__frames(const struct gopclntab *t, uint64_t pc, struct goframe *out, int max);

#endif
