// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* User and kernel symbolization: per-binary caches on libdwfl, per-process maps, vdso and JIT maps. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ksyms.h"
#include "procmaps.h"
#include "syms.h"

#define HASH_BUCKETS 1024

struct segment {
	uint64_t offset, vaddr, filesz;
};

/* A function symbol, in the module's address space (link-time address + bias). */
struct usym {
	uint64_t addr, size;
	const char *name;
};

/* An ELF file, parsed once however many processes map it. */
struct binary {
	struct binary *next;
	dev_t dev;
	ino_t ino;
	int fd;
	char *path;
	char *name;
	char *build_id;
	bool loaded, failed;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;
	struct segment *segs;
	size_t nsegs;
	struct usym *syms;	/* sorted by address */
	size_t nsyms;
};

struct vma {
	uint64_t start, end, pgoff;
	struct binary *bin;	/* NULL: anonymous (JIT code, maybe) */
};

struct jit_sym {
	uint64_t start, size;
	char *name;
};

struct proc {
	struct proc *next;
	pid_t pid;
	bool gone;		/* tracked after it exited: nothing to read */
	struct vma *vmas;
	size_t nvmas;
	struct jit_sym *jit;
	size_t njit;
};

/* Names we own: symbols stripped of their ELF version ("read@GLIBC_2.2.5"). */
struct name {
	struct name *next;
	char str[];
};

struct syms {
	struct name *names[HASH_BUCKETS];
	struct ksyms *kernel;
	bool kernel_tried;
	struct binary *binaries[HASH_BUCKETS];
	struct proc *procs[HASH_BUCKETS];
	struct binary *vdso;
	bool vdso_tried;
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
};

struct syms *syms__new(void)
{
	struct syms *s = calloc(1, sizeof(*s));
	const char *dirs = getenv("BPFSCOPE_DEBUGINFO_PATH");

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	/* libdwfl's own syntax: "-" for no CRC check, then directories. */
	s->debuginfo_path = strdup(dirs ? dirs : "-:.debug:/usr/lib/debug");
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	return s;
}

static void binary_free(struct binary *b)
{
	if (b->dwfl)
		dwfl_end(b->dwfl);
	if (b->fd >= 0)
		close(b->fd);
	free(b->path);
	free(b->name);
	free(b->build_id);
	free(b->segs);
	free(b->syms);
	free(b);
}

static void proc_free(struct proc *p)
{
	for (size_t i = 0; i < p->njit; i++)
		free(p->jit[i].name);
	free(p->jit);
	free(p->vmas);
	free(p);
}

void syms__free(struct syms *s)
{
	if (!s)
		return;
	for (int i = 0; i < HASH_BUCKETS; i++) {
		for (struct binary *b = s->binaries[i], *n; b; b = n) {
			n = b->next;
			binary_free(b);
		}
		for (struct proc *p = s->procs[i], *n; p; p = n) {
			n = p->next;
			proc_free(p);
		}
	}
	for (int i = 0; i < HASH_BUCKETS; i++) {
		for (struct name *nm = s->names[i], *n; nm; nm = n) {
			n = nm->next;
			free(nm);
		}
	}
	if (s->vdso)
		binary_free(s->vdso);
	ksyms__free(s->kernel);
	free(s->debuginfo_path);
	free(s);
}

int syms__kernel(struct syms *s, uint64_t addr, struct sym_info *out)
{
	uint64_t start;
	const char *module;

	memset(out, 0, sizeof(*out));
	if (!s->kernel_tried) {
		s->kernel_tried = true;
		s->kernel = ksyms__load();
	}
	out->name = s->kernel ? ksyms__find(s->kernel, addr, &start, &module) : NULL;
	if (!out->name)
		return -ENOENT;
	out->kind = SYM_KERNEL;
	out->offset = addr - start;
	out->module = module;
	return 0;
}

static const char *unversioned(struct syms *s, const char *name);

