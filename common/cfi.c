// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind rows from .eh_frame or .debug_frame: libdw computes each row, we keep what the BPF side follows. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "elffile.h"
#include "gopclntab.h"

/* The DWARF registers the unwinder follows, and where a return address is by default. */
struct arch {
	int sp, fp, ra;
	bool ra_in_register;	/* arm64: the link register holds it until saved */
};

static const struct arch x86_64 = { .sp = 7, .fp = 6, .ra = 16 };
static const struct arch aarch64 = { .sp = 31, .fp = 29, .ra = 30, .ra_in_register = true };

static const struct arch *arch_of(Elf *elf)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	/* The rows are read in this machine's byte order. */
	if (eh.e_ident[EI_DATA] != (__BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB))
		return NULL;
	if (eh.e_machine == EM_X86_64)
		return &x86_64;
	if (eh.e_machine == EM_AARCH64)
		return &aarch64;
	return NULL;
}

/* Where a function's description starts, and where the next one does. */
struct fde {
	uint64_t start, end;	/* end: 0 where only the next start bounds it */
};

/*
 * Section @name, if it and the section names' table are of a size to read
 * whole (libelf's elf_getdata() and elf_strptr() read them so): another
 * user's file may claim any size, and be sparse.
 */
static Elf_Scn *section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL, *names;
	size_t shstrndx;
	GElf_Shdr nsh;

	if (elf_getshdrstrndx(elf, &shstrndx) || !(names = elf_getscn(elf, shstrndx)) ||
	    !gelf_getshdr(names, &nsh) || nsh.sh_size > CFI_MAX_SECTION)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && sh->sh_type != SHT_NOBITS &&
		    (n = elf_strptr(elf, shstrndx, sh->sh_name)) && !strcmp(n, name))
			return sh->sh_size <= CFI_MAX_SECTION ? scn : NULL;
	}
	return NULL;
}

/*
 * .eh_frame_hdr's search table: the linker's sorted index of the FDEs in
 * .eh_frame. Only its usual encoding (a 4-byte count, pairs of 4-byte
 * offsets from the header) is read; anything else is -ENOTSUP.
 */
static int hdr_fdes(Elf *elf, struct fde **out, size_t *nout)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section(elf, ".eh_frame_hdr", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	const uint8_t *p;
	uint32_t count;
	size_t ptr_size;
	struct fde *f;

	if (!d || !d->d_buf || d->d_size < 8)
		return -ENOENT;
	p = d->d_buf;
	/* version, eh_frame_ptr encoding, fde_count encoding, table encoding */
	if (p[0] != 1 || p[2] != DW_EH_PE_udata4 || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -ENOTSUP;
	switch (p[1] & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		ptr_size = 4;
		break;
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		ptr_size = 8;
		break;
	default:
		return -ENOTSUP;
	}
	if (d->d_size < 4 + ptr_size + 4)
		return -EINVAL;
	memcpy(&count, p + 4 + ptr_size, 4);
	if (count > (d->d_size - 8 - ptr_size) / 8)
		return -EINVAL;
	f = calloc(count ? count : 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		int32_t loc;

		memcpy(&loc, p + 8 + ptr_size + 8 * (size_t)i, 4);
		f[i].start = sh.sh_addr + (int64_t)loc;
	}
	*out = f;
	*nout = count;
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The size of a pointer in encoding @enc (DW_EH_PE_*), 0 for ones not read here. */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	}
	return 0;
}

/* How a CIE's FDEs encode their address: its 'R' augmentation (absolute if none). */
static int cie_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const uint8_t *d = cie->augmentation_data, *end = d + cie->augmentation_data_size;

	*enc = DW_EH_PE_absptr;
	if (cie->augmentation[0] != 'z')
		return cie->augmentation[0] ? -ENOTSUP : 0;
	for (const char *a = cie->augmentation + 1; *a; a++) {
		size_t size;

		switch (*a) {
		case 'R':
			if (d >= end)
				return -EINVAL;
			*enc = *d++;
			break;
		case 'L':
			d++;	/* the LSDA's encoding; the pointer is in the FDE */
			break;
		case 'P':
			if (d >= end || !(size = enc_size(*d)))
				return -ENOTSUP;
			d += 1 + size;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return -ENOTSUP;
		}
		if (d > end)
			return -EINVAL;
	}
	return 0;
}

/* A pointer of encoding @enc at @p (which sits at address @at): absolute or pc-relative. */
static int read_ptr(const uint8_t *p, const uint8_t *end, uint8_t enc, uint64_t at, uint64_t *v)
{
	size_t size = enc_size(enc);
	int64_t x = 0;

	if (!size || p + size > end || ((enc & 0x70) != DW_EH_PE_pcrel && (enc & 0x70) != 0))
		return -ENOTSUP;
	switch (enc & 0x0f) {
	case DW_EH_PE_sdata2: { int16_t t; memcpy(&t, p, 2); x = t; break; }
	case DW_EH_PE_udata2: { uint16_t t; memcpy(&t, p, 2); x = t; break; }
	case DW_EH_PE_sdata4: { int32_t t; memcpy(&t, p, 4); x = t; break; }
	case DW_EH_PE_udata4: { uint32_t t; memcpy(&t, p, 4); x = t; break; }
	default: memcpy(&x, p, 8);
	}
	*v = (enc & 0x70) == DW_EH_PE_pcrel ? at + x : (uint64_t)x;
	return 0;
}

