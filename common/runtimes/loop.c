// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* An interpreter's dispatch loop found in its binary: its function and the parts the compiler split from it. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cfi.h"
#include "disasm.h"
#include "elffile.h"
#include "runtimes/loop.h"

/* The ranges found so far: link-time addresses, and the file offsets the caller wants. */
struct loop_parts {
	uint64_t (*offs)[2];
	uint64_t vaddrs[8][2];
	size_t n, max;
};

/*
 * Is the function (by its CFI) holding @addr a part of the loop, one that
 * jumps back into the loop's symbol (a tail-called function does not)?
 * Then it is added to the parts.
 */
static void add_part(Elf *elf, int fd, unsigned int machine, uint64_t addr,
		     struct loop_parts *p)
{
	uint64_t start, end, lo, hi, *targets;
	bool back = false;
	ssize_t n;

	if (p->n == p->max || cfi__function(elf, addr, &start, &end) ||
	    end - start > DISASM_MAX_FUNC)
		return;
	for (size_t i = 0; i < p->n; i++)
		if (start < p->vaddrs[i][1] && end > p->vaddrs[i][0])
			return;
	if (elffile__offset(elf, start, &lo) || elffile__offset(elf, end - 1, &hi))
		return;
	n = disasm__jumps_out(fd, machine, lo, hi + 1 - lo, start, &targets);
	for (ssize_t k = 0; k < n && !back; k++)
		back = targets[k] >= p->vaddrs[0][0] && targets[k] < p->vaddrs[0][1];
	if (n > 0)
		free(targets);
	if (!back)
		return;
	p->vaddrs[p->n][0] = start;
	p->vaddrs[p->n][1] = end;
	p->offs[p->n][0] = lo;
	p->offs[p->n][1] = hi + 1;
	p->n++;
}

int loop__ranges(Elf *elf, int fd, const GElf_Sym *fn, uint64_t (*out)[2], size_t max)
{
	struct loop_parts p = { .offs = out, .max = max < 8 ? max : 8 };
	uint64_t off, hi;
	GElf_Ehdr eh;

	if (!max || !fn->st_size || fn->st_size > DISASM_MAX_FUNC || !gelf_getehdr(elf, &eh) ||
	    elffile__offset(elf, fn->st_value, &off) ||
	    elffile__offset(elf, fn->st_value + fn->st_size - 1, &hi))
		return -ENOENT;
	p.vaddrs[0][0] = fn->st_value;
	p.vaddrs[0][1] = fn->st_value + fn->st_size;
	out[0][0] = off;
	out[0][1] = hi + 1;
	p.n = 1;
	for (size_t i = 0; i < p.n; i++) {
		uint64_t *targets;
		ssize_t n = disasm__jumps_out(fd, eh.e_machine, out[i][0], out[i][1] - out[i][0],
					      p.vaddrs[i][0], &targets);

		for (ssize_t k = 0; k < n; k++) {
			bool known = false;

			for (size_t j = 0; j < p.n && !known; j++)
				known = targets[k] >= p.vaddrs[j][0] && targets[k] < p.vaddrs[j][1];
			if (!known)
				add_part(elf, fd, eh.e_machine, targets[k], &p);
		}
		if (n > 0)
			free(targets);
	}
	return p.n;
}
