// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The calls inlined at an address of a binary, from its DWARF through libdw, each address looked up once. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demangle.h"
#include "elffile.h"
#include "inlines.h"
#include "procfile.h"

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
	int alt_fd;		/* its .gnu_debugaltlink file, opened here; -1: none */
	Elf *alt_elf;
	Dwarf *alt_dw;
	struct cached *slots;	/* open addressing, by address */
	size_t cap, used;
	struct inline_name *names;	/* every cached chain, end to end */
	size_t nnames, names_cap;
	struct unit **units;	/* read so far, by offset */
	size_t nunits, units_cap;
	uint64_t section_bytes;	/* its debug sections', which libdw reads whole */
	uint64_t unit_bytes;	/* what its units' inlined calls take */
	bool demangle;		/* C++ and Rust names by their linkage names, demangled */
	char **demangled;	/* those names, made as chains first needed them */
	size_t ndemangled, demangled_cap;
};

/*
 * The debug sections libdw would inflate and hold whole, and inlined calls
 * never read: location lists, line tables, macros, name indexes (2.7 of
 * libc's 10 MiB). Marked SHT_NOBITS in our own copy of the section headers
 * (ELF_C_READ), which libdw skips.
 */
static void hide_unread(Elf *elf)
{
	static const char *const unread[] = {
		".debug_loc", ".debug_loclists", ".debug_line", ".debug_macro",
		".debug_macinfo", ".debug_pubnames", ".debug_pubtypes", ".debug_frame",
	};
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (size_t i = 0; i < sizeof(unread) / sizeof(unread[0]); i++) {
			if (strcmp(name, unread[i]))
				continue;
			sh.sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, &sh);
			break;
		}
	}
}

/*
 * Its .gnu_debugaltlink (dwz's file of the DWARF several debug files
 * share, as Debian's have), opened here and handed to libdw, which would
 * otherwise open it itself: by any path the file names, without a check
 * of what it is (a FIFO would hang the report), and mmap()ed (truncated
 * under it, a SIGBUS). Opened inside @rootfd (the process's root), a
 * regular file of bounded sections whose build-id is the one the link
 * gives. 0, or -ENOENT when it cannot be had.
 */
