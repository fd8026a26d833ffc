// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Merging identical stacks over interned strings and frames, and the folded output every stack tool shares. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "stackset.h"

struct entry {
	struct stack stack;
	uint64_t hash;
};

/* An open-addressing table of numbers 1..n (0: free), over some array. */
struct index {
	uint32_t *slot;
	size_t cap;
};

struct stackset {
	struct entry *entries;		/* insertion order, or sorted */
	size_t len, cap;
	struct index stacks;		/* entry number + 1 */
	struct frame *frames;		/* distinct frames */
	size_t nframes, frames_cap;
	struct index frame_index;	/* frame number + 1 */
	char **strings;			/* interned, open addressing */
	size_t nstrings, strings_cap;
	uint32_t *scratch;		/* the frame numbers of the stack being added */
	size_t scratch_cap;
	uint64_t total;
};

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	/* FNV-1a: short keys, no need for more. */
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return hash_bytes(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* Interned strings are compared and hashed by address. */
static uint64_t hash_ptr(uint64_t h, const void *p)
{
	return (h ^ (uintptr_t)p) * 0x9e3779b97f4a7c15ULL;
}

/*
 * Rebuilds @ix with room for @want numbers at most half full, so that
 * linear probing always finds a free slot and stays short.
 */
static int index_build(struct index *ix, size_t want, size_t n,
		       uint64_t (*hash)(const struct stackset *, uint32_t), const struct stackset *s)
{
	size_t cap = 1024;
	uint32_t *slot;

	while (cap < 2 * want)
		cap *= 2;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (uint32_t e = 0; e < n; e++) {
		size_t i = hash(s, e) & (cap - 1);

		while (slot[i])
			i = (i + 1) & (cap - 1);
		slot[i] = e + 1;
	}
	free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
	return 0;
}

static const char *intern(struct stackset *s, const char *str)
{
	size_t i, mask;

	if (!str)
		return NULL;
	if ((s->nstrings + 1) * 2 > s->strings_cap) {
		size_t cap = s->strings_cap ? s->strings_cap * 2 : 1024;
		char **t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t j = 0; j < s->strings_cap; j++) {
			if (!s->strings[j])
				continue;
			for (i = hash_str(0xcbf29ce484222325ULL, s->strings[j]) & (cap - 1); t[i];
			     i = (i + 1) & (cap - 1))
				;
			t[i] = s->strings[j];
		}
		free(s->strings);
		s->strings = t;
		s->strings_cap = cap;
	}
	mask = s->strings_cap - 1;
	for (i = hash_str(0xcbf29ce484222325ULL, str) & mask; s->strings[i]; i = (i + 1) & mask)
		if (!strcmp(s->strings[i], str))
			return s->strings[i];
	s->strings[i] = strdup(str);
	if (!s->strings[i])
		return NULL;
	s->nstrings++;
	return s->strings[i];
}

/* A frame of the table, by its interned name, kind, module and build-id. */
static uint64_t frame_hash(const struct frame *f)
{
	uint64_t h = hash_ptr(0xcbf29ce484222325ULL, f->name);

	h = hash_ptr(h, f->module);
	h = hash_ptr(h, f->build_id);
	return hash_ptr(h, (void *)(uintptr_t)f->kind);
}

static uint64_t frame_hash_at(const struct stackset *s, uint32_t id)
{
	return frame_hash(&s->frames[id]);
}

