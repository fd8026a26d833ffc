/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A binary's function symbols: gathered from its symbol tables, sorted, found by bisection. */
#ifndef BPFSCOPE_SYMTAB_H
#define BPFSCOPE_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

/* A function, at its link-time address. */
struct sym {
	uint64_t addr, size;
	const char *name;	/* in the table's own storage, without "@VERSION" */
};

struct symtab {
	struct sym *v;
	size_t n, cap;
	char **chunks;		/* name storage, in large blocks */
	size_t nchunks, chunk_used, chunk_size;
	size_t bytes;		/* what it holds, for the memory budget */
	unsigned char *named;	/* a bit per symbol: its name was demangled, or tried */
	/* Those demangled, by symbol number: open addressing, 0 an empty slot. */
	struct symtab_demangled {
		uint32_t sym;	/* its index in @v, plus 1 */
		const char *name;
	} *demangled;
	size_t ndemangled, demangled_cap;
};

/*
 * Adds a function; names are copied, less any "@VERSION", and cut at
 * SYMTAB_MAX_NAME bytes. 0, or -ENOMEM, or -E2BIG past SYMTAB_MAX_SYMS
 * symbols or SYMTAB_MAX_BYTES of memory.
 */
int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name);

/* The same for a name taken as it is ("read@plt"). */
int symtab__add_exact(struct symtab *t, uint64_t addr, uint64_t size, const char *name);

/* Sorts and keeps one symbol per address: of aliases one with a size, then the shortest name. */
void symtab__finish(struct symtab *t);

/*
 * The function holding @addr, or NULL: past a function's size (or, for one
 * without a size, past its address) is not that function.
 */
const struct sym *symtab__find(const struct symtab *t, uint64_t addr);

/*
 * The name of @s, one of @t's, as its language writes it: a C++ or Rust
 * name is demangled the first time it is asked for (most never are), and
 * kept beside the symbol's own (s->name, as the linker spells it). NULL
 * only when @s has no name.
 */
const char *symtab__name(struct symtab *t, const struct sym *s);

void symtab__free(struct symtab *t);

#define SYMTAB_MAX_SYMS (8u << 20)
#define SYMTAB_MAX_NAME 4096		/* the longest name kept: longer ones are cut */
#define SYMTAB_MAX_BYTES (128u << 20)	/* what one binary's symbols may take */

#endif