static int cmp_usym(const void *a, const void *b)
{
	const struct usym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Of aliases, keep the one with a size, then the shortest name. */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return (strlen(x->name) > strlen(y->name)) - (strlen(x->name) < strlen(y->name));
}

/*
 * libdwfl finds the symbols (the file's own, a debug file's, MiniDebugInfo's);
 * we keep them sorted, because its own lookup walks them one by one.
 */
static void binary_index(struct syms *s, struct binary *b)
{
	int n = dwfl_module_getsymtab(b->mod);
	size_t k = 0;

	if (n <= 0 || !(b->syms = calloc(n, sizeof(*b->syms))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name = dwfl_module_getsym_info(b->mod, i, &sym, &addr, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || !addr || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		b->syms[k++] = (struct usym){ addr, sym.st_size, unversioned(s, name) };
	}
	qsort(b->syms, k, sizeof(*b->syms), cmp_usym);
	/* One symbol per address. */
	b->nsyms = 0;
	for (size_t i = 0; i < k; i++)
		if (!b->nsyms || b->syms[b->nsyms - 1].addr != b->syms[i].addr)
			b->syms[b->nsyms++] = b->syms[i];
}

static const struct usym *binary_find(const struct binary *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nsyms;
	const struct usym *u;

	if (!b->nsyms || addr < b->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	u = &b->syms[lo];
	/* Past a symbol's end is not that symbol (a size-0 one covers its address only). */
	return addr < u->addr + (u->size ? u->size : 1) ? u : NULL;
}

/* Parses the ELF once: its loadable segments and, through libdwfl, its symbols. */
static void binary_load(struct syms *s, struct binary *b)
{
	const unsigned char *id;
	GElf_Addr id_vaddr;
	size_t nph;
	Elf *elf;
	int len;

	b->loaded = true;
	b->dwfl = dwfl_begin(&s->callbacks);
	if (!b->dwfl)
		goto fail;
	/* libdwfl closes the descriptor it is given: hand it a copy. */
	b->mod = dwfl_report_elf(b->dwfl, b->name, b->path, dup(b->fd), 0, false);
	dwfl_report_end(b->dwfl, NULL, NULL);
	if (!b->mod)
		goto fail;
	elf = dwfl_module_getelf(b->mod, &b->bias);
	if (!elf || elf_getphdrnum(elf, &nph))
		goto fail;
	b->segs = calloc(nph ? nph : 1, sizeof(*b->segs));
	if (!b->segs)
		goto fail;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			b->segs[b->nsegs++] = (struct segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	binary_index(s, b);
	len = dwfl_module_build_id(b->mod, &id, &id_vaddr);
	if (len > 0 && (b->build_id = malloc(len * 2 + 1))) {
		for (int i = 0; i < len; i++)
			sprintf(b->build_id + 2 * i, "%02x", id[i]);
	}
	return;
fail:
	b->failed = true;
}

/* The binary behind @fd, shared by key (device, inode); takes @fd. */
static struct binary *binary_get(struct syms *s, int fd, const char *path)
{
	struct binary *b;
	struct stat st;
	unsigned int h;
	char *copy;

	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	h = (st.st_dev * 31 + st.st_ino) % HASH_BUCKETS;
	for (b = s->binaries[h]; b; b = b->next) {
		if (b->dev == st.st_dev && b->ino == st.st_ino) {
			close(fd);
			return b;
		}
	}
	b = calloc(1, sizeof(*b));
	copy = strdup(path);
	if (!b || !copy) {
		free(b);
		free(copy);
		close(fd);
		return NULL;
	}
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	b->fd = fd;
	b->path = strdup(path);
	b->name = strdup(basename(copy));
	free(copy);
	b->next = s->binaries[h];
	s->binaries[h] = b;
	return b;
}

/* This kernel's vdso is every process's: read ours once. */
static struct binary *vdso_get(struct syms *s)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512];
	struct maps_entry e;
	size_t size = 0;
	FILE *f;
	int fd;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!procmaps__parse_line(line, &e) && !strcmp(e.path, "[vdso]"))
			size = e.end - e.start;
	if (f)
		fclose(f);
	if (!base || !size)
		return NULL;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0 || write(fd, (void *)base, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	s->vdso = calloc(1, sizeof(*s->vdso));
	if (!s->vdso) {
		close(fd);
		return NULL;
	}
	s->vdso->fd = fd;
	s->vdso->path = strdup("[vdso]");
	s->vdso->name = strdup("[vdso]");
	return s->vdso;
}

/*
 * Opens a mapped file as the process sees it: through its root (other
 * mount namespaces), or through map_files when the path no longer names
 * the file that is mapped (deleted, or replaced by an upgrade).
 */
static int open_mapped(pid_t pid, const struct maps_entry *e)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd;

	if (!e->deleted) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, e->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && st.st_ino == e->inode &&
		    major(st.st_dev) == e->dev_major && minor(st.st_dev) == e->dev_minor)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, e->start, e->end);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* /tmp/perf-PID.map: "START SIZE name" in hex, written by JITs (V8, the JVM with an agent, ...). */
