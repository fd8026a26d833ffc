// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Loading unwind rows into an mmapped BPF array as binaries appear, and each process's mappings into a hash. */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cfi.h"
#include "elffile.h"
#include "probe.h"
#include "syms.h"
#include "tool.h"
#include "unwinder.h"

/* A binary's rows in the array, and where its segments sit, to place its mappings. */
struct table {
	struct table *next;
	__u32 first, n;		/* n == 0: no CFI, or no room for it */
	__u64 base;
	struct elf_segment *segs;
	size_t nsegs;
};

struct losses {
	unsigned long long no_room;	/* binaries whose rows did not fit */
	unsigned long long rows_lost;	/* their rows */
	unsigned long long procs;	/* processes the map had no room for */
	unsigned long long mappings;	/* mappings past UNWIND_MAX_MAPPINGS */
	unsigned long long unsupported;	/* rows with rules the unwinder cannot follow */
};

struct unwinder {
	struct syms *syms;
	int procs_fd;
	struct unwind_row *rows;	/* the unwind_rows map, mmapped */
	size_t rows_cap, rows_used, map_size;
	struct table *tables;
	unsigned long long binaries, with_cfi, processes;
	struct losses lost;
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

/* Can this kernel run the walker: bpf_loop (5.17) and bpf_task_pt_regs (5.15)? */
static bool kernel_can(void)
{
	if (probe__disabled("bpf_loop"))
		return false;
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1 &&
	       libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_pt_regs, NULL) == 1;
}

int unwind__configure(const struct unwind_opts *o, struct bpf_map *rows, struct bpf_map *procs,
		      unsigned int processes)
{
	size_t budget = (size_t)o->memory_mb << 20, proc_bytes, nrows;
	bool cfi = o->method != UNWIND_FP && kernel_can();

	if (o->method == UNWIND_DWARF && !cfi) {
		pr_err("--unwind=dwarf: this kernel cannot walk stacks with CFI in BPF (it needs "
		       "bpf_loop, Linux 5.17, and bpf_task_pt_regs, 5.15); use --unwind=fp");
		return -ENOTSUP;
	}
	if (!cfi) {
		pr_debug("user stacks: frame pointers (%s)", o->method == UNWIND_FP ? "--unwind=fp" :
			 "this kernel has no bpf_loop, Linux 5.17");
		bpf_map__set_max_entries(rows, 1);
		bpf_map__set_max_entries(procs, 1);
		return 0;
	}
	/* A quarter to the processes' mappings, at most what @processes need; rows the rest. */
	proc_bytes = (size_t)processes * sizeof(struct unwind_proc);
	if (proc_bytes > budget / 4)
		proc_bytes = budget / 4;
	nrows = (budget - proc_bytes) / sizeof(struct unwind_row);
	processes = proc_bytes / sizeof(struct unwind_proc);
	if (!processes)
		processes = 1;
	bpf_map__set_max_entries(rows, nrows ? nrows : 1);
	bpf_map__set_max_entries(procs, processes);
	pr_debug("user stacks: CFI (.eh_frame), frame pointers where there is none; room for "
		 "%zu rows and %u processes in %lu MiB", nrows, processes, o->memory_mb);
	return 1;
}

/* Copies a binary's rows into the array, if they fit. */
static void *on_binary(void *ctx, const char *path, Elf *elf, Elf *debug)
{
	struct unwinder *u = ctx;
	struct table *t = calloc(1, sizeof(*t));
	struct cfi_table c;
	int err;

	if (!t)
		return NULL;
	t->next = u->tables;
	u->tables = t;
	u->binaries++;
	if (elffile__segments(elf, &t->segs, &t->nsegs))
		return t;
	err = cfi__build(elf, debug, u->rows_cap - u->rows_used, &c);
	if (err == -E2BIG) {
		u->lost.no_room++;
		pr_debug("%s: its unwind rows do not fit (raise --unwind-memory)", path);
		return t;
	}
	if (err) {
		pr_debug("%s: no call-frame information (%s): frame pointers", path, strerror(-err));
		return t;
	}
	memcpy(u->rows + u->rows_used, c.rows, c.n * sizeof(*c.rows));
	t->first = u->rows_used;
	t->n = c.n;
	t->base = c.base;
	u->rows_used += c.n;
	u->with_cfi++;
	u->lost.unsupported += c.unsupported;
	pr_debug("%s: %zu unwind rows for %zu functions", path, c.n, c.fdes);
	cfi__free(&c);
	return t;
}

