// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The unwinder's rows in BPF memory made as they are written and let go once they are not. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "rowstore.h"

/*
 * One chunk: an array map the outer map holds while some range has rows
 * in it. Mapped only while rows are written: the tool's own memory holds
 * none of them.
 */
struct chunk {
	int fd;			/* -1: not made */
	size_t used;		/* rows of held ranges in it */
};

/* A free range of row indexes, [start, end). */
struct extent {
	__u32 start, end;
};

struct rowstore {
	int outer_fd;
	struct chunk *chunks;
	size_t nchunks, made, used;
	struct extent *free;	/* sorted, none touching another */
	size_t nfree, free_cap;
};

#define CHUNK_BYTES (UNWIND_CHUNK_ROWS * sizeof(struct unwind_row))

struct rowstore *rowstore__new(int outer_fd, size_t cap)
{
	struct rowstore *rs = calloc(1, sizeof(*rs));
	size_t n = cap / UNWIND_CHUNK_ROWS;

	if (!rs)
		return NULL;
	rs->outer_fd = outer_fd;
	rs->nchunks = n;
	rs->chunks = calloc(n ? n : 1, sizeof(*rs->chunks));
	rs->free = malloc(sizeof(*rs->free));
	if (!rs->chunks || !rs->free) {
		rowstore__free(rs);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t c = 0; c < n; c++)
		rs->chunks[c].fd = -1;
	rs->free_cap = 1;
	if (n) {
		rs->free[0] = (struct extent){ 0, n * UNWIND_CHUNK_ROWS };
		rs->nfree = 1;
	}
	return rs;
}

static void chunk_drop(struct rowstore *rs, __u32 c)
{
	struct chunk *k = &rs->chunks[c];

	if (k->fd < 0)
		return;
	/* The kernel frees it once no program that looked it up still runs. */
	bpf_map_delete_elem(rs->outer_fd, &c);
	close(k->fd);
	k->fd = -1;
	rs->made--;
}

void rowstore__free(struct rowstore *rs)
{
	if (!rs)
		return;
	for (size_t c = 0; rs->chunks && c < rs->nchunks; c++)
		chunk_drop(rs, c);
	free(rs->chunks);
	free(rs->free);
	free(rs);
}

static int chunk_make(struct rowstore *rs, __u32 c)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	struct chunk *k = &rs->chunks[c];
	int fd, err;

	if (k->fd >= 0)
		return 0;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_chunk", sizeof(__u32),
			    sizeof(struct unwind_row), UNWIND_CHUNK_ROWS, &opts);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(rs->outer_fd, &c, &fd, BPF_ANY)) {
		err = -errno;
		close(fd);
		return err;
	}
	k->fd = fd;
	rs->made++;
	return 0;
}

/* Where in free range @e a range of @n rows would start, or -1 if it does not fit. */
static long long fit(const struct extent *e, size_t n)
{
	unsigned long long start = e->start;

	/* Within one chunk when it can be: a search then looks one up. */
	if (n <= UNWIND_CHUNK_ROWS && start / UNWIND_CHUNK_ROWS !=
	    (start + n - 1) / UNWIND_CHUNK_ROWS)
		start = (start / UNWIND_CHUNK_ROWS + 1) * UNWIND_CHUNK_ROWS;
	return start + n <= e->end ? (long long)start : -1;
}

/* Room for one more free range, which splitting or giving back may need. */
static int free_reserve(struct rowstore *rs)
{
	size_t cap = rs->free_cap * 2;
	struct extent *f;

	if (rs->nfree < rs->free_cap)
		return 0;
	f = realloc(rs->free, cap * sizeof(*f));
	if (!f)
		return -ENOMEM;
	rs->free = f;
	rs->free_cap = cap;
	return 0;
}

/* After free_reserve(). */
static void free_insert(struct rowstore *rs, size_t at, struct extent e)
{
	memmove(&rs->free[at + 1], &rs->free[at], (rs->nfree - at) * sizeof(*rs->free));
	rs->free[at] = e;
	rs->nfree++;
}

static void free_remove(struct rowstore *rs, size_t at)
{
	memmove(&rs->free[at], &rs->free[at + 1], (rs->nfree - at - 1) * sizeof(*rs->free));
	rs->nfree--;
}

