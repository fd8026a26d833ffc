// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbolizer's memory: within its budget, and only for what is mapped; tables let go are read again if needed. */
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"
#include "inlines.h"
#include "ksyms.h"
#include "runtimes/runtime.h"
#include "syms_priv.h"

/*
 * The runtimes' names, which cannot be read again once their process is
 * gone, take at most a quarter; the binaries' tables what the names leave.
 */
void syms__set_budget(struct syms *s, uint64_t bytes)
{
	s->budget = bytes;
	runtime_names__set_limit(s->runtime_names, bytes / 4);
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
	s->open_fds -= !!b->inlines;	/* its DWARF's descriptor */
	inlines__free(b->inlines);
	b->inlines = NULL;
	gopclntab__free(b->go);
	b->go = NULL;
	b->loaded = false;
	b->evicted = true;
	s->held -= b->bytes;
	b->bytes = 0;
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
void budget__note(struct syms *s, struct binary *b)
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
	uint64_t names;

	ksyms__trim(s->kernel, KSYMS_MAX_NAMED);
	/* Tables grow as they are used (inlined calls decode unit by unit): count those named. */
	for (size_t i = 0; i < s->nrecent; i++) {
		struct binary *b = s->recent[i];
		uint64_t now = b->loaded ? binary_bytes(b) : 0;

		s->held += now - b->bytes;
		b->bytes = now;
	}
	s->nrecent = 0;
	names = runtime_names__bytes(s->runtime_names);
	if (s->held + names <= s->budget) {
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
	for (size_t i = 0; i < n && s->held + names > s->budget / 4 * 3; i++) {
		if (v[i].b) {
			binary_evict(s, v[i].b);
			v[i].b->unmapped = false;
			s->lost.evicted++;
		} else {
			proc_evict(s, v[i].p);
		}
	}
	free(v);
	s->trimmed = s->clock;
}

/*
 * A run without end meets every binary the host runs, and those of the
 * last deploy, the last CI job or the last package upgrade are mapped by
 * no one once it is done: kept until --symbol-memory filled, their tables
 * made the tool grow by each new binary for hours. Those that no process
 * held maps (exited ones are held until the report after their exit, for
 * their stacks) and that named no frame in the report just made go now; a
 * process that maps one later has it read again. (The report hands the
 * pages freed back to the kernel.)
 */
void budget__release_unmapped(struct syms *s)
{
	uint64_t gen = ++s->forgets;

	for (int i = 0; i < BUCKETS; i++)
		for (struct proc *p = s->procs[i]; p; p = p->next)
			for (size_t k = 0; k < p->nvmas; k++)
				if (p->vmas[k].bin)
					p->vmas[k].bin->mapped = gen;
	for (int i = 0; i < BUCKETS; i++)
		for (struct binary *b = s->binaries[i]; b; b = b->next) {
			if (!b->loaded || b->failed || b->mapped == gen || b->used > s->forgot)
				continue;
			binary_evict(s, b);
			b->unmapped = true;
			s->lost.unmapped++;
		}
	s->forgot = s->clock;
}
