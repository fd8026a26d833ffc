// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Binaries, each read once however many processes map it: symbols, debug files, inlined calls, Go tables. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "debuginfo.h"
#include "gopclntab.h"
#include "inlines.h"
#include "procfile.h"
#include "procmaps.h"
#include "runtimes/runtime.h"
#include "syms_priv.h"
#include "tool.h"

void binary__free(struct binary *b)
{
	if (b->fd >= 0)
		close(b->fd);
	free(b->path);
	free(b->name);
	free(b->build_id);
	free(b->segs);
	symtab__free(&b->syms);
	inlines__free(b->inlines);
	gopclntab__free(b->go);
	runtime__binary_free(b->runtime);
	free(b);
}

static void release_fd(struct syms *s, struct binary *b)
{
	if (b->fd >= 0) {
		close(b->fd);
		b->fd = -1;
		s->open_fds--;
	}
}

/*
 * Keeps a descriptor of the ELF file on @fd, which has DWARF, to name the
 * calls inlined at the binary's addresses: while descriptors last.
 */
static void open_inlines(struct syms *s, struct binary *b, int fd)
{
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (copy < 0 || !syms__can_hold(s, copy)) {
		pr_debug("%s: inlined calls not named: out of descriptors", b->path);
		if (copy >= 0)
			close(copy);
		return;
	}
	b->inlines = inlines__open(copy, b->root ? b->root->fd : -1, !s->raw_names);
	s->open_fds += !!b->inlines;
}

/* Symbols from a debug file, if one is found that is provably this binary's. */
static void load_debug_file(struct syms *s, struct binary *b, const char *debuglink,
			    uint32_t crc)
{
	struct debuginfo_query q = {
		.rootfd = b->root ? b->root->fd : -1,
		.path = b->path,
		.build_id = b->id_len > 0 ? b->id : NULL,
		.build_id_len = b->id_len > 0 ? b->id_len : 0,
		.debuglink = debuglink,
		.crc = crc,
	};
	char found[PATH_MAX] = "";
	int fd = debuginfo__find(s->debuginfo, &q, found, sizeof(found));
	Elf *elf;

	if (fd < 0)
		return;
	if (!elffile__begin(fd, &elf)) {
		int n = elffile__symbols(elf, SHT_SYMTAB, true, &b->syms);

		pr_debug("%s: %d symbols from %s", b->path, n > 0 ? n : 0, found);
		if (!b->inlines && elffile__has_section(elf, ".debug_info"))
			open_inlines(s, b, fd);
		elf_end(elf);
	}
	close(fd);
}

/* Symbols from MiniDebugInfo: an xz-compressed ELF of them inside the binary. */
static void load_debugdata(struct binary *b, Elf *elf)
{
	void *buf;
	size_t len;
	Elf *mini;
	int err = elffile__debugdata(elf, &buf, &len);

	if (err) {
		if (err != -ENOENT)
			pr_debug("%s: MiniDebugInfo not read: %s", b->path, strerror(-err));
		return;
	}
	if (!elffile__memory(buf, len, &mini)) {
		elffile__symbols(mini, SHT_SYMTAB, true, &b->syms);
		elf_end(mini);
	}
	free(buf);
}

/*
 * Go binaries name their functions, files and lines, inlined calls
 * included, in their own table, which -s -w does not strip: its names are
 * the ones Go's own tracebacks use.
 */
static void load_go(struct syms *s, struct binary *b, Elf *elf)
{
	const char *why;
	size_t n;
	int err = gopclntab__open(b->fd, elf, &b->go, &why);

	if (err) {
		if (err != -ENOENT) {
			pr_debug("%s: Go symbol table not read: %s", b->path, why ? why : strerror(-err));
			if (!s->lost.go_unread++)
				s->lost.go_why = why ? why : "malformed, or too large";
		}
		return;
	}
	n = gopclntab__count(b->go);
	for (size_t i = 0; i < n; i++) {
		struct gofunc f;

		if (!gopclntab__func(b->go, i, &f) &&
		    symtab__add_exact(&b->syms, f.entry, f.end - f.entry, f.name))
			break;
	}
	pr_debug("%s: %zu functions from its Go symbol table (layout %s)", b->path, n,
		 gopclntab__layout(b->go));
}