static void load_jit(struct proc *p)
{
	char path[96], line[1024];
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", p->pid, p->pid);
	f = fopen(path, "r");
	if (!f) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", p->pid);
		f = fopen(path, "r");
	}
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long start, size;
		int at = -1;

		if (sscanf(line, "%lx %lx %n", &start, &size, &at) < 2 || at < 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (p->njit == cap) {
			struct jit_sym *t;

			cap = cap ? cap * 2 : 256;
			t = realloc(p->jit, cap * sizeof(*t));
			if (!t)
				break;
			p->jit = t;
		}
		p->jit[p->njit++] = (struct jit_sym){ start, size, strdup(line + at) };
	}
	if (f)
		fclose(f);
	if (p->njit)
		qsort(p->jit, p->njit, sizeof(*p->jit), cmp_jit);
}

static struct proc *proc_find(struct syms *s, pid_t pid)
{
	for (struct proc *p = s->procs[pid % HASH_BUCKETS]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

int syms__track_pid(struct syms *s, pid_t pid)
{
	char path[64], line[PATH_MAX + 128];
	struct maps_entry e;
	struct proc *p;
	size_t cap = 0;
	FILE *f;

	if (proc_find(s, pid))
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->next = s->procs[pid % HASH_BUCKETS];
	s->procs[pid % HASH_BUCKETS] = p;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f) {
		p->gone = true;
		return -ESRCH;
	}
	while (fgets(line, sizeof(line), f)) {
		struct binary *bin = NULL;

		if (procmaps__parse_line(line, &e) || !e.exec)
			continue;
		if (!strcmp(e.path, "[vdso]")) {
			bin = vdso_get(s);
		} else if (e.path[0] == '/') {
			int fd = open_mapped(pid, &e);

			if (fd >= 0)
				bin = binary_get(s, fd, e.path);
		}
		if (p->nvmas == cap) {
			struct vma *t;

			cap = cap ? cap * 2 : 32;
			t = realloc(p->vmas, cap * sizeof(*t));
			if (!t)
				break;
			p->vmas = t;
		}
		p->vmas[p->nvmas++] = (struct vma){ e.start, e.end, e.pgoff, bin };
	}
	fclose(f);
	load_jit(p);
	return 0;
}

/* "read@GLIBC_2.2.5" and "read@@GLIBC_2.2.5" are read, as bcc and perf print them. */
static const char *unversioned(struct syms *s, const char *name)
{
	const char *at = name ? strchr(name, '@') : NULL;
	size_t len = at ? (size_t)(at - name) : 0;
	unsigned int h = 0;
	struct name *nm;

	if (!at || !len)
		return name;
	for (size_t i = 0; i < len; i++)
		h = h * 31 + (unsigned char)name[i];
	h %= HASH_BUCKETS;
	for (nm = s->names[h]; nm; nm = nm->next)
		if (!strncmp(nm->str, name, len) && !nm->str[len])
			return nm->str;
	nm = malloc(sizeof(*nm) + len + 1);
	if (!nm)
		return name;
	memcpy(nm->str, name, len);
	nm->str[len] = '\0';
	nm->next = s->names[h];
	s->names[h] = nm;
	return nm->str;
}

static bool binary_lookup(struct syms *s, struct binary *b, const struct vma *v, uint64_t addr,
			  struct sym_info *out)
{
	uint64_t file_off = addr - v->start + v->pgoff, vaddr = 0;
	const struct usym *u;
	bool found = false;

