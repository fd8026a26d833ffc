// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Merging identical stacks with interned strings, and the folded output every stack tool shares. */
#include <errno.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "escape.h"
#include "stackset.h"

struct entry {
	struct stack stack;
	uint64_t hash;
};

struct stackset {
	struct entry *entries;		/* insertion order, or sorted */
	size_t len, cap;
	size_t *index;			/* open addressing: entry number + 1, 0 = free */
	size_t index_cap;
	char **strings;			/* interned, open addressing */
	size_t nstrings, strings_cap;
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
	free(s->index);
	free(s);
}

static uint64_t hash_frames(const struct frame *f, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h = hash_str(h, f[i].name);
		h = hash_bytes(h, &f[i].kind, sizeof(f[i].kind));
	}
	return h;
}

/* Frames of interned strings compare by pointer. */
static bool same_frames(const struct stack *st, const struct frame *f, size_t n)
{
	if (st->n != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (st->frames[i].kind != f[i].kind || strcmp(st->frames[i].name, f[i].name))
			return false;
	return true;
}

/*
 * (Re)builds the index with room for @want entries at most half full, so
 * that linear probing always finds a free slot and stays short.
 */
static int build_index(struct stackset *s, size_t want)
{
	size_t cap = 1024, *idx;

	while (cap < 2 * want)
		cap *= 2;
	idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t e = 0; e < s->len; e++) {
		size_t i = s->entries[e].hash & (cap - 1);

		while (idx[i])
			i = (i + 1) & (cap - 1);
		idx[i] = e + 1;
	}
	free(s->index);
	s->index = idx;
	s->index_cap = cap;
	return 0;
}

int stackset__add(struct stackset *s, const struct frame *frames, size_t n, uint64_t value)
{
	uint64_t h = hash_frames(frames, n);
	struct frame *copy;
	size_t i, mask;

	if ((s->len + 1) * 2 > s->index_cap && build_index(s, 2 * (s->len + 1)))
		return -ENOMEM;
	mask = s->index_cap - 1;
	for (i = h & mask; s->index[i]; i = (i + 1) & mask) {
		struct entry *e = &s->entries[s->index[i] - 1];

		if (e->hash == h && same_frames(&e->stack, frames, n)) {
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
	copy = calloc(n ? n : 1, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		copy[k] = frames[k];
		copy[k].name = intern(s, frames[k].name ? frames[k].name : "[unknown]");
		copy[k].module = intern(s, frames[k].module);
		copy[k].build_id = intern(s, frames[k].build_id);
		if (!copy[k].name) {
			free(copy);
			return -ENOMEM;
		}
	}
	s->entries[s->len] = (struct entry){ { copy, n, value }, h };
	s->index[i] = ++s->len;
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

static int cmp_entries(const void *a, const void *b)
{
	const struct stack *x = &((const struct entry *)a)->stack;
	const struct stack *y = &((const struct entry *)b)->stack;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	for (size_t i = 0; i < x->n && i < y->n; i++) {
		int c = strcmp(x->frames[i].name, y->frames[i].name);

		if (c)
			return c;
	}
	return (x->n > y->n) - (x->n < y->n);
}

void stackset__sort(struct stackset *s)
{
	if (s->len)
		qsort(s->entries, s->len, sizeof(*s->entries), cmp_entries);
	/* The index points at entry positions, which sorting moved. */
	if (build_index(s, s->len + 1)) {
		/* No memory for a new index: none at all, and the next add rebuilds it. */
		free(s->index);
		s->index = NULL;
		s->index_cap = 0;
	}
}

const struct stack *stackset__get(const struct stackset *s, size_t i)
{
	return i < s->len ? &s->entries[i].stack : NULL;
}

int stackset__write_folded(const struct stackset *s, FILE *f)
{
	for (size_t i = 0; i < s->len; i++) {
		const struct stack *st = &s->entries[i].stack;

		for (size_t k = 0; k < st->n; k++) {
			if (k)
				fputc(';', f);
			escape__print(f, st->frames[k].name, ESCAPE_FOLDED);
		}
		fprintf(f, " %llu\n", (unsigned long long)st->value);
	}
	return ferror(f) ? -EIO : 0;
}