/*
 * A Go binary's ELF symbols, where its Go table has no function: C code
 * linked in with cgo. Go's own functions keep the table's names, so a
 * stripped binary's frames read as an unstripped one's.
 */
static void add_elf_symbols(struct binary *b, Elf *elf)
{
	struct symtab elf_syms = {};

	symtab__finish(&b->syms);
	elffile__symbols(elf, SHT_DYNSYM, true, &elf_syms);
	elffile__plt_symbols(elf, &elf_syms);
	elffile__symbols(elf, SHT_SYMTAB, true, &elf_syms);
	symtab__finish(&elf_syms);
	for (size_t i = 0, go = b->syms.n; i < elf_syms.n; i++) {
		/* Only Go's functions, sorted, are looked in: those added follow them. */
		const struct symtab sorted = { .v = b->syms.v, .n = go };
		const struct sym *y = &elf_syms.v[i];

		if (!symtab__find(&sorted, y->addr) &&
		    symtab__add_exact(&b->syms, y->addr, y->size, y->name))
			break;
	}
	symtab__free(&elf_syms);
}

/*
 * Reads the binary once: its segments, build-id and function symbols, from
 * its own tables or, when stripped, its MiniDebugInfo or debug file. Then
 * its descriptor goes.
 */
/*
 * The entry point, unnamed in a stripped binary, is where every process
 * begins, ld.so's for all dynamically linked ones: a process blocked or
 * sampled before its first instruction is there.
 */
static void name_entry(struct binary *b, Elf *elf)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || !eh.e_entry || symtab__find(&b->syms, eh.e_entry))
		return;
	if (!symtab__add(&b->syms, eh.e_entry, 0, "_start"))
		symtab__finish(&b->syms);
}

void binary__load(struct syms *s, struct binary *b)
{
	char debuglink[NAME_MAX + 1];
	uint32_t crc = 0;
	bool has_debuglink;
	Elf *elf;

	b->loaded = true;
	/* Read again after it was let go: what it read the first time goes first. */
	free(b->segs);
	b->segs = NULL;
	b->nsegs = 0;
	free(b->build_id);
	b->build_id = NULL;
	if (b->fd < 0 || elffile__begin(b->fd, &elf)) {
		b->failed = true;
		s->lost.unreadable++;
		release_fd(s, b);
		return;
	}
	if (elffile__segments(elf, &b->segs, &b->nsegs))
		b->failed = true;
	b->id_len = elffile__build_id(elf, b->id, sizeof(b->id));
	if (b->id_len > 0 && (b->build_id = malloc(b->id_len * 2 + 1))) {
		for (int i = 0; i < b->id_len; i++)
			sprintf(b->build_id + 2 * i, "%02x", b->id[i]);
	}
	load_go(s, b, elf);
	if (b->go) {
		/* Go's table names inlined calls too, and its DWARF need not be read. */
		add_elf_symbols(b, elf);
	} else {
		elffile__symbols(elf, SHT_DYNSYM, true, &b->syms);
		elffile__plt_symbols(elf, &b->syms);
		if (elffile__has_section(elf, ".debug_info"))
			open_inlines(s, b, b->fd);
		if (elffile__symbols(elf, SHT_SYMTAB, true, &b->syms) == -ENOENT) {
			/* Stripped: what the distribution or the builder left elsewhere. */
			has_debuglink = !elffile__debuglink(elf, debuglink, sizeof(debuglink), &crc);
			load_debugdata(b, elf);
			load_debug_file(s, b, has_debuglink ? debuglink : NULL, crc);
		}
	}
	symtab__finish(&b->syms);
	name_entry(b, elf);
	elf_end(elf);
	release_fd(s, b);
}

/* Gives @b the next number, by which frames found by file name it. */
static void number(struct syms *s, struct binary *b)
{
	if (s->nids == s->ids_cap) {
		size_t cap = s->ids_cap ? s->ids_cap * 2 : 256;
		struct binary **t = realloc(s->by_id, cap * sizeof(*t));

		if (!t) {
			b->num = UINT32_MAX;
			return;
		}
		s->by_id = t;
		s->ids_cap = cap;
	}
	b->num = s->nids;
	s->by_id[s->nids++] = b;
}

