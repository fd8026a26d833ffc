// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ELF segments, symbols, build-id, debuglink and MiniDebugInfo through libelf, within set bounds. */
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elffile.h"
#include "symtab.h"

static void init_libelf(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

/* @elf, if libelf took it for an ELF object (not an archive, not garbage). */
static int take_elf(Elf *elf, Elf **out)
{
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) == ELFCLASSNONE) {
		elf_end(elf);
		return -ENOEXEC;
	}
	*out = elf;
	return 0;
}

/*
 * ELF_C_READ, not ELF_C_READ_MMAP: libelf then reads what is asked for
 * with pread, so a file truncated under us fails a read instead of killing
 * the tool with SIGBUS.
 */
int elffile__begin(int fd, Elf **out)
{
	unsigned char magic[SELFMAG];

	init_libelf();
	/* libelf itself would take an archive; libdwfl would even inflate an xz bomb. */
	if (pread(fd, magic, SELFMAG, 0) != SELFMAG || memcmp(magic, ELFMAG, SELFMAG))
		return -ENOEXEC;
	return take_elf(elf_begin(fd, ELF_C_READ, NULL), out);
}

int elffile__memory(void *buf, size_t len, Elf **out)
{
	init_libelf();
	if (len < SELFMAG || memcmp(buf, ELFMAG, SELFMAG))
		return -ENOEXEC;
	return take_elf(elf_memory(buf, len), out);
}

int elffile__segments(Elf *elf, struct elf_segment **out, size_t *nout)
{
	struct elf_segment *segs;
	size_t nph, n = 0;

	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	segs = calloc(nph ? nph : 1, sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			segs[n++] = (struct elf_segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
							  ph.p_flags & PF_X };
	}
	*out = segs;
	*nout = n;
	return 0;
}

const struct elf_segment *elf_segment__mapped(const struct elf_segment *segs, size_t n,
					      uint64_t pgoff, uint64_t len)
{
	for (size_t i = 0; i < n; i++)
		if (segs[i].exec && segs[i].offset < pgoff + len &&
		    pgoff < segs[i].offset + segs[i].filesz)
			return &segs[i];
	return NULL;
}

/* The index of the section names' table, if it is of a size to read whole. */
static int section_names(Elf *elf, size_t *shstrndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (elf_getshdrstrndx(elf, shstrndx) || !(scn = elf_getscn(elf, *shstrndx)) ||
	    !gelf_getshdr(scn, &sh) || sh.sh_size > ELFFILE_MAX_TABLE)
		return -EINVAL;
	return 0;
}

/* A section of @type or @name, with its header, if its size is within @max. */
static Elf_Scn *find_section(Elf *elf, GElf_Word type, const char *name, GElf_Shdr *sh,
			     size_t max)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (name && section_names(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		if (type != SHT_NULL && sh->sh_type != type)
			continue;
		if (name && (!(n = elf_strptr(elf, shstrndx, sh->sh_name)) || strcmp(n, name)))
			continue;
		if (sh->sh_type == SHT_NOBITS || sh->sh_size > max ||
		    (sh->sh_flags & SHF_COMPRESSED))
			return NULL;
		return scn;
	}
	return NULL;
}

bool elffile__has_section_type(Elf *elf, GElf_Word type)
{
	GElf_Shdr sh;

	return find_section(elf, type, NULL, &sh, SIZE_MAX);
}

bool elffile__has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (section_names(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name))
			return sh.sh_type != SHT_NOBITS;
	}
	return false;
}

int elffile__section(Elf *elf, const char *name, uint64_t *addr, uint64_t *size)
{
	GElf_Shdr sh;

	if (!find_section(elf, SHT_NULL, name, &sh, SIZE_MAX))
		return -ENOENT;
	*addr = sh.sh_addr;
	*size = sh.sh_size;
	return 0;
}

/* The build-id note in @data, if there is one. */
static int note_build_id(Elf_Data *data, unsigned char *id, size_t size)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz <= size) {
			memcpy(id, (char *)data->d_buf + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
	}
	return -ENOENT;
}