static int open_alt(struct inlines *in, int rootfd)
{
	unsigned char id[64];
	const char *name, *want;
	size_t namelen, idlen;
	GElf_Shdr sh;
	Elf_Data *d;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int len;

	if (elf_getshdrstrndx(in->elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(in->elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(in->elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, ".gnu_debugaltlink"))
			break;
	}
	if (!scn || sh.sh_size > 4096 || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return -ENOENT;
	/* A path, its terminating NUL, then the build-id. */
	name = d->d_buf;
	namelen = strnlen(name, d->d_size);
	if (namelen == d->d_size || !namelen)
		return -ENOENT;
	want = name + namelen + 1;
	idlen = d->d_size - namelen - 1;
	if (rootfd >= 0) {
		in->alt_fd = procfile__openat(rootfd, name, PROCFILE_FOLLOW, NULL);
	} else {
		int root = open("/", O_PATH | O_CLOEXEC);

		in->alt_fd = root < 0 ? -errno : procfile__openat(root, name, PROCFILE_FOLLOW, NULL);
		if (root >= 0)
			close(root);
	}
	if (in->alt_fd < 0 || elffile__begin(in->alt_fd, &in->alt_elf))
		return -ENOENT;
	hide_unread(in->alt_elf);
	if (!elffile__debug_bounded(in->alt_elf, INLINES_MAX_SECTION, &in->section_bytes))
		return -ENOENT;
	len = elffile__build_id(in->alt_elf, id, sizeof(id));
	if (len <= 0 || (size_t)len != idlen || memcmp(id, want, idlen))
		return -ENOENT;
	in->alt_dw = dwarf_begin_elf(in->alt_elf, DWARF_C_READ, NULL);
	if (!in->alt_dw)
		return -ENOENT;
	dwarf_setalt(in->dw, in->alt_dw);
	return 0;
}

/*
 * Split DWARF: a unit whose DIEs are in a .dwo file, which libdw would
 * look for and open itself, as the alt file. Not read. DWARF 5 says so in
 * each unit's header; before it, GNU's extension in its DIE's attributes,
 * which costs reading each unit's abbreviations (1.8 MiB for libc's).
 */
static bool has_split_units(Dwarf *dw)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die die;

	while (!dwarf_get_units(dw, cu, &next, &version, &type, &die, NULL)) {
		if (type == DW_UT_skeleton || type == DW_UT_split_compile ||
		    type == DW_UT_split_type ||
		    (version < 5 && dwarf_hasattr(&die, DW_AT_GNU_dwo_name)))
			return true;
		cu = next;
	}
	return false;
}

struct inlines *inlines__open(int fd, int rootfd, bool demangle)
{
	struct inlines *in = calloc(1, sizeof(*in));

	if (!in)
		goto fail;
	in->fd = fd;
	in->alt_fd = -1;
	in->demangle = demangle;
	if (elffile__begin(fd, &in->elf))
		goto fail;
	hide_unread(in->elf);
	if (!elffile__has_section(in->elf, ".debug_info") ||
	    !elffile__debug_bounded(in->elf, INLINES_MAX_SECTION, &in->section_bytes) ||
	    elffile__has_section(in->elf, ".debug_sup"))
		goto fail;
	in->dw = dwarf_begin_elf(in->elf, DWARF_C_READ, NULL);
	if (!in->dw)
		goto fail;
	if (elffile__has_section(in->elf, ".gnu_debugaltlink") && open_alt(in, rootfd))
		goto fail;
	if (has_split_units(in->dw))
		goto fail;
	return in;
fail:
	inlines__free(in);
	if (!in)
		close(fd);
	return NULL;
}

/*
 * The name, or linkage name (@attr), of the function a
 * DW_TAG_inlined_subroutine is an instance of: following
 * DW_AT_abstract_origin (and DW_AT_specification) to it.
 */
static const char *origin_name(Dwarf_Die *die, int attr)
{
	Dwarf_Attribute a;

	if (!dwarf_attr_integrate(die, attr, &a))
		return NULL;
	return dwarf_formstring(&a);
}

/*
 * A compilation unit's inlined calls, read in one walk of its DIEs the
 * first time an address falls in it (libdw's dwarf_getscopes() walks the
 * unit for every address: 40 us each). Each call is a DIE with the call it
 * is inlined in as parent; each range of its code a piece, sorted by start.
 */
struct inl_die {
	const char *name;
	const char *linkage;	/* C++'s and Rust's mangled name, if any */
	bool demangled;		/* @name is @linkage demangled, or that was tried */
	int32_t parent;		/* the enclosing inlined call, -1 if none */
	uint32_t first, n;	/* its pieces, in struct unit's by_die */
};

struct piece {
	uint64_t lo, hi;
	uint32_t die;
	uint32_t depth;
};

struct unit {
	Dwarf_Off off;		/* the unit's DIE offset */
	struct inl_die *dies;
	size_t ndies;
	struct piece *pieces;	/* by start, then outermost first */
	struct piece *by_die;	/* the same, grouped by DIE */
	size_t npieces;
};

/* Pieces of code of a unit's inlined calls kept, at most (libLLVM's largest unit has 300,000). */
#define INLINES_MAX_PIECES (4u << 20)

/* DIE nesting walked, at most: deeper is no code a compiler emits. */
#define WALK_DEPTH 64

/* Could DIEs of this kind hold code, or inlined calls? */
static bool holds_code(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return true;
	}
	return false;
}

static int add_die(struct unit *u, size_t *cap, Dwarf_Die *die, int32_t parent, uint32_t depth,
		   size_t *pcap)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	const char *name = origin_name(die, DW_AT_name);
	const char *linkage = origin_name(die, DW_AT_linkage_name);

	if (u->ndies == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct inl_die *t = realloc(u->dies, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		u->dies = t;
		*cap = n;
	}
	u->dies[u->ndies] = (struct inl_die){
		.name = name ? name : "[unknown]",
		.linkage = linkage && demangle__candidate(linkage) ? linkage : NULL,
		.parent = parent,
		.first = u->npieces,
	};
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		/*
		 * Range lists can be shared: 100,000 calls pointing at one list
		 * of 100,000 ranges made 1e10 pieces. A unit keeps so many.
		 */
		if (u->npieces >= INLINES_MAX_PIECES)
			return -E2BIG;
		if (u->npieces == *pcap) {
			size_t n = *pcap ? *pcap * 2 : 64;
			struct piece *t = realloc(u->by_die, n * sizeof(*t));

			if (!t)
				return -ENOMEM;
			u->by_die = t;
			*pcap = n;
		}
		u->by_die[u->npieces++] = (struct piece){ lo, hi, u->ndies, depth };
		u->dies[u->ndies].n++;
	}
	u->ndies++;
	return 0;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* Walks @cu's DIEs once for its inlined calls. */