static int add_fde_entry(struct fde **f, size_t *n, size_t *cap, uint64_t start, uint64_t end)
{
	if (*n == *cap) {
		struct fde *t;

		*cap = *cap ? *cap * 2 : 1024;
		t = realloc(*f, *cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		*f = t;
	}
	(*f)[(*n)++] = (struct fde){ start, end };
	return 0;
}

/*
 * .eh_frame's FDEs one by one, where the linker left no .eh_frame_hdr to
 * index them (static executables): libdw parses each entry, and only the
 * pointers to each function, in its CIE's usual encodings, are read here.
 */
static int eh_frame_fdes(Elf *elf, struct fde **out, size_t *nout)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section(elf, ".eh_frame", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct { Dwarf_Off off; uint8_t enc; } cies[64];
	size_t n = 0, cap = 0, ncies = 0;
	Dwarf_Off off = 0, next;
	struct fde *f = NULL;

	if (!d || !d->d_buf || !ident)
		return -ENOENT;
	for (;;) {
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(ident, d, true, off, &next, &e);
		uint64_t loc, len;
		uint8_t enc = 0;
		size_t i;

		if (r > 0 || next == (Dwarf_Off)-1 || next <= off)
			break;
		if (!r && dwarf_cfi_cie_p(&e) && ncies < 64 && !cie_encoding(&e.cie, &enc))
			cies[ncies++] = (typeof(cies[0])){ off, enc };
		if (!r && !dwarf_cfi_cie_p(&e)) {
			for (i = 0; i < ncies && cies[i].off != e.fde.CIE_pointer; i++)
				;
			if (i < ncies &&
			    !read_ptr(e.fde.start, e.fde.end, cies[i].enc,
				      sh.sh_addr + (e.fde.start - (const uint8_t *)d->d_buf), &loc) &&
			    !read_ptr(e.fde.start + enc_size(cies[i].enc), e.fde.end,
				      cies[i].enc & 0x0f, 0, &len) && len &&
			    add_fde_entry(&f, &n, &cap, loc, loc + len)) {
				free(f);
				return -ENOMEM;
			}
		}
		off = next;
	}
	if (!n) {
		free(f);
		return -ENOENT;
	}
	qsort(f, n, sizeof(*f), cmp_fde);
	*out = f;
	*nout = n;
	return 0;
}

/*
 * .debug_frame, inflated if compressed (Debian's debug files are), where
 * libdw may read the file's debug sections: it reads them all, whole.
 */
static Elf_Scn *debug_frame(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = section(elf, ".debug_frame", sh);

	if (!scn || !elffile__debug_bounded(elf, CFI_MAX_SECTION, NULL))
		return NULL;
	if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	return scn;
}

/* .debug_frame's FDEs, whose first words are their absolute address and length. */
static int debug_frame_fdes(Elf *elf, struct fde **out, size_t *nout)
{
	GElf_Shdr sh;
	Elf_Scn *scn = debug_frame(elf, &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next;
	size_t n = 0, cap = 0;
	struct fde *f = NULL;

	if (!d || !d->d_buf || !ident)
		return -ENOENT;
	for (;;) {
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(ident, d, false, off, &next, &e);

		if (r > 0 || next == (Dwarf_Off)-1)
			break;
		if (!r && !dwarf_cfi_cie_p(&e) && e.fde.start + 16 <= e.fde.end) {
			uint64_t loc, len;

			if (n == cap) {
				struct fde *t;

				cap = cap ? cap * 2 : 1024;
				t = realloc(f, cap * sizeof(*t));
				if (!t) {
					free(f);
					return -ENOMEM;
				}
				f = t;
			}
			memcpy(&loc, e.fde.start, 8);
			memcpy(&len, e.fde.start + 8, 8);
			f[n++] = (struct fde){ loc, loc + len };
		}
		if (next <= off)
			break;
		off = next;
	}
	if (!n) {
		free(f);
		return -ENOENT;
	}
	qsort(f, n, sizeof(*f), cmp_fde);
	*out = f;
	*nout = n;
	return 0;
}

/* "reg + offset", the usual CFA rule. */
static bool breg(const Dwarf_Op *op, int *reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx) {
		*reg = op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	return false;
}

/*
 * The CFA rule of x86-64 PLT stubs, which push and jump without setting up
 * a frame: sp + 8, and 8 more once the stub has pushed (ip & 15 >= N).
 */
static bool plt_rule(const Dwarf_Op *o, size_t n, int64_t *threshold)
{
	int reg;
	int64_t off;

	if (n != 9 || !breg(&o[0], &reg, &off) || reg != 7 || off != 8 ||
	    !breg(&o[1], &reg, &off) || reg != 16 || off != 0 || o[2].atom != DW_OP_lit15 ||
	    o[3].atom != DW_OP_and || o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit31 ||
	    o[5].atom != DW_OP_ge || o[6].atom != DW_OP_lit3 || o[7].atom != DW_OP_shl ||
	    o[8].atom != DW_OP_plus)
		return false;
	*threshold = o[4].atom - DW_OP_lit0;
	return true;
}

/*
 * A CFA saved in the frame: "*(reg + off)", and "+ add" after it, as code
 * that realigns its stack describes its frames (deref_row()).
 */
static bool deref_rule(const Dwarf_Op *o, size_t n, int *reg, int64_t *off, uint64_t *add)
{
	if (n < 2 || n > 3 || !breg(&o[0], reg, off) || o[1].atom != DW_OP_deref)
		return false;
	*add = 0;
	if (n == 3) {
		if (o[2].atom != DW_OP_plus_uconst)
			return false;
		*add = o[2].number;
	}
	return true;
}

enum reg_rule { REG_SAME, REG_UNDEFINED, REG_AT_CFA, REG_OTHER };

/* Where the caller's @regno is: unchanged, lost, or saved at CFA + *@off. */
static enum reg_rule reg_rule(Dwarf_Frame *f, int regno, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_register(f, regno, mem, &ops, &n))
		return REG_OTHER;
	if (!n)
		return ops ? REG_UNDEFINED : REG_SAME;
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return REG_AT_CFA;
	}
	return REG_OTHER;
}