/* Takes [start, start + n) out of free range @at, which holds it; after free_reserve(). */
static void take(struct rowstore *rs, size_t at, __u32 start, size_t n)
{
	struct extent *e = &rs->free[at], after = { start + n, e->end };

	if (e->start < start) {
		e->end = start;
		if (after.start < after.end)
			free_insert(rs, at + 1, after);
	} else if (after.start < after.end) {
		*e = after;
	} else {
		free_remove(rs, at);
	}
}

/* Rows [first, first + n) are held now, or not. */
static void account(struct rowstore *rs, __u32 first, size_t n, bool held)
{
	for (__u32 i = first; i < first + n;) {
		__u32 c = i / UNWIND_CHUNK_ROWS, end = (c + 1) * UNWIND_CHUNK_ROWS;
		size_t k = (end < first + n ? end : first + n) - i;

		if (held)
			rs->chunks[c].used += k;
		else
			rs->chunks[c].used -= k;
		i += k;
	}
	if (held)
		rs->used += n;
	else
		rs->used -= n;
}

/* Writes @n rows from @rows at row @first, through each chunk's pages in turn. */
static int write_rows(struct rowstore *rs, __u32 first, const struct unwind_row *rows, size_t n)
{
	for (size_t done = 0; done < n;) {
		__u32 idx = first + done, c = idx / UNWIND_CHUNK_ROWS, at = idx % UNWIND_CHUNK_ROWS;
		size_t k = UNWIND_CHUNK_ROWS - at < n - done ? UNWIND_CHUNK_ROWS - at : n - done;
		struct unwind_row *mem = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
					      rs->chunks[c].fd, 0);

		if (mem == MAP_FAILED)
			return -errno;
		memcpy(mem + at, rows + done, k * sizeof(*rows));
		munmap(mem, CHUNK_BYTES);
		done += k;
	}
	return 0;
}

int rowstore__add(struct rowstore *rs, const struct unwind_row *rows, size_t n, __u32 *first)
{
	long long start = -1;
	__u32 c, last;
	size_t at;
	int err;

	if (!n)
		return -EINVAL;
	for (at = 0; at < rs->nfree && start < 0; at++)
		start = fit(&rs->free[at], n);
	if (start < 0)
		return -E2BIG;
	at--;
	err = free_reserve(rs);
	last = (start + n - 1) / UNWIND_CHUNK_ROWS;
	for (c = start / UNWIND_CHUNK_ROWS; !err && c <= last; c++)
		err = chunk_make(rs, c);
	if (!err)
		err = write_rows(rs, start, rows, n);
	if (err) {
		/* Those made for it go again. */
		for (c = start / UNWIND_CHUNK_ROWS; c <= last; c++)
			if (!rs->chunks[c].used)
				chunk_drop(rs, c);
		return err;
	}
	take(rs, at, start, n);
	account(rs, start, n, true);
	*first = start;
	return 0;
}

void rowstore__release(struct rowstore *rs, __u32 first, size_t n)
{
	struct extent e = { first, first + n };
	size_t at = 0;

	/* Without room to say they are free, they stay held: lost to this run, not misused. */
	if (!n || free_reserve(rs))
		return;
	account(rs, first, n, false);
	while (at < rs->nfree && rs->free[at].start < e.start)
		at++;
	/* Joined to the free ranges it touches. */
	if (at > 0 && rs->free[at - 1].end == e.start) {
		e.start = rs->free[--at].start;
		free_remove(rs, at);
	}
	if (at < rs->nfree && rs->free[at].start == e.end) {
		e.end = rs->free[at].end;
		free_remove(rs, at);
	}
	free_insert(rs, at, e);
}

size_t rowstore__trim(struct rowstore *rs)
{
	size_t dropped = 0;

	for (__u32 c = 0; c < rs->nchunks; c++) {
		if (rs->chunks[c].fd >= 0 && !rs->chunks[c].used) {
			chunk_drop(rs, c);
			dropped++;
		}
	}
	return dropped;
}

size_t rowstore__room(const struct rowstore *rs)
{
	size_t best = 0;

	for (size_t i = 0; i < rs->nfree; i++)
		if (rs->free[i].end - rs->free[i].start > best)
			best = rs->free[i].end - rs->free[i].start;
	return best;
}

size_t rowstore__used(const struct rowstore *rs)
{
	return rs->used;
}

size_t rowstore__chunks(const struct rowstore *rs)
{
	return rs->made;
}

size_t rowstore__cap(const struct rowstore *rs)
{
	return rs->nchunks * UNWIND_CHUNK_ROWS;
}
