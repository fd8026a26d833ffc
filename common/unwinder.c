// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Loading binaries' unwind rows into BPF memory as they appear, and each process's mappings into a hash. */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cfi.h"
#include "elffile.h"
#include "probe.h"
#include "rowstore.h"
#include "runtimes/runtime.h"
#include "syms.h"
#include "tool.h"
#include "unwinder.h"

/*
 * A binary's rows, and where its segments sit, to place its mappings. Its
 * rows are given back once no process that has an entry maps it, under
 * pressure or when it went unused for a report's interval; made again
 * from its file if a process maps it later (syms' observer, stale()).
 */
struct table {
	struct table *next;
	__u32 first, n;		/* n == 0: no CFI, or no room for it, or given back */
	__u32 id;		/* the symbolizer's number for it, for file frames */
	__u64 base;
	struct elf_segment *segs;
	size_t nsegs;
	const struct runtime_binary *runtime;	/* the interpreter it holds, if any */
	bool core;		/* the C library, the loader or the vDSO */
	/* A big library's rows, made once a stack reaches it (wanted), not when it is mapped. */
	bool lazy, wanted;
	bool released;		/* its rows given back: made again when next mapped */
	/*
	 * No room for its @want rows: tried again when next mapped, from
	 * retry_ms on, later after each refusal, as that reads its CFI again.
	 */
	bool refused;
	size_t want;
	long long retry_ms, backoff_ms;
	unsigned int refs;	/* processes with an entry whose mappings use its rows */
	unsigned long long used;	/* the sweep it was last in use at */
	bool fresh;		/* made while its process is read, which holds it */
	struct table *fresh_next;
	struct unwind_file_key file;	/* its entry in the files map, if it has one */
	bool has_file;
};

/* A process the procs map has an entry for, and the tables its mappings use. */
struct traced {
	struct traced *next;
	struct proc_key key;
	struct table **tables;
	size_t n;
	bool runtime;		/* its interpreter has an entry too */
	bool refused;		/* it maps a binary whose rows found no room */
};

#define TRACED_BUCKETS 256

struct losses {
	unsigned long long no_room;	/* binaries whose rows did not fit */
	unsigned long long build_ids;	/* binaries the build-id map had no room for */
	unsigned long long files;	/* ... the files map */
	unsigned long long procs;	/* processes the map had no room for */
	unsigned long long mappings;	/* mappings past UNWIND_MAX_MAPPINGS */
	unsigned long long runtimes;	/* processes running an interpreter, no room for it */
	unsigned long long complex;	/* binaries whose CFI would cost too much to read */
	unsigned long long too_many;	/* binaries with more rows than one may have */
	unsigned long long kernel;	/* binaries whose rows' memory the kernel refused */
	int kernel_err;			/* the last such refusal, -errno */
};

/* Rows given back and made again, for -v; refused binaries' made later. */
struct reuse {
	unsigned long long released, remade, refit;
};

/* Kinds of trampolines the runtimes make: CPython's before 3.14, and since. */
#define UNWINDER_TRAMPOLINE_KINDS 2

struct unwinder {
	struct syms *syms;
	bool lazy;			/* system-wide: big libraries' rows made when stacks need them */
	unsigned long long lazy_left, lazy_made;	/* such libraries, and those made since */
	int procs_fd, build_ids_fd, files_fd, counts_fd, exit_notes_fd;
	struct rowstore *rows;
	struct table *tables;
	unsigned long long binaries, with_cfi, processes;
	unsigned long long exits;	/* processes forgotten as the kernel said they exited */
	size_t ntraced, max_traced;	/* processes with an entry, and room for */
	size_t nrefused;		/* of them, those that map a refused binary */
	__u32 entry_gen;		/* the last entry written's gen: a walk memo holds for one */
	bool exit_notes;		/* asked of the BPF side (unwind_exit_notes) */
	unsigned long long unsupported;	/* rows with rules the unwinder cannot follow */
	struct losses lost;
	unsigned int full;		/* processes the map was full for since it was last swept */
	long long fruitless_ms;		/* when a sweep for room last found none; 0: it did */
	bool entered;			/* a process entered since */
	bool exited;			/* the kernel said one exited, since the last tick */
	struct traced *traced[TRACED_BUCKETS];
	struct table *fresh;		/* made since the last process was entered */
	unsigned long long sweeps;	/* reports' sweeps so far: tables' age */
	struct reuse reuse;
	struct bpf_link *on_exec, *on_exit, *on_new_area;
	struct runtime_bpf runtimes;
	/* CPython's trampolines' rows (one per kind), once made, and their indexes. */
	struct {
		struct unwind_row row;
		__u32 idx;
	} trampolines[UNWINDER_TRAMPOLINE_KINDS];
	unsigned int trampoline_kinds;
};

enum unwind_method unwind__parse_method(struct argp_state *state, const char *arg)
{
	if (!strcmp(arg, "auto"))
		return UNWIND_AUTO;
	if (!strcmp(arg, "fp"))
		return UNWIND_FP;
	if (!strcmp(arg, "dwarf"))
		return UNWIND_DWARF;
	argp_error(state, "invalid unwind method '%s': expected auto, fp or dwarf", arg);
	return UNWIND_AUTO;
}

/* Build-ids the map holds: a host with more distinct binaries in its stacks is rare. */
#define UNWIND_BUILD_IDS 16384