static struct unit *unit_read(Dwarf_Die *cu)
{
	struct unit *u = calloc(1, sizeof(*u));
	Dwarf_Die stack[WALK_DEPTH];
	int32_t parent[WALK_DEPTH];
	size_t cap = 0, pcap = 0;
	int depth = 0;

	if (!u)
		return NULL;
	u->off = dwarf_dieoffset(cu);
	if (dwarf_child(cu, &stack[0]) != 0)
		return u;
	parent[0] = -1;
	for (;;) {
		Dwarf_Die *d = &stack[depth];
		int tag = dwarf_tag(d);
		int32_t inner = parent[depth];

		if (tag == DW_TAG_inlined_subroutine) {
			inner = u->ndies;
			if (add_die(u, &cap, d, parent[depth], depth, &pcap))
				break;
		} else if (tag == DW_TAG_subprogram) {
			inner = -1;
		}
		if (holds_code(tag) && depth + 1 < WALK_DEPTH && dwarf_haschildren(d) > 0 &&
		    dwarf_child(d, &stack[depth + 1]) == 0) {
			parent[++depth] = inner;
			continue;
		}
		while (depth >= 0) {
			Dwarf_Die next;

			if (dwarf_siblingof(&stack[depth], &next) == 0) {
				stack[depth] = next;
				break;
			}
			depth--;
		}
		if (depth < 0)
			break;
	}
	if (!u->npieces)
		return u;
	u->pieces = malloc(u->npieces * sizeof(*u->pieces));
	if (!u->pieces) {
		u->npieces = 0;
		return u;
	}
	memcpy(u->pieces, u->by_die, u->npieces * sizeof(*u->pieces));
	qsort(u->pieces, u->npieces, sizeof(*u->pieces), cmp_piece);
	return u;
}

static void unit_free(struct unit *u)
{
	free(u->dies);
	free(u->pieces);
	free(u->by_die);
	free(u);
}

static bool die_holds(const struct unit *u, uint32_t die, uint64_t vaddr)
{
	const struct inl_die *d = &u->dies[die];

	for (uint32_t i = 0; i < d->n; i++)
		if (vaddr >= u->by_die[d->first + i].lo && vaddr < u->by_die[d->first + i].hi)
			return true;
	return false;
}

/*
 * The chain at @vaddr: the last piece starting at or before it is of the
 * innermost call holding it or of one inlined in that (ranges nest), so
 * the chain is among that piece's call and its parents.
 */
/*
 * DIE @d's name as its language writes it: "cheese::Affineur::ripen(int)",
 * as the function is named where it is not inlined, rather than DW_AT_name's
 * "ripen". Its linkage name demangled the first time a chain needs it, and
 * kept; DW_AT_name where that fails.
 */
static struct inline_name die_name(struct inlines *in, struct inl_die *d)
{
	struct inline_name out = { d->name, d->linkage };
	char *name;

	if (!in->demangle || !d->linkage || d->demangled)
		return out;
	d->demangled = true;
	name = demangle(d->linkage);
	if (!name)
		return out;
	if (in->ndemangled == in->demangled_cap) {
		size_t cap = in->demangled_cap ? in->demangled_cap * 2 : 64;
		char **t = realloc(in->demangled, cap * sizeof(*t));

		if (!t) {
			free(name);
			return out;
		}
		in->demangled = t;
		in->demangled_cap = cap;
	}
	in->demangled[in->ndemangled++] = name;
	in->unit_bytes += strlen(name) + 1 + sizeof(name);
	d->name = out.name = name;
	return out;
}