int elffile__build_id(Elf *elf, unsigned char *id, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t nph;
	GElf_Shdr sh;
	int len;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || sh.sh_size > 65536 ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		len = note_build_id(data, id, size);
		if (len > 0)
			return len;
	}
	/* Section headers can be stripped away; the program headers then still say. */
	if (elf_getphdrnum(elf, &nph))
		return -ENOENT;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE || ph.p_filesz > 65536)
			continue;
		data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data && (len = note_build_id(data, id, size)) > 0)
			return len;
	}
	return -ENOENT;
}

int elffile__debuglink(Elf *elf, char *name, size_t size, uint32_t *crc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, SHT_NULL, ".gnu_debuglink", &sh, 4096);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	const char *s;
	size_t len, at;

	if (!data || !data->d_buf)
		return -ENOENT;
	s = data->d_buf;
	len = strnlen(s, data->d_size);
	at = (len + 4) & ~(size_t)3;	/* the CRC follows the name, 4-aligned */
	if (len == data->d_size || at + 4 > data->d_size || !len || len >= size)
		return -EINVAL;
	/* A name chosen by whoever built the binary: a file name, never a path. */
	if (memchr(s, '/', len) || !strcmp(s, ".") || !strcmp(s, ".."))
		return -EINVAL;
	memcpy(name, s, len + 1);
	memcpy(crc, s + at, 4);
	if (elf_getident(elf, NULL)[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
						 ELFDATA2LSB : ELFDATA2MSB))
		*crc = __builtin_bswap32(*crc);
	return 0;
}

int elffile__symbols(Elf *elf, GElf_Word type, bool ifunc, struct symtab *t)
{
	GElf_Shdr sh, strsh;
	Elf_Scn *scn = find_section(elf, type, NULL, &sh, ELFFILE_MAX_TABLE), *strscn;
	Elf_Data *data;
	size_t n;
	int added = 0, err;

	if (!scn)
		return -ENOENT;
	/* The names' table is read whole by elf_strptr(): bound it first. */
	strscn = elf_getscn(elf, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB ||
	    strsh.sh_size > ELFFILE_MAX_TABLE || (strsh.sh_flags & SHF_COMPRESSED))
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (!data || !sh.sh_entsize)
		return -EINVAL;
	n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		const char *name;
		GElf_Sym sym;
		int kind;

		if (!gelf_getsym(data, i, &sym))
			break;
		kind = GELF_ST_TYPE(sym.st_info);
		if ((kind != STT_FUNC && (kind != STT_GNU_IFUNC || !ifunc)) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		err = symtab__add(t, sym.st_value, sym.st_size, name);
		if (err)
			return added ? added : err;
		added++;
	}
	return added;
}

/* Looks @names up in the symbol table of @type, filling the ones still missing. */
static int lookup_in(Elf *elf, GElf_Word type, const char *const *names, size_t n,
		     GElf_Sym *syms)
{
	GElf_Shdr sh, strsh;
	Elf_Scn *scn = find_section(elf, type, NULL, &sh, ELFFILE_MAX_TABLE), *strscn;
	Elf_Data *data;
	size_t count;
	int found = 0;

	if (!scn)
		return 0;
	strscn = elf_getscn(elf, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB ||
	    strsh.sh_size > ELFFILE_MAX_TABLE || (strsh.sh_flags & SHF_COMPRESSED))
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (!data || !sh.sh_entsize)
		return -EINVAL;
	count = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < count; i++) {
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, i, &sym))
			break;
		/* A thread-local variable's value is its offset in the block: 0 is one. */
		if (sym.st_shndx == SHN_UNDEF ||
		    (!sym.st_value && GELF_ST_TYPE(sym.st_info) != STT_TLS))
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (syms[k].st_shndx == SHN_UNDEF && !strcmp(name, names[k])) {
				syms[k] = sym;
				found++;
			}
		}
	}
	return found;
}