int unwind__configure(const struct unwind_opts *o, const struct unwind_bpf *m, bool one_process)
{
	struct bpf_map *rows = m->rows, *procs = m->procs;
	size_t budget = (size_t)o->memory_mb << 20, proc_bytes, nrows, chunks;
	bool cfi = o->method != UNWIND_FP;
	unsigned int processes = one_process ? 64 : 1024;

	/* Attached by unwinder__new(), the tables ready. */
	bpf_program__set_autoload(m->on_exec, cfi && !one_process);
	bpf_program__set_autoattach(m->on_exec, false);
	/* For tests: exits found by sweeps of /proc alone, as when the ring is full. */
	bpf_program__set_autoload(m->on_exit, cfi && !one_process && !probe__disabled("exit_notes"));
	bpf_program__set_autoattach(m->on_exit, false);
	bpf_program__set_autoload(m->on_new_area,
				  cfi && probe__tracepoint("mmap", "vm_unmapped_area"));
	bpf_program__set_autoattach(m->on_new_area, false);
	/* Task storage, which the legacy object's programs (before 5.17) do not use. */
	if (tool__legacy_bpf())
		bpf_map__set_autocreate(m->walk_memos, false);
	if (!cfi) {
		pr_debug("user stacks: frame pointers (--unwind=fp)");
		bpf_map__set_max_entries(rows, 1);
		bpf_map__set_max_entries(procs, 1);
		bpf_map__set_max_entries(m->build_ids, 1);
		bpf_map__set_max_entries(m->files, 1);
		bpf_map__set_max_entries(m->runtime_procs, 1);
		return 0;
	}
	/* A quarter to the processes' mappings, at most what @processes need; rows the rest. */
	proc_bytes = (size_t)processes * sizeof(struct unwind_proc);
	if (proc_bytes > budget / 4)
		proc_bytes = budget / 4;
	chunks = (budget - proc_bytes) / sizeof(struct unwind_row) / UNWIND_CHUNK_ROWS;
	if (!chunks)
		chunks = 1;
	nrows = chunks * UNWIND_CHUNK_ROWS;
	processes = proc_bytes / sizeof(struct unwind_proc);
	if (!processes)
		processes = 1;
	bpf_map__set_max_entries(rows, chunks);
	bpf_map__set_max_entries(procs, processes);
	/* The legacy walk (before 5.17) merges no runtime's frames: that takes bpf_loop. */
	bpf_map__set_max_entries(m->runtime_procs, tool__legacy_bpf() ? 1 : processes);
	bpf_map__set_max_entries(m->build_ids, UNWIND_BUILD_IDS);
	bpf_map__set_max_entries(m->files, UNWIND_BUILD_IDS);
	pr_debug("user stacks: CFI (.eh_frame), frame pointers where there is none; room for "
		 "%zu rows and %u processes in %lu MiB%s", nrows, processes, o->memory_mb,
		 tool__legacy_bpf() ? "; no Python frames before Linux 5.17" : "");
	if (!bpf_program__autoload(m->on_new_area))
		pr_debug("no mmap:vm_unmapped_area tracepoint: a library unloaded while traced "
			 "and another loaded at its address are walked and named as the first");
	/* For tests: the legacy walk's hand-found registers, as if not found. */
	return UNWIND_CFI_ON | (probe__disabled("user_regs") ? UNWIND_CFI_NO_REGS : 0);
}

/*
 * Gives back @t's rows. Nothing the BPF side reaches points at them: no
 * process entry (those of the processes that used them are gone) and no
 * file entry; a walk that looked one up just before reads rows that stay
 * as they were until another binary's are built and written there.
 */
static void release(struct unwinder *u, struct table *t)
{
	if (t->has_file)
		bpf_map_delete_elem(u->files_fd, &t->file);
	t->has_file = false;
	rowstore__release(u->rows, t->first, t->n);
	t->n = 0;
	t->released = true;
	u->reuse.released++;
}

/*
 * Gives back the rows of the tables no process with an entry uses: every
 * one when rows are wanted now (@all), else those unused since the sweep
 * before the last, so that a binary run every few seconds keeps its rows.
 * Not those made for the process being read. How many.
 */
static size_t release_unused(struct unwinder *u, bool all)
{
	size_t n = 0;

	for (struct table *t = u->tables; t; t = t->next) {
		if (t->n && !t->refs && !t->fresh &&
		    (all || t->used + 1 < u->sweeps)) {
			release(u, t);
			n++;
		}
	}
	return n;
}

static struct traced **traced_slot(struct unwinder *u, __u32 tgid)
{
	struct traced **pp = &u->traced[tgid % TRACED_BUCKETS];

	while (*pp && (*pp)->key.tgid != tgid)
		pp = &(*pp)->next;
	return pp;
}

/* Forgets the process in *@pp and what it held. */
static void untrace(struct unwinder *u, struct traced **pp)
{
	struct traced *p = *pp;

	u->ntraced--;
	u->nrefused -= p->refused;
	for (size_t i = 0; i < p->n; i++)
		p->tables[i]->refs--;
	*pp = p->next;
	free(p->tables);
	free(p);
}

/*
 * The procs map's entry of process @k now uses @n tables' rows, in @tables
 * (taken), and no longer those of its previous entry; it maps a binary
 * refused for lack of room (@refused) or not.
 */
static void trace(struct unwinder *u, const struct proc_key *k, struct table **tables, size_t n,
		  bool refused)
{
	struct traced **pp = traced_slot(u, k->tgid), *p = calloc(1, sizeof(*p));

	if (!p) {
		free(tables);
		return;
	}
	p->key = *k;
	p->tables = tables;
	p->n = n;
	p->refused = refused;
	for (size_t i = 0; i < n; i++) {
		tables[i]->refs++;
		tables[i]->used = u->sweeps;
	}
	if (*pp)
		untrace(u, pp);
	u->ntraced++;
	u->nrefused += refused;
	p->next = u->traced[k->tgid % TRACED_BUCKETS];
	u->traced[k->tgid % TRACED_BUCKETS] = p;
}