/* A debug file of @b (open on @fd), for the observer's CFI where @b has no .eh_frame. */
static int debug_fd(struct syms *s, struct binary *b, Elf *elf)
{
	unsigned char id[MAX_BUILD_ID];
	char debuglink[NAME_MAX + 1], found[PATH_MAX];
	uint32_t crc = 0;
	int len = elffile__build_id(elf, id, sizeof(id));
	struct debuginfo_query q = {
		.rootfd = b->root ? b->root->fd : -1,
		.path = b->path,
		.build_id = len > 0 ? id : NULL,
		.build_id_len = len > 0 ? len : 0,
		.debuglink = elffile__debuglink(elf, debuglink, sizeof(debuglink), &crc) ? NULL
											: debuglink,
		.crc = crc,
	};

	return debuginfo__find(s->debuginfo, &q, found, sizeof(found));
}

/* Shows the observer a binary seen for the first time, while it is open. */
static void observe_binary(struct syms *s, struct binary *b)
{
	unsigned char id[MAX_BUILD_ID];
	Elf *elf, *debug = NULL;
	int dfd = -1, len;

	if (!s->observer.binary || b->fd < 0 || elffile__begin(b->fd, &elf))
		return;
	len = elffile__build_id(elf, id, sizeof(id));
	if (!elffile__has_section(elf, ".eh_frame_hdr")) {
		dfd = debug_fd(s, b, elf);
		if (dfd >= 0 && elffile__begin(dfd, &debug))
			debug = NULL;
	}
	/* Its interpreter, if it is one: its frames are walked by the observer's BPF side. */
	if (!b->runtime)
		b->runtime = runtime__probe(b->fd, elf, b->path);
	b->observed = s->observer.binary(s->observer.ctx, &(struct syms_binary){
		b->path, len > 0 ? id : NULL, len > 0 ? len : 0, b->num,
		b == s->vdso ? 0 : b->dev, b->ino, b->fd, b->runtime, b->observed }, elf, debug);
	if (debug)
		elf_end(debug);
	if (dfd >= 0)
		close(dfd);
	elf_end(elf);
}

static unsigned int binary_hash(dev_t dev, uint64_t ino)
{
	return (dev * 31 + ino) % BUCKETS;
}

struct binary *binary__find(struct syms *s, const struct stat *st)
{
	for (struct binary *b = s->binaries[binary_hash(st->st_dev, st->st_ino)]; b; b = b->next)
		if (b->dev == st->st_dev && b->ino == st->st_ino && b->size == st->st_size &&
		    b->mtime.tv_sec == st->st_mtim.tv_sec && b->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return b;
	return NULL;
}

/*
 * A mapping's device and inode are its file's while it is mapped; its size
 * and modification time, which tell a new file from a deleted one whose
 * inode it got, take a stat. On a busy machine each exec maps the same
 * few libraries: a stat of one per tenth of a second is enough, and leaves
 * a new file that long to get the inode of a deleted one and be mapped.
 */
#define BINARY_RECHECK_MS 100

struct binary *binary__checked(struct syms *s, dev_t dev, uint64_t ino, long long now_ms)
{
	for (struct binary *b = s->binaries[binary_hash(dev, ino)]; b; b = b->next)
		if (b->dev == dev && b->ino == ino && now_ms - b->checked_ms < BINARY_RECHECK_MS)
			return b;
	return NULL;
}

bool binary__stale(struct syms *s, const struct binary *b)
{
	return b->observed && s->observer.stale && s->observer.stale(s->observer.ctx, b->observed);
}

/* The binary behind @fd (stat @st), shared by (device, inode); takes @fd. */
struct binary *binary__get(struct syms *s, int fd, const struct stat *st,
			   const char *path, struct root *root)
{
	unsigned int h = binary_hash(st->st_dev, st->st_ino);
	struct binary *b = binary__find(s, st);
	char *copy;
	bool hold;

	if (b) {
		/* What the observer let go of, shown again through this process's file. */
		if (binary__stale(s, b)) {
			if (b->fd < 0) {
				b->fd = fd;
				observe_binary(s, b);
				b->fd = -1;
			} else {
				observe_binary(s, b);
			}
		}
		/*
		 * Its tables let go, and mapped again: this process may be gone
		 * by the report that names its frames, so its file is held.
		 */
		if (b->evicted && !b->loaded && b->fd < 0 && syms__can_hold(s, fd)) {
			b->fd = fd;
			s->open_fds++;
			return b;
		}
		close(fd);
		return b;
	}
	b = calloc(1, sizeof(*b));
	copy = strdup(path);
	if (!b || !copy) {
		free(b);
		free(copy);
		close(fd);
		return NULL;
	}
	b->dev = st->st_dev;
	b->ino = st->st_ino;
	b->size = st->st_size;
	b->mtime = st->st_mtim;
	b->fd = fd;
	b->root = root;
	b->path = strdup(path);
	b->name = strdup(basename(copy));
	free(copy);
	b->next = s->binaries[h];
	s->binaries[h] = b;
	number(s, b);
	observe_binary(s, b);
	hold = syms__can_hold(s, fd);
	s->open_fds++;
	/* Out of descriptors to hold: read it now and let this one go. */
	if (!hold)
		binary__load(s, b);
	return b;
}

/* This kernel's vdso is every process's: read ours once. */
struct binary *binary__vdso(struct syms *s)
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
	f = fopen("/proc/self/maps", "re");
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
	s->open_fds++;
	number(s, s->vdso);
	observe_binary(s, s->vdso);
	return s->vdso;
}

