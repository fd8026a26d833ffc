/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A binary's call-frame information, turned into the BPF unwinder's compact rows (through libdw). */
#ifndef BPFSCOPE_CFI_H
#define BPFSCOPE_CFI_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "unwind.h"

/* The largest section read (.eh_frame, .eh_frame_hdr, .debug_frame, their names' table). */
#define CFI_MAX_SECTION (256u << 20)
/* Rows of one function kept (past them: unsupported), and the work of finding them all. */
#define CFI_MAX_FDE_ROWS 4096
#define CFI_MAX_WORK (64u << 20)

struct cfi_table {
	struct unwind_row *rows;	/* sorted by pc, relative to @base */
	size_t n, cap;
	uint64_t base;			/* the address rows' pc count from */
	size_t fdes;			/* functions described */
	size_t unsupported;		/* rows whose rules the unwinder cannot follow */
};

/*
 * Builds @t from the .eh_frame of @elf (found through .eh_frame_hdr), or
 * else from the .debug_frame of @debug (a debug file's ELF, or NULL): a row
 * wherever the rules change, a UNWIND_NONE row over every gap between
 * described functions. At most @max_rows rows (-E2BIG beyond). 0, -ENOENT
 * when there is no call-frame information, -EFBIG when it would take more
 * than CFI_MAX_WORK to read (a forged file), or negative errno.
 */
int cfi__build(Elf *elf, Elf *debug, size_t max_rows, struct cfi_table *t);

/*
 * Builds @t for a Go binary (open on @fd), which has no call-frame
 * information, from its pclntab's stack-pointer tables, as Go's own
 * traceback walks: x86-64 and arm64. 0, -ENOENT when it is not Go,
 * -ENOTSUP for another architecture, or negative errno.
 */
int cfi__build_go(int fd, Elf *elf, size_t max_rows, struct cfi_table *t);

/*
 * Adds to @t, built by cfi__build() from a cgo binary's .eh_frame (which
 * describes only its C code), the rows of its Go code from the pclntab
 * (as cfi__build_go()), wherever @t has none. @t is left as it was when
 * they do not fit in @max_rows. 0, -ENOENT when @elf has no Go, or
 * negative errno.
 */
int cfi__add_go(int fd, Elf *elf, size_t max_rows, struct cfi_table *t);

/*
 * The function whose call-frame information (an FDE of .eh_frame) covers
 * @addr: [*start, *end), the end being the next function's start where
 * only that bounds it. 0, -ENOENT, or negative errno.
 */
int cfi__function(Elf *elf, uint64_t addr, uint64_t *start, uint64_t *end);

/*
 * The row at @addr of @elf, by its .eh_frame (its pc left 0): 0, or
 * -ENOENT where none describes it.
 */
int cfi__row(Elf *elf, uint64_t addr, struct unwind_row *row);

void cfi__free(struct cfi_table *t);

#endif
