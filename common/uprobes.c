// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Library lookup through maps and ld.so.cache, safely opened, and ELF symbols to uprobe offsets. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elffile.h"
#include "gopclntab.h"
#include "goprobe.h"
#include "procfile.h"
#include "procmaps.h"
#include "symtab.h"
#include "uprobes.h"

/* The most of an ld.so.cache read: glibc's own are well under 1 MiB. */
#define LDCACHE_MAX (16u << 20)

/* Does file name @base name library @lib: "c" -> libc.so*, "libc.so.6" -> itself? */
static bool names_lib(const char *base, const char *lib)
{
	size_t n = strlen(lib);

	if (strstr(lib, ".so"))
		return !strcmp(base, lib);
	return !strncmp(base, "lib", 3) && !strncmp(base + 3, lib, n) &&
	       !strncmp(base + 3 + n, ".so", 3) && (base[6 + n] == '\0' || base[6 + n] == '.');
}

/* A library @pid has mapped, opened as the very file it maps. */
static int from_maps(const char *lib, pid_t pid, int rootfd, char *path, size_t size)
{
	char maps[64], line[PATH_MAX + 128];
	struct maps_entry e;
	int fd = -ENOENT;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (fd < 0 && fgets(line, sizeof(line), f)) {
		char *copy;

		if (procmaps__parse_line(line, &e) || e.path[0] != '/')
			continue;
		copy = strdup(e.path);
		if (copy && names_lib(basename(copy), lib)) {
			fd = procfile__open_mapped(pid, &e, rootfd, NULL);
			if (fd >= 0)
				snprintf(path, size, "%s", e.path);
		}
		free(copy);
	}
	fclose(f);
	return fd;
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

/* Is the file on @fd an ELF object for this machine's architecture? */
static bool same_machine(int fd)
{
	unsigned char ident[EI_NIDENT + 4];
	uint16_t machine;
	bool ok;

	ok = pread(fd, ident, sizeof(ident), 0) == sizeof(ident) && !memcmp(ident, ELFMAG, SELFMAG);
	memcpy(&machine, ident + EI_NIDENT + 2, sizeof(machine));
#if defined(__x86_64__)
	return ok && ident[EI_CLASS] == ELFCLASS64 && machine == EM_X86_64;
#elif defined(__aarch64__)
	return ok && ident[EI_CLASS] == ELFCLASS64 && machine == EM_AARCH64;
#else
	return ok;
#endif
}

/* @name inside the root @rootfd, if it is a library for this machine. */
static int open_lib(int rootfd, const char *name, char *path, size_t size)
{
	int fd = procfile__openat(rootfd, name, PROCFILE_FOLLOW, NULL);

	if (fd < 0)
		return fd;
	if (!same_machine(fd)) {
		close(fd);
		return -ENOENT;
	}
	snprintf(path, size, "%s", name);
	return fd;
}

bool uprobes__ldcache_each(const char *map, size_t len, const char *lib,
			   bool (*found)(const char *path, void *ctx), void *ctx)
{
	const struct cache_header *h = (const void *)map;
	const struct cache_entry *e = (const void *)(map + sizeof(*h));

	if (len < sizeof(*h) || memcmp(h->magic, "glibc-ld.so.cache", 17) ||
	    h->nlibs > (len - sizeof(*h)) / sizeof(*e))
		return false;
	for (uint32_t i = 0; i < h->nlibs; i++) {
		const char *key = map + e[i].key, *value = map + e[i].value;

		/* The file is anyone's in a container: strings must end inside it. */
		if (e[i].key >= len || e[i].value >= len ||
		    !memchr(key, '\0', len - e[i].key) ||
		    !memchr(value, '\0', len - e[i].value))
			continue;
		if (names_lib(key, lib) && found(value, ctx))
			return true;
	}
	return false;
}

struct cache_lookup {
	int rootfd, fd;
	char *path;
	size_t size;
};

static bool cache_found(const char *value, void *ctx)
{
	struct cache_lookup *c = ctx;

	c->fd = open_lib(c->rootfd, value, c->path, c->size);
	return c->fd >= 0;
}

static int from_cache(const char *lib, int rootfd, char *path, size_t size)
{
	struct cache_lookup c = { rootfd, -ENOENT, path, size };
	size_t len;
	char *map;
	int fd = procfile__openat(rootfd, "/etc/ld.so.cache", PROCFILE_FOLLOW, NULL), err;

	if (fd < 0)
		return fd;
	err = procfile__read(fd, LDCACHE_MAX, &map, &len);
	close(fd);
	if (err < 0)
		return err;
	uprobes__ldcache_each(map, len, lib, cache_found, &c);
	free(map);
	return c.fd;
}

static int from_dirs(const char *lib, int rootfd, char *path, size_t size)
{
	static const char *const dirs[] = {
#if defined(__x86_64__)
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
	};
	char name[NAME_MAX], full[PATH_MAX];
	int fd;

	if (strstr(lib, ".so"))
		snprintf(name, sizeof(name), "%s", lib);
	else
		snprintf(name, sizeof(name), "lib%s.so", lib);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(full, sizeof(full), "%s/%s", dirs[i], name);
		fd = open_lib(rootfd, full, path, size);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int uprobes__open(const char *lib, pid_t pid, char *path, size_t size)
{
	int rootfd = procfile__open_root(pid), fd;

	if (rootfd < 0)
		return rootfd == -ENOENT ? -ESRCH : rootfd;
	if (strchr(lib, '/')) {
		char full[PATH_MAX], cwd[PATH_MAX];

		/* "./app", as bcc users type it: from the directory the tool runs in. */
		if (lib[0] != '/' && getcwd(cwd, sizeof(cwd)) &&
		    snprintf(full, sizeof(full), "%s/%s", cwd, lib) < (int)sizeof(full))
			lib = full;
		fd = procfile__openat(rootfd, lib, PROCFILE_FOLLOW, NULL);
		if (fd >= 0)
			snprintf(path, size, "%s", lib);
	} else {
		fd = pid ? from_maps(lib, pid, rootfd, path, size) : -ENOENT;
		if (fd < 0)
			fd = from_cache(lib, rootfd, path, size);
		if (fd < 0)
			fd = from_dirs(lib, rootfd, path, size);
	}
	close(rootfd);
	return fd;
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

/* The file offset of virtual address @addr, from the executable segment that holds it. */
static bool vaddr_to_offset(const struct elf_segment *segs, size_t n, uint64_t addr,
			    uint64_t *off)
{
	for (size_t i = 0; i < n; i++) {
		if (segs[i].exec && addr >= segs[i].vaddr && addr - segs[i].vaddr < segs[i].filesz) {
			*off = addr - segs[i].vaddr + segs[i].offset;
			return true;
		}
	}
	return false;
}

void uprobes__free(struct uprobe_func *funcs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(funcs[i].name);
		free(funcs[i].rets);
	}
	free(funcs);
}

static int cmp_func(const void *a, const void *b)
{
	const struct uprobe_func *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

ssize_t uprobes__find(int fd, const char *pattern, bool regex, size_t max,
		      struct uprobe_func **out)
{
	struct uprobe_func *funcs = NULL;
	struct elf_segment *segs = NULL;
	struct symtab t = {};
	size_t n = 0, nsegs = 0, uniq = 0;
	ssize_t err = 0;
	regex_t re;
	Elf *elf;

	if (regex && uprobes__regcomp(&re, pattern))
		return -EINVAL;
	err = elffile__begin(fd, &elf);
	if (err)
		goto out_re;
	err = elffile__segments(elf, &segs, &nsegs);
	/* .symtab and .dynsym both: a stripped library keeps only the latter. */
	if (!err) {
		elffile__symbols(elf, SHT_SYMTAB, false, &t);
		elffile__symbols(elf, SHT_DYNSYM, false, &t);
	}
	elf_end(elf);
	if (!err && t.n && !(funcs = calloc(t.n, sizeof(*funcs))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < t.n; i++) {
		uint64_t off;

		if (!matches(t.v[i].name, pattern, regex ? &re : NULL) ||
		    !vaddr_to_offset(segs, nsegs, t.v[i].addr, &off))
			continue;
		funcs[n].name = (char *)t.v[i].name;
		funcs[n++].offset = off;
	}
	/* The two tables repeat each other, and aliases share an address: one probe each. */
	if (n)
		qsort(funcs, n, sizeof(*funcs), cmp_func);
	for (size_t i = 0; !err && i < n; i++) {
		if (uniq && funcs[uniq - 1].offset == funcs[i].offset)
			continue;
		if (uniq == max) {
			err = -E2BIG;
			break;
		}
		funcs[uniq] = funcs[i];
		if (!(funcs[uniq].name = strdup(funcs[i].name)))
			err = -ENOMEM;
		uniq++;
	}
	symtab__free(&t);
	free(segs);
out_re:
	if (regex)
		regfree(&re);
	if (err || !uniq) {
		uprobes__free(funcs, uniq);	/* the names strdup()ed so far */
		return err ? err : -ENOENT;
	}
	*out = funcs;
	return uniq;
}

bool uprobes__is_go(int fd)
{
	struct gopclntab *t;
	const char *why;
	bool go;
	Elf *elf;

	if (elffile__begin(fd, &elf))
		return false;
	go = elffile__has_section(elf, ".go.buildinfo") || elffile__has_section(elf, ".gopclntab") ||
	     elffile__has_section(elf, ".note.go.buildid");
	/* Without section headers, Go's table says so. */
	if (!go) {
		int err = gopclntab__open(fd, elf, &t, &why);

		go = err != -ENOENT;
		if (!err)
			gopclntab__free(t);
	}
	elf_end(elf);
	return go;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct uprobe_func *)a)->name, ((const struct uprobe_func *)b)->name);
}

/* Function @f's entry and returns, as file offsets. */
static int go_func(int fd, unsigned int machine, const struct elf_segment *segs, size_t nsegs,
		   const struct gofunc *f, struct uprobe_func *out)
{
	ssize_t n;

	if (!vaddr_to_offset(segs, nsegs, f->entry, &out->offset))
		return -ENOENT;
	n = goprobe__returns(fd, machine, out->offset, f->end - f->entry, &out->rets);
	if (n < 0)
		return n;
	out->nrets = n;
	out->name = strdup(f->name);
	return out->name ? 0 : -ENOMEM;
}

ssize_t uprobes__find_go(int fd, const char *pattern, bool regex, size_t max,
			 struct uprobe_func **out, const char **why)
{
	struct uprobe_func *funcs = NULL;
	struct elf_segment *segs = NULL;
	struct gopclntab *t = NULL;
	size_t n = 0, nsegs = 0;
	ssize_t err;
	GElf_Ehdr eh;
	regex_t re;
	Elf *elf;

	*why = NULL;
	if (regex && uprobes__regcomp(&re, pattern))
		return -EINVAL;
	err = elffile__begin(fd, &elf);
	if (err)
		goto out_re;
	if (!gelf_getehdr(elf, &eh))
		err = -ENOEXEC;
	if (!err)
		err = elffile__segments(elf, &segs, &nsegs);
	if (!err) {
		err = gopclntab__open(fd, elf, &t, why);
		if (err == -EINVAL)
			err = -EBADMSG;	/* not the pattern's fault */
	}
	elf_end(elf);
	if (err)
		goto out;
	/* Before 1.17 arguments went on the stack and g in thread-local storage. */
	if (!strcmp(gopclntab__layout(t), "1.16-1.17")) {
		*why = "built by Go 1.16 or 1.17: only Go 1.18 and later are timed";
		err = -ENOTSUP;
		goto out;
	}
	if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64) {
		*why = "Go functions are timed on x86-64 and arm64 only";
		err = -ENOTSUP;
		goto out;
	}
	for (size_t i = 0; !err && i < gopclntab__count(t); i++) {
		struct gofunc f;

		if (gopclntab__func(t, i, &f) || !matches(f.name, pattern, regex ? &re : NULL))
			continue;
		if (n == max) {
			err = -E2BIG;
			break;
		}
		if (!funcs && !(funcs = calloc(max, sizeof(*funcs)))) {
			err = -ENOMEM;
			break;
		}
		err = go_func(fd, eh.e_machine, segs, nsegs, &f, &funcs[n]);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		if (err == -EILSEQ)
			*why = f.name;	/* lives as long as the table: copied below */
		if (err == -ENOTSUP)
			*why = "its functions' returns are found in their code by capstone, "
			       "which is not loaded";
		if (!err)
			n++;
	}
	if (err == -EILSEQ) {
		static char name[256];

		snprintf(name, sizeof(name), "%s", *why);
		*why = name;
	}
	if (!err && n)
		qsort(funcs, n, sizeof(*funcs), cmp_name);
out:
	gopclntab__free(t);
	free(segs);
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
