// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The names of a runtime's frames, read from processes while they live, kept bounded: one store for each runtime. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "runtimes/names.h"

#define NAMES_BUCKETS 4096
/* Frames kept, whatever their names take. */
#define NAMES_MAX 65536

struct entry {
	struct entry *next;
	struct proc_key proc;
	uint64_t v, data;
	struct frame_name name;	/* .name NULL: could not be read */
};

struct frame_names {
	struct entry *buckets[NAMES_BUCKETS];
	const struct frame_names_words *words;
	size_t n;
	size_t bytes, limit;		/* held, and the most kept (0: no bound) */
	unsigned long long unreadable;	/* process gone, or memory not readable */
	unsigned long long changed;	/* the object was not the frame's any more */
	unsigned long long full;	/* not kept: NAMES_MAX, or the limit, reached */
	unsigned long long partial;	/* named without the calls inlined there */
};

struct frame_names *frame_names__new(const struct frame_names_words *words)
{
	struct frame_names *n = calloc(1, sizeof(*n));

	if (n)
		n->words = words;
	return n;
}

void frame_names__set_limit(struct frame_names *n, size_t bytes)
{
	n->limit = bytes;
}

size_t frame_names__bytes(const struct frame_names *n)
{
	return n ? n->bytes : 0;
}

/* What name @m takes: its strings, and its inlined calls'. */
static size_t name_bytes(const struct frame_name *m)
{
	size_t bytes = m->name ? strlen(m->name) + strlen(m->func) + strlen(m->file) + 3 : 0;

	for (uint32_t i = 0; i < m->ninlined; i++)
		bytes += sizeof(*m) + name_bytes(&m->inlined[i]);
	return bytes;
}

/* What entry @e takes, its name and itself. */
static size_t entry_bytes(const struct entry *e)
{
	return sizeof(*e) + name_bytes(&e->name);
}

static void name_free(struct frame_name *n)
{
	free((char *)n->name);
	free((char *)n->func);
	free((char *)n->file);
	for (uint32_t i = 0; i < n->ninlined; i++)
		name_free(&n->inlined[i]);
	free(n->inlined);
}

int frame_name__drop_inlined(struct frame_name *n)
{
	for (uint32_t i = 0; i < n->ninlined; i++)
		name_free(&n->inlined[i]);
	free(n->inlined);
	n->inlined = NULL;
	n->ninlined = 0;
	return FRAME_NAME_PARTIAL;
}

static void entry_free(struct entry *e)
{
	name_free(&e->name);
	free(e);
}

void frame_names__free(struct frame_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < NAMES_BUCKETS; i++)
		for (struct entry *e = n->buckets[i], *next; e; e = next) {
			next = e->next;
			entry_free(e);
		}
	free(n);
}

static size_t bucket_of(const struct proc_key *p, uint64_t v, uint64_t data)
{
	uint64_t h = (v ^ data * 0xbf58476d1ce4e5b9ULL ^ p->start_ns) * 0x9e3779b97f4a7c15ULL ^ p->tgid;

	return (h ^ h >> 31) % NAMES_BUCKETS;
}

static bool same_proc(const struct proc_key *a, const struct proc_key *b)
{
	return a->tgid == b->tgid && a->exec_id == b->exec_id && a->start_ns == b->start_ns;
}

int frame_name__make(struct frame_name *out, const char *func, const char *file, uint32_t line)
{
	const char *base = strrchr(file, '/');
	char *display;
	int err;

	base = base ? base + 1 : file;
	err = line ? asprintf(&display, "%s (%s:%u)", func, base, line) :
		     asprintf(&display, "%s (%s)", func, base);
	if (err < 0)
		return -ENOMEM;
	*out = (struct frame_name){ display, strdup(func), strdup(file), line };
	if (!out->func || !out->file) {
		name_free(out);
		*out = (struct frame_name){};
		return -ENOMEM;
	}
	return 0;
}

const struct frame_name *frame_names__get(struct frame_names *n, const struct proc_key *p,
					  uint64_t v, uint64_t data, frame_name_read_fn read,
					  void *ctx)
{
	size_t b = bucket_of(p, v, data);
	struct frame_name name = {};
	struct entry *e;
	int err;

	for (e = n->buckets[b]; e; e = e->next)
		if (e->v == v && e->data == data && same_proc(&e->proc, p))
			return e->name.name ? &e->name : NULL;
	if (!read)
		return NULL;
	err = read(ctx, &name);
	if (err == -EFAULT)
		n->unreadable++;
	else if (err == -ESTALE)
		n->changed++;
	else if (err == FRAME_NAME_PARTIAL)
		n->partial++;
	e = n->n < NAMES_MAX ? calloc(1, sizeof(*e)) : NULL;
	if (!e) {
		n->full++;
		name_free(&name);
		return NULL;
	}
	*e = (struct entry){ n->buckets[b], *p, v, data, name };
	if (n->limit && n->bytes + entry_bytes(e) > n->limit) {
		n->full++;
		entry_free(e);
		return NULL;
	}
	n->bytes += entry_bytes(e);
	n->buckets[b] = e;
	n->n++;
	return e->name.name ? &e->name : NULL;
}

void frame_names__forget(struct frame_names *n, bool (*gone)(void *ctx, const struct proc_key *p),
			 void *ctx)
{
	for (size_t i = 0; i < NAMES_BUCKETS; i++) {
		struct entry **pe = &n->buckets[i];

		while (*pe) {
			struct entry *e = *pe;

			if (gone(ctx, &e->proc)) {
				*pe = e->next;
				n->bytes -= entry_bytes(e);
				entry_free(e);
				n->n--;
			} else {
				pe = &e->next;
			}
		}
	}
}

void frame_names__warn_losses(const struct frame_names *n)
{
	const struct frame_names_words *w;

	if (!n)
		return;
	w = n->words;
	if (n->unreadable)
		pr_warn("%llu %s frames are %s: their process exited, or its memory could not be "
			"read, before they were named", n->unreadable, w->runtime, w->unknown);
	if (n->changed)
		pr_warn("%llu %s frames are %s: %s before they were named", n->changed, w->runtime,
			w->unknown, w->changed);
	if (n->full)
		pr_warn("%llu %s frames are %s: more than %d distinct frames, or %zu MiB of their "
			"names (a quarter of --symbol-memory)", n->full, w->runtime, w->unknown,
			NAMES_MAX, n->limit >> 20);
	if (n->partial)
		pr_warn("%llu %s frames are named without the calls their compiler inlined there: "
			"one of those calls' functions could not be read", n->partial, w->runtime);
}
