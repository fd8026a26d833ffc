/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* An interpreter's dispatch loop found in its binary: its function and the parts the compiler split from it. */
#ifndef BPFSCOPE_LOOP_H
#define BPFSCOPE_LOOP_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The code of the loop whose symbol is @fn, in the ELF file open on @fd
 * (@elf): its symbol's range, and the parts the compiler moved out of it
 * (a .cold part without a symbol): the functions (by their CFI) its jumps
 * lead into that jump back, and theirs, until no jump leaves them. At
 * most @max [start, end) ranges of file offsets into @out: how many, or
 * -ENOENT.
 */
int loop__ranges(Elf *elf, int fd, const GElf_Sym *fn, uint64_t (*out)[2], size_t max);

#endif