/* Drops the process in *@pp, which has exited: its entries and its holds. */
static void forget(struct unwinder *u, struct traced **pp)
{
	__u32 tgid = (*pp)->key.tgid;

	bpf_map_delete_elem(u->procs_fd, &tgid);
	if ((*pp)->runtime)
		runtime__process(&u->runtimes, tgid, NULL, 0, 0);
	untrace(u, pp);
}

/*
 * Drops the entries of the processes that have exited, and their holds;
 * @just_checked: as the symbolizer has just found them. How many.
 */
static size_t sweep_exited(struct unwinder *u, bool just_checked)
{
	size_t dropped = 0;

	for (int i = 0; i < TRACED_BUCKETS; i++) {
		struct traced **pp = &u->traced[i];

		while (*pp) {
			int exited = just_checked ? syms__found_exited(u->syms, &(*pp)->key) : -ENOENT;

			if (exited < 0)
				exited = !syms__alive(u->syms, &(*pp)->key);
			if (!exited) {
				pp = &(*pp)->next;
				continue;
			}
			forget(u, pp);
			dropped++;
		}
	}
	return dropped;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * The rows are full: gives back those of binaries no live process maps.
 * After a sweep that found none, not again until a process is entered and
 * a second has passed: a host whose live processes fill them would be
 * swept (a /proc read a process) for nothing at every new binary. Whether
 * any were.
 */
static bool make_room(struct unwinder *u)
{
	size_t dropped, released;

	if (u->fruitless_ms && (!u->entered || now_ms() - u->fruitless_ms < 1000))
		return false;
	dropped = sweep_exited(u, false);
	released = release_unused(u, true);
	pr_debug("unwinder: rows full: %zu exited processes forgotten, %zu binaries' rows given "
		 "back", dropped, released);
	u->fruitless_ms = released ? 0 : now_ms();
	u->entered = false;
	return released;
}

#define RETRY_FIRST_MS	1000
#define RETRY_MAX_MS	64000

/* No room for @t's @want rows now: counted once, and tried again later (on_stale()). */
static void refuse(struct unwinder *u, struct table *t, size_t want)
{
	u->lost.no_room += !t->refused;
	t->refused = true;
	t->want = want;
	t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : RETRY_FIRST_MS;
	if (t->backoff_ms > RETRY_MAX_MS)
		t->backoff_ms = RETRY_MAX_MS;
	t->retry_ms = now_ms() + t->backoff_ms;
}

/* Copies a binary's rows into BPF memory (@again: as they were once), if they fit. */
static void on_binary_rows(struct unwinder *u, struct table *t, const char *path, int fd,
			   Elf *elf, Elf *debug, bool again)
{
	/* Rows no process uses any more make room when needed. */
	size_t room = rowstore__cap(u->rows);
	struct cfi_table c;
	bool go = false;
	int err;

	/* Refused before: its CFI read again only if its rows can fit now. */
	if (t->refused && rowstore__room(u->rows) < t->want && !make_room(u) &&
	    rowstore__room(u->rows) < t->want) {
		refuse(u, t, t->want);
		return;
	}
	err = cfi__build(elf, debug, room, &c);

	/*
	 * Go emits no .eh_frame: its own table says where each frame is. A
	 * cgo binary's .eh_frame is its C code's alone: Go's rows fill the rest.
	 */
	if (err == -ENOENT) {
		err = cfi__build_go(fd, elf, room, &c);
		go = !err;
	} else if (!err) {
		go = !cfi__add_go(fd, elf, room, &c);
	}

	if (!err && c.n > UNWIND_MAX_BINARY_ROWS) {
		u->lost.too_many++;
		pr_debug("%s: %zu unwind rows, more than one binary may have (%u): frame pointers",
			 path, c.n, UNWIND_MAX_BINARY_ROWS);
		cfi__free(&c);
		return;
	}
	if (err == -E2BIG) {
		u->lost.no_room++;
		pr_debug("%s: its unwind rows do not fit (raise --unwind-memory)", path);
		return;
	}
	if (err == -EFBIG) {
		u->lost.complex++;
		pr_debug("%s: its call-frame information is too costly to read: frame pointers", path);
		return;
	}
	if (err) {
		pr_debug("%s: no call-frame information (%s): frame pointers", path, strerror(-err));
		return;
	}
	err = rowstore__add(u->rows, c.rows, c.n, &t->first);
	if (err == -E2BIG && make_room(u))
		err = rowstore__add(u->rows, c.rows, c.n, &t->first);
	if (err) {
		if (err == -E2BIG) {
			refuse(u, t, c.n);
		} else {
			u->lost.kernel++;
			u->lost.kernel_err = err;
		}
		pr_debug("%s: no room for its unwind rows (%s): frame pointers", path,
			 strerror(-err));
		cfi__free(&c);
		return;
	}
	t->n = c.n;
	t->base = c.base;
	if (!again || t->refused) {
		u->with_cfi++;
		u->unsupported += c.unsupported;
	}
	if (t->refused)
		u->reuse.refit++;
	t->refused = false;
	t->backoff_ms = 0;
	pr_debug("%s: %zu unwind rows for %zu functions%s", path, c.n, c.fdes,
		 go ? ", Go's from its pclntab" : "");
	cfi__free(&c);
}

/*
 * Enters a binary's build-id, so that the frames the kernel reports by
 * build-id (in processes whose mappings are not read yet) name it.
 */
static void enter_build_id(struct unwinder *u, const struct syms_binary *b)
{
	struct unwind_build_id key = {};

	if (!b->build_id || b->id > UNWIND_FILE_ID_MASK)
		return;
	memcpy(key.id, b->build_id, b->build_id_len < sizeof(key.id) ? b->build_id_len
									: sizeof(key.id));
	if (bpf_map_update_elem(u->build_ids_fd, &key, &b->id, BPF_ANY))
		u->lost.build_ids++;
}

/*
 * The binary's rows by its file, as the kernel names it, for code mapped
 * after its process was read: placed by its (first) executable segment.
 */
static void enter_file(struct unwinder *u, const struct syms_binary *b, struct table *t)
{
	struct unwind_file_key key = {
		.ino = b->ino,
		/* The kernel's dev_t: 12 bits of major above 20 of minor. */
		.dev = major(b->dev) << 20 | minor(b->dev),
	};

	if (!b->dev || !t->n)
		return;
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct elf_segment *g = &t->segs[i];

		if (g->exec) {
			struct unwind_file f = { g->offset, g->filesz, g->offset - g->vaddr + t->base,
						 t->first, t->n, t->id };

			if (bpf_map_update_elem(u->files_fd, &key, &f, BPF_ANY)) {
				u->lost.files++;
			} else {
				t->file = key;
				t->has_file = true;
			}
			return;
		}
	}
}

