// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbolizer: names of kernel and user addresses, through the caches of syms_proc.c and syms_binary.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfo.h"
#include "gopclntab.h"
#include "inlines.h"
#include "ksyms.h"
#include "procfile.h"
#include "runtimes/runtime.h"
#include "syms_priv.h"
#include "tool.h"

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
	 * limit allows with room for the tool's own (syms__can_hold()), then
	 * binaries are read as they come and closed.
	 */
	limit = procfile__raise_nofile();
	s->fd_spare = limit / 8 < 4 ? 4 : limit / 8 > 256 ? 256 : limit / 8;
	s->fd_ceiling = limit > s->fd_spare ? limit - s->fd_spare : 0;
	s->fd_budget = s->fd_ceiling < 65536 ? s->fd_ceiling : 65536;
	s->ticks_per_sec = sysconf(_SC_CLK_TCK);
	if (s->ticks_per_sec <= 0)
		s->ticks_per_sec = 100;
	s->budget = (uint64_t)SYMS_DEFAULT_MEMORY_MB << 20;
	return s;
}

void syms__observe(struct syms *s, const struct syms_observer *o)
{
	s->observer = *o;
}

void syms__set_raw_names(struct syms *s, bool raw)
{
	s->raw_names = raw;
}

int syms__use_debuginfod(struct syms *s, unsigned int seconds)
{
	return debuginfo__enable_debuginfod(s->debuginfo, seconds);
}

void syms__free(struct syms *s)
{
	if (!s)
		return;
	for (int i = 0; i < BUCKETS; i++) {
		for (struct binary *b = s->binaries[i], *n; b; b = n) {
			n = b->next;
			binary__free(b);
		}
		for (struct proc *p = s->procs[i], *n; p; p = n) {
			n = p->next;
			proc__free(s, p);
		}
	}
	for (struct root *r = s->roots, *n; r; r = n) {
		n = r->next;
		close(r->fd);
		free(r);
	}
	if (s->vdso)
		binary__free(s->vdso);
	syms__cgroups_free(s);
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

int syms__user(struct syms *s, const struct proc_key *k, uint64_t addr, struct sym_info *out)
{
	const struct perfmap_sym *j;
	const struct vma *v;
	struct proc *p;

	memset(out, 0, sizeof(*out));
	p = proc__find(s, k);
	if (!p) {
		syms__track(s, k);
		p = proc__find(s, k);
	}
	if (!p)
		return -ENOENT;
	if (p->gone && p->superseded) {
		s->lost.execed += !p->counted;
		p->counted = true;
		return -ENOENT;
	}
	v = proc__vma(p, addr);
	if (v && v->bin) {
		if (binary__lookup(s, v->bin, v, addr, out)) {
			out->kind = v->bin == s->vdso ? SYM_VDSO : SYM_USER;
			return 0;
		}
		return -ENOENT;
	}
	/* Not in a file: code a JIT wrote, if it left a map (which an exec's new image may own). */
	if (!p->jit_tried && !p->superseded)
		proc__load_jit(s, p);
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
		const struct elf_segment *g;

		if (!b || !b->runtime)
			continue;
		if (!b->loaded)
			binary__load(s, b);
		g = elf_segment__mapped(b->segs, b->nsegs, p->vmas[i].pgoff,
					p->vmas[i].end - p->vmas[i].start);
		if (g) {
			*bias = p->vmas[i].start - p->vmas[i].pgoff + g->offset - g->vaddr;
			return b->runtime;
		}
	}
	return NULL;
}

int syms__runtime_frame(struct syms *s, const struct proc_key *k, uint64_t v, uint64_t data,
			struct runtime_frame *out)
{
	struct proc *p = proc__find(s, k);
	uint64_t bias = 0;
	const struct runtime_binary *rb = NULL;

	/* A process gone, or in another image now: only what was read while it was. */
	if (p && !p->gone && !p->superseded && proc__same(s, p))
		rb = proc_runtime(s, p, &bias);
	return runtime_names__get(s->runtime_names, k, rb, bias, v, data, out);
}