	if (!b->loaded)
		binary_load(s, b);
	out->module = b->name;
	out->path = b->path;
	out->build_id = b->build_id;
	if (b->failed)
		return false;
	/* Run-time address -> file offset -> the ELF's own virtual address. */
	for (size_t i = 0; i < b->nsegs; i++) {
		const struct segment *g = &b->segs[i];

		if (file_off >= g->offset && file_off < g->offset + g->filesz) {
			vaddr = file_off - g->offset + g->vaddr;
			found = true;
			break;
		}
	}
	if (!found)
		return false;
	u = binary_find(b, vaddr + b->bias);
	if (!u)
		return false;
	out->name = u->name;
	out->offset = vaddr + b->bias - u->addr;
	return true;
}

int syms__user(struct syms *s, pid_t pid, uint64_t addr, struct sym_info *out)
{
	struct proc *p;

	memset(out, 0, sizeof(*out));
	p = proc_find(s, pid);
	if (!p) {
		syms__track_pid(s, pid);
		p = proc_find(s, pid);
	}
	if (!p)
		return -ENOENT;
	for (size_t i = 0; i < p->nvmas; i++) {
		const struct vma *v = &p->vmas[i];

		if (addr < v->start || addr >= v->end || !v->bin)
			continue;
		if (binary_lookup(s, v->bin, v, addr, out)) {
			out->kind = v->bin == s->vdso ? SYM_VDSO : SYM_USER;
			return 0;
		}
		return -ENOENT;
	}
	/* Not in a file: code a JIT wrote, if it left a map. */
	if (p->njit) {
		size_t lo = 0, hi = p->njit;

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (p->jit[mid].start <= addr)
				lo = mid;
			else
				hi = mid;
		}
		if (addr >= p->jit[lo].start && addr < p->jit[lo].start + p->jit[lo].size) {
			out->name = p->jit[lo].name;
			out->offset = addr - p->jit[lo].start;
			out->module = "[jit]";
			out->kind = SYM_JIT;
			return 0;
		}
	}
	return -ENOENT;
}

int syms__file(struct syms *s, int fd, uint64_t offset, struct sym_info *out)
{
	struct vma whole = { 0, UINT64_MAX, 0, NULL };
	int copy = dup(fd);

	memset(out, 0, sizeof(*out));
	if (copy < 0)
		return -errno;
	whole.bin = binary_get(s, copy, "[file]");
	if (!whole.bin)
		return -ENOMEM;
	if (!binary_lookup(s, whole.bin, &whole, offset, out))
		return -ENOENT;
	out->kind = SYM_USER;
	return 0;
}

size_t sym_info__format(const struct sym_info *si, char *buf, size_t size, unsigned int flags)
{
	size_t len;

	if (!si->name)
		return snprintf(buf, size, "%s", SYM_UNKNOWN_NAME);
	len = snprintf(buf, size, "%s", si->name);
	if ((flags & SYM_FMT_OFFSET) && len < size)
		len += snprintf(buf + len, size - len, "+0x%llx", (unsigned long long)si->offset);
	if ((flags & SYM_FMT_MODULE) && si->module && len < size)
		len += snprintf(buf + len, size - len, " [%s]", si->module);
	return len;
}