/*
 * Is @path the C library, the loader or the vDSO, which nearly every stack
 * passes through (its root, _start; a thread's start; a signal's return)?
 */
static bool core_binary(const char *path)
{
	static const char *const names[] = { "libc.so", "ld-linux", "ld-musl", "libc.musl",
					     "libpthread.so", "[vdso]" };
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	for (size_t i = 0; base && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

/* Libraries whose .eh_frame is this big wait for a stack to reach them, system-wide. */
#define LAZY_EH_FRAME_BYTES (32 << 10)

/*
 * Is @elf a shared library big enough to leave its rows until a stack
 * reaches it? System-wide, a process's rows are made when it is first seen
 * (or at its exec), for every binary it maps: perf's 30 libraries took
 * 150 ms to build, of which its stacks reach three. Executables, the C
 * library and the loader are made at once, as a short-lived process's
 * first samples need them; small libraries cost less to make than to ask.
 */
static bool lazy_library(Elf *elf)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t n;
	uint64_t addr, size;

	if (!gelf_getehdr(elf, &eh) || eh.e_type != ET_DYN || elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_INTERP)
			return false;
	return !elffile__section(elf, ".eh_frame", &addr, &size) && size >= LAZY_EH_FRAME_BYTES;
}

/*
 * A binary seen for the first time, or mapped again after its rows were
 * given back: its rows, and its entries in the build-id and files maps.
 */
static void *on_binary(void *ctx, const struct syms_binary *b, Elf *elf, Elf *debug)
{
	struct unwinder *u = ctx;
	struct table *t = b->observed;

	if (t) {
		u->reuse.remade += t->released;
		t->released = false;
		free(t->segs);
		t->segs = NULL;
		t->nsegs = 0;
	} else {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		t->next = u->tables;
		u->tables = t;
		u->binaries++;
	}
	/* Held until its process is entered, which it is read for. */
	if (!t->fresh) {
		t->fresh = true;
		t->fresh_next = u->fresh;
		u->fresh = t;
	}
	t->used = u->sweeps;
	t->id = b->id <= UNWIND_FILE_ID_MASK ? b->id : UNWIND_NO_FILE;
	t->runtime = t->id != UNWIND_NO_FILE ? b->runtime : NULL;
	t->core = core_binary(b->path);
	if (elffile__segments(elf, &t->segs, &t->nsegs))
		return t;
	if (u->lazy && !t->wanted && !t->core && t->id != UNWIND_NO_FILE && !debug &&
	    lazy_library(elf)) {
		u->lazy_left += !t->lazy;
		t->lazy = true;
		pr_debug("%s: its unwind rows wait for a stack to reach it", b->path);
		enter_build_id(u, b);
		return t;
	}
	u->lazy_made += t->lazy;
	on_binary_rows(u, t, b->path, b->fd, elf, debug, b->observed && !t->lazy);
	t->lazy = false;
	enter_build_id(u, b);
	enter_file(u, b, t);
	return t;
}
/* The executable segment that executable mapping @m maps. */
static const struct elf_segment *segment_of(const struct table *t, const struct syms_mapping *m)
{
	return elf_segment__mapped(t->segs, t->nsegs, m->pgoff, m->end - m->start);
}

/*
 * Where a mapping's rows start: run-time address a is at file offset
 * a - start + pgoff, in the segment holding that offset at its vaddr,
 * which is row pc vaddr - base.
 */
static bool place(const struct table *t, const struct syms_mapping *m, __u64 *bias)
{
	const struct elf_segment *g = segment_of(t, m);

	if (g)
		*bias = m->start - m->pgoff + g->offset - g->vaddr + t->base;
	return g;
}

/* A mapping's load bias: run-time address less the ELF's own. */
static bool load_bias(const struct table *t, const struct syms_mapping *m, __u64 *bias)
{
	const struct elf_segment *g = segment_of(t, m);

	if (g)
		*bias = m->start - m->pgoff + g->offset - g->vaddr;
	return g;
}

/* The interpreter process @tgid runs, if one: the table of its binary, and its load bias. */
static const struct table *runtime_of(const struct syms_mapping *m, size_t n, __u64 *bias)
{
	for (size_t i = 0; i < n; i++) {
		const struct table *t = m[i].binary;

		if (t && t->runtime && load_bias(t, &m[i], bias))
			return t;
	}
	return NULL;
}

/*
 * Tells the runtimes' BPF side which interpreter process @tgid runs, if one:
 * @t's, kept only with the process's entry of mappings (whose walk it
 * needs). Most processes have no interpreter, and had none (@had) before:
 * nothing to write or delete.
 */
static void on_process_runtime(struct unwinder *u, __u32 tgid, bool had, const struct table *t,
			       __u64 bias)
{
	struct traced *p = *traced_slot(u, tgid);
	int err;

	if (!p)
		t = NULL;
	else
		p->runtime = t && t->runtime;
	if (!had && !(t && t->runtime))
		return;
	err = runtime__process(&u->runtimes, tgid, t ? t->runtime : NULL, bias, t ? t->id : 0);
	if (err == -EAGAIN) {
		/* Its entry says so: its walks ask for its maps to be read again, and it with them. */
		pr_debug("pid %u: its runtime is not ready yet: its frames stay native for now", tgid);
	} else if (err == -E2BIG || err == -ENOMEM) {
		p->runtime = false;
		u->lost.runtimes++;
		pr_debug("pid %u: no room for its interpreter: its frames stay native", tgid);
	} else if (err) {
		/* Said by the runtime, which could not read it. */
		p->runtime = false;
	}
}

/*
 * Anonymous code of process @tgid that its interpreter @t says are its
 * trampolines (CPython's -X perf): walked by the one row all of a kind
 * share, made once. Whether @um got it.
 */
static bool trampolines(struct unwinder *u, __u32 tgid, const struct table *t,
			const struct syms_mapping *m, struct unwind_mapping *um)
{
	struct unwind_row row;
	unsigned int k;

	if (!t || !runtime__trampolines(t->runtime, tgid, m->start, m->end, &row))
		return false;
	for (k = 0; k < u->trampoline_kinds; k++)
		if (!memcmp(&u->trampolines[k].row, &row, sizeof(row)))
			break;
	if (k == u->trampoline_kinds) {
		if (k == UNWINDER_TRAMPOLINE_KINDS ||
		    rowstore__add(u->rows, &row, 1, &u->trampolines[k].idx))
			return false;
		u->trampolines[k].row = row;
		u->trampoline_kinds++;
	}
	um->first = u->trampolines[k].idx;
	um->n = 1;
	um->bias = m->start;
	return true;
}

/*
 * The processes map is full: drops the entries of processes that have
 * exited. Every so many processes turned away, not each: a host with more
 * live processes than room would have it swept for nothing each time.
 * Whether room was made.
 */
static bool forget_exited(struct unwinder *u)
{
	size_t dropped;

	if (u->full++ % 64)
		return false;
	dropped = sweep_exited(u, false);
	pr_debug("unwinder: processes' map full: dropped %zu that exited", dropped);
	if (dropped)
		u->full = 0;
	return dropped;
}

/* No table made for the process just entered, or for none, is held for it any more. */
static void unhold_fresh(struct unwinder *u)
{
	for (struct table *t = u->fresh, *next; t; t = next) {
		next = t->fresh_next;
		t->fresh = false;
		t->fresh_next = NULL;
	}
	u->fresh = NULL;
}

/*
 * Whether the binary @observed's rows are to be made again: they were
 * given back, or found no room when made and there is room now or it is
 * time to look for some again.
 */
static bool on_stale(void *ctx, void *observed)
{
	const struct unwinder *u = ctx;
	const struct table *t = observed;

	return t->released || (t->lazy && t->wanted) ||
	       (t->refused && (rowstore__room(u->rows) >= t->want || now_ms() >= t->retry_ms));
}

/*
 * The kernel said process @k exited (stack_on_exit()): its entry goes now,
 * and the next tick gives back the rows only it used, if a refused binary
 * waits for them.
 */
static void on_exited(void *ctx, const struct proc_key *k)
{
	struct unwinder *u = ctx;
	struct traced **pp = traced_slot(u, k->tgid);

	/* Not a process that took its pid since, whose note came first. */
	if (*pp && (*pp)->key.start_ns == k->start_ns) {
		forget(u, pp);
		u->exited = true;
		u->exits++;
	}
}

/* A stack reached @observed's binary, whose rows were left for then: they are made. */
static void on_want(void *ctx, void *observed)
{
	struct table *t = observed;

	t->wanted = true;
}

/*
 * After each report of a run without end: the processes that exited go,
 * and the rows of binaries unused for an interval, so that a run of days
 * holds what its live processes use.
 */
static void on_forgot(void *ctx)
{
	struct unwinder *u = ctx;
	size_t dropped, released;

	u->sweeps++;
	unhold_fresh(u);
	dropped = sweep_exited(u, true);
	released = release_unused(u, false);
	rowstore__trim(u->rows);
	pr_debug("unwinder: %zu exited processes forgotten, %zu binaries' rows given back, "
		 "%zu rows in %zu chunks held", dropped, released, rowstore__used(u->rows),
		 rowstore__chunks(u->rows));
}

/*
 * Does a traced process map a binary whose rows found no room? Asked as
 * each process is entered: walking them all was 5% of profile's CPU under
 * the fleet bench's churn.
 */
static bool any_refused(const struct unwinder *u)
{
	return u->nrefused;
}

/*
 * Exit notes while they buy something: rows for a binary refused for lack
 * of room, or room in a processes' map half full. Else the map's entries
 * and the rows of those that exited go at the sweeps, as before notes.
 */
static void want_exit_notes(struct unwinder *u)
{
	__u32 zero = 0, on = any_refused(u) || u->ntraced * 2 >= u->max_traced;

	if (on != u->exit_notes && !bpf_map_update_elem(u->exit_notes_fd, &zero, &on, 0))
		u->exit_notes = on;
}

/*
 * Once a second, while a traced process maps a binary refused for lack of
 * room: gives back the rows no live process uses, and if that makes room
 * for one, reads again every process that maps a refused binary, which
 * builds its rows then (a /proc read each). A process read while the rows
 * were full would otherwise be walked by frame pointers through that
 * binary for its whole life, though the process that filled them exits a
 * moment later. The kernel's exit notes say when rows may have come back;
 * a sweep of /proc, for the exits no note told (the ring was full), only
 * when a binary's back-off is due.
 */
static void on_tick(void *ctx)
{
	struct unwinder *u = ctx;
	struct proc_key *keys = NULL;
	size_t n = 0, cap = 0, want = SIZE_MAX;
	bool exited = u->exited, due = false;
	long long now = now_ms();

	u->exited = false;
	want_exit_notes(u);
	for (struct table *t = u->tables; t; t = t->next) {
		if (!t->refused)
			continue;
		if (t->want < want)
			want = t->want;
		due |= now >= t->retry_ms;
	}
	if (want == SIZE_MAX || !any_refused(u))
		return;
	if (rowstore__room(u->rows) < want && exited)
		release_unused(u, true);
	if (rowstore__room(u->rows) < want && due) {
		sweep_exited(u, false);
		release_unused(u, true);
	}
	if (rowstore__room(u->rows) < want) {
		/* Still none: each due waits its next, longer, turn. */
		for (struct table *t = u->tables; t; t = t->next)
			if (t->refused && now >= t->retry_ms)
				refuse(u, t, t->want);
		return;
	}
	/* Listed first: reading a process enters it again, in these lists. */
	for (int i = 0; i < TRACED_BUCKETS; i++) {
		for (struct traced *p = u->traced[i]; p; p = p->next) {
			if (!p->refused)
				continue;
			if (n == cap) {
				size_t c = cap ? cap * 2 : 64;
				struct proc_key *k = realloc(keys, c * sizeof(*k));

				if (!k)
					goto read;
				keys = k;
				cap = c;
			}
			keys[n++] = p->key;
		}
	}
read:
	pr_debug("unwinder: room for binaries refused before: %zu processes that map them read "
		 "again", n);
	/* The processes may have exited since they were listed: syms says so. */
	for (size_t i = 0; i < n; i++)
		syms__refresh(u->syms, &keys[i]);
	free(keys);
}

/*
 * Which of a process's @n executable mappings get an entry, when there are
 * more than UNWIND_MAX_MAPPINGS (JIT code, mapped a page at a time): those
 * of the C library, the loader and the vDSO first, then those with CFI,
 * then the rest, lowest first. Mapped first, those three are the highest
 * addresses, which a cut in address order dropped. Marks @keep; how many
 * are left out.
 */
static size_t choose_mappings(const struct syms_mapping *m, size_t n, bool *keep)
{
	size_t room = UNWIND_MAX_MAPPINGS;

	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < n && room; i++) {
			const struct table *t = m[i].binary;

			if (keep[i] || (pass == 0 && !(t && t->core)) || (pass == 1 && !(t && t->n)))
				continue;
			keep[i] = true;
			room--;
		}
	}
	return n - (UNWIND_MAX_MAPPINGS - room);
}