static struct unwind_row make_row(enum unwind_cfa cfa, int64_t cfa_off, int64_t fp_off,
				  int64_t ra_off)
{
	int64_t ra_slot = -ra_off / 8;

	/* Further down than the slot's 4 bits reach (arm64): beside fp, or in fp's field. */
	if (ra_slot >= UNWIND_RA_AT_FP_SLOT) {
		if (fp_off && ra_off == fp_off + 8) {
			ra_slot = UNWIND_RA_BESIDE_FP;
		} else if (!fp_off) {
			ra_slot = UNWIND_RA_AT_FP_SLOT;
			fp_off = ra_off;
		} else {
			ra_slot = -1;
		}
	}
	/* What does not fit the row's fields, the unwinder cannot follow. */
	if (cfa_off < INT16_MIN || cfa_off > INT16_MAX || fp_off % 8 || ra_off > 0 ||
	    ra_off % 8 || ra_slot < 0)
		return (struct unwind_row){ .cfa_ra = UNWIND_UNSUPPORTED };
	/* A frame record further down than the slot reaches, at the stack pointer. */
	if (fp_off / 8 <= UNWIND_FP_AT_BOTTOM || fp_off / 8 > INT8_MAX) {
		if (cfa != UNWIND_CFA_SP || fp_off != -cfa_off)
			return (struct unwind_row){ .cfa_ra = UNWIND_UNSUPPORTED };
		fp_off = 8 * UNWIND_FP_AT_BOTTOM;
	}
	return (struct unwind_row){
		.cfa_off = cfa_off,
		.fp_slot = fp_off / 8,
		.cfa_ra = cfa | ra_slot << 4,
	};
}

/*
 * "The caller's frame pointer is saved where the frame pointer points",
 * which GCC says of a function that realigns its stack through another
 * register (DW_CFA_expression: fp, DW_OP_breg(fp) 0; libdw puts the CFA
 * on the stack first, as the rule's evaluation starts with it).
 */