static int unit_find(struct inlines *in, const struct unit *u, uint64_t vaddr,
		     struct inline_name *out)
{
	size_t lo = 0, hi = u->npieces;
	int k = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->pieces[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	/* Parents come before their children: a bad file cannot make this loop. */
	for (int32_t d = u->pieces[lo - 1].die; d >= 0 && k < INLINES_MAX_DEPTH;
	     d = u->dies[d].parent < d ? u->dies[d].parent : -1)
		if (die_holds(u, d, vaddr))
			out[k++] = die_name(in, &u->dies[d]);
	return k;
}

/* The unit at DIE offset @off, read if it was not: NULL without memory. */
static struct unit *unit_get(struct inlines *in, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	size_t lo = 0, hi = in->nunits;
	struct unit *u;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->units[mid]->off == off)
			return in->units[mid];
		if (in->units[mid]->off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (in->nunits == in->units_cap) {
		size_t cap = in->units_cap ? in->units_cap * 2 : 16;
		struct unit **t = realloc(in->units, cap * sizeof(*t));

		if (!t)
			return NULL;
		in->units = t;
		in->units_cap = cap;
	}
	u = unit_read(cu);
	if (!u)
		return NULL;
	in->unit_bytes += sizeof(*u) + u->ndies * sizeof(*u->dies) +
			  2 * u->npieces * sizeof(*u->pieces);
	memmove(in->units + lo + 1, in->units + lo, (in->nunits - lo) * sizeof(*in->units));
	in->units[lo] = u;
	in->nunits++;
	return u;
}

/* Looks @vaddr up: the chain into @out, innermost first. */
static int lookup(struct inlines *in, uint64_t vaddr, struct inline_name *out)
{
	struct unit *u;
	Dwarf_Die cu;

	if (!dwarf_addrdie(in->dw, vaddr, &cu) || !(u = unit_get(in, &cu)))
		return 0;
	return unit_find(in, u, vaddr, out);
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
static int keep(struct inlines *in, struct cached *c, uint64_t vaddr,
		const struct inline_name *chain, int n)
{
	if (n && in->nnames + n > in->names_cap) {
		size_t cap = in->names_cap ? in->names_cap * 2 : 256;
		struct inline_name *t;

		while (cap < in->nnames + n)
			cap *= 2;
		t = realloc(in->names, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		in->names = t;
		in->names_cap = cap;
	}
	if (n)
		memcpy(in->names + in->nnames, chain, n * sizeof(*chain));
	*c = (struct cached){ vaddr, in->nnames, n, true };
	in->nnames += n;
	in->used++;
	return 0;
}

int inlines__find(struct inlines *in, uint64_t vaddr, struct inline_name *names, int max)
{
	struct inline_name chain[INLINES_MAX_DEPTH];
	struct cached *c;
	int n;

	if ((in->used + 1) * 2 > in->cap && grow(in))
		return 0;
	for (c = &in->slots[slot_of(vaddr, in->cap)]; c->used; ) {
		if (c->vaddr == vaddr) {
			n = c->n < max ? c->n : max;
			if (n)
				memcpy(names, in->names + c->first, n * sizeof(*names));
			return n;
		}
		c = c + 1 == in->slots + in->cap ? in->slots : c + 1;
	}
	n = lookup(in, vaddr, chain);
	if (keep(in, c, vaddr, chain, n))
		return 0;
	n = n < max ? n : max;
	if (n)
		memcpy(names, chain, n * sizeof(*names));
	return n;
}

uint64_t inlines__bytes(const struct inlines *in)
{
	return in ? in->section_bytes + in->unit_bytes + in->cap * sizeof(*in->slots) +
		    in->names_cap * sizeof(*in->names) : 0;
}

void inlines__free(struct inlines *in)
{
	if (!in)
		return;
	if (in->dw)
		dwarf_end(in->dw);
	if (in->alt_dw)
		dwarf_end(in->alt_dw);
	if (in->alt_elf)
		elf_end(in->alt_elf);
	if (in->alt_fd >= 0)
		close(in->alt_fd);
	if (in->elf)
		elf_end(in->elf);
	if (in->fd >= 0)
		close(in->fd);
	for (size_t i = 0; i < in->nunits; i++)
		unit_free(in->units[i]);
	free(in->units);
	free(in->slots);
	free(in->names);
	for (size_t i = 0; i < in->ndemangled; i++)
		free(in->demangled[i]);
	free(in->demangled);
	free(in);
}
