/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading ELF files other users control: by pread, never mmap, with every size bounded. */
#ifndef BPFSCOPE_ELFFILE_H
#define BPFSCOPE_ELFFILE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symtab;

/* The largest symbol or string table read, and what MiniDebugInfo may inflate to. */
#define ELFFILE_MAX_TABLE (256u << 20)
#define ELFFILE_MAX_DEBUGDATA (64u << 20)

/* A loadable segment: file offsets [offset, offset + filesz) sit at vaddr. */
struct elf_segment {
	uint64_t offset, vaddr, filesz;
	bool exec;
};

/*
 * Opens the ELF file on @fd (which stays the caller's, and must stay open
 * while the handle is used). Anything but an ELF file, compressed ones
 * included, is refused: -ENOEXEC.
 */
int elffile__begin(int fd, Elf **elf);

/* The same for an image in memory, e.g. inflated MiniDebugInfo. */
int elffile__memory(void *buf, size_t len, Elf **elf);

/* Its PT_LOAD segments, in a new array. 0 or negative errno. */
int elffile__segments(Elf *elf, struct elf_segment **segs, size_t *n);

/*
 * Are its debug sections (.debug_*) each at most @max bytes, once inflated
 * where compressed? libdw reads, and inflates, every one of them whole when
 * it opens a file. Their total is added to *@bytes (NULL: not wanted). A
 * .zdebug_ section (GNU's old compression) says its size only once
 * inflated: false.
 */
bool elffile__debug_bounded(Elf *elf, uint64_t max, uint64_t *bytes);

/*
 * The executable segment of @segs whose file bytes an executable mapping
 * of @len bytes at file offset @pgoff holds, or NULL. Not the one at the
 * mapping's first byte: the kernel maps whole pages, and a linker such as
 * lld (rustc's since 1.90) starts a segment mid-page, right after the one
 * before, at a file offset past pgoff.
 */
const struct elf_segment *elf_segment__mapped(const struct elf_segment *segs, size_t n,
					      uint64_t pgoff, uint64_t len);

/* Its GNU build-id into @id; the length, or -ENOENT. */
int elffile__build_id(Elf *elf, unsigned char *id, size_t size);

/*
 * Its .gnu_debuglink: the debug file's name (a plain name, never a path:
 * one with '/' or "..", or not terminated, is -EINVAL) and CRC. 0 or
 * negative errno.
 */
int elffile__debuglink(Elf *elf, char *name, size_t size, uint32_t *crc);

/* Has it a .symtab (is it unstripped)? Has it any DWARF (.debug_info)? */
bool elffile__has_section_type(Elf *elf, GElf_Word type);
bool elffile__has_section(Elf *elf, const char *name);

/* The address and size of its section @name, with contents: 0, or -ENOENT. */
int elffile__section(Elf *elf, const char *name, uint64_t *addr, uint64_t *size);

/*
 * Adds the defined function symbols (STT_FUNC, and STT_GNU_IFUNC with
 * @ifunc) of its section of type @type (SHT_SYMTAB or SHT_DYNSYM) to @t.
 * The number added, or negative errno.
 */
int elffile__symbols(Elf *elf, GElf_Word type, bool ifunc, struct symtab *t);

/*
 * Names its PLT stubs, which have no symbols, "function@plt" as perf and
 * gdb do, from .rela.plt (x86-64 and arm64 layouts). The number added, or
 * negative errno.
 */
int elffile__plt_symbols(Elf *elf, struct symtab *t);

/*
 * The defined symbols (of any type) named @names[0..@n), from .dynsym, or
 * .symtab where .dynsym lacks them, into @syms (st_shndx SHN_UNDEF: not
 * found; st_value 0 is not found too, but for a thread-local variable,
 * whose value is its offset in its module's block).
 * How many were found, or negative errno.
 */
int elffile__lookup(Elf *elf, const char *const *names, size_t n, GElf_Sym *syms);

/*
 * Reads @len bytes at virtual address @vaddr from the ELF file open on
 * @fd, where a loadable segment holds them in the file. 0, -ENOENT when
 * none does, or negative errno.
 */
int elffile__read(Elf *elf, int fd, uint64_t vaddr, void *buf, size_t len);

/*
 * Where the dynamic loader puts the file's own TLS module id: the GOT word
 * (its virtual address, into *@slot) of a DTPMOD relocation of the file's
 * thread-local variable @name, or of none (its local-dynamic accesses);
 * @name NULL: of none only, and only the one at @slot (0: any). 0, or
 * -ENOENT (none: the file reaches its variables otherwise, as by TLS
 * descriptors).
 */
int elffile__tls_module_slot(Elf *elf, const char *name, uint64_t *slot);

/* The file offset of virtual address @vaddr: 0, or -ENOENT when no loadable segment has it. */
int elffile__offset(Elf *elf, uint64_t vaddr, uint64_t *off);

/*
 * Its MiniDebugInfo (.gnu_debugdata), inflated into a new buffer of at most
 * ELFFILE_MAX_DEBUGDATA bytes. -ENOENT without one, -EFBIG when it would
 * inflate to more, -EINVAL when it is not xz.
 */
int elffile__debugdata(Elf *elf, void **buf, size_t *len);

#endif