/*
 * Where a mapping's rows start: run-time address a is at file offset
 * a - start + pgoff, in the segment holding that offset at its vaddr,
 * which is row pc vaddr - base.
 */
static bool place(const struct table *t, const struct syms_mapping *m, __u64 *bias)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct elf_segment *g = &t->segs[i];

		if (g->exec && m->pgoff >= g->offset && m->pgoff - g->offset < g->filesz) {
			*bias = m->start - m->pgoff + g->offset - g->vaddr + t->base;
			return true;
		}
	}
	return false;
}

static void on_process(void *ctx, const struct proc_key *k, const struct syms_mapping *m,
		       size_t n)
{
	struct unwinder *u = ctx;
	struct unwind_proc *p = calloc(1, sizeof(*p));
	size_t cfi = 0;
	__u32 tgid = k->tgid;

	if (!p)
		return;
	p->exec_id = k->start_ns ? k->exec_id : UNWIND_EXEC_ANY;
	p->start_ns = k->start_ns;
	for (size_t i = 0; i < n; i++) {
		const struct table *t = m[i].binary;
		struct unwind_mapping *um;

		if (p->nmaps == UNWIND_MAX_MAPPINGS) {
			u->lost.mappings += n - i;
			break;
		}
		um = &p->maps[p->nmaps++];
		um->start = m[i].start;
		um->end = m[i].end;
		if (t && t->n && place(t, &m[i], &um->bias)) {
			um->first = t->first;
			um->n = t->n;
			cfi++;
		}
	}
	if (bpf_map_update_elem(u->procs_fd, &tgid, p, BPF_ANY)) {
		u->lost.procs++;
		pr_debug("pid %u: no room for its mappings: frame pointers", tgid);
	} else {
		u->processes++;
		pr_debug("pid %u: CFI for %zu of %zu executable mappings", tgid, cfi, n);
	}
	free(p);
}

struct unwinder *unwinder__new(struct syms *syms, struct bpf_map *rows, struct bpf_map *procs)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	if (!u)
		return NULL;
	u->rows_cap = bpf_map__max_entries(rows);
	u->map_size = (u->rows_cap * sizeof(struct unwind_row) + page - 1) / page * page;
	mem = mmap(NULL, u->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(rows), 0);
	if (mem == MAP_FAILED) {
		int err = errno;

		pr_err("cannot map the unwind tables: %s", strerror(err));
		free(u);
		errno = err;
		return NULL;
	}
	u->rows = mem;
	u->procs_fd = bpf_map__fd(procs);
	u->syms = syms;
	syms__observe(syms, &(struct syms_observer){ on_binary, on_process, u });
	return u;
}

void unwinder__warn_losses(const struct unwinder *u, const struct unwind_counts *c)
{
	if (!u)
		return;
	pr_debug("user stacks: %llu walked with CFI, %llu by frame pointers before their "
		 "process's tables were ready, %llu cut short; %llu binaries (%llu with CFI, %zu "
		 "rows), %llu processes", (unsigned long long)c->cfi, (unsigned long long)c->fp,
		 (unsigned long long)c->truncated, u->binaries, u->with_cfi, u->rows_used,
		 u->processes);
	if (u->lost.no_room)
		pr_warn("%llu binaries' unwind tables did not fit: their frames were walked by "
			"frame pointers; raise --unwind-memory", u->lost.no_room);
	if (u->lost.procs)
		pr_warn("%llu processes had no room for their mappings: walked by frame pointers; "
			"raise --unwind-memory", u->lost.procs);
	if (u->lost.mappings)
		pr_warn("%llu executable mappings past the first %d of a process: walked by frame "
			"pointers", u->lost.mappings, UNWIND_MAX_MAPPINGS);
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	syms__observe(u->syms, &(struct syms_observer){});
	for (struct table *t = u->tables, *n; t; t = n) {
		n = t->next;
		free(t->segs);
		free(t);
	}
	munmap(u->rows, u->map_size);
	free(u);
}
