// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbol caches: one per program image (pid, start, exec), one per binary (device, inode). */
#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#include "debuginfo.h"
#include "elffile.h"
#include "gopclntab.h"
#include "inlines.h"
#include "ksyms.h"
#include "perfmap.h"
#include "procfile.h"
#include "procmaps.h"
#include "runtime.h"
#include "symtab.h"
#include "syms.h"
#include "tool.h"

#define BUCKETS 4096
#define MAX_BUILD_ID 64

/* What "/" is to a process: ours, or a container's. Shared by all who have it. */
struct root {
	struct root *next;
	dev_t dev;
	ino_t ino;
	int fd;		/* O_PATH */
};

/*
 * An ELF file, read once however many processes map it. Known by its
 * device and inode, and by its size and modification time, which tell it
 * from a file that got the inode of one deleted since (a package upgrade).
 */
struct binary {
	struct binary *next;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd;			/* held from the first mapping seen until it is read */
	char *path;		/* as the first process that mapped it sees it */
	char *name;		/* its base name, for "[module]" */
	struct root *root;	/* where that process's paths mean something */
	unsigned char id[MAX_BUILD_ID];
	int id_len;
	char *build_id;		/* hex */
	bool loaded, failed;
	struct elf_segment *segs;
	size_t nsegs;
	struct symtab syms;
	void *observed;		/* what the observer keeps of it */
	uint32_t num;		/* its index in syms' binaries by number */
	struct inlines *inlines;	/* from its DWARF or its debug file's; NULL if none */
	struct gopclntab *go;		/* a Go binary's own table; NULL if none */
	struct runtime_binary *runtime;	/* the interpreter it holds, if any */
	uint64_t used;			/* when it last named a frame, by syms' clock */
	uint64_t bytes;			/* its tables' size when last counted in syms' held */
	bool evicted;			/* its tables let go for the budget: read again when needed */
};

struct vma {
	uint64_t start, end, pgoff;
	struct binary *bin;	/* NULL: anonymous (JIT code, maybe) */
};

/* One program image: a pid, until it execs or exits. */
struct proc {
	struct proc *next;
	struct proc_key key;
	bool gone;		/* not read: exited, or its pid names another now */
	uid_t uid;
	pid_t nspid;		/* its pid where it lives, for perf-NSPID.map */
	struct root *root;
	struct vma *vmas;	/* sorted by start, as the maps file lists them */
	size_t nvmas;
	bool jit_tried;
	struct perfmap jit;
	uint64_t jit_used;	/* when its perf map last named a frame */
	long long read_ms;	/* when its maps were last read, monotonic */
	unsigned int rereads;	/* how often since */
	bool reread;		/* asked to read them again, too soon after the last time */
	bool prefetched;	/* read at its exec, not yet in a stack */
	bool exited;		/* found exited by syms__forget_exited() */
	bool superseded;	/* its process has exec'd since: not read again */
	bool counted;		/* ... and its loss is in syms' losses */
	/*
	 * Which image the maps were read from, whatever exec_id asked: if a
	 * later image's maps read the same, the exec had happened before.
	 */
	struct image_sig {
		uint64_t vdso, stack_end;	/* placed anew by each exec, with ASLR */
		dev_t exe_dev;
		ino_t exe_ino;
	} sig;
};

struct losses {
	unsigned long long unopened;	/* mapped files we could not open */
	unsigned long long no_fds;	/* ... for lack of descriptors */
	unsigned long long unreadable;	/* opened, but not read as ELF */
	unsigned long long jit_refused;	/* perf maps not trusted */
	unsigned long long jit_cut;	/* perf maps cut at PERFMAP_MAX_BYTES */
	unsigned long long reused;	/* pids reused before the process was read */
	unsigned long long execed;	/* images in stacks, exec'd away before they were read */
	unsigned long long go_unread;	/* Go binaries whose pclntab was not read */
	const char *go_why;		/* ... the first one's reason */
	unsigned long long evicted;	/* binaries' and perf maps' tables let go for the budget */
	unsigned long long reread;	/* ... read again when needed */
	unsigned long long gone;	/* ... whose file was gone by then */
};