static bool fp_at_fp(const struct arch *a, Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	int reg;
	int64_t off;
	size_t n;

	if (dwarf_frame_register(f, a->fp, mem, &ops, &n) || !n || n > 2)
		return false;
	if (n == 2 && ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	return breg(&ops[n - 1], &reg, &off) && reg == a->fp && !off;
}

/*
 * The row of a CFA saved in the frame at @reg + @off, plus @add; an
 * unsupported one where the fields cannot hold it. x86-64 only: arm64's
 * compilers realign no frames, and its OpenSSL keeps frame records.
 */
static struct unwind_row deref_row(const struct arch *a, Dwarf_Frame *f, int reg, int64_t off,
				   uint64_t add, int64_t ra_off)
{
	const struct unwind_row unsupported = { .cfa_ra = UNWIND_UNSUPPORTED };
	int64_t fp_off = 0;
	enum reg_rule rule;
	struct unwind_row r;

	if (a != &x86_64 || off % 8 || off / 8 < INT16_MIN / 16 || off / 8 > INT16_MAX / 16 ||
	    add % 8 || add / 8 > UNWIND_DEREF_MAX_ADD)
		return unsupported;
	if (reg == a->fp) {
		if (!fp_at_fp(a, f))
			return unsupported;
	} else {
		rule = reg_rule(f, a->fp, &fp_off);
		if (rule == REG_OTHER)
			return unsupported;
		if (rule != REG_AT_CFA)
			fp_off = 0;
	}
	r = make_row(reg == a->sp ? UNWIND_CFA_SP_DEREF : UNWIND_CFA_FP_DEREF, 0, fp_off, ra_off);
	if (UNWIND_ROW_CFA(&r) != UNWIND_UNSUPPORTED)
		r.cfa_off = UNWIND_DEREF_CFA_OFF(off, (int64_t)add);
	return r;
}

/*
 * The row of a CFA in another register, @reg + @off: x86-64's general
 * registers, which a first frame has (UNWIND_CFA_REG).
 */
static struct unwind_row reg_row(const struct arch *a, int reg, int64_t off, int64_t fp_off,
				 int64_t ra_off)
{
	struct unwind_row r;

	if (a != &x86_64 || reg < 0 || reg > 15 || off < INT16_MIN / 16 || off > INT16_MAX / 16)
		return (struct unwind_row){ .cfa_ra = UNWIND_UNSUPPORTED };
	r = make_row(UNWIND_CFA_REG, 0, fp_off, ra_off);
	if (UNWIND_ROW_CFA(&r) != UNWIND_UNSUPPORTED)
		r.cfa_off = UNWIND_REG_CFA_OFF(reg, off);
	return r;
}

/* The row of frame state @f, as the BPF side follows it. */
static struct unwind_row row_of(const struct arch *a, Dwarf_Frame *f, bool signal)
{
	const struct unwind_row unsupported = { .cfa_ra = UNWIND_UNSUPPORTED };
	enum unwind_cfa cfa;
	enum reg_rule rule;
	Dwarf_Op *ops;
	int64_t cfa_off = 0, ra_off = 0, fp_off = 0;
	uint64_t add;
	size_t n;
	int reg;

	if (signal)
		return (struct unwind_row){ .cfa_ra = UNWIND_SIGNAL };
	if (dwarf_frame_cfa(f, &ops, &n) || !n)
		return unsupported;
	rule = reg_rule(f, a->ra, &ra_off);
	if (rule == REG_UNDEFINED)
		return (struct unwind_row){ .cfa_ra = UNWIND_END };
	if (rule == REG_SAME && a->ra_in_register)
		ra_off = 0;
	else if (rule != REG_AT_CFA || !ra_off)
		return unsupported;
	if (n == 1 && breg(&ops[0], &reg, &cfa_off) && (reg == a->sp || reg == a->fp))
		cfa = reg == a->sp ? UNWIND_CFA_SP : UNWIND_CFA_FP;
	else if (n == 1 && breg(&ops[0], &reg, &cfa_off))
		cfa = UNWIND_CFA_REG;
	else if (a == &x86_64 && plt_rule(ops, n, &cfa_off))
		cfa = UNWIND_CFA_PLT;
	else if (deref_rule(ops, n, &reg, &cfa_off, &add) && (reg == a->sp || reg == a->fp))
		return deref_row(a, f, reg, cfa_off, add, ra_off);
	else
		return unsupported;
	rule = reg_rule(f, a->fp, &fp_off);
	if (rule == REG_OTHER)
		return unsupported;
	if (rule != REG_AT_CFA)
		fp_off = 0;
	if (cfa == UNWIND_CFA_REG)
		return reg_row(a, reg, cfa_off, fp_off, ra_off);
	return make_row(cfa, cfa_off, fp_off, ra_off);
}

static bool same_rules(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->cfa_ra == b->cfa_ra && a->cfa_off == b->cfa_off && a->fp_slot == b->fp_slot;
}

/* Appends a row at @addr, unless the last one has the same rules. */
static int add_row(struct cfi_table *t, size_t max, uint64_t addr, struct unwind_row r)
{
	if (addr < t->base || addr - t->base > UINT32_MAX)
		return -E2BIG;
	r.pc = addr - t->base;
	if (t->n && same_rules(&t->rows[t->n - 1], &r))
		return 0;
	if (t->n && t->rows[t->n - 1].pc >= r.pc) {
		/* Overlapping descriptions: the later start wins. */
		if (t->rows[t->n - 1].pc == r.pc) {
			t->rows[t->n - 1] = r;
			return 0;
		}
		return 0;
	}
	if (t->n == max)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct unwind_row *v = realloc(t->rows, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->rows = v;
		t->cap = cap;
	}
	t->rows[t->n++] = r;
	return 0;
}

/* The rows of one function, from its first address up to @limit (the next one's). */
static int add_fde(struct cfi_table *t, size_t max, const struct arch *a, Dwarf_CFI *cfi,
		   const struct fde *fde, uint64_t limit, uint64_t *work)
{
	uint64_t addr = fde->start;
	int err;

	for (size_t k = 0;; k++) {
		Dwarf_Frame *f;
		Dwarf_Addr start, end;
		bool signal = false;
		struct unwind_row r;

		/*
		 * libdw finds each row by running the function's rules from its
		 * start: k steps for the k-th, so a function of n rows costs n^2.
		 * Real ones have a few dozen; a forged one a million.
		 */
		*work += k;
		if (k >= CFI_MAX_FDE_ROWS)
			return add_row(t, max, addr, (struct unwind_row){ .cfa_ra = UNWIND_UNSUPPORTED });
		if (*work > CFI_MAX_WORK)
			return -EFBIG;
		if (dwarf_cfi_addrframe(cfi, addr, &f))
			break;
		if (dwarf_frame_info(f, &start, &end, &signal) < 0 || end <= addr) {
			free(f);
			break;
		}
		r = row_of(a, f, signal);
		free(f);
		t->unsupported += UNWIND_ROW_CFA(&r) == UNWIND_UNSUPPORTED;
		err = add_row(t, max, addr, r);
		if (err)
			return err;
		addr = end;
		if (addr >= limit || (fde->end && addr >= fde->end))
			break;
	}
	/* Up to the next function: nothing described, frame pointers. */
	return addr < limit ? add_row(t, max, addr, (struct unwind_row){ .cfa_ra = UNWIND_NONE }) : 0;
}

/*
 * Merges @add into @t: at each address where either changes, @t's rule
 * where it has one, else @add's. @add is freed; @t is left as it was when
 * the merge does not fit in @max rows.
 */
static int merge(struct cfi_table *t, struct cfi_table *add, size_t max)
{
	struct unwind_row a = { .cfa_ra = UNWIND_NONE }, b = a;
	struct cfi_table m = {};
	size_t i = 0, j = 0;
	int err = 0;

	m.base = t->n && t->base < add->base ? t->base : add->base;
	while (!err && (i < t->n || j < add->n)) {
		uint64_t x = i < t->n ? t->base + t->rows[i].pc : UINT64_MAX;
		uint64_t y = j < add->n ? add->base + add->rows[j].pc : UINT64_MAX;
		uint64_t at = x < y ? x : y;

		if (x == at)
			a = t->rows[i++];
		if (y == at)
			b = add->rows[j++];
		err = add_row(&m, max, at, UNWIND_ROW_CFA(&a) != UNWIND_NONE ? a : b);
	}
	if (err) {
		cfi__free(&m);
	} else {
		m.fdes = t->fdes + add->fdes;
		m.unsupported = t->unsupported + add->unsupported;
		cfi__free(t);
		*t = m;
	}
	cfi__free(add);
	return err;
}

/* Does @t, built from .eh_frame, describe the code at @addr? */
static bool described(const struct cfi_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	if (!t->n || addr < t->base || addr - t->base > UINT32_MAX)
		return false;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= addr - t->base)
			lo = mid;
		else
			hi = mid;
	}
	return t->rows[lo].pc <= addr - t->base && UNWIND_ROW_CFA(&t->rows[lo]) != UNWIND_NONE;
}

