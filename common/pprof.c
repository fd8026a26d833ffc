// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A small protobuf encoder for profile.proto, just what pprof needs, gzipped with zlib. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "escape.h"
#include "pprof.h"
#include "stackset.h"

/* A growable byte buffer: one protobuf message. */
struct pb {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void pb_bytes(struct pb *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		uint8_t *t;

		while (cap < b->len + n)
			cap *= 2;
		t = realloc(b->p, cap);
		if (!t) {
			b->oom = true;
			return;
		}
		b->p = t;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t buf[10];
	int n = 0;

	do {
		buf[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_bytes(b, buf, n);
}

/* Wire types: 0 varint, 2 length-delimited. */
static void pb_key(struct pb *b, int field, int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

static void pb_uint(struct pb *b, int field, uint64_t v)
{
	if (!v)
		return;		/* proto3: zero is the default, not written */
	pb_key(b, field, 0);
	pb_varint(b, v);
}

static void pb_message(struct pb *b, int field, const struct pb *m)
{
	pb_key(b, field, 2);
	pb_varint(b, m->len);
	pb_bytes(b, m->p, m->len);
	b->oom |= m->oom;
}

/*
 * A string of the table. profile.proto's strings are UTF-8: control
 * characters and other bytes are spelled "\xHH", as the text outputs do.
 */
static void pb_string(struct pb *b, int field, const char *s)
{
	size_t len = strlen(s);
	char *copy = NULL;

	if (escape__needed(s, ESCAPE_TEXT)) {
		len = escape__format(NULL, 0, s, ESCAPE_TEXT);
		copy = malloc(len + 1);
		if (!copy) {
			b->oom = true;
			return;
		}
		escape__format(copy, len + 1, s, ESCAPE_TEXT);
	}
	pb_key(b, field, 2);
	pb_varint(b, len);
	pb_bytes(b, copy ? copy : s, len);
	free(copy);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* An open-addressing index over entries 1..n of a table: slot holds entry + 1. */
struct index {
	size_t *slot;
	size_t cap;
};

static bool index_grow(struct index *ix, size_t n, uint64_t (*hash)(void *, size_t), void *ctx)
{
	size_t cap;

	if ((n + 1) * 2 <= ix->cap)
		return true;
	cap = ix->cap ? ix->cap * 2 : 1024;
	free(ix->slot);
	ix->slot = calloc(cap, sizeof(*ix->slot));
	if (!ix->slot)
		return false;
	ix->cap = cap;
	for (size_t e = 1; e <= n; e++) {
		size_t i = hash(ctx, e) & (cap - 1);

		while (ix->slot[i])
			i = (i + 1) & (cap - 1);
		ix->slot[i] = e;
	}
	return true;
}

/* The profile's string table: index 0 is "". */
struct strtab {
	const char **s;
	size_t n, cap;
	struct index ix;
};

static uint64_t strtab_hash(void *ctx, size_t e)
{
	return hash_str(((struct strtab *)ctx)->s[e]);
}

static uint64_t str_index(struct strtab *t, const char *s)
{
	size_t i;

	if (!s || !*s)
		return 0;
	/* Entries are string indexes 1..n-1: index 0 is "" and never looked up. */
	if (!index_grow(&t->ix, t->n - 1, strtab_hash, t))
		return 0;
	for (i = hash_str(s) & (t->ix.cap - 1); t->ix.slot[i]; i = (i + 1) & (t->ix.cap - 1))
		if (!strcmp(t->s[t->ix.slot[i]], s))
			return t->ix.slot[i];
	if (t->n == t->cap) {
		size_t cap = t->cap * 2;
		const char **x = realloc(t->s, cap * sizeof(*x));

		if (!x)
			return 0;
		t->s = x;
		t->cap = cap;
	}
	t->s[t->n] = s;
	t->ix.slot[i] = t->n;
	return t->n++;
}

static void value_type(struct pb *b, int field, struct strtab *t, const char *type,
		       const char *unit)
{
	struct pb m = {};

	pb_uint(&m, 1, str_index(t, type));
	pb_uint(&m, 2, str_index(t, unit));
	pb_message(b, field, &m);
	free(m.p);
}

/*
 * A frame with the calls inlined at it, leaf first and the frame last, is
 * one Location with a Line each, as profile.proto has inlining. Such runs,
 * each kept once, are numbered after the frames' own Locations.
 */
#define RUN_MAX 32

struct runs {
	uint32_t *frames;	/* every run's frame ids, end to end */
	size_t nframes, frames_cap;
	struct run { uint32_t first, n; } *v;
	size_t n, cap;
	uint32_t *slot;		/* open addressing: run index + 1, 0 free */
	size_t slots;
};

static uint64_t run_hash(const uint32_t *f, uint32_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ f[i]) * 1099511628211ULL;
	return h;
}

static bool run_is(const struct runs *r, uint32_t idx, const uint32_t *f, uint32_t n)
{
	return r->v[idx].n == n && !memcmp(r->frames + r->v[idx].first, f, n * sizeof(*f));
}

static int runs_grow(struct runs *r)
{
	size_t slots = r->slots ? r->slots * 2 : 64;
	uint32_t *t = calloc(slots, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		size_t k = run_hash(r->frames + r->v[i].first, r->v[i].n) & (slots - 1);

		while (t[k])
			k = (k + 1) & (slots - 1);
		t[k] = i + 1;
	}
	free(r->slot);
	r->slot = t;
	r->slots = slots;
	return 0;
}

/* The index of run @f (@n frame ids), added if new; negative errno. */
static int64_t runs_get(struct runs *r, const uint32_t *f, uint32_t n)
{
	size_t k;

	if ((r->n + 1) * 2 > r->slots && runs_grow(r))
		return -ENOMEM;
	for (k = run_hash(f, n) & (r->slots - 1); r->slot[k]; k = (k + 1) & (r->slots - 1))
		if (run_is(r, r->slot[k] - 1, f, n))
			return r->slot[k] - 1;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct run *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	if (r->nframes + n > r->frames_cap) {
		size_t cap = r->frames_cap ? r->frames_cap * 2 : 256;
		uint32_t *t;

		while (cap < r->nframes + n)
			cap *= 2;
		t = realloc(r->frames, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		r->frames = t;
		r->frames_cap = cap;
	}
	memcpy(r->frames + r->nframes, f, n * sizeof(*f));
	r->v[r->n] = (struct run){ r->nframes, n };
	r->nframes += n;
	r->slot[k] = ++r->n;
	return r->n - 1;
}

/*
 * Stack @st's location ids into @ids, leaf first: a frame's own, or its
 * run's with the calls inlined at it. Their count, or negative errno.
 */
static int64_t location_ids(const struct stackset *set, const struct stack *st, struct runs *r,
			    uint64_t *ids)
{
	uint32_t nframes = stackset__frames(set), run[RUN_MAX];
	size_t m = 0, k = 0;

	while (k < st->n) {
		uint32_t n = 0;
		int64_t idx;

		/* Leaf first: the inlined calls, then the frame they are in. */
		while (k + n < st->n && n < RUN_MAX &&
		       stackset__frame(set, st->frames[st->n - 1 - k - n])->kind == FRAME_INLINE) {
			run[n] = st->frames[st->n - 1 - k - n];
			n++;
		}
		if (!n || k + n == st->n || n == RUN_MAX) {
			/* No inlined call, or (never from stackread) no frame after them. */
			ids[m++] = st->frames[st->n - 1 - k] + 1;
			k++;
			continue;
		}
		run[n] = st->frames[st->n - 1 - k - n];
		idx = runs_get(r, run, n + 1);
		if (idx < 0)
			return idx;
		ids[m++] = (uint64_t)nframes + 1 + idx;
		k += n + 1;
	}
	return m;
}

/* gzip's framing (deflate with window bits 16 + 15) around @b, written to @f. */
static int gzip_to(FILE *f, const struct pb *b)
{
	z_stream z = {};
	uint8_t buf[65536];
	int ret, err = 0;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = b->p;
	z.avail_in = b->len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(buf, 1, sizeof(buf) - z.avail_out, f) != sizeof(buf) - z.avail_out) {
			err = -EIO;
			break;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

/* Does @st pass through a frame named @name? Every stack does when @name is NULL. */
static bool through(const struct stackset *set, const struct stack *st, const char *name)
{
	if (!name)
		return true;
	for (size_t i = 0; i < st->n; i++)
		if (!strcmp(stackset__frame(set, st->frames[i])->name, name))
			return true;
	return false;
}

/* A sample's label @key = @value (profile.proto's Label: key and str, string indexes). */
static void pb_label(struct pb *sample, struct strtab *t, const char *key, const char *value)
{
	struct pb l = {};

	if (!value)
		return;
	pb_uint(&l, 1, str_index(t, key));
	pb_uint(&l, 2, str_index(t, value));
	pb_message(sample, 3, &l);
	free(l.p);
}

int pprof__write(const struct stackset *set, FILE *f, const struct pprof_opts *o)
{
	struct strtab t = { .n = 1 };
	struct pb out = {}, m = {};
	struct runs runs = {};
	uint64_t *ids = NULL;
	size_t ids_cap = 0;
	int64_t nids;
	int err;

	t.s = calloc(256, sizeof(*t.s));
	if (!t.s)
		return -ENOMEM;
	t.cap = 256;
	t.s[0] = "";

	value_type(&out, 1, &t, o->type, o->unit);
	if (o->type2)
		value_type(&out, 1, &t, o->type2, o->unit2);

	/* Samples: location ids leaf first, as profile.proto wants them. */
	for (size_t i = 0; i < stackset__len(set); i++) {
		const struct stack *st = stackset__get(set, i), *where = NULL;
		struct pb ids_msg = {}, vals = {}, sample = {};
		const struct frame *c = st->n ? stackset__frame(set, st->frames[0]) : NULL;
		struct stack rest;

		/* Where the process ran: the sample's labels, and a location only if asked. */
		if (c && c->kind == FRAME_CONTAINER) {
			where = st;
			if (!o->container_frames) {
				rest = (struct stack){ st->frames + 1, st->n - 1, st->value };
				st = &rest;
			}
		}

		if (st->n > ids_cap) {
			uint64_t *x = realloc(ids, st->n * sizeof(*x));

			if (!x)
				goto oom;
			ids = x;
			ids_cap = st->n;
		}
		/* Each frame of the set is one Location and one Function, numbered from 1. */
		nids = location_ids(set, st, &runs, ids);
		if (nids < 0)
			goto oom;
		for (int64_t k = 0; k < nids; k++)
			pb_varint(&ids_msg, ids[k]);
		pb_varint(&vals, st->value * (o->scale1 ? o->scale1 : 1));
		if (o->type2)
			pb_varint(&vals, through(set, st, o->type2_frame) ? st->value * o->scale : 0);
		pb_message(&sample, 1, &ids_msg);	/* packed location_id */
		pb_message(&sample, 2, &vals);		/* packed value */
		if (where) {
			pb_label(&sample, &t, "container", c->func);
			pb_label(&sample, &t, "cgroup", c->file);
		}
		pb_message(&out, 2, &sample);
		free(ids_msg.p);
		free(vals.p);
		free(sample.p);
	}

	/* Mappings: one per binary, with its build id, numbered by its string. */
	for (uint32_t i = 0; i < stackset__frames(set); i++) {
		const struct frame *n = stackset__frame(set, i);
		size_t before = t.n;
		uint64_t name = str_index(&t, n->module);

		if (!n->module || t.n == before)
			continue;	/* no binary, or one already written */
		memset(&m, 0, sizeof(m));
		pb_uint(&m, 1, name);				/* id: its name's index */
		pb_uint(&m, 5, name);				/* filename */
		pb_uint(&m, 6, str_index(&t, n->build_id));	/* build_id */
		pb_uint(&m, 7, 1);				/* has_functions */
		pb_message(&out, 3, &m);
		free(m.p);
	}
	/* Locations and functions, one each per distinct frame. */
	for (uint32_t i = 0; i < stackset__frames(set); i++) {
		const struct frame *n = stackset__frame(set, i);
		struct pb line = {}, loc = {}, fn = {};
		uint64_t mapping = str_index(&t, n->module);
		pb_uint(&line, 1, i + 1);			/* function_id */
		pb_uint(&line, 2, n->line);			/* line */
		pb_uint(&loc, 1, i + 1);			/* id */
		pb_uint(&loc, 2, mapping);			/* mapping_id */
		pb_uint(&loc, 3, n->addr);			/* address */
		pb_message(&loc, 4, &line);
		pb_message(&out, 4, &loc);
		pb_uint(&fn, 1, i + 1);				/* id */
		pb_uint(&fn, 2, str_index(&t, n->func ? n->func : n->name));	/* name */
		pb_uint(&fn, 3, str_index(&t, n->system_name ? n->system_name :
					  n->func ? n->func : n->name));	/* system_name */
		/* The source file where known (go tool pprof -list reads it), else the binary. */
		pb_uint(&fn, 4, str_index(&t, n->file ? n->file : n->module));	/* filename */
		pb_uint(&fn, 5, n->line);			/* start_line */
		pb_message(&out, 5, &fn);
		free(line.p);
		free(loc.p);
		free(fn.p);
	}
	/* Frames with inlined calls: the frame's address and binary, a Line each. */
	for (size_t i = 0; i < runs.n; i++) {
		const uint32_t *f = runs.frames + runs.v[i].first;
		const struct frame *n = stackset__frame(set, f[runs.v[i].n - 1]);
		struct pb loc = {};

		pb_uint(&loc, 1, stackset__frames(set) + 1 + i);	/* id */
		pb_uint(&loc, 2, str_index(&t, n->module));		/* mapping_id */
		pb_uint(&loc, 3, n->addr);				/* address */
		for (uint32_t k = 0; k < runs.v[i].n; k++) {
			struct pb line = {};

			pb_uint(&line, 1, f[k] + 1);			/* function_id */
			pb_uint(&line, 2, stackset__frame(set, f[k])->line);	/* line */
			pb_message(&loc, 4, &line);
			free(line.p);
		}
		pb_message(&out, 4, &loc);
		free(loc.p);
	}

	pb_uint(&out, 9, o->time_nanos);
	pb_uint(&out, 10, o->duration_nanos);
	if (o->period_type)
		value_type(&out, 11, &t, o->period_type, o->period_unit);
	if (o->default_type)
		pb_uint(&out, 14, str_index(&t, o->default_type));	/* default_sample_type */
	pb_uint(&out, 12, o->period);
	/* The string table last: every index above is now allocated. */
	for (size_t i = 0; i < t.n; i++)
		pb_string(&out, 6, t.s[i]);
	err = out.oom ? -ENOMEM : gzip_to(f, &out);
	goto out;
oom:
	err = -ENOMEM;
out:
	free(out.p);
	free(ids);
	free(runs.frames);
	free(runs.v);
	free(runs.slot);
	free(t.ix.slot);
	free(t.s);
	return err;
}