/* The number of frame @f, added to the table if new; -1 without memory. */
static int64_t frame_id(struct stackset *s, const struct frame *f)
{
	struct frame k = {
		.name = intern(s, f->name ? f->name : "[unknown]"),
		.kind = f->kind,
		.addr = f->addr,
		.module = intern(s, f->module),
		.build_id = intern(s, f->build_id),
		.func = intern(s, f->func),
		.system_name = intern(s, f->system_name),
		.file = intern(s, f->file),
		.line = f->line,
	};
	size_t i, mask;

	if (!k.name || (f->module && !k.module) || (f->build_id && !k.build_id) ||
	    (f->file && !k.file) || (f->func && !k.func) || (f->system_name && !k.system_name))
		return -1;
	if ((s->nframes + 1) * 2 > s->frame_index.cap &&
	    index_build(&s->frame_index, 2 * (s->nframes + 1), s->nframes, frame_hash_at, s))
		return -1;
	mask = s->frame_index.cap - 1;
	for (i = frame_hash(&k) & mask; s->frame_index.slot[i]; i = (i + 1) & mask) {
		const struct frame *g = &s->frames[s->frame_index.slot[i] - 1];

		if (g->name == k.name && g->kind == k.kind && g->module == k.module &&
		    g->build_id == k.build_id)
			return s->frame_index.slot[i] - 1;
	}
	if (s->nframes == s->frames_cap) {
		size_t cap = s->frames_cap ? s->frames_cap * 2 : 1024;
		struct frame *t = realloc(s->frames, cap * sizeof(*t));

		if (!t || s->nframes >= UINT32_MAX - 1)
			return -1;
		s->frames = t;
		s->frames_cap = cap;
	}
	s->frames[s->nframes] = k;
	s->frame_index.slot[i] = s->nframes + 1;
	return s->nframes++;
}

const char *frame_kind__name(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_ROOT:
		return "root";
	case FRAME_USER:
		return "user";
	case FRAME_KERNEL:
		return "kernel";
	case FRAME_JIT:
		return "jit";
	case FRAME_INLINE:
		return "inlined";
	case FRAME_PYTHON:
		return "python";
	case FRAME_JS:
		return "js";
	case FRAME_JAVA:
		return "java";
	case FRAME_PHP:
		return "php";
	case FRAME_PERL:
		return "perl";
	case FRAME_RUBY:
		return "ruby";
	case FRAME_SEPARATOR:
		return "separator";
	case FRAME_STATE:
		return "state";
	case FRAME_SYSCALL:
		return "syscall";
	case FRAME_CONTAINER:
		return "container";
	case FRAME_UNKNOWN:
		break;
	}
	return "unknown";
}

struct stackset *stackset__new(void)
{
	return calloc(1, sizeof(struct stackset));
}

void stackset__free(struct stackset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->len; i++)
		free((void *)s->entries[i].stack.frames);
	for (size_t i = 0; i < s->strings_cap; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->entries);
	free(s->stacks.slot);
	free(s->frames);
	free(s->frame_index.slot);
	free(s->scratch);
	free(s);
}

/* Stacks merge by their frames' names and kinds, as folded lines show them. */
static uint64_t stack_hash(const struct stackset *s, const uint32_t *ids, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h = hash_ptr(h, s->frames[ids[i]].name);
		h = hash_ptr(h, (void *)(uintptr_t)s->frames[ids[i]].kind);
	}
	return h;
}

static uint64_t entry_hash_at(const struct stackset *s, uint32_t e)
{
	return s->entries[e].hash;
}

static bool same_stack(const struct stackset *s, const struct stack *st, const uint32_t *ids,
		       size_t n)
{
	if (st->n != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct frame *a = &s->frames[st->frames[i]], *b = &s->frames[ids[i]];

		if (a != b && (a->name != b->name || a->kind != b->kind))
			return false;
	}
	return true;
}