/*
 * The gen of @p, process @tgid's entry about to be written: its entry's
 * own if that maps the same (a process read again, as its first count
 * asks, whose walks' memos still hold), else a new one.
 */
static __u32 entry_gen(struct unwinder *u, __u32 tgid, const struct unwind_proc *p)
{
	struct unwind_proc *was = malloc(sizeof(*was));
	__u32 gen = 0;

	if (was && !bpf_map_lookup_elem(u->procs_fd, &tgid, was) && was->gen &&
	    was->nmaps == p->nmaps && was->nmaps <= UNWIND_MAX_MAPPINGS &&
	    (p->exec_id == UNWIND_EXEC_ANY ||
	     (was->exec_id == p->exec_id && was->start_ns == p->start_ns)) &&
	    !memcmp(was->maps, p->maps, p->nmaps * sizeof(p->maps[0])))
		gen = was->gen;
	free(was);
	if (gen)
		return gen;
	if (!++u->entry_gen)
		u->entry_gen = 1;
	return u->entry_gen;
}

static void on_process(void *ctx, const struct proc_key *k, const struct syms_mapping *m,
		       size_t n)
{
	struct unwinder *u = ctx;
	struct unwind_proc *p = calloc(1, sizeof(*p));
	bool *keep = n > UNWIND_MAX_MAPPINGS ? calloc(n, sizeof(*keep)) : NULL;
	/* The tables whose rows its entry uses, each once. */
	struct table **used = calloc(n ? n : 1, sizeof(*used));
	size_t nused = 0, cfi = 0;
	bool refused = false;
	__u64 bias = 0;
	const struct table *rt = runtime_of(m, n, &bias);
	__u32 tgid = k->tgid;
	struct traced *was = *traced_slot(u, tgid);
	bool had_runtime = was && was->runtime;

	if (!p || !used || (n > UNWIND_MAX_MAPPINGS && !keep)) {
		free(p);
		free(used);
		free(keep);
		unhold_fresh(u);
		return;
	}
	if (keep)
		u->lost.mappings += choose_mappings(m, n, keep);
	p->exec_id = k->start_ns ? k->exec_id : UNWIND_EXEC_ANY;
	p->start_ns = k->start_ns;
	for (size_t i = 0; i < n; i++) {
		struct table *t = m[i].binary;
		struct unwind_mapping *um;
		size_t j;

		if (keep && !keep[i])
			continue;
		um = &p->maps[p->nmaps++];
		um->start = m[i].start;
		um->end = m[i].end;
		um->id = t && m[i].pgoff <= UINT32_MAX ? t->id : UNWIND_NO_FILE;
		um->off = m[i].pgoff;
		refused |= t && t->refused;
		if (t && t->n && place(t, &m[i], &um->bias)) {
			um->first = t->first;
			um->n = t->n;
			cfi++;
			for (j = 0; j < nused && used[j] != t; j++)
				;
			if (j == nused)
				used[nused++] = t;
		} else if (!t && trampolines(u, tgid, rt, &m[i], um)) {
			cfi++;
		} else if (t && t->lazy && um->id != UNWIND_NO_FILE) {
			um->first = UNWIND_LAZY;
		}
	}
	p->gen = entry_gen(u, tgid, p);
	if (bpf_map_update_elem(u->procs_fd, &tgid, p, BPF_ANY) &&
	    (errno != E2BIG || !forget_exited(u) ||
	     bpf_map_update_elem(u->procs_fd, &tgid, p, BPF_ANY))) {
		u->lost.procs++;
		pr_debug("pid %u: no room for its mappings: frame pointers", tgid);
		free(used);
	} else {
		u->processes++;
		pr_debug("pid %u: CFI for %zu of %zu executable mappings", tgid, cfi, n);
		trace(u, k, used, nused, refused);
		u->entered = true;
		want_exit_notes(u);
	}
	unhold_fresh(u);
	free(keep);
	free(p);
	on_process_runtime(u, tgid, had_runtime, rt, bias);
}

