// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The calls inlined at an address of a binary, from its DWARF through libdw, each address looked up once. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elffile.h"
#include "inlines.h"

/*
 * The largest debug section read: libdw reads a section whole, and the
 * file may be any user's. A distribution's largest (libLLVM's .debug_info)
 * is below it.
 */
#define INLINES_MAX_SECTION (512ull << 20)

struct cached {
	uint64_t vaddr;
	uint32_t first;		/* into names */
	uint8_t n;
	bool used;
};

struct inlines {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct cached *slots;	/* open addressing, by address */
	size_t cap, used;
	const char **names;	/* every cached chain, end to end */
	size_t nnames, names_cap;
};

/* Are its debug sections all of a size libdw may read whole? */
static bool bounded(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		uint64_t size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		/* .zdebug_ (GNU's old compression) says its size only once inflated. */
		if (name[1] == 'z')
			return false;
		size = sh.sh_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;

			if (!gelf_getchdr(scn, &ch))
				return false;
			size = ch.ch_size;
		}
		if (size > INLINES_MAX_SECTION)
			return false;
	}
	return true;
}

struct inlines *inlines__open(int fd)
{
	struct inlines *in = calloc(1, sizeof(*in));

	if (!in)
		goto fail;
	in->fd = fd;
	if (elffile__begin(fd, &in->elf))
		goto fail;
	if (!elffile__has_section(in->elf, ".debug_info") || !bounded(in->elf))
		goto fail;
	in->dw = dwarf_begin_elf(in->elf, DWARF_C_READ, NULL);
	if (!in->dw)
		goto fail;
	return in;
fail:
	inlines__free(in);
	if (!in)
		close(fd);
	return NULL;
}

/* The name of the function a DW_TAG_inlined_subroutine is an instance of. */
static const char *origin_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;

	/* Follows DW_AT_abstract_origin (and DW_AT_specification) to the name. */
	if (!dwarf_attr_integrate(die, DW_AT_name, &attr))
		return NULL;
	return dwarf_formstring(&attr);
}

/* Looks @vaddr up in libdw: the chain into @out, innermost first. */
static int lookup(struct inlines *in, uint64_t vaddr, const char **out)
{
	Dwarf_Die cu, *scopes = NULL, *outer = NULL;
	int n, k = 0, i;

	if (!dwarf_addrdie(in->dw, vaddr, &cu))
		return 0;
	n = dwarf_getscopes(&cu, vaddr, &scopes);
	for (i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			break;
	}
	/*
	 * Past the innermost inlined call, dwarf_getscopes() goes on with the
	 * scopes of its abstract definition; those it was inlined in are the
	 * DIE's own parents.
	 */
	if (i < n && dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
		n = dwarf_getscopes_die(&scopes[i], &outer);
		for (i = 0; i < n && k < INLINES_MAX_DEPTH; i++) {
			int tag = dwarf_tag(&outer[i]);
			const char *name;

			if (tag == DW_TAG_subprogram)
				break;
			if (tag != DW_TAG_inlined_subroutine)
				continue;	/* a lexical block */
			name = origin_name(&outer[i]);
			out[k++] = name ? name : "[unknown]";
		}
	}
	free(scopes);
	free(outer);
	return k;
}

static size_t slot_of(uint64_t vaddr, size_t cap)
{
	return (vaddr * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1);
}

static int grow(struct inlines *in)
{
	size_t cap = in->cap ? in->cap * 2 : 256;
	struct cached *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < in->cap; i++) {
		size_t k;

		if (!in->slots[i].used)
			continue;
		for (k = slot_of(in->slots[i].vaddr, cap); t[k].used; k = (k + 1) & (cap - 1))
			;
		t[k] = in->slots[i];
	}
	free(in->slots);
	in->slots = t;
	in->cap = cap;
	return 0;
}

/* Keeps @n names of @vaddr's chain in slot @c. */
static int keep(struct inlines *in, struct cached *c, uint64_t vaddr, const char **chain, int n)
{
	if (in->nnames + n > in->names_cap) {
		size_t cap = in->names_cap ? in->names_cap * 2 : 256;
		const char **t;

		while (cap < in->nnames + n)
			cap *= 2;
		t = realloc(in->names, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		in->names = t;
		in->names_cap = cap;
	}
	memcpy(in->names + in->nnames, chain, n * sizeof(*chain));
	*c = (struct cached){ vaddr, in->nnames, n, true };
	in->nnames += n;
	in->used++;
	return 0;
}

int inlines__find(struct inlines *in, uint64_t vaddr, const char **names, int max)
{
	const char *chain[INLINES_MAX_DEPTH];
	struct cached *c;
	int n;

	if ((in->used + 1) * 2 > in->cap && grow(in))
		return 0;
	for (c = &in->slots[slot_of(vaddr, in->cap)]; c->used; ) {
		if (c->vaddr == vaddr) {
			n = c->n < max ? c->n : max;
			memcpy(names, in->names + c->first, n * sizeof(*names));
			return n;
		}
		c = c + 1 == in->slots + in->cap ? in->slots : c + 1;
	}
	n = lookup(in, vaddr, chain);
	if (keep(in, c, vaddr, chain, n))
		return 0;
	n = n < max ? n : max;
	memcpy(names, chain, n * sizeof(*names));
	return n;
}

void inlines__free(struct inlines *in)
{
	if (!in)
		return;
	if (in->dw)
		dwarf_end(in->dw);
	if (in->elf)
		elf_end(in->elf);
	if (in->fd >= 0)
		close(in->fd);
	free(in->slots);
	free(in->names);
	free(in);
}