struct syms {
	struct binary *binaries[BUCKETS];
	struct proc *procs[BUCKETS];
	struct root *roots;
	struct ksyms *kernel;
	bool kernel_tried;
	struct binary *vdso;
	bool vdso_tried;
	struct debuginfo *debuginfo;
	size_t open_fds, fd_budget;
	long ticks_per_sec;
	struct losses lost;
	struct syms_observer observer;	/* .binary NULL: nobody */
	struct binary **by_id;		/* every binary, by its number */
	size_t nids, ids_cap;
	size_t prefetched;		/* processes read at their exec, not yet in a stack */
	struct runtime_names *runtime_names;	/* interpreted runtimes' frames, named */
	uint64_t budget;		/* bytes the binaries' tables and perf maps may hold */
	uint64_t held;			/* ... hold, as last counted */
	uint64_t clock;			/* a tick each lookup, for least-recently-used */
	uint64_t trimmed;		/* the clock at the last syms__trim() */
	struct binary **recent;		/* binaries named since, to count again */
	size_t nrecent, recent_cap;
};

struct syms *syms__new(void)
{
	struct syms *s = calloc(1, sizeof(*s));
	unsigned long limit;

	if (!s)
		return NULL;
	s->debuginfo = debuginfo__new();
	s->runtime_names = runtime_names__new();
	if (!s->debuginfo || !s->runtime_names) {
		debuginfo__free(s->debuginfo);
		runtime_names__free(s->runtime_names);
		free(s);
		return NULL;
	}
	/*
	 * A descriptor per binary until the report reads it: as many as the
	 * limit allows with room for the tool's own, then binaries are read
	 * as they come and closed.
	 */
	limit = procfile__raise_nofile();
	s->fd_budget = limit > 512 ? limit - 256 : limit / 2;
	if (s->fd_budget > 65536)
		s->fd_budget = 65536;
	s->ticks_per_sec = sysconf(_SC_CLK_TCK);
	if (s->ticks_per_sec <= 0)
		s->ticks_per_sec = 100;
	s->budget = (uint64_t)SYMS_DEFAULT_MEMORY_MB << 20;
	return s;
}

void syms__set_budget(struct syms *s, uint64_t bytes)
{
	s->budget = bytes;
}

void syms__observe(struct syms *s, const struct syms_observer *o)
{
	s->observer = *o;
}

int syms__use_debuginfod(struct syms *s, unsigned int seconds)
{
	return debuginfo__enable_debuginfod(s->debuginfo, seconds);
}

static void binary_free(struct binary *b)
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

static void proc_free(struct syms *s, struct proc *p)
{
	s->held -= p->jit.bytes;
	perfmap__free(&p->jit);
	free(p->vmas);
	free(p);
}