/* Attaches @prog into *@link, if it is loaded; @what names it in the error. 0 or -errno. */
static int attach(struct bpf_program *prog, struct bpf_link **link, const char *what)
{
	if (!bpf_program__autoload(prog))
		return 0;
	*link = bpf_program__attach(prog);
	if (!*link) {
		int err = -errno;

		tool__report_bpf_error(what, err);
		errno = -err;
		return err;
	}
	return 0;
}

struct unwinder *unwinder__new(struct syms *syms, const struct unwind_bpf *m)
{
	struct bpf_map *rows = m->rows, *procs = m->procs;
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->rows = rowstore__new(bpf_map__fd(rows),
				(size_t)bpf_map__max_entries(rows) * UNWIND_CHUNK_ROWS);
	if (!u->rows) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->procs_fd = bpf_map__fd(procs);
	u->build_ids_fd = bpf_map__fd(m->build_ids);
	u->files_fd = bpf_map__fd(m->files);
	u->runtimes.procs_fd = tool__legacy_bpf() ? -1 : bpf_map__fd(m->runtime_procs);
	u->counts_fd = bpf_map__fd(m->counts);
	u->exit_notes_fd = bpf_map__fd(m->exit_notes);
	u->max_traced = bpf_map__max_entries(procs);
	u->syms = syms;
	/* System-wide, where the exec program is loaded; one process has its own made at once. */
	u->lazy = bpf_program__autoload(m->on_exec) && !probe__disabled("lazy_cfi");
	syms__observe(syms, &(struct syms_observer){
		.binary = on_binary, .process = on_process, .stale = on_stale,
		.forgot = on_forgot, .tick = on_tick, .want = on_want, .exited = on_exited,
		.ctx = u });
	if (attach(m->on_exec, &u->on_exec, "attach to sched_process_exec") ||
	    attach(m->on_exit, &u->on_exit, "attach to sched_process_exit") ||
	    attach(m->on_new_area, &u->on_new_area,
		   "attach to the mmap:vm_unmapped_area tracepoint")) {
		int err = errno;

		unwinder__free(u);
		errno = err;
		return NULL;
	}
	return u;
}