void syms__runtime_note(struct syms *s, const struct proc_key *k, uint64_t v, uint64_t data)
{
	struct runtime_frame f;

	if (!proc__find(s, k))
		syms__track(s, k);
	syms__runtime_frame(s, k, v, data, &f);
}

int syms__want(struct syms *s, const struct proc_key *p, uint64_t id)
{
	if (id >= s->nids || !s->by_id[id]->observed || !s->observer.want)
		return -ENOENT;
	s->observer.want(s->observer.ctx, s->by_id[id]->observed);
	return syms__refresh(s, p);
}

void syms__exited(struct syms *s, const struct proc_key *p)
{
	if (s->observer.exited)
		s->observer.exited(s->observer.ctx, p);
}

int syms__file_offset(struct syms *s, uint32_t id, uint64_t offset, struct sym_info *out)
{
	struct vma whole = { 0, UINT64_MAX, 0, NULL };

	memset(out, 0, sizeof(*out));
	if (id >= s->nids)
		return -ENOENT;
	whole.bin = s->by_id[id];
	if (!binary__lookup(s, whole.bin, &whole, offset, out))
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
	whole.bin = binary__get(s, copy, &st, "[file]", NULL);
	if (!whole.bin)
		return -ENOMEM;
	if (!binary__lookup(s, whole.bin, &whole, offset, out))
		return -ENOENT;
	out->kind = SYM_USER;
	return 0;
}

int syms__source(const struct sym_info *si, bool exact, struct sym_source *out, int max)
{
	struct binary *b = si->binary;
	struct inline_name names[INLINES_MAX_DEPTH];
	uint64_t vaddr;
	int n = 0;

	if (!si->name || max < 1)
		return 0;
	out[0] = (struct sym_source){ .name = si->name, .raw = si->raw };
	if (!b || si->kind == SYM_JIT || (!exact && !si->vaddr))
		return 1;
	/* A return address may be past the call, and past an inlined call's end. */
	vaddr = si->vaddr - !exact;
	if (b->go) {
		struct goframe g[INLINES_MAX_DEPTH + 1];

		n = gopclntab__frames(b->go, vaddr, g, max < INLINES_MAX_DEPTH + 1 ? max :
						      INLINES_MAX_DEPTH + 1);
		for (int i = 0; i < n; i++)
			out[i] = (struct sym_source){ .name = g[i].name, .file = g[i].file,
						      .line = g[i].start_line > 0 ?
							      g[i].start_line : g[i].line };
		return n ? n : 1;
	}
	if (b->inlines)
		n = inlines__find(b->inlines, vaddr, names,
				  max - 1 < INLINES_MAX_DEPTH ? max - 1 : INLINES_MAX_DEPTH);
	for (int i = 0; i < n; i++)
		out[i] = (struct sym_source){ .name = names[i].name, .raw = names[i].linkage };
	out[n] = (struct sym_source){ .name = si->name, .raw = si->raw };
	return n + 1;
}

void syms__warn_losses(const struct syms *s)
{
	const struct losses *l = &s->lost;
	size_t names = runtime_names__bytes(s->runtime_names);

	runtime_names__warn_losses(s->runtime_names);
	if (names)
		pr_debug("runtimes' frame names: %zu KiB held", (names + 1023) >> 10);
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
	if (l->cgroups_full)
		pr_warn("%llu processes have no container or cgroup in the outputs: more than %d "
			"distinct cgroups", l->cgroups_full, CGROUP_LABELS_MAX);
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
	if (l->unmapped)
		pr_debug("symbols of %llu binaries let go when no process mapped them, read again "
			 "%llu times when one did", l->unmapped, l->remapped);
	if (l->unmapped_gone)
		pr_warn("%llu binaries' symbols were let go when no process mapped them, and their "
			"files were gone when a frame needed them again: their frames are [unknown]",
			l->unmapped_gone);
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