void syms__free(struct syms *s)
{
	if (!s)
		return;
	for (int i = 0; i < BUCKETS; i++) {
		for (struct binary *b = s->binaries[i], *n; b; b = n) {
			n = b->next;
			binary_free(b);
		}
		for (struct proc *p = s->procs[i], *n; p; p = n) {
			n = p->next;
			proc_free(s, p);
		}
	}
	for (struct root *r = s->roots, *n; r; r = n) {
		n = r->next;
		close(r->fd);
		free(r);
	}
	if (s->vdso)
		binary_free(s->vdso);
	ksyms__free(s->kernel);
	debuginfo__free(s->debuginfo);
	runtime_names__free(s->runtime_names);
	free(s->by_id);
	free(s->recent);
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

/* Process @pid's root, shared with every process that has the same one. */
static struct root *root_get(struct syms *s, pid_t pid)
{
	int fd = procfile__open_root(pid);
	struct root *r;
	struct stat st;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	for (r = s->roots; r; r = r->next) {
		if (r->dev == st.st_dev && r->ino == st.st_ino) {
			close(fd);
			return r;
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		return NULL;
	}
	*r = (struct root){ s->roots, st.st_dev, st.st_ino, fd };
	s->roots = r;
	return r;
}

static void release_fd(struct syms *s, struct binary *b)
{
	if (b->fd >= 0) {
		close(b->fd);
		b->fd = -1;
		s->open_fds--;
	}
}

/* Symbols from a debug file, if one is found that is provably this binary's. */
/*
 * Keeps a descriptor of the ELF file on @fd, which has DWARF, to name the
 * calls inlined at the binary's addresses: while descriptors last.
 */
static void open_inlines(struct syms *s, struct binary *b, int fd)
{
	int copy;

	if (s->open_fds >= s->fd_budget) {
		pr_debug("%s: inlined calls not named: out of descriptors", b->path);
		return;
	}
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return;
	b->inlines = inlines__open(copy, b->root ? b->root->fd : -1);
	s->open_fds += !!b->inlines;
}

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

static void binary_load(struct syms *s, struct binary *b)
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

/* What @b's tables hold now, in bytes. */
static uint64_t binary_bytes(const struct binary *b)
{
	return b->syms.bytes + inlines__bytes(b->inlines) + gopclntab__bytes(b->go);
}

/* Lets @b's tables go, to be read again (binary_reopen) if a frame needs them. */
static void binary_evict(struct syms *s, struct binary *b)
{
	symtab__free(&b->syms);
	memset(&b->syms, 0, sizeof(b->syms));
	inlines__free(b->inlines);
	b->inlines = NULL;
	gopclntab__free(b->go);
	b->go = NULL;
	b->loaded = false;
	b->evicted = true;
	s->held -= b->bytes;
	b->bytes = 0;
	s->lost.evicted++;
}

static void proc_evict(struct syms *s, struct proc *p)
{
	s->held -= p->jit.bytes;
	perfmap__free(&p->jit);
	memset(&p->jit, 0, sizeof(p->jit));
	p->jit_tried = false;
	s->lost.evicted++;
}

/* A binary names its first frame since the last trim: its tables will be counted again. */
static void note_recent(struct syms *s, struct binary *b)
{
	if (b->used > s->trimmed)
		return;
	if (s->nrecent == s->recent_cap) {
		size_t cap = s->recent_cap ? 2 * s->recent_cap : 64;
		struct binary **v = reallocarray(s->recent, cap, sizeof(*v));

		if (!v)
			return;	/* counted at the next trim it is named in */
		s->recent = v;
		s->recent_cap = cap;
	}
	s->recent[s->nrecent++] = b;
}

struct lru {
	uint64_t used;
	struct binary *b;	/* NULL: a process's perf map */
	struct proc *p;
};

static int cmp_lru(const void *a, const void *b)
{
	const struct lru *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

void syms__trim(struct syms *s)
{
	struct lru *v;
	size_t n = 0, cap = 0;

	/* Tables grow as they are used (inlined calls decode unit by unit): count those named. */
	for (size_t i = 0; i < s->nrecent; i++) {
		struct binary *b = s->recent[i];
		uint64_t now = b->loaded ? binary_bytes(b) : 0;

		s->held += now - b->bytes;
		b->bytes = now;
	}
	s->nrecent = 0;
	if (s->held <= s->budget) {
		s->trimmed = s->clock;
		return;
	}
	for (int i = 0; i < BUCKETS; i++) {
		for (struct binary *b = s->binaries[i]; b; b = b->next)
			cap++;
		for (struct proc *p = s->procs[i]; p; p = p->next)
			cap++;
	}
	v = malloc(cap * sizeof(*v));
	if (!v)
		return;
	/*
	 * Not those named since the last trim: the stack just named would
	 * read them again at once, every stack over, if they alone overflow.
	 */
	for (int i = 0; i < BUCKETS; i++) {
		for (struct binary *b = s->binaries[i]; b; b = b->next)
			if (b->bytes && b->used <= s->trimmed && b != s->vdso)
				v[n++] = (struct lru){ b->used, b, NULL };
		for (struct proc *p = s->procs[i]; p; p = p->next)
			if (p->jit.bytes && p->jit_used <= s->trimmed)
				v[n++] = (struct lru){ p->jit_used, NULL, p };
	}
	qsort(v, n, sizeof(*v), cmp_lru);
	/* Down to three quarters, so that the next trims have room to keep. */
	for (size_t i = 0; i < n && s->held > s->budget / 4 * 3; i++) {
		if (v[i].b)
			binary_evict(s, v[i].b);
		else
			proc_evict(s, v[i].p);
	}
	free(v);
	s->trimmed = s->clock;
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
	b->runtime = runtime__probe(b->fd, elf, b->path);
	b->observed = s->observer.binary(s->observer.ctx, &(struct syms_binary){
		b->path, len > 0 ? id : NULL, len > 0 ? len : 0, b->num,
		b == s->vdso ? 0 : b->dev, b->ino, b->fd, b->runtime }, elf, debug);
	if (debug)
		elf_end(debug);
	if (dfd >= 0)
		close(dfd);
	elf_end(elf);
}

/* The binary behind @fd (stat @st), shared by (device, inode); takes @fd. */
static struct binary *binary_get(struct syms *s, int fd, const struct stat *st,
				 const char *path, struct root *root)
{
	unsigned int h = (st->st_dev * 31 + st->st_ino) % BUCKETS;
	struct binary *b;
	char *copy;

	for (b = s->binaries[h]; b; b = b->next) {
		if (b->dev == st->st_dev && b->ino == st->st_ino && b->size == st->st_size &&
		    b->mtime.tv_sec == st->st_mtim.tv_sec && b->mtime.tv_nsec == st->st_mtim.tv_nsec) {
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
	/* Out of descriptors to hold: read it now and let this one go. */
	if (++s->open_fds > s->fd_budget)
		binary_load(s, b);
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

/* By pid alone: the images one process has exec'd through share a bucket. */
static unsigned int proc_hash(const struct proc_key *k)
{
	return k->tgid % BUCKETS;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static struct proc *proc_find(struct syms *s, const struct proc_key *k)
{
	for (struct proc *p = s->procs[proc_hash(k)]; p; p = p->next)
		if (p->key.tgid == k->tgid && p->key.exec_id == k->exec_id &&
		    p->key.start_ns == k->start_ns)
			return p;
	return NULL;
}

/* Is exec count @a before @b? Both are a counter's low bits: by their difference. */
static bool exec_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* Another image of @k's process (same pid and start), known to come after @k's? */
static bool exec_known_after(struct syms *s, const struct proc_key *k)
{
	if (!k->start_ns)	/* then a pid's processes cannot be told apart */
		return false;
	for (struct proc *q = s->procs[proc_hash(k)]; q; q = q->next)
		if (q->key.tgid == k->tgid && q->key.start_ns == k->start_ns &&
		    exec_before(k->exec_id, q->key.exec_id))
			return true;
	return false;
}

/*
 * Is @k still the process that has its pid (owned by *@uid), in the image
 * @k names? A reused pid is another program; after an exec, the pid and
 * start time stay and /proc shows the new image, which no file tells from
 * the old: only a later exec_id seen in a stack or at the exec does.
 */
static bool alive(struct syms *s, const struct proc_key *k, uid_t *uid, bool *reused)
{
	unsigned long long ticks;

	*reused = false;
	if (exec_known_after(s, k))
		return false;
	if (procfile__identity(k->tgid, uid, &ticks))
		return false;
	/* /proc gives clock ticks of the very nanoseconds the BPF side read. */
	if (k->start_ns && ticks != k->start_ns / (1000000000ULL / s->ticks_per_sec)) {
		*reused = true;
		return false;
	}
	return true;
}

bool syms__alive(struct syms *s, const struct proc_key *k)
{
	bool reused;
	uid_t uid;

	return alive(s, k, &uid, &reused);
}

static bool same_process(struct syms *s, struct proc *p)
{
	bool reused;

	if (alive(s, &p->key, &p->uid, &reused))
		return true;
	s->lost.reused += reused;
	return false;
}

/*
 * @p's process has exec'd into a new image: the older images of it are
 * read no more (the maps would be the new one's). One whose maps read the
 * same as @p's was read after that exec: what it holds is @p's, not its
 * own, and goes, so that its stacks are [unknown] rather than misnamed.
 */
static void superseded_by(struct syms *s, struct proc *p)
{
	const struct image_sig *a = &p->sig;

	if (!p->key.start_ns)
		return;
	for (struct proc *q = s->procs[proc_hash(&p->key)]; q; q = q->next) {
		const struct image_sig *b = &q->sig;

		if (q == p || q->key.tgid != p->key.tgid || q->key.start_ns != p->key.start_ns ||
		    !exec_before(q->key.exec_id, p->key.exec_id))
			continue;
		q->superseded = true;
		if (!q->nvmas || !a->exe_ino || a->exe_ino != b->exe_ino ||
		    a->exe_dev != b->exe_dev || a->vdso != b->vdso || a->stack_end != b->stack_end)
			continue;
		free(q->vmas);
		q->vmas = NULL;
		q->nvmas = 0;
		q->gone = true;
	}
}

static int add_vma(struct proc *p, size_t *cap, const struct vma *v)
{
	if (p->nvmas == *cap) {
		size_t n = *cap ? *cap * 2 : 32;
		struct vma *t = realloc(p->vmas, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		p->vmas = t;
		*cap = n;
	}
	p->vmas[p->nvmas++] = *v;
	return 0;
}

/* Shows the observer a process's executable mappings, as just read. */
static void observe_process(struct syms *s, struct proc *p)
{
	struct syms_mapping *m = calloc(p->nvmas ? p->nvmas : 1, sizeof(*m));

	if (!m)
		return;
	for (size_t i = 0; i < p->nvmas; i++)
		m[i] = (struct syms_mapping){ p->vmas[i].start, p->vmas[i].end, p->vmas[i].pgoff,
					      p->vmas[i].bin ? p->vmas[i].bin->observed : NULL };
	s->observer.process(s->observer.ctx, &p->key, m, p->nvmas);
	free(m);
}

/*
 * Out of descriptors within budget: the limit counts the tool's own too
 * (BPF objects, perf events), which the budget could not know. From now
 * on hold half as many, and read the binaries held, as the report would,
 * until only that many are. Did a descriptor come free?
 */
static bool release_fds(struct syms *s)
{
	size_t before = s->open_fds;

	s->fd_budget = s->open_fds / 2;
	for (int i = 0; i < BUCKETS && s->open_fds > s->fd_budget; i++)
		for (struct binary *b = s->binaries[i]; b && s->open_fds > s->fd_budget;
		     b = b->next)
			if (b->fd >= 0 && !b->loaded)
				binary_load(s, b);
	pr_debug("out of file descriptors: %zu held, %zu now", before, s->open_fds);
	return s->open_fds < before;
}

static void read_maps(struct syms *s, struct proc *p)
{
	char path[64], line[PATH_MAX + 128];
	struct maps_entry e;
	struct stat exe;
	size_t cap = 0;
	FILE *f;

	p->sig = (struct image_sig){};
	snprintf(path, sizeof(path), "/proc/%d/exe", p->key.tgid);
	if (!stat(path, &exe)) {
		p->sig.exe_dev = exe.st_dev;
		p->sig.exe_ino = exe.st_ino;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", p->key.tgid);
	f = fopen(path, "re");
	if (!f && (errno == EMFILE || errno == ENFILE) && release_fds(s))
		f = fopen(path, "re");
	if (!f) {
		p->gone = true;
		return;
	}
	p->read_ms = now_ms();
	while (fgets(line, sizeof(line), f)) {
		struct binary *bin = NULL;
		struct stat st;

		if (procmaps__parse_line(line, &e))
			continue;
		if (!strcmp(e.path, "[stack]"))
			p->sig.stack_end = e.end;
		if (!e.exec)
			continue;
		if (!strcmp(e.path, "[vdso]")) {
			p->sig.vdso = e.start;
			bin = vdso_get(s);
		} else if (e.path[0] == '/') {
			int fd = procfile__open_mapped(p->key.tgid, &e, p->root ? p->root->fd : -1,
						       &st);

			if ((fd == -EMFILE || fd == -ENFILE) && release_fds(s))
				fd = procfile__open_mapped(p->key.tgid, &e,
							   p->root ? p->root->fd : -1, &st);

			if (fd >= 0) {
				bin = binary_get(s, fd, &st, e.path, p->root);
			} else if (fd != -ENOENT && fd != -ESRCH) {
				/* ENOENT, ESRCH: unmapped or exited meanwhile, nothing lost. */
				s->lost.unopened++;
				s->lost.no_fds += fd == -EMFILE || fd == -ENFILE;
			}
		}
		if (add_vma(p, &cap, &(struct vma){ e.start, e.end, e.pgoff, bin }))
			break;
	}
	fclose(f);
	superseded_by(s, p);
	if (s->observer.process)
		observe_process(s, p);
}

int syms__track(struct syms *s, const struct proc_key *k)
{
	struct proc *p = proc_find(s, k);

	if (p) {
		if (!p->prefetched)
			return 0;
		/* Read in its loader: what it has mapped since is in this stack. */
		p->prefetched = false;
		s->prefetched--;
		return syms__refresh(s, k);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->key = *k;
	p->next = s->procs[proc_hash(k)];
	s->procs[proc_hash(k)] = p;
	if (exec_known_after(s, k)) {
		/* /proc shows what it exec'd since: nothing there is this image's. */
		p->superseded = p->gone = true;
		return -ESRCH;
	}
	if (!same_process(s, p)) {
		p->gone = true;
		return -ESRCH;
	}
	p->root = root_get(s, k->tgid);
	p->nspid = procfile__nspid(k->tgid);
	read_maps(s, p);
	return p->gone ? -ESRCH : 0;
}

/*
 * Processes read at their exec that no stack has shown yet, at most: most
 * exit unseen, and one seen later is read again then.
 */
#define PREFETCH_MAX 1024

static void drop_prefetched(struct syms *s)
{
	for (int i = 0; i < BUCKETS; i++) {
		struct proc **pp = &s->procs[i];

		while (*pp) {
			struct proc *p = *pp;

			if (p->prefetched) {
				*pp = p->next;
				proc_free(s, p);
			} else {
				pp = &p->next;
			}
		}
	}
	s->prefetched = 0;
}

/* For the runtimes' names: is @k a process forgotten, or about to be? */
static bool forgotten(void *ctx, const struct proc_key *k)
{
	struct proc *p = proc_find(ctx, k);

	return !p || p->exited;
}

void syms__forget_exited(struct syms *s)
{
	runtime_names__forget(s->runtime_names, forgotten, s);
	for (int i = 0; i < BUCKETS; i++) {
		struct proc **pp = &s->procs[i];

		while (*pp) {
			struct proc *p = *pp;

			if (p->exited) {
				*pp = p->next;
				s->prefetched -= p->prefetched;
				proc_free(s, p);
				continue;
			}
			p->exited = !syms__alive(s, &p->key);
			pp = &p->next;
		}
	}
}

int syms__prefetch(struct syms *s, const struct proc_key *k)
{
	struct proc *p;
	int err;

	if (proc_find(s, k))
		return 0;
	if (s->prefetched >= PREFETCH_MAX)
		drop_prefetched(s);
	err = syms__track(s, k);
	p = proc_find(s, k);
	if (p) {
		p->prefetched = true;
		s->prefetched++;
	}
	return err;
}

int syms__refresh(struct syms *s, const struct proc_key *k)
{
	struct proc *p = proc_find(s, k);

	if (!p)
		return syms__track(s, k);
	if (p->gone || p->superseded || exec_known_after(s, k))
		return 0;
	/*
	 * A new process is often seen in its loader, before its libraries are
	 * mapped, and may live a few milliseconds: read again at once, a few
	 * times; then 10 ms apart, then at most once a second.
	 */
	if (now_ms() - p->read_ms < (p->rereads < 4 ? 0 : p->rereads < 16 ? 10 : 1000)) {
		p->reread = true;	/* syms__tick() reads them */
		return 0;
	}
	p->reread = false;
	p->rereads++;
	/*
	 * The old mappings go: what was unmapped since cannot be told from
	 * what moved, and the new maps hold every library still there.
	 */
	free(p->vmas);
	p->vmas = NULL;
	p->nvmas = 0;
	read_maps(s, p);
	return p->gone ? -ESRCH : 0;
}

void syms__tick(struct syms *s)
{
	for (int i = 0; i < BUCKETS; i++)
		for (struct proc *p = s->procs[i]; p; p = p->next)
			if (p->reread)
				syms__refresh(s, &p->key);
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
 * @b's tables were let go and a frame needs them: its file again, the very
 * one a process maps (its map_files entry), or else by its path in its
 * root. Whether it could be.
 */
static bool binary_reopen(struct syms *s, struct binary *b)
{
	int fd = -1;

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
		s->lost.gone++;
		return false;
	}
	b->fd = fd;
	s->open_fds++;
	s->lost.reread++;
	return true;
}

static bool binary_lookup(struct syms *s, struct binary *b, const struct vma *v, uint64_t addr,
			  struct sym_info *out)
{
	uint64_t file_off = addr - v->start + v->pgoff, vaddr = 0;
	const struct sym *u;
	bool found = false;

	note_recent(s, b);
	b->used = ++s->clock;
	if (!b->loaded && (!b->evicted || binary_reopen(s, b)))
		binary_load(s, b);
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
	out->name = u->name;
	out->offset = vaddr - u->addr;
	return true;
}

static const struct vma *vma_find(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nvmas;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->vmas[mid].start)
			hi = mid;
		else if (addr >= p->vmas[mid].end)
			lo = mid + 1;
		else
			return &p->vmas[mid];
	}
	return NULL;
}

/* Its /tmp/perf-PID.map, read the first time an address needs it. */
static void load_jit(struct syms *s, struct proc *p)
{
	int err;

	p->jit_tried = true;
	if (!p->root)
		return;
	err = perfmap__load(&p->jit, p->root->fd, p->nspid, p->uid);
	if (err == -EPERM || err == -EINVAL || err == -ELOOP) {
		pr_debug("pid %d: perf map not trusted: %s", p->key.tgid,
			 err == -EPERM ? "owned by another user" :
			 err == -ELOOP ? "a symbolic link" : "not a regular file");
		s->lost.jit_refused++;
	}
	s->lost.jit_cut += p->jit.truncated;
	s->held += p->jit.bytes;
}

int syms__user(struct syms *s, const struct proc_key *k, uint64_t addr, struct sym_info *out)
{
	const struct perfmap_sym *j;
	const struct vma *v;
	struct proc *p;

	memset(out, 0, sizeof(*out));
	p = proc_find(s, k);
	if (!p) {
		syms__track(s, k);
		p = proc_find(s, k);
	}
	if (!p)
		return -ENOENT;
	if (p->gone && p->superseded) {
		s->lost.execed += !p->counted;
		p->counted = true;
		return -ENOENT;
	}
	v = vma_find(p, addr);
	if (v && v->bin) {
		if (binary_lookup(s, v->bin, v, addr, out)) {
			out->kind = v->bin == s->vdso ? SYM_VDSO : SYM_USER;
			return 0;
		}
		return -ENOENT;
	}
	/* Not in a file: code a JIT wrote, if it left a map (which an exec's new image may own). */
	if (!p->jit_tried && !p->superseded)
		load_jit(s, p);
	p->jit_used = ++s->clock;
	j = perfmap__find(&p->jit, addr);
	if (!j)
		return -ENOENT;
	out->name = j->name;
	out->offset = addr - j->start;
	out->module = "[jit]";
	out->kind = SYM_JIT;
	return 0;
}

/*
 * The interpreter process @p runs, and its load bias: from the first
 * mapping of a binary that holds one, placed by its segment. NULL if none.
 */
static const struct runtime_binary *proc_runtime(struct syms *s, struct proc *p, uint64_t *bias)
{
	for (size_t i = 0; p && i < p->nvmas; i++) {
		struct binary *b = p->vmas[i].bin;

		if (!b || !b->runtime)
			continue;
		if (!b->loaded)
			binary_load(s, b);
		for (size_t k = 0; k < b->nsegs; k++) {
			const struct elf_segment *g = &b->segs[k];

			if (p->vmas[i].pgoff >= g->offset && p->vmas[i].pgoff - g->offset < g->filesz) {
				*bias = p->vmas[i].start - p->vmas[i].pgoff + g->offset - g->vaddr;
				return b->runtime;
			}
		}
	}
	return NULL;
}

int syms__runtime_frame(struct syms *s, const struct proc_key *k, uint64_t v,
			struct runtime_frame *out)
{
	struct proc *p = proc_find(s, k);
	uint64_t bias = 0;
	const struct runtime_binary *rb = NULL;

	/* A process gone, or in another image now: only what was read while it was. */
	if (p && !p->gone && !p->superseded && same_process(s, p))
		rb = proc_runtime(s, p, &bias);
	return runtime_names__get(s->runtime_names, k, rb, bias, v, out);
}

void syms__runtime_note(struct syms *s, const struct proc_key *k, uint64_t v)
{
	struct runtime_frame f;

	if (!proc_find(s, k))
		syms__track(s, k);
	syms__runtime_frame(s, k, v, &f);
}

int syms__file_offset(struct syms *s, uint32_t id, uint64_t offset, struct sym_info *out)
{
	struct vma whole = { 0, UINT64_MAX, 0, NULL };

	memset(out, 0, sizeof(*out));
	if (id >= s->nids)
		return -ENOENT;
	whole.bin = s->by_id[id];
	if (!binary_lookup(s, whole.bin, &whole, offset, out))
		return -ENOENT;
	out->kind = whole.bin == s->vdso ? SYM_VDSO : SYM_USER;
	return 0;
}

int syms__file(struct syms *s, int fd, uint64_t offset, struct sym_info *out)
{
	struct vma whole = { 0, UINT64_MAX, 0, NULL };
	struct stat st;
	int copy;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st))
		return -errno;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return -errno;
	whole.bin = binary_get(s, copy, &st, "[file]", NULL);
	if (!whole.bin)
		return -ENOMEM;
	if (!binary_lookup(s, whole.bin, &whole, offset, out))
		return -ENOENT;
	out->kind = SYM_USER;
	return 0;
}

int syms__source(const struct sym_info *si, bool exact, struct sym_source *out, int max)
{
	struct binary *b = si->binary;
	const char *names[INLINES_MAX_DEPTH];
	uint64_t vaddr;
	int n = 0;

	if (!si->name || max < 1)
		return 0;
	out[0] = (struct sym_source){ .name = si->name };
	if (!b || si->kind == SYM_JIT || (!exact && !si->vaddr))
		return 1;
	/* A return address may be past the call, and past an inlined call's end. */
	vaddr = si->vaddr - !exact;
	if (b->go) {
		struct goframe g[INLINES_MAX_DEPTH + 1];

		n = gopclntab__frames(b->go, vaddr, g, max < INLINES_MAX_DEPTH + 1 ? max :
						      INLINES_MAX_DEPTH + 1);
		for (int i = 0; i < n; i++)
			out[i] = (struct sym_source){ g[i].name, g[i].file,
						      g[i].start_line > 0 ? g[i].start_line :
						      g[i].line };
		return n ? n : 1;
	}
	if (b->inlines)
		n = inlines__find(b->inlines, vaddr, names,
				  max - 1 < INLINES_MAX_DEPTH ? max - 1 : INLINES_MAX_DEPTH);
	for (int i = 0; i < n; i++)
		out[i] = (struct sym_source){ .name = names[i] };
	out[n] = (struct sym_source){ .name = si->name };
	return n + 1;
}

void syms__warn_losses(const struct syms *s)
{
	const struct losses *l = &s->lost;

	runtime_names__warn_losses(s->runtime_names);
	if (l->unopened)
		pr_warn("%llu mapped files could not be opened%s: their frames are [unknown]",
			l->unopened, l->no_fds ? " (some for lack of file descriptors)" : "");
	if (l->unreadable)
		pr_warn("%llu mapped files could not be read as ELF: their frames are [unknown]",
			l->unreadable);
	if (l->jit_refused)
		pr_warn("%llu perf maps not trusted (not a regular file owned by the process's "
			"user or root): their JIT frames are [unknown]", l->jit_refused);
	if (l->jit_cut)
		pr_warn("%llu perf maps read only to their first %u MiB", l->jit_cut,
			PERFMAP_MAX_BYTES >> 20);
	if (l->go_unread)
		pr_warn("%llu Go binaries' symbol tables not read (%s): their frames are named "
			"only by what other symbols they have", l->go_unread, l->go_why);
	if (l->reused)
		pr_warn("%llu processes exited and their pids were reused before their maps were "
			"read: their frames are [unknown]", l->reused);
	if (l->execed)
		pr_warn("%llu processes exec'd before their maps were read: the frames of what "
			"they ran before are [unknown]", l->execed);
	if (l->evicted)
		pr_debug("--symbol-memory %llu: tables let go %llu times, read again %llu times",
			 (unsigned long long)(s->budget >> 20), l->evicted, l->reread);
	if (l->reread >= 1000)
		pr_warn("symbols read again %llu times after --symbol-memory (%llu MiB) let them "
			"go: raise it to save that work", l->reread,
			(unsigned long long)(s->budget >> 20));
	if (l->gone)
		pr_warn("%llu binaries' symbols were let go to stay within --symbol-memory "
			"(%llu MiB) and their files were gone when needed again: their frames are "
			"[unknown]; raise --symbol-memory", l->gone,
			(unsigned long long)(s->budget >> 20));
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
