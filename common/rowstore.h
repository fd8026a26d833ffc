/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The unwinder's rows in BPF memory made as they are written and let go once they are not. */
#ifndef BPFSCOPE_ROWSTORE_H
#define BPFSCOPE_ROWSTORE_H

#include <stddef.h>
#include <linux/types.h>

#include "unwind.h"

struct rowstore;

/*
 * Row indexes [0, @cap) in chunks of UNWIND_CHUNK_ROWS, each an array put
 * into the array of maps open on @outer_fd the first time a range needs
 * it, and taken out by rowstore__trim() once no range holds a row of it.
 * Each of those costs the kernel an RCU grace period (milliseconds). NULL
 * and errno.
 */
struct rowstore *rowstore__new(int outer_fd, size_t cap);
void rowstore__free(struct rowstore *rs);

/*
 * Room for @n rows, written from @rows: 0 and their first index in
 * @first, -E2BIG when no free range is that long, or -errno from the kernel.
 * A range of at most UNWIND_CHUNK_ROWS lies in one chunk.
 */
int rowstore__add(struct rowstore *rs, const struct unwind_row *rows, size_t n, __u32 *first);

/*
 * Gives back rows [first, first + n), which nothing the BPF side can still
 * reach may point at; their chunks stay until rowstore__trim().
 */
void rowstore__release(struct rowstore *rs, __u32 first, size_t n);

/* Drops the chunks no range holds a row of: how many. */
size_t rowstore__trim(struct rowstore *rs);

/* The longest range rowstore__add() could take now. */
size_t rowstore__room(const struct rowstore *rs);

/* Rows held, chunks made, and chunks there is room for. */
size_t rowstore__used(const struct rowstore *rs);
size_t rowstore__chunks(const struct rowstore *rs);
size_t rowstore__cap(const struct rowstore *rs);

#endif
