// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading Go's pclntab (runtime/symtab.go's layouts of Go 1.16 to today), every offset bounds-checked. */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elffile.h"
#include "gopclntab.h"

/* pcHeader.magic, one per layout of the table. */
#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u
#define MAGIC_12 0xfffffffbu	/* Go 1.2 to 1.15 */

/* runtime's _PCDATA_InlTreeIndex and _FUNCDATA_InlTree. */
#define PCDATA_INLINE_INDEX 2
#define FUNCDATA_INLINE_TREE 3

/* Calls inlined into one another at one address, followed at most: a loop in a hostile tree ends. */
#define MAX_INLINE_DEPTH 64

enum layout { L116, L118, L120 };

/* A loadable segment's file bytes, copied. */
struct region {
	uint64_t vaddr;
	size_t len;
	uint8_t *buf;
};

struct gopclntab {
	enum layout layout;
	unsigned int ptrsize, minlc;
	struct region ro;		/* the segment the table is in */
	struct region data;		/* the one go:func.* is in, when another */
	const uint8_t *tab;		/* the table, inside @ro */
	size_t tablen;
	uint64_t tabaddr;
	uint64_t nfunc, text;
	/* Offsets in the table of its parts, from its header. */
	uint64_t funcnames, cus, files, pcs, funcs;
	uint64_t gofunc;		/* go:func.*, where 1.18+ inline trees are; 0 unknown */
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t rdptr(const struct gopclntab *t, const uint8_t *p)
{
	uint64_t v;

	if (t->ptrsize == 4)
		return rd32(p);
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* Is [off, off + n) inside the table? */
static bool in_tab(const struct gopclntab *t, uint64_t off, uint64_t n)
{
	return off <= t->tablen && n <= t->tablen - off;
}

/* The NUL-terminated string at table offset @off, or NULL. */
static const char *tab_str(const struct gopclntab *t, uint64_t off)
{
	if (off >= t->tablen || !memchr(t->tab + off, 0, t->tablen - off))
		return NULL;
	return (const char *)t->tab + off;
}

/* @n bytes at virtual address @addr, from whichever region holds them; NULL if none. */
static const uint8_t *at_vaddr(const struct gopclntab *t, uint64_t addr, size_t n)
{
	const struct region *r[] = { &t->ro, &t->data };

	for (size_t i = 0; i < 2; i++)
		if (r[i]->buf && addr >= r[i]->vaddr && addr - r[i]->vaddr <= r[i]->len &&
		    n <= r[i]->len - (addr - r[i]->vaddr))
			return r[i]->buf + (addr - r[i]->vaddr);
	return NULL;
}

/* Reads the file bytes of segment @g, at most GOPCLNTAB_MAX_BYTES. */
static int region_read(int fd, const struct elf_segment *g, struct region *r)
{
	size_t done = 0;

	if (g->filesz > GOPCLNTAB_MAX_BYTES)
		return -EFBIG;
	r->buf = malloc(g->filesz ? g->filesz : 1);
	if (!r->buf)
		return -ENOMEM;
	while (done < g->filesz) {
		ssize_t n = pread(fd, r->buf + done, g->filesz - done, g->offset + done);

		if (n <= 0) {
			free(r->buf);
			r->buf = NULL;
			return n < 0 ? -errno : -EINVAL;	/* truncated under us */
		}
		done += n;
	}
	r->vaddr = g->vaddr;
	r->len = g->filesz;
	return 0;
}

/* Entry @i of the function table (0 to nfunc; the last is the end of the text): its address and _func offset. */
static bool functab(const struct gopclntab *t, uint64_t i, uint64_t *entry, uint64_t *funcoff)
{
	if (t->layout == L116) {
		uint64_t off = t->funcs + i * 2 * t->ptrsize;

		if (!in_tab(t, off, 2 * t->ptrsize))
			return false;
		*entry = rdptr(t, t->tab + off);
		*funcoff = rdptr(t, t->tab + off + t->ptrsize);
	} else {
		uint64_t off = t->funcs + i * 8;

		if (!in_tab(t, off, 8))
			return false;
		*entry = t->text + rd32(t->tab + off);
		*funcoff = rd32(t->tab + off + 4);
	}
	return true;
}

/* A function's _func, the fields of it read here. */
struct func {
	uint64_t entry, end;
	int32_t nameoff, start_line;
	uint32_t pcsp, pcfile, pcln, cu;
	uint8_t flag;
	uint32_t inline_index;		/* pctab offset of its inline index table; 0 none */
	uint64_t inline_tree;		/* virtual address of its inline tree; 0 none */
};

/*
 * _func: the entry (a pointer before 1.18, an offset since), then nameoff,
 * args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset, startLine
 * (1.20+), funcID, flag and nfuncdata; then pcdata[npcdata] (uint32) and
 * funcdata[nfuncdata] (pointers aligned to their size before 1.18, uint32
 * offsets from go:func.* since).
 */
static bool func_read(const struct gopclntab *t, uint64_t i, struct func *f)
{
	uint64_t funcoff, next, off, base, size, pcdata, funcdata;
	uint32_t npcdata, nfuncdata;
	const uint8_t *p;

	if (!functab(t, i, &f->entry, &funcoff) || !functab(t, i + 1, &f->end, &next))
		return false;
	base = t->layout == L116 ? t->ptrsize : 4;
	size = base + (t->layout == L120 ? 40 : 36);
	off = t->funcs + funcoff;
	if (funcoff > t->tablen || !in_tab(t, off, size))
		return false;
	p = t->tab + off + base;
	f->nameoff = (int32_t)rd32(p);
	f->pcsp = rd32(p + 12);
	f->pcfile = rd32(p + 16);
	f->pcln = rd32(p + 20);
	npcdata = rd32(p + 24);
	f->cu = rd32(p + 28);
	f->start_line = t->layout == L120 ? (int32_t)rd32(p + 32) : 0;
	nfuncdata = p[size - base - 1];
	f->flag = p[size - base - 3];	/* 1.16's padding, zero */
	pcdata = off + size;
	f->inline_index = 0;
	f->inline_tree = 0;
	if (npcdata > PCDATA_INLINE_INDEX && in_tab(t, pcdata, (uint64_t)npcdata * 4))
		f->inline_index = rd32(t->tab + pcdata + 4 * PCDATA_INLINE_INDEX);
	if (nfuncdata <= FUNCDATA_INLINE_TREE || npcdata > t->tablen)
		return true;
	funcdata = pcdata + (uint64_t)npcdata * 4;
	if (t->layout == L116) {
		/* Aligned in memory, where the table is as aligned as a pointer. */
		if (t->ptrsize == 8 && ((t->tabaddr + funcdata) & 4))
			funcdata += 4;
		off = funcdata + FUNCDATA_INLINE_TREE * t->ptrsize;
		if (in_tab(t, off, t->ptrsize))
			f->inline_tree = rdptr(t, t->tab + off);
	} else {
		off = funcdata + FUNCDATA_INLINE_TREE * 4;
		if (t->gofunc && in_tab(t, off, 4) && rd32(t->tab + off) != UINT32_MAX)
			f->inline_tree = t->gofunc + rd32(t->tab + off);
	}
	return true;
}

static bool uvarint(const struct gopclntab *t, uint64_t *off, uint32_t *v)
{
	uint32_t x = 0;

	for (unsigned int shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*off >= t->tablen)
			return false;
		b = t->tab[(*off)++];
		x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* @val plus the zig-zag delta @uv, wrapping as the runtime's int32 does rather than overflow. */
static int32_t add_delta(int32_t val, uint32_t uv)
{
	uint32_t d = (uv & 1) ? ~(uv >> 1) : uv >> 1;

	return (int32_t)((uint32_t)val + d);
}

/*
 * The value at @pc of the table at pctab offset @table, for a function at
 * @entry: pairs of (value delta, zig-zag; pc delta, in units of minLC),
 * from value -1 at the entry. -1 when it has none.
 */
static int32_t pcvalue(const struct gopclntab *t, uint32_t table, uint64_t entry, uint64_t pc)
{
	uint64_t off = t->pcs + table, at = entry;
	int32_t val = -1;

	if (!table || t->pcs + table > t->tablen)
		return -1;
	for (bool first = true;; first = false) {
		uint32_t uv, dpc;

		if (!uvarint(t, &off, &uv) || (!uv && !first))
			return -1;
		val = add_delta(val, uv);
		/*
		 * A step that covers no code is none Go's linker writes: it
		 * would walk a forged table to its end at every lookup.
		 */
		if (!uvarint(t, &off, &dpc) || !dpc)
			return -1;
		at += (uint64_t)dpc * t->minlc;
		if (pc < at)
			return val;
	}
}

/* The file at @pc of function @f: a file number of its compilation unit, through cutab. */
static const char *file_at(const struct gopclntab *t, const struct func *f, uint64_t pc)
{
	int32_t n = pcvalue(t, f->pcfile, f->entry, pc);
	uint64_t off = t->cus + ((uint64_t)f->cu + (uint32_t)n) * 4;

	if (n < 0 || !in_tab(t, off, 4) || rd32(t->tab + off) == UINT32_MAX)
		return NULL;
	return tab_str(t, t->files + rd32(t->tab + off));
}

/* The last function whose entry is at or below @pc, if @pc is before its end. */
static bool func_find(const struct gopclntab *t, uint64_t pc, uint64_t *idx)
{
	uint64_t lo = 0, hi = t->nfunc, entry, funcoff;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (!functab(t, mid, &entry, &funcoff))
			return false;
		if (pc < entry)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!lo || !functab(t, lo, &entry, &funcoff) || pc >= entry)
		return false;
	*idx = lo - 1;
	return true;
}

int gopclntab__frames(const struct gopclntab *t, uint64_t pc, struct goframe *out, int max)
{
	/* inlinedCall: 20 bytes before 1.20 (name at 12, parentPc at 16), 16 since (4, 8; startLine 12). */
	const size_t size = t->layout == L120 ? 16 : 20;
	const unsigned int name_at = t->layout == L120 ? 4 : 12, parent_at = name_at + 4;
	uint64_t idx, at = pc;
	struct func f;
	int n = 0;

	if (max < 1 || !func_find(t, pc, &idx) || !func_read(t, idx, &f))
		return 0;
	for (int depth = 0; n < max - 1 && depth < MAX_INLINE_DEPTH && f.inline_tree; depth++) {
		int32_t ix = pcvalue(t, f.inline_index, f.entry, at);
		const uint8_t *call;
		uint32_t parent;

		if (ix < 0 || !(call = at_vaddr(t, f.inline_tree + (uint64_t)ix * size, size)))
			break;
		out[n] = (struct goframe){
			.name = tab_str(t, t->funcnames + rd32(call + name_at)),
			.file = file_at(t, &f, at),
			.line = pcvalue(t, f.pcln, f.entry, at),
			.start_line = t->layout == L120 ? (int32_t)rd32(call + 12) : 0,
		};
		if (!out[n].name)
			break;
		n++;
		parent = rd32(call + parent_at);
		if (parent >= f.end - f.entry)
			break;
		at = f.entry + parent;
	}
	out[n] = (struct goframe){
		.name = tab_str(t, t->funcnames + (uint32_t)f.nameoff),
		.file = file_at(t, &f, at),
		.line = pcvalue(t, f.pcln, f.entry, at),
		.start_line = f.start_line,
	};
	if (!out[n].name)
		return 0;
	for (int i = 0; i <= n; i++)
		if (out[i].line < 0)
			out[i].line = 0;
	return n + 1;
}

/* Go 1.16 has no flags: the runtime's functions that have them since. */
static unsigned int flags_by_name(const char *name)
{
	static const char *const top[] = { "runtime.goexit", "runtime.mstart", "runtime.rt0_go" };
	static const char *const spwrite[] = { "runtime.systemstack", "runtime.mcall",
					       "runtime.morestack", "runtime.gogo",
					       "runtime.asmcgocall" };

	for (size_t i = 0; i < sizeof(top) / sizeof(*top); i++)
		if (!strcmp(name, top[i]))
			return GOFUNC_TOPFRAME;
	for (size_t i = 0; i < sizeof(spwrite) / sizeof(*spwrite); i++)
		if (!strcmp(name, spwrite[i]))
			return GOFUNC_SPWRITE;
	return 0;
}

size_t gopclntab__count(const struct gopclntab *t)
{
	return t->nfunc;
}

int gopclntab__func(const struct gopclntab *t, size_t i, struct gofunc *f)
{
	struct func fn;

	if (i >= t->nfunc || !func_read(t, i, &fn) || fn.end <= fn.entry)
		return -EINVAL;
	f->name = tab_str(t, t->funcnames + (uint32_t)fn.nameoff);
	f->entry = fn.entry;
	f->end = fn.end;
	if (!f->name)
		return -EINVAL;
	f->flags = t->layout == L116 ? flags_by_name(f->name) :
		   fn.flag & (GOFUNC_TOPFRAME | GOFUNC_SPWRITE);
	return 0;
}

int gopclntab__sp(const struct gopclntab *t, size_t i,
		  int (*fn)(void *ctx, uint64_t pc, int32_t sp), void *ctx)
{
	uint64_t off, at;
	int32_t val = -1;
	struct func f;

	if (i >= t->nfunc || !func_read(t, i, &f) || !f.pcsp || t->pcs + f.pcsp > t->tablen)
		return -EINVAL;
	off = t->pcs + f.pcsp;
	at = f.entry;
	for (bool first = true; at < f.end; first = false) {
		uint32_t uv, dpc;
		int err;

		if (!uvarint(t, &off, &uv) || (!uv && !first) || !uvarint(t, &off, &dpc) || !dpc)
			return first ? -EINVAL : 0;
		val = add_delta(val, uv);
		err = fn(ctx, at, val);
		if (err)
			return err;
		at += (uint64_t)dpc * t->minlc;
	}
	return 0;
}

const char *gopclntab__layout(const struct gopclntab *t)
{
	return t->layout == L116 ? "1.16-1.17" : t->layout == L118 ? "1.18-1.19" : "1.20+";
}

/*
 * pcHeader: magic, two zero bytes, minLC, ptrSize, nfunc, nfiles,
 * textStart (1.18+), then the offsets of funcnametab, cutab, filetab,
 * pctab and the function table, all from the header.
 */
static int header(struct gopclntab *t, const uint8_t *p, size_t len, const char **why)
{
	uint32_t magic;
	unsigned int words;
	uint64_t w[8];

	if (len < 8)
		return -EINVAL;
	magic = rd32(p);
	if (p[4] || p[5] || (p[6] != 1 && p[6] != 2 && p[6] != 4) || (p[7] != 4 && p[7] != 8))
		return -EINVAL;
	if (magic == MAGIC_12) {
		*why = "Go 1.15 or older: its pclntab layout is not read";
		return -ENOTSUP;
	}
	if (magic != MAGIC_116 && magic != MAGIC_118 && magic != MAGIC_120) {
		*why = "unknown pclntab layout (a Go newer than this tool?)";
		return -ENOTSUP;
	}
	t->layout = magic == MAGIC_116 ? L116 : magic == MAGIC_118 ? L118 : L120;
	t->minlc = p[6];
	t->ptrsize = p[7];
	words = t->layout == L116 ? 7 : 8;
	if (len < 8 + words * t->ptrsize)
		return -EINVAL;
	for (unsigned int i = 0; i < words; i++)
		w[i] = rdptr(t, p + 8 + i * t->ptrsize);
	t->tab = p;
	t->tablen = len;
	t->nfunc = w[0];
	t->text = t->layout == L116 ? 0 : w[2];
	t->funcnames = w[words - 5];
	t->cus = w[words - 4];
	t->files = w[words - 3];
	t->pcs = w[words - 2];
	t->funcs = w[words - 1];
	if (!t->nfunc || t->nfunc > len || t->funcnames >= len || t->cus >= len ||
	    t->files >= len || t->pcs >= len || t->funcs >= len)
		return -EINVAL;
	return 0;
}

/* The function table must be sorted and in executable code: a position-independent binary's is not. */
static int check(const struct gopclntab *t, const struct elf_segment *segs, size_t nsegs,
		 const char **why)
{
	uint64_t first, last, off;
	bool in_text = false;

	if (!functab(t, 0, &first, &off) || !functab(t, t->nfunc, &last, &off) || last < first)
		return -EINVAL;
	for (size_t i = 0; i < nsegs; i++)
		if (segs[i].exec && first >= segs[i].vaddr && last - segs[i].vaddr <= segs[i].filesz)
			in_text = true;
	if (!in_text) {
		*why = "its functions are not at their link-time addresses (position-independent?)";
		return -ENOTSUP;
	}
	return 0;
}

/*
 * go:func.* (moduledata.gofunc), the base of 1.18+ inline trees, has no
 * symbol in a stripped binary. moduledata, in the writable data, begins
 * with the table's address and the slice of its function names; gofunc is
 * its 38th word (40th since 1.20 added the coverage counters).
 */
static void find_gofunc(struct gopclntab *t, int fd, const struct elf_segment *segs, size_t nsegs)
{
	const unsigned int word = t->layout == L120 ? 40 : 38, ps = t->ptrsize;
	uint64_t read = 0;

	for (size_t i = 0; i < nsegs && !t->gofunc; i++) {
		struct region r;

		/* What a forged file's many segments ask to be read: GOPCLNTAB_MAX_BYTES in all. */
		if (segs[i].exec || segs[i].vaddr == t->ro.vaddr ||
		    read + segs[i].filesz > GOPCLNTAB_MAX_BYTES || region_read(fd, &segs[i], &r))
			continue;
		read += r.len;
		for (size_t off = 0; off + (word + 1) * ps <= r.len; off += ps) {
			if (rdptr(t, r.buf + off) != t->tabaddr ||
			    rdptr(t, r.buf + off + ps) != t->tabaddr + t->funcnames)
				continue;
			t->gofunc = rdptr(t, r.buf + off + word * ps);
			break;
		}
		free(r.buf);
	}
	if (t->gofunc && !at_vaddr(t, t->gofunc, 1)) {
		/* Not in the table's segment: keep the one it is in. */
		for (size_t i = 0; i < nsegs; i++)
			if (!segs[i].exec && t->gofunc >= segs[i].vaddr &&
			    t->gofunc - segs[i].vaddr < segs[i].filesz) {
				if (region_read(fd, &segs[i], &t->data))
					t->gofunc = 0;
				return;
			}
		t->gofunc = 0;
	}
}

/* Where the section headers name it, or else the first read-only place a valid header is. */
static int locate(struct gopclntab *t, int fd, Elf *elf, const struct elf_segment *segs,
		  size_t nsegs, const char **why)
{
	uint64_t addr = 0, size = 0;
	bool named = !elffile__section(elf, ".gopclntab", &addr, &size);
	size_t nsections = 0, tried = 0;
	int err = -ENOENT;

	/* Only binaries Go built are searched; one without section headers might be. */
	if (!named && !elf_getshdrnum(elf, &nsections) && nsections > 1 &&
	    !elffile__has_section(elf, ".go.buildinfo") &&
	    !elffile__has_section(elf, ".note.go.buildid"))
		return -ENOENT;

	for (size_t i = 0; i < nsegs; i++) {
		const struct elf_segment *g = &segs[i];

		/*
		 * A named table may share the code's segment (GNU ld links an
		 * arm64 cgo binary in one read-and-execute segment); a search
		 * looks in read-only data only.
		 */
		if ((g->exec && !named) || (named && (addr < g->vaddr || addr - g->vaddr >= g->filesz)))
			continue;
		err = region_read(fd, g, &t->ro);
		if (err)
			return err;
		if (named) {
			size_t at = addr - g->vaddr;

			if (size > t->ro.len - at)
				size = t->ro.len - at;
			t->tabaddr = addr;
			return header(t, t->ro.buf + at, size, why);
		}
		for (size_t at = 0; at + 8 <= t->ro.len && tried < GOPCLNTAB_MAX_CANDIDATES;
		     at += 8) {
			if (rd32(t->ro.buf + at) >> 4 != 0x0fffffff || t->ro.buf[at + 4] ||
			    t->ro.buf[at + 5])
				continue;
			/* A real binary has one such header; a forged one, one at every word. */
			tried++;
			t->tabaddr = g->vaddr + at;
			err = header(t, t->ro.buf + at, t->ro.len - at, why);
			if (err == -ENOTSUP || (!err && !check(t, segs, nsegs, why)))
				return err;
		}
		free(t->ro.buf);
		t->ro.buf = NULL;
		err = -ENOENT;
	}
	return err;
}

int gopclntab__open(int fd, Elf *elf, struct gopclntab **out, const char **why)
{
	struct gopclntab *t = calloc(1, sizeof(*t));
	struct elf_segment *segs = NULL;
	size_t nsegs = 0;
	int err;

	*why = NULL;
	if (!t)
		return -ENOMEM;
	err = elffile__segments(elf, &segs, &nsegs);
	/* Go's linker writes four loadable segments; checks go through each, per candidate. */
	if (!err && nsegs > GOPCLNTAB_MAX_SEGMENTS) {
		*why = "more loadable segments than a Go binary has";
		err = -EINVAL;
	}
	if (!err)
		err = locate(t, fd, elf, segs, nsegs, why);
	if (!err)
		err = check(t, segs, nsegs, why);
	if (!err && t->layout != L116)
		find_gofunc(t, fd, segs, nsegs);
	free(segs);
	if (err) {
		gopclntab__free(t);
		return err;
	}
	*out = t;
	return 0;
}

uint64_t gopclntab__bytes(const struct gopclntab *t)
{
	return t ? sizeof(*t) + t->ro.len + t->data.len : 0;
}

void gopclntab__free(struct gopclntab *t)
{
	if (!t)
		return;
	free(t->ro.buf);
	free(t->data.buf);
	free(t);
}
