// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sorted function symbols with their names in a few large blocks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "symtab.h"

#define CHUNK_MIN (64 << 10)

/* Copies @len bytes of @name, terminated, into the table's storage. */
static const char *keep(struct symtab *t, const char *name, size_t len)
{
	char *p;

	if (!t->nchunks || t->chunk_used + len + 1 > t->chunk_size) {
		size_t size = len + 1 > CHUNK_MIN ? len + 1 : CHUNK_MIN;
		char **v = realloc(t->chunks, (t->nchunks + 1) * sizeof(*v));

		if (!v)
			return NULL;
		t->chunks = v;
		if (!(v[t->nchunks] = malloc(size)))
			return NULL;
		t->nchunks++;
		t->chunk_used = 0;
		t->chunk_size = size;
		t->bytes += size;
	}
	p = t->chunks[t->nchunks - 1] + t->chunk_used;
	memcpy(p, name, len);
	p[len] = '\0';
	t->chunk_used += len + 1;
	return p;
}

static int add(struct symtab *t, uint64_t addr, uint64_t size, const char *name, size_t len)
{
	const char *copy;

	/* Whatever a file's symbols ask for: one table holds so much, and no more. */
	if (t->bytes + len > SYMTAB_MAX_BYTES)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct sym *v;

		if (t->n >= SYMTAB_MAX_SYMS)
			return -E2BIG;
		v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->bytes += (cap - t->cap) * sizeof(*v);
		t->v = v;
		t->cap = cap;
	}
	copy = keep(t, name, len);
	if (!copy)
		return -ENOMEM;
	t->v[t->n++] = (struct sym){ addr, size, copy };
	return 0;
}

/*
 * A name's length, looked at no further than SYMTAB_MAX_NAME: a million
 * symbols may all point at one name a megabyte long.
 */
static size_t name_len(const char *name)
{
	return strnlen(name, SYMTAB_MAX_NAME);
}

int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name)
{
	/* "read@GLIBC_2.2.5" and "read@@GLIBC_2.2.5" are read, as bcc and perf print them. */
	size_t len = name_len(name);
	const char *at = memchr(name, '@', len);

	return add(t, addr, size, name, at && at != name ? (size_t)(at - name) : len);
}

int symtab__add_exact(struct symtab *t, uint64_t addr, uint64_t size, const char *name)
{
	return add(t, addr, size, name, name_len(name));
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	size_t lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	/* Equal lengths: by name, so the choice does not depend on table order. */
	return strcmp(x->name, y->name);
}

void symtab__finish(struct symtab *t)
{
	size_t k = 0;

	free(t->named);
	t->named = NULL;
	if (!t->n)
		return;
	qsort(t->v, t->n, sizeof(*t->v), cmp_sym);
	for (size_t i = 0; i < t->n; i++)
		if (!k || t->v[k - 1].addr != t->v[i].addr)
			t->v[k++] = t->v[i];
	t->n = k;
}

const struct sym *symtab__find(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	const struct sym *s;

	if (!t->n || addr < t->v[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &t->v[lo];
	return addr - s->addr < (s->size ? s->size : 1) ? s : NULL;
}

static size_t demangled_slot(const struct symtab *t, uint32_t sym)
{
	size_t mask = t->demangled_cap - 1, i = (sym * 0x9e3779b1u) & mask;

	while (t->demangled[i].sym && t->demangled[i].sym != sym)
		i = (i + 1) & mask;
	return i;
}

/* Keeps @name as symbol @i's demangled name. 0, or -ENOMEM. */
static int demangled_add(struct symtab *t, size_t i, const char *name)
{
	if ((t->ndemangled + 1) * 2 > t->demangled_cap) {
		size_t cap = t->demangled_cap ? t->demangled_cap * 2 : 64;
		struct symtab_demangled *old = t->demangled;
		size_t old_cap = t->demangled_cap;

		if (t->bytes + cap * sizeof(*old) > SYMTAB_MAX_BYTES)
			return -ENOMEM;
		t->demangled = calloc(cap, sizeof(*old));
		if (!t->demangled) {
			t->demangled = old;
			return -ENOMEM;
		}
		t->demangled_cap = cap;
		for (size_t j = 0; j < old_cap; j++)
			if (old[j].sym)
				t->demangled[demangled_slot(t, old[j].sym)] = old[j];
		free(old);
		t->bytes += (cap - old_cap) * sizeof(*old);
	}
	t->demangled[demangled_slot(t, i + 1)] = (struct symtab_demangled){ i + 1, name };
	t->ndemangled++;
	return 0;
}

const char *symtab__name(struct symtab *t, const struct sym *s)
{
	size_t i = s - t->v;
	const char *copy;
	char *d;

	if (!t->named) {
		t->named = calloc((t->n + 7) / 8, 1);
		if (!t->named)
			return s->name;
		t->bytes += (t->n + 7) / 8;
	}
	if (t->named[i / 8] & 1u << i % 8) {
		if (!t->ndemangled)
			return s->name;
		copy = t->demangled[demangled_slot(t, i + 1)].name;
		return copy ? copy : s->name;
	}
	t->named[i / 8] |= 1u << i % 8;
	d = demangle(s->name);
	if (!d)
		return s->name;
	copy = NULL;
	if (t->bytes + strlen(d) <= SYMTAB_MAX_BYTES && (copy = keep(t, d, strlen(d))) &&
	    demangled_add(t, i, copy))
		copy = NULL;
	free(d);
	return copy ? copy : s->name;
}

void symtab__free(struct symtab *t)
{
	free(t->named);
	free(t->demangled);
	for (size_t i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