/* The BPF side's counts, added up over the CPUs. */
static void read_counts(const struct unwinder *u, struct unwind_counts *sum)
{
	int ncpus = libbpf_num_possible_cpus();
	struct unwind_counts *per;
	__u32 zero = 0;

	memset(sum, 0, sizeof(*sum));
	per = ncpus > 0 ? calloc(ncpus, sizeof(*per)) : NULL;
	if (!per || bpf_map_lookup_elem(u->counts_fd, &zero, per)) {
		free(per);
		return;
	}
	for (int i = 0; i < ncpus; i++) {
		sum->cfi += per[i].cfi;
		sum->fp += per[i].fp;
		sum->no_regs += per[i].no_regs;
		sum->truncated += per[i].truncated;
		sum->unmapped += per[i].unmapped;
		sum->by_build_id += per[i].by_build_id;
		sum->py_loops += per[i].py_loops;
		sum->py_unknown += per[i].py_unknown;
		sum->py_no_thread += per[i].py_no_thread;
		sum->lazy += per[i].lazy;
		sum->js_frames += per[i].js_frames;
		sum->js_unknown += per[i].js_unknown;
		sum->java_frames += per[i].java_frames;
		sum->recalled += per[i].recalled;
	}
	free(per);
}

void unwinder__warn_losses(const struct unwinder *u)
{
	struct unwind_counts counts, *c = &counts;

	if (!u)
		return;
	read_counts(u, c);
	pr_debug("user stacks: %llu walked with CFI, %llu by frame pointers and build-id before "
		 "their process's mappings were read (%llu without build-ids, before Linux 5.17), "
		 "%llu cut short; %llu binaries (%llu with CFI, "
		 "%zu rows, %llu of them with rules it does not follow, where stacks end marked), "
		 "%llu processes (%llu forgotten at their exit); %llu interpreter loop frames in "
		 "Python's, %llu Python frames unknown, %llu stacks in Python without its thread "
		 "state; %llu JavaScript frames named by their function, %llu unknown; "
		 "%llu Java frames walked; %llu blocked threads' stacks recalled from their last "
		 "walk, unchanged",
		 (unsigned long long)c->cfi,
		 (unsigned long long)c->by_build_id, (unsigned long long)c->fp,
		 (unsigned long long)c->truncated, u->binaries, u->with_cfi, rowstore__used(u->rows),
		 u->unsupported, u->processes, u->exits, (unsigned long long)c->py_loops,
		 (unsigned long long)c->py_unknown, (unsigned long long)c->py_no_thread,
		 (unsigned long long)c->js_frames, (unsigned long long)c->js_unknown,
		 (unsigned long long)c->java_frames, (unsigned long long)c->recalled);
	pr_debug("unwind rows: %zu held in %zu chunks of %u (%zu KiB); %llu binaries' given back "
		 "when no process used them, %llu made again; %llu big libraries' left until a "
		 "stack reached them, %llu made then", rowstore__used(u->rows),
		 rowstore__chunks(u->rows), UNWIND_CHUNK_ROWS,
		 rowstore__chunks(u->rows) * UNWIND_CHUNK_ROWS * sizeof(struct unwind_row) >> 10,
		 u->reuse.released, u->reuse.remade, u->lazy_left, u->lazy_made);
	if (c->lazy)
		pr_warn("%llu user stacks reached a big library before its unwind rows were made "
			"(system-wide, a library with %d KiB of CFI or more waits for a stack to "
			"reach it): their frames there were walked by frame pointers, which may cut "
			"them short; with -p every table is made at start",
			(unsigned long long)c->lazy, LAZY_EH_FRAME_BYTES >> 10);
	if (c->no_regs)
		pr_warn("%llu user stacks were walked by frame pointers: the tool did not find their "
			"user registers where it looks on kernels before 5.15 (the top of the task's "
			"kernel stack; a kernel built with KASAN keeps them elsewhere)",
			(unsigned long long)c->no_regs);
	if (u->lost.no_room)
		pr_warn("%llu binaries' unwind tables did not fit (%zu of %zu rows in use; %llu "
			"made later, when others were given back): their frames were walked by "
			"frame pointers; raise --unwind-memory", u->lost.no_room,
			rowstore__used(u->rows), rowstore__cap(u->rows), u->reuse.refit);
	if (u->lost.kernel)
		pr_warn("%llu binaries' unwind rows had no memory in the kernel (%s): their frames "
			"were walked by frame pointers", u->lost.kernel, strerror(-u->lost.kernel_err));
	if (u->lost.procs)
		pr_warn("%llu processes had no room for their mappings: walked by frame pointers; "
			"raise --unwind-memory", u->lost.procs);
	if (u->lost.build_ids)
		pr_warn("%llu binaries past the first %d: their frames in processes not yet read "
			"are [unknown]", u->lost.build_ids, UNWIND_BUILD_IDS);
	if (u->lost.files)
		pr_warn("%llu binaries past the first %d: their code mapped after their process was "
			"read is walked by frame pointers", u->lost.files, UNWIND_BUILD_IDS);
	if (u->lost.complex)
		pr_warn("%llu binaries' call-frame information would take too long to read (more "
			"than %u rows to a function, or %u steps in all): walked by frame pointers",
			u->lost.complex, CFI_MAX_FDE_ROWS, CFI_MAX_WORK);
	if (u->lost.runtimes)
		pr_warn("%llu processes running Python, Node.js or a JVM had no room for their "
			"interpreter: their frames show as native code; raise --unwind-memory",
			u->lost.runtimes);
	if (c->py_unknown)
		pr_warn("%llu Python frames are [unknown python]: their code object could not be "
			"read where the stack was taken", (unsigned long long)c->py_unknown);
	if (c->js_unknown)
		pr_warn("%llu JavaScript frames are [unknown js]: their function could not be read "
			"where the stack was taken", (unsigned long long)c->js_unknown);
	if (u->lost.too_many)
		pr_warn("%llu binaries have more unwind rows than the walk can search (%u): their "
			"frames were walked by frame pointers", u->lost.too_many,
			UNWIND_MAX_BINARY_ROWS);
	if (u->lost.mappings)
		pr_warn("%llu executable mappings left out of processes with more than %d (the C "
			"library's, the loader's, the vDSO's and those with CFI kept): their code "
			"was placed by the kernel's mapping at each frame, or walked by frame "
			"pointers", u->lost.mappings, UNWIND_MAX_MAPPINGS);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	bpf_link__destroy(u->on_exec);
	bpf_link__destroy(u->on_exit);
	bpf_link__destroy(u->on_new_area);
	syms__observe(u->syms, &(struct syms_observer){});
	for (struct table *t = u->tables, *n; t; t = n) {
		n = t->next;
		free(t->segs);
		free(t);
	}
	for (int i = 0; i < TRACED_BUCKETS; i++)
		while (u->traced[i])
			untrace(u, &u->traced[i]);
	rowstore__free(u->rows);
	free(u);
}