int stackset__add(struct stackset *s, const struct frame *frames, size_t n, uint64_t value)
{
	uint32_t *copy;
	uint64_t h;
	size_t i, mask;

	if (n > s->scratch_cap) {
		uint32_t *t = realloc(s->scratch, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		s->scratch = t;
		s->scratch_cap = n;
	}
	for (size_t k = 0; k < n; k++) {
		int64_t id = frame_id(s, &frames[k]);

		if (id < 0)
			return -ENOMEM;
		s->scratch[k] = id;
	}
	h = stack_hash(s, s->scratch, n);
	if ((s->len + 1) * 2 > s->stacks.cap &&
	    index_build(&s->stacks, 2 * (s->len + 1), s->len, entry_hash_at, s))
		return -ENOMEM;
	mask = s->stacks.cap - 1;
	for (i = h & mask; s->stacks.slot[i]; i = (i + 1) & mask) {
		struct entry *e = &s->entries[s->stacks.slot[i] - 1];

		if (e->hash == h && same_stack(s, &e->stack, s->scratch, n)) {
			e->stack.value += value;
			s->total += value;
			return 0;
		}
	}
	if (s->len == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct entry *t = realloc(s->entries, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		s->entries = t;
		s->cap = cap;
	}
	copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s->scratch, n * sizeof(*copy));
	s->entries[s->len] = (struct entry){ { copy, n, value }, h };
	s->stacks.slot[i] = ++s->len;
	s->total += value;
	return 0;
}

size_t stackset__len(const struct stackset *s)
{
	return s->len;
}

uint64_t stackset__total(const struct stackset *s)
{
	return s->total;
}

const struct frame *stackset__frame(const struct stackset *s, uint32_t id)
{
	return id < s->nframes ? &s->frames[id] : NULL;
}

size_t stackset__frames(const struct stackset *s)
{
	return s->nframes;
}

/* qsort() has no context: the set being sorted. */
static const struct stackset *sorting;

static int cmp_entries(const void *a, const void *b)
{
	const struct stack *x = &((const struct entry *)a)->stack;
	const struct stack *y = &((const struct entry *)b)->stack;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	for (size_t i = 0; i < x->n && i < y->n; i++) {
		int c = strcmp(sorting->frames[x->frames[i]].name, sorting->frames[y->frames[i]].name);

		if (c)
			return c;
	}
	return (x->n > y->n) - (x->n < y->n);
}

void stackset__sort(struct stackset *s)
{
	if (s->len) {
		sorting = s;
		qsort(s->entries, s->len, sizeof(*s->entries), cmp_entries);
		sorting = NULL;
	}
	/* The index points at entry positions, which sorting moved. */
	if (index_build(&s->stacks, s->len + 1, s->len, entry_hash_at, s)) {
		/* No memory for a new index: none at all, and the next add rebuilds it. */
		free(s->stacks.slot);
		s->stacks.slot = NULL;
		s->stacks.cap = 0;
	}
}

bool stackset__has(const struct stackset *s, enum frame_kind kind)
{
	for (size_t i = 0; i < s->nframes; i++)
		if (s->frames[i].kind == kind)
			return true;
	return false;
}

struct stackset *stackset__without(const struct stackset *s, enum frame_kind kind)
{
	struct stackset *out = stackset__new();
	struct frame *f = NULL;
	size_t cap = 0;

	for (size_t i = 0; out && i < s->len; i++) {
		const struct stack *st = &s->entries[i].stack;
		size_t n = 0;

		if (st->n > cap) {
			struct frame *t = realloc(f, st->n * sizeof(*f));

			if (!t)
				goto fail;
			f = t;
			cap = st->n;
		}
		for (size_t k = 0; k < st->n; k++)
			if (s->frames[st->frames[k]].kind != kind)
				f[n++] = s->frames[st->frames[k]];
		if (stackset__add(out, f, n, st->value))
			goto fail;
	}
	free(f);
	if (out)
		stackset__sort(out);
	return out;
fail:
	free(f);
	stackset__free(out);
	return NULL;
}

const struct stack *stackset__get(const struct stackset *s, size_t i)
{
	return i < s->len ? &s->entries[i].stack : NULL;
}

static bool spaced(enum frame_kind kind)
{
	return frame_kind__runtime(kind) || kind == FRAME_USER || kind == FRAME_INLINE ||
	       kind == FRAME_CONTAINER;
}

int stackset__write_folded(const struct stackset *s, FILE *f)
{
	for (size_t i = 0; i < s->len; i++) {
		const struct stack *st = &s->entries[i].stack;

		for (size_t k = 0; k < st->n; k++) {
			const struct frame *fr = &s->frames[st->frames[k]];

			if (k)
				fputc(';', f);
			/*
			 * A function keeps its spaces, as its language writes
			 * it: "name (file.py:7)", "f(char const*) [clone
			 * .isra.0]". A line's count is its last field,
			 * whatever came before.
			 */
			escape__print(f, fr->name, spaced(fr->kind) ? ESCAPE_FOLDED_SPACED : ESCAPE_FOLDED);
			/* stackcollapse-perf.pl --inline's mark, which flamegraph.pl colours. */
			if (fr->kind == FRAME_INLINE)
				fputs("_[i]", f);
		}
		fprintf(f, " %llu\n", (unsigned long long)st->value);
	}
	return ferror(f) ? -EIO : 0;
}