int elffile__lookup(Elf *elf, const char *const *names, size_t n, GElf_Sym *syms)
{
	int a, b;

	memset(syms, 0, n * sizeof(*syms));
	a = lookup_in(elf, SHT_DYNSYM, names, n, syms);
	if (a < 0)
		return a;
	if ((size_t)a == n)
		return a;
	b = lookup_in(elf, SHT_SYMTAB, names, n, syms);
	return b < 0 ? a : a + b;
}

int elffile__tls_module_slot(Elf *elf, const char *name, uint64_t *slot)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	GElf_Word type;

	if (!gelf_getehdr(elf, &eh))
		return -ENOENT;
	if (eh.e_machine == EM_X86_64)
		type = R_X86_64_DTPMOD64;
	else if (eh.e_machine == EM_AARCH64)
		type = R_AARCH64_TLS_DTPMOD;
	else
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr symsh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    sh.sh_size > ELFFILE_MAX_TABLE || (sh.sh_flags & SHF_COMPRESSED) ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
			Elf_Data *syms;
			const char *s;
			GElf_Rela r;
			GElf_Sym sym;

			if (!gelf_getrela(data, i, &r) || GELF_R_TYPE(r.r_info) != type)
				continue;
			if (!name && (GELF_R_SYM(r.r_info) || (*slot && r.r_offset != *slot)))
				continue;
			if (GELF_R_SYM(r.r_info) &&
			    (!symscn || !gelf_getshdr(symscn, &symsh) ||
			     !(syms = elf_getdata(symscn, NULL)) ||
			     !gelf_getsym(syms, GELF_R_SYM(r.r_info), &sym) ||
			     sym.st_shndx == SHN_UNDEF ||
			     !(s = elf_strptr(elf, symsh.sh_link, sym.st_name)) || strcmp(s, name)))
				continue;
			*slot = r.r_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elffile__offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elffile__read(Elf *elf, int fd, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off, end;
	ssize_t n;
	int err = elffile__offset(elf, vaddr, &off);

	/* The last byte in the file too: what lies past a segment's file size is not there. */
	if (!err && (vaddr + len < vaddr || elffile__offset(elf, vaddr + len - 1, &end) ||
		     end != off + len - 1))
		err = -ENOENT;
	if (err)
		return err;
	n = pread(fd, buf, len, off);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int elffile__debugdata(Elf *elf, void **out, size_t *outlen)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, SHT_PROGBITS, ".gnu_debugdata", &sh, ELFFILE_MAX_DEBUGDATA);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	lzma_stream z = LZMA_STREAM_INIT;
	size_t cap = 1 << 20, len = 0;
	uint8_t *buf = NULL, *t;
	lzma_ret ret;
	int err = 0;

	if (!data || !data->d_buf || !data->d_size)
		return -ENOENT;
	/* The decoder's own memory is bounded as well as what it writes. */
	if (lzma_stream_decoder(&z, 256u << 20, 0) != LZMA_OK)
		return -ENOMEM;
	z.next_in = data->d_buf;
	z.avail_in = data->d_size;
	do {
		if (len == cap || !buf) {
			if (buf && cap >= ELFFILE_MAX_DEBUGDATA) {
				err = -EFBIG;
				break;
			}
			if (buf)
				cap = cap * 2 < ELFFILE_MAX_DEBUGDATA ? cap * 2 : ELFFILE_MAX_DEBUGDATA;
			t = realloc(buf, cap);
			if (!t) {
				err = -ENOMEM;
				break;
			}
			buf = t;
		}
		z.next_out = buf + len;
		z.avail_out = cap - len;
		ret = lzma_code(&z, LZMA_FINISH);
		len = cap - z.avail_out;
		if (ret != LZMA_OK && ret != LZMA_STREAM_END) {
			err = ret == LZMA_MEMLIMIT_ERROR || ret == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
		if (ret == LZMA_OK && !z.avail_in && z.avail_out) {
			err = -EINVAL;	/* the input ended mid-stream */
			break;
		}
	} while (ret != LZMA_STREAM_END);
	lzma_end(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* A "name@plt" symbol for the stub of relocation @i of .rela.plt (@rela, over @dynsym's names). */
static int plt_symbol(Elf *elf, Elf_Data *rela, size_t i, size_t strndx, Elf_Data *dynsym,
		      uint64_t addr, uint64_t size, struct symtab *t)
{
	char name[512];
	const char *n;
	GElf_Rela r;
	GElf_Sym sym;

	size_t len;

	if (!gelf_getrela(rela, i, &r) || !gelf_getsym(dynsym, GELF_R_SYM(r.r_info), &sym) ||
	    !(n = elf_strptr(elf, strndx, sym.st_name)) || !*n)
		return 0;
	len = strnlen(n, sizeof(name) - 5);
	snprintf(name, sizeof(name), "%.*s@plt", (int)(memchr(n, '@', len) ?
					  (const char *)memchr(n, '@', len) - n : (long)len), n);
	return symtab__add_exact(t, addr, size, name);
}

int elffile__plt_symbols(Elf *elf, struct symtab *t)
{
	GElf_Shdr rsh, dsh, psh, ssh;
	Elf_Scn *rscn = find_section(elf, SHT_RELA, ".rela.plt", &rsh, ELFFILE_MAX_TABLE);
	Elf_Scn *dscn = rscn ? elf_getscn(elf, rsh.sh_link) : NULL;
	Elf_Scn *plt = find_section(elf, SHT_PROGBITS, ".plt", &psh, ELFFILE_MAX_TABLE);
	Elf_Scn *sec = find_section(elf, SHT_PROGBITS, ".plt.sec", &ssh, ELFFILE_MAX_TABLE);
	Elf_Data *rela, *dynsym;
	uint64_t first, base;
	GElf_Ehdr eh;
	size_t n;
	int added = 0, err;

	GElf_Shdr strsh;
	Elf_Scn *strscn;

	if (!rscn || !dscn || !plt || !gelf_getshdr(dscn, &dsh) || !gelf_getehdr(elf, &eh) ||
	    dsh.sh_size > ELFFILE_MAX_TABLE || !rsh.sh_entsize)
		return -ENOENT;
	/* The names' table is read whole by elf_strptr(): bound it first, as for symbols. */
	strscn = elf_getscn(elf, dsh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB ||
	    strsh.sh_size > ELFFILE_MAX_TABLE || (strsh.sh_flags & SHF_COMPRESSED))
		return -EINVAL;
	/*
	 * Where stub i is: x86-64 has a 16-byte header stub, then one per
	 * relocation, or (with IBT) the entries in .plt.sec; arm64 a 32-byte
	 * header, then 16 bytes each.
	 */
	if (eh.e_machine == EM_X86_64 && sec)
		base = ssh.sh_addr, first = 0;
	else if (eh.e_machine == EM_X86_64)
		base = psh.sh_addr, first = 16;
	else if (eh.e_machine == EM_AARCH64)
		base = psh.sh_addr, first = 32;
	else
		return -ENOTSUP;
	rela = elf_getdata(rscn, NULL);
	dynsym = elf_getdata(dscn, NULL);
	if (!rela || !dynsym)
		return -EINVAL;
	n = rsh.sh_size / rsh.sh_entsize;
	for (size_t i = 0; i < n && first + 16 * (i + 1) <= (sec ? ssh.sh_size : psh.sh_size); i++) {
		err = plt_symbol(elf, rela, i, dsh.sh_link, dynsym, base + first + 16 * i, 16, t);
		if (err)
			return added ? added : err;
		added++;
	}
	return added;
}

bool elffile__debug_bounded(Elf *elf, uint64_t max, uint64_t *bytes)
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
		if (size > max)
			return false;
		if (bytes)
			*bytes += size;
	}
	return true;
}