/*
 * The functions of @elf (or of its @debug file) that only a .debug_frame
 * describes, beside those of its .eh_frame in @t: objects built with -g
 * but without unwind tables (-fno-asynchronous-unwind-tables), linked
 * into a binary whose other code has them. Only their rows are built
 * (the rest .eh_frame has), and merged where @t has none.
 */
static int add_debug_frame(struct cfi_table *t, size_t max, const struct arch *a, Elf *elf,
			   Elf *debug, uint64_t *work)
{
	struct cfi_table d = {};
	struct fde *fdes = NULL;
	size_t n = 0, kept = 0;
	Dwarf_CFI *cfi;
	Dwarf *dw;
	Elf *df;
	int err = 0;

	df = !debug_frame_fdes(elf, &fdes, &n) ? elf :
	     debug && !debug_frame_fdes(debug, &fdes, &n) ? debug : NULL;
	if (!df)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!described(t, fdes[i].start))
			fdes[kept++] = fdes[i];
	dw = kept ? dwarf_begin_elf(df, DWARF_C_READ, NULL) : NULL;
	cfi = dw ? dwarf_getcfi(dw) : NULL;
	if (cfi) {
		d.base = fdes[0].start;
		for (size_t i = 0; i < kept && !err; i++) {
			if (i && fdes[i].start == fdes[i - 1].start)
				continue;
			err = add_fde(&d, max, a, cfi, &fdes[i],
				      i + 1 < kept ? fdes[i + 1].start : UINT64_MAX, work);
			d.fdes++;
		}
		if (!err && d.n && UNWIND_ROW_CFA(&d.rows[d.n - 1]) != UNWIND_NONE)
			err = add_row(&d, max, fdes[kept - 1].end,
				      (struct unwind_row){ .cfa_ra = UNWIND_NONE });
		err = err ?: merge(t, &d, max);
	}
	cfi__free(&d);
	if (dw)
		dwarf_end(dw);
	free(fdes);
	/* Too many rows for the room left: .eh_frame's alone. */
	return err == -E2BIG ? 0 : err;
}

int cfi__row(Elf *elf, uint64_t addr, struct unwind_row *row)
{
	const struct arch *a = arch_of(elf);
	Dwarf_CFI *cfi;
	Dwarf_Frame *f;

	if (!a || !section(elf, ".eh_frame", &(GElf_Shdr){}))
		return -ENOENT;
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		return -ENOENT;
	if (dwarf_cfi_addrframe(cfi, addr, &f)) {
		dwarf_cfi_end(cfi);
		return -ENOENT;
	}
	*row = row_of(a, f, false);
	free(f);
	dwarf_cfi_end(cfi);
	return 0;
}

