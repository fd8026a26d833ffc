// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Library lookup through maps and ld.so.cache, and ELF symbols to uprobe offsets with libelf. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uprobes.h"

/* Does file name @base name library @lib: "c" -> libc.so*, "libc.so.6" -> itself? */
static bool names_lib(const char *base, const char *lib)
{
	size_t n = strlen(lib);

	if (strstr(lib, ".so"))
		return !strcmp(base, lib);
	return !strncmp(base, "lib", 3) && !strncmp(base + 3, lib, n) &&
	       !strncmp(base + 3 + n, ".so", 3) && (base[6 + n] == '\0' || base[6 + n] == '.');
}

static int from_maps(const char *lib, pid_t pid, char *path, size_t size)
{
	char maps[64], line[PATH_MAX + 128], file[PATH_MAX];
	int err = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		char *copy;

		if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", file) != 1 || file[0] != '/')
			continue;
		copy = strdup(file);
		if (copy && names_lib(basename(copy), lib)) {
			snprintf(path, size, "/proc/%d/root%s", pid, file);
			err = 0;
		}
		free(copy);
	}
	fclose(f);
	return err;
}

/* glibc's ld.so.cache, "new" format: a header, fixed entries, a string table. */
struct cache_header {
	char magic[17];		/* "glibc-ld.so.cache" */
	char version[3];	/* "1.1" */
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t pad[3];
	uint32_t extension_offset;
	uint32_t unused[3];
};

struct cache_entry {
	int32_t flags;
	uint32_t key, value;	/* offsets of strings from the start of the file */
	uint32_t osversion;
	uint64_t hwcap;
};

static bool same_machine(const char *path)
{
	unsigned char ident[EI_NIDENT + 4];
	uint16_t machine;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, ident, sizeof(ident), 0) == sizeof(ident) && !memcmp(ident, ELFMAG, SELFMAG);
	memcpy(&machine, ident + EI_NIDENT + 2, sizeof(machine));
	close(fd);
#if defined(__x86_64__)
	return ok && ident[EI_CLASS] == ELFCLASS64 && machine == EM_X86_64;
#elif defined(__aarch64__)
	return ok && ident[EI_CLASS] == ELFCLASS64 && machine == EM_AARCH64;
#else
	return ok;
#endif
}

static int from_cache(const char *lib, const char *root, char *path, size_t size)
{
	char cache[PATH_MAX];
	const struct cache_header *h;
	struct stat st;
	int err = -ENOENT, fd;
	char *map;

	snprintf(cache, sizeof(cache), "%s/etc/ld.so.cache", root);
	fd = open(cache, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*h)) {
		close(fd);
		return -ENOENT;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	h = (const void *)map;
	if (!memcmp(h->magic, "glibc-ld.so.cache", 17) &&
	    h->nlibs <= (st.st_size - sizeof(*h)) / sizeof(struct cache_entry)) {
		const struct cache_entry *e = (const void *)(map + sizeof(*h));

		for (uint32_t i = 0; err && i < h->nlibs; i++) {
			const char *key = map + e[i].key, *value = map + e[i].value;

			/* The file is anyone's to corrupt: strings must end inside it. */
			if (e[i].key >= st.st_size || e[i].value >= st.st_size ||
			    !memchr(key, '\0', st.st_size - e[i].key) ||
			    !memchr(value, '\0', st.st_size - e[i].value))
				continue;
			if (!names_lib(key, lib))
				continue;
			snprintf(path, size, "%s%s", root, value);
			if (same_machine(path))
				err = 0;
		}
	}
	munmap(map, st.st_size);
	return err;
}

static int from_dirs(const char *lib, const char *root, char *path, size_t size)
{
	static const char *const dirs[] = {
#if defined(__x86_64__)
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
	};
	char name[NAME_MAX];

	if (strstr(lib, ".so"))
		snprintf(name, sizeof(name), "%s", lib);
	else
		snprintf(name, sizeof(name), "lib%s.so", lib);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, size, "%s%s/%s", root, dirs[i], name);
		if (same_machine(path))
			return 0;
	}
	return -ENOENT;
}

int uprobes__resolve(const char *lib, pid_t pid, char *path, size_t size)
{
	char root[64] = "";

	if (pid)
		snprintf(root, sizeof(root), "/proc/%d/root", pid);
	if (strchr(lib, '/')) {
		snprintf(path, size, "%s%s", root, lib);
		return access(path, F_OK) ? -ENOENT : 0;
	}
	if (pid && !from_maps(lib, pid, path, size))
		return 0;
	if (!from_cache(lib, root, path, size))
		return 0;
	return from_dirs(lib, root, path, size);
}

int uprobes__regcomp(regex_t *re, const char *pattern)
{
	size_t len = strlen(pattern) + 4;
	char *anchored = malloc(len);
	int err;

	if (!anchored)
		return -ENOMEM;
	/* Python's re.match(), which bcc uses: from the start, to anywhere. */
	snprintf(anchored, len, "^(%s)", pattern);
	err = regcomp(re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	return err ? -EINVAL : 0;
}

static bool matches(const char *name, const char *pattern, const regex_t *re)
{
	return re ? regexec(re, name, 0, NULL, 0) == 0 : fnmatch(pattern, name, 0) == 0;
}

/* The file offset of virtual address @addr, from the PT_LOAD that holds it. */
static bool vaddr_to_offset(Elf *elf, uint64_t addr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

void uprobes__free(struct uprobe_func *funcs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(funcs[i].name);
	free(funcs);
}

ssize_t uprobes__find(const char *path, const char *pattern, bool regex, size_t max,
		      struct uprobe_func **out)
{
	struct uprobe_func *funcs = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;
	regex_t re;
	ssize_t err = 0;
	Elf *elf;
	int fd;

	if (regex && uprobes__regcomp(&re, pattern))
		return -EINVAL;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_re;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		elf_end(elf);
		goto out_elf;
	}
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			uint64_t off;
			GElf_Sym sym;
			bool dup = false;

			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name || !matches(name, pattern, regex ? &re : NULL) ||
			    !vaddr_to_offset(elf, sym.st_value, &off))
				continue;
			/* .symtab and .dynsym repeat each other; aliases share an address. */
			for (size_t k = 0; k < n && !dup; k++)
				dup = funcs[k].offset == off;
			if (dup)
				continue;
			if (n == max) {
				err = -E2BIG;
				break;
			}
			if (n == cap) {
				struct uprobe_func *t;

				cap = cap ? cap * 2 : 16;
				t = realloc(funcs, cap * sizeof(*t));
				if (!t) {
					err = -ENOMEM;
					break;
				}
				funcs = t;
			}
			funcs[n].name = strdup(name);
			funcs[n++].offset = off;
		}
	}
	elf_end(elf);
out_elf:
	close(fd);
out_re:
	if (regex)
		regfree(&re);
	if (err || !n) {
		uprobes__free(funcs, n);
		return err ? err : -ENOENT;
	}
	*out = funcs;
	return n;
}

bool uprobes__is_go(const char *path)
{
	Elf_Scn *scn = NULL;
	bool go = false;
	size_t shstrndx;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while (!go && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			go = name && (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".gopclntab") ||
				      !strcmp(name, ".note.go.buildid"));
		}
	}
	elf_end(elf);
	close(fd);
	return go;
}