/* Is the file open on @fd the one @b was read from (not another given its inode since)? */
static bool same_file(const struct binary *b, int fd)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_dev == b->dev && st.st_ino == b->ino &&
	       st.st_size == b->size && st.st_mtim.tv_sec == b->mtime.tv_sec &&
	       st.st_mtim.tv_nsec == b->mtime.tv_nsec;
}

/*
 * @b's tables were let go and a frame needs them: its file again, held
 * since a process mapped it again, or the very one a process maps (its
 * map_files entry), or else by its path in its root. Whether it could be.
 */
static bool binary_reopen(struct syms *s, struct binary *b)
{
	int fd = b->fd;

	for (int i = 0; i < BUCKETS && fd < 0; i++)
		for (struct proc *p = s->procs[i]; p && fd < 0; p = p->next)
			for (size_t k = 0; k < p->nvmas && fd < 0; k++) {
				struct maps_entry e = {
					.start = p->vmas[k].start, .end = p->vmas[k].end,
					.dev_major = major(b->dev), .dev_minor = minor(b->dev),
					.inode = b->ino, .path = b->path,
				};
				struct stat st;

				if (p->vmas[k].bin != b || p->gone)
					continue;
				fd = procfile__open_mapped(p->key.tgid, &e, p->root ? p->root->fd : -1, &st);
				if (fd >= 0 && !same_file(b, fd)) {
					close(fd);
					fd = -1;
				}
			}
	if (fd < 0 && b->root) {
		fd = procfile__openat(b->root->fd, b->path, PROCFILE_NOFOLLOW, NULL);
		if (fd >= 0 && !same_file(b, fd)) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		b->loaded = b->failed = true;
		if (b->unmapped)
			s->lost.unmapped_gone++;
		else
			s->lost.gone++;
		return false;
	}
	if (b->fd < 0) {
		b->fd = fd;
		s->open_fds++;
	}
	if (b->unmapped)
		s->lost.remapped++;
	else
		s->lost.reread++;
	return true;
}

bool binary__lookup(struct syms *s, struct binary *b, const struct vma *v, uint64_t addr,
		    struct sym_info *out)
{
	uint64_t file_off = addr - v->start + v->pgoff, vaddr = 0;
	const struct sym *u;
	bool found = false;

	budget__note(s, b);
	b->used = ++s->clock;
	if (!b->loaded && (!b->evicted || binary_reopen(s, b)))
		binary__load(s, b);
	out->module = b->name;
	out->path = b->path;
	out->build_id = b->build_id;
	if (b->failed)
		return false;
	/* Run-time address -> file offset -> the ELF's own virtual address. */
	for (size_t i = 0; i < b->nsegs; i++) {
		const struct elf_segment *g = &b->segs[i];

		if (file_off >= g->offset && file_off - g->offset < g->filesz) {
			vaddr = file_off - g->offset + g->vaddr;
			found = true;
			break;
		}
	}
	if (!found)
		return false;
	out->binary = b;
	out->vaddr = vaddr;
	u = symtab__find(&b->syms, vaddr);
	if (!u)
		return false;
	out->name = s->raw_names ? u->name : symtab__name(&b->syms, u);
	out->raw = u->name;
	out->offset = vaddr - u->addr;
	return true;
}