int cfi__function(Elf *elf, uint64_t addr, uint64_t *start, uint64_t *end)
{
	size_t n = 0, lo = 0, hi;
	struct fde *f = NULL;
	int err = hdr_fdes(elf, &f, &n);

	if (err)
		err = eh_frame_fdes(elf, &f, &n);
	if (err)
		return err;
	for (hi = n; hi - lo > 1;) {
		size_t mid = lo + (hi - lo) / 2;

		if (f[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	err = -ENOENT;
	if (n && f[lo].start <= addr) {
		*start = f[lo].start;
		*end = f[lo].end ? f[lo].end : lo + 1 < n ? f[lo + 1].start : 0;
		if (addr < *end)
			err = 0;
	}
	free(f);
	return err;
}

int cfi__build(Elf *elf, Elf *debug, size_t max_rows, struct cfi_table *t)
{
	const struct arch *a = arch_of(elf);
	struct fde *fdes = NULL;
	size_t n = 0;
	Dwarf_CFI *cfi = NULL;
	Dwarf *dw = NULL;
	uint64_t work = 0;
	bool go, eh_frame;
	int err;

	memset(t, 0, sizeof(*t));
	if (!a)
		return -ENOTSUP;
	go = section(elf, ".gopclntab", &(GElf_Shdr){});
	err = hdr_fdes(elf, &fdes, &n);
	if (err)
		err = eh_frame_fdes(elf, &fdes, &n);
	/*
	 * An index without the .eh_frame it indexes is a forged file: libdw
	 * would read the program headers' idea of it instead, and leaks what
	 * libelf read of the sections when it does (elfutils 0.188).
	 */
	if (!err && !section(elf, ".eh_frame", &(GElf_Shdr){})) {
		free(fdes);
		fdes = NULL;
		n = 0;
		err = -ENOENT;
	}
	if (!err) {
		cfi = dwarf_getcfi_elf(elf);
	} else {
		/*
		 * Built without unwind tables (-fno-asynchronous-unwind-tables:
		 * musl, some embedded and hand-tuned code): its own .debug_frame,
		 * where -g left one, else its debug file's. Not a Go binary's
		 * own: Go's pclntab (cfi__build_go()) says more, its assembly
		 * stack switches (mcall, clone) included.
		 */
		Elf *df = !go && !debug_frame_fdes(elf, &fdes, &n) ? elf :
			  debug && !debug_frame_fdes(debug, &fdes, &n) ? debug : NULL;

		dw = df ? dwarf_begin_elf(df, DWARF_C_READ, NULL) : NULL;
		cfi = dw ? dwarf_getcfi(dw) : NULL;
	}
	if (!cfi) {
		free(fdes);
		if (dw)
			dwarf_end(dw);
		return err == -ENOTSUP ? err : -ENOENT;
	}
	err = 0;
	t->base = n ? fdes[0].start : 0;
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t limit = i + 1 < n ? fdes[i + 1].start : UINT64_MAX;

		if (i && fdes[i].start == fdes[i - 1].start)
			continue;
		err = add_fde(t, max_rows, a, cfi, &fdes[i], limit, &work);
		t->fdes++;
	}
	/* Past the last function, nothing is known. */
	if (!err && t->n && UNWIND_ROW_CFA(&t->rows[t->n - 1]) != UNWIND_NONE && fdes[n - 1].end)
		err = add_row(t, max_rows, fdes[n - 1].end, (struct unwind_row){ .cfa_ra = UNWIND_NONE });
	eh_frame = !dw;
	if (dw)
		dwarf_end(dw);
	else
		dwarf_cfi_end(cfi);
	free(fdes);
	/* Go's .debug_frame is its pclntab's poorer copy (cfi__add_go()). */
	if (!err && eh_frame && !go)
		err = add_debug_frame(t, max_rows, a, elf, debug, &work);
	if (err)
		cfi__free(t);
	return err;
}

struct go_rows {
	struct cfi_table *t;
	size_t max;
	bool arm64;
};

/*
 * @sp bytes below the entry's stack pointer: the CFA is that plus the
 * return address, which is just below it. A frame of any size saved the
 * caller's frame pointer just below that.
 */
static int go_row(void *ctx, uint64_t pc, int32_t sp)
{
	struct go_rows *g = ctx;
	struct unwind_row r = sp < 0 || sp > INT16_MAX - 8 ?
			      (struct unwind_row){ .cfa_ra = UNWIND_UNSUPPORTED } :
			      make_row(UNWIND_CFA_SP, sp + 8, sp >= 8 ? -16 : 0, -8);

	/*
	 * arm64: the call left the return address in x30; a frame of @sp
	 * bytes stores it at its lowest word and the frame pointer below.
	 */
	if (g->arm64 && sp >= 0)
		r = sp > INT16_MAX ? (struct unwind_row){ .cfa_ra = UNWIND_UNSUPPORTED } :
		    (struct unwind_row){ .cfa_off = sp, .cfa_ra = UNWIND_CFA_SP_RA_LOW };

	g->t->unsupported += UNWIND_ROW_CFA(&r) == UNWIND_UNSUPPORTED;
	return add_row(g->t, g->max, pc, r);
}

/* Where in @code (@n bytes) @pat is, or NULL. */
static const uint8_t *find(const uint8_t *code, size_t n, const char *pat, size_t len)
{
	for (size_t i = 0; i + len <= n; i++)
		if (!memcmp(code + i, pat, len))
			return code + i;
	return NULL;
}

/*
 * x86-64 runtime.asmcgocall, which calls C on the thread's stack: its row
 * (UNWIND_CFA_GO_CGOCALL), with where it saves how deep in the goroutine's
 * stack it was called and the goroutine (unwind.h), read from its code, as
 * they moved between Go releases (1.19: 40 and 48 bytes up its frame, above
 * Windows' register room; 1.24: 0 and 8), and whether it pushed a frame
 * pointer before it took the stack pointer (1.24 does). False if its code
 * is not as known (its wrapper for Go's register ABI, or a Go to come).
 */
static bool go_cgocall_row(int fd, Elf *elf, const struct gofunc *f, struct unwind_row *r)
{
	/* sub %rdx, %rdi (stack.hi - sp); then mov %rdi, (%rsp) or mov %rdi, disp8(%rsp) */
	static const char depth[] = "\x48\x29\xd7\x48\x89", sp_disp8[] = "\x7c\x24",
			  sp_zero[] = "\x3c\x24", save_g[] = "\x48\x89\x7c\x24";
	uint8_t code[192], g_store[5];
	size_t n = f->end - f->entry < sizeof(code) ? f->end - f->entry : sizeof(code);
	const uint8_t *d;
	int off;

	if (f->end <= f->entry || elffile__read(elf, fd, f->entry, code, n))
		return false;
	d = find(code, n, depth, 5);
	if (!d || d + 8 > code + n)
		return false;
	if (!memcmp(d + 5, sp_zero, 2))
		off = 0;
	else if (!memcmp(d + 5, sp_disp8, 2) && !(d[7] & 0x87))
		off = d[7];
	else
		return false;
	/* The goroutine, saved just above it before. */
	memcpy(g_store, save_g, 4);
	g_store[4] = off + 8;
	if (!find(code, d - code, (const char *)g_store, 5))
		return false;
	/* push %rbp; mov %rsp, %rbp first: its caller's frame pointer, then the return address. */
	*r = (struct unwind_row){ .cfa_off = off, .fp_slot = (off + 8) / 8,
				  .cfa_ra = UNWIND_CFA_GO_CGOCALL |
					    !memcmp(code, "\x55\x48\x89\xe5", 4) << 4 };
	return true;
}

/*
 * x86-64 runtime.mcall: its row (UNWIND_CFA_GO_MCALL), with where g.sched
 * is, read from its code as it stores its caller's pc, sp and bp there
 * (mov %rbx, N(%r14), g in r14), then pushes g and calls fn. False if its
 * code is not as known.
 */
static bool go_mcall_row(int fd, Elf *elf, const struct gofunc *f, struct unwind_row *r)
{
	/* push %rax; mov (%rdx), %r12; call *%r12 */
	static const char call_fn[] = "\x50\x4c\x8b\x22\x41\xff\xd4", rbx_to_g[] = "\x49\x89\x5e",
			  rbp_to_g[] = "\x49\x89\x6e";
	uint8_t code[128];
	size_t n = f->end - f->entry < sizeof(code) ? f->end - f->entry : sizeof(code);
	const uint8_t *at[3], *p = code;

	if (f->end <= f->entry || elffile__read(elf, fd, f->entry, code, n) ||
	    !find(code, n, call_fn, 7))
		return false;
	for (int i = 0; i < 3; i++) {
		at[i] = find(p, code + n - p, rbx_to_g, 3);
		/* The frame pointer stored as it is (1.19), or its caller's through %rbx (1.21 on). */
		if (i == 2 && !at[i])
			at[i] = find(p, code + n - p, rbp_to_g, 3);
		if (!at[i] || at[i] + 4 > code + n)
			return false;
		p = at[i] + 4;
	}
	/* pc (sched + 8), then sp (sched), then bp (sched + 48), as gobuf has them. */
	if (at[1][3] + 8 != at[0][3] || at[2][3] != at[1][3] + 48 || at[1][3] > 127)
		return false;
	*r = (struct unwind_row){ .cfa_off = at[1][3], .fp_slot = 6, .cfa_ra = UNWIND_CFA_GO_MCALL };
	return true;
}

/*
 * x86-64 runtime.systemstack: its row (UNWIND_CFA_GO_SYSTEMSTACK), read
 * from the code after its call, which goes back as the row does: g from
 * the thread pointer (mov %fs:-8, %rax), its m (mov 48(%rax), %rbx),
 * m.curg (mov N(%rbx), %rax), curg.sched.sp (mov M(%rax), %rsp); whether
 * it pushed a frame pointer first. False if its code is not as known.
 */
static bool go_systemstack_row(int fd, Elf *elf, const struct gofunc *f, struct unwind_row *r)
{
	static const char back[] = "\xff\xd7\x64\x48\x8b\x04\x25\xf8\xff\xff\xff"
				   "\x48\x8b\x58\x30\x48\x8b\x83";
	uint8_t code[192];
	size_t n = f->end - f->entry < sizeof(code) ? f->end - f->entry : sizeof(code);
	const uint8_t *p;
	int32_t curg;

	if (f->end <= f->entry || elffile__read(elf, fd, f->entry, code, n))
		return false;
	/* call *%rdi, then the way back to the goroutine */
	p = find(code, n, back, sizeof(back) - 1);
	if (!p || p + sizeof(back) - 1 + 4 + 9 + 4 > code + n)
		return false;
	p += sizeof(back) - 1;
	memcpy(&curg, p, 4);
	p += 4 + 9;	/* mov %rax, %fs:-8 */
	/* mov M(%rax), %rsp */
	if (curg <= 0 || curg > INT16_MAX || p[0] != 0x48 || p[1] != 0x8b || p[2] != 0x60 ||
	    (p[3] & 0x87))
		return false;
	*r = (struct unwind_row){ .cfa_off = curg, .fp_slot = p[3] / 8,
				  .cfa_ra = UNWIND_CFA_GO_SYSTEMSTACK |
					    !memcmp(code, "\x55\x48\x89\xe5", 4) << 4 };
	return true;
}

/* @f's first instructions, arm64's little-endian words, into @insn: how many. */
static size_t arm64_code(int fd, Elf *elf, const struct gofunc *f, uint32_t *insn, size_t max)
{
	size_t n = f->end > f->entry ? (f->end - f->entry) / 4 : 0;

	if (n > max)
		n = max;
	if (!n || elffile__read(elf, fd, f->entry, insn, n * 4))
		return 0;
	for (size_t i = 0; i < n; i++)
		insn[i] = le32toh(insn[i]);
	return n;
}

/*
 * The size of the frame an arm64 Go assembly function's prologue makes,
 * str x30, [sp, #-N]! (MOVD.W R30, -N(RSP)), its return address at its
 * bottom; in 8-byte units, as an RA slot holds it; 0 if not so.
 */
static unsigned int arm64_go_frame(uint32_t insn)
{
	int imm = insn >> 12 & 0x1ff;

	if ((insn & 0xffe00fff) != 0xf8000ffe)
		return 0;
	imm = imm >= 256 ? 512 - imm : 0;	/* -N, 9 bits signed */
	return imm % 8 || imm / 8 > 15 ? 0 : imm / 8;
}

/* ldr/str xT, [xN, #off] (64-bit, unsigned offset) as @op has it: off, or -1 if not. */
static int arm64_ldst(uint32_t insn, uint32_t op, unsigned int n, unsigned int t)
{
	if ((insn & 0xffc003ff) != (op | n << 5 | t))
		return -1;
	return (insn >> 10 & 0xfff) * 8;
}

#define ARM64_STR	0xf9000000
#define ARM64_LDR	0xf9400000
#define ARM64_SP	31
#define ARM64_SUB_X4_X4_X2	0xcb020084
#define ARM64_BLR_X1		0xd63f0020
#define ARM64_BLR_X3		0xd63f0060
#define ARM64_MOV_SP_X0		0x9100001f
#define ARM64_IS_BL(insn)	(((insn) & 0xfc000000) == 0x94000000)

/*
 * arm64 runtime.asmcgocall: its row (UNWIND_CFA_GO_CGOCALL), read from its
 * code as it leaves the goroutine and how deep in its stack it was for the
 * C call, on the thread's stack (str x4, [sp, #G]; ...; sub x4, x4, x2;
 * str x4, [sp, #D]; blr x1), and its own frame's size from its prologue.
 * False if its code is not as known.
 */
static bool go_cgocall_row_arm64(int fd, Elf *elf, const struct gofunc *f, struct unwind_row *r)
{
	uint32_t code[64];
	size_t n = arm64_code(fd, elf, f, code, 64);
	unsigned int frame = n ? arm64_go_frame(code[0]) : 0;

	for (size_t i = 1; frame && i + 2 < n; i++) {
		int depth = arm64_ldst(code[i + 1], ARM64_STR, ARM64_SP, 4), g = -1;

		if (code[i] != ARM64_SUB_X4_X4_X2 || code[i + 2] != ARM64_BLR_X1 || depth < 0 ||
		    depth > 1024)
			continue;
		for (size_t j = i; j-- > 0 && g < 0;)
			g = arm64_ldst(code[j], ARM64_STR, ARM64_SP, 4);
		if (g < 0 || g > 1016)
			return false;
		*r = (struct unwind_row){ .cfa_off = depth, .fp_slot = g / 8,
					  .cfa_ra = UNWIND_CFA_GO_CGOCALL | frame << 4 };
		return true;
	}
	return false;
}

/*
 * arm64 runtime.systemstack: its row (UNWIND_CFA_GO_SYSTEMSTACK), read
 * from the code after its call, which goes back as the row does (blr x3;
 * ldr x3, [x28, #48], g.m; ldr x28, [x3, #C], m.curg; bl save_g; ldr x0,
 * [x28, #S], curg.sched.sp; mov sp, x0), and its own frame's size from its
 * prologue. False if its code is not as known.
 */
static bool go_systemstack_row_arm64(int fd, Elf *elf, const struct gofunc *f,
				     struct unwind_row *r)
{
	uint32_t code[64];
	size_t n = arm64_code(fd, elf, f, code, 64);
	unsigned int frame = n ? arm64_go_frame(code[0]) : 0;

	for (size_t i = 1; frame && i + 5 < n; i++) {
		int curg = arm64_ldst(code[i + 2], ARM64_LDR, 3, 28),
		    sp = arm64_ldst(code[i + 4], ARM64_LDR, 28, 0);

		if (code[i] != ARM64_BLR_X3 || arm64_ldst(code[i + 1], ARM64_LDR, 28, 3) != 48 ||
		    curg <= 0 || curg > INT16_MAX || !ARM64_IS_BL(code[i + 3]) || sp < 0 ||
		    sp > 1016 || code[i + 5] != ARM64_MOV_SP_X0)
			continue;
		*r = (struct unwind_row){ .cfa_off = curg, .fp_slot = sp / 8,
					  .cfa_ra = UNWIND_CFA_GO_SYSTEMSTACK | frame << 4 };
		return true;
	}
	return false;
}

/*
 * The row of a runtime function that switches stacks, if @f is one and its
 * code is as known. arm64's mcall keeps the goroutine nowhere its function
 * could be found from (it passes it in x0): frame pointers there.
 */
static bool go_switch_row(int fd, Elf *elf, const struct gofunc *f, bool arm64,
			  struct unwind_row *r)
{
	if (!strcmp(f->name, "runtime.asmcgocall"))
		return arm64 ? go_cgocall_row_arm64(fd, elf, f, r) : go_cgocall_row(fd, elf, f, r);
	if (!strcmp(f->name, "runtime.systemstack"))
		return arm64 ? go_systemstack_row_arm64(fd, elf, f, r) :
			       go_systemstack_row(fd, elf, f, r);
	if (!strcmp(f->name, "runtime.mcall"))
		return !arm64 && go_mcall_row(fd, elf, f, r);
	return false;
}

int cfi__build_go(int fd, Elf *elf, size_t max_rows, struct cfi_table *t)
{
	struct go_rows g = { t, max_rows, arch_of(elf) == &aarch64 };
	struct gopclntab *go;
	const char *why;
	int err;

	memset(t, 0, sizeof(*t));
	if (arch_of(elf) != &x86_64 && arch_of(elf) != &aarch64)
		return -ENOTSUP;
	err = gopclntab__open(fd, elf, &go, &why);
	if (err)
		return err == -ENOTSUP ? -ENOENT : err;
	for (size_t i = 0; i < gopclntab__count(go) && !err; i++) {
		struct unwind_row r;
		struct gofunc f;

		if (gopclntab__func(go, i, &f))
			continue;
		if (!t->n)
			t->base = f.entry;
		/* Where Go's traceback ends; code that moves the stack pointer: frame pointers. */
		if (go_switch_row(fd, elf, &f, g.arm64, &r))
			err = add_row(t, max_rows, f.entry, r);
		else if (f.flags & GOFUNC_TOPFRAME)
			err = add_row(t, max_rows, f.entry, (struct unwind_row){ .cfa_ra = UNWIND_END });
		else if (f.flags & GOFUNC_SPWRITE)
			err = add_row(t, max_rows, f.entry, (struct unwind_row){ .cfa_ra = UNWIND_NONE });
		else
			err = gopclntab__sp(go, i, go_row, &g);
		if (err == -EINVAL)
			err = add_row(t, max_rows, f.entry, (struct unwind_row){ .cfa_ra = UNWIND_NONE });
		if (!err)
			err = add_row(t, max_rows, f.end, (struct unwind_row){ .cfa_ra = UNWIND_NONE });
		t->fdes++;
	}
	gopclntab__free(go);
	if (err)
		cfi__free(t);
	return err;
}

int cfi__add_go(int fd, Elf *elf, size_t max_rows, struct cfi_table *t)
{
	struct cfi_table go;
	int err;

	if (!section(elf, ".gopclntab", &(GElf_Shdr){}))
		return -ENOENT;
	err = cfi__build_go(fd, elf, max_rows, &go);
	if (err)
		return err;
	if (!go.n) {
		cfi__free(&go);
		return -ENOENT;
	}
	/* C's rule where .eh_frame has one, else Go's. */
	return merge(t, &go, max_rows);
}

void cfi__free(struct cfi_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
