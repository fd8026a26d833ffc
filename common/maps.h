/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading and clearing the aggregation maps that BPF programs fill. */
#ifndef BPFSCOPE_MAPS_H
#define BPFSCOPE_MAPS_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "hist.h"

/*
 * What was counted in the struct hist at key 0 of a PERCPU_ARRAY since
 * the last take, into @out: its per-CPU copies summed, less @taken (the
 * sums then, which it updates; zeroed for the first take). The copies are
 * never reset, so nothing counted meanwhile is lost. 0 or negative errno.
 */
int map__take_percpu_hist(int fd, struct hist *taken, struct hist *out);

/*
 * Moves every entry of the hash map @fd into a new array of @n records of
 * @key_size bytes of key followed by @value_size bytes of value (the value
 * at offset @key_size rounded up to 8), deleting them from the map. The
 * caller frees *@out. Returns the count or negative errno.
 */
ssize_t map__take_all(int fd, size_t key_size, size_t value_size, void **out);

struct bpf_map;

/*
 * A SWAPPED_HASH of a BPF object (bpf/common.bpf.h): its slot and the two
 * maps it holds in turn. SWAPPED(obj->maps, hist_by) names them.
 */
struct swapped {
	struct bpf_map *slot, *map[2];
	int active;	/* the one the slot holds */
};

#define SWAPPED(maps, name) ((struct swapped){ (maps).name, { (maps).name##_a, (maps).name##_b } })

/* Both maps sized to @entries, before the object is loaded. */
int swapped__set_max_entries(struct swapped *s, __u32 entries);
__u32 swapped__max_entries(const struct swapped *s);

/* The map in the slot now, which programs update. */
int swapped__fd(const struct swapped *s);

/*
 * Puts the other map in the slot, and returns once no program that could
 * still hold the first runs (the kernel waits for them on a map-in-map
 * update): the first's descriptor, which nothing updates any more, or
 * negative errno. Its entries are the caller's to read and delete.
 */
int swapped__swap(struct swapped *s);

/*
 * map__take_all() of a SWAPPED_HASH without losing an update: swapped,
 * then the first map taken whole and left empty for its next turn.
 */
ssize_t swapped__take(struct swapped *s, size_t key_size, size_t value_size, void **out);

/* Where the value starts in a record of map__take_all(). */
static inline size_t map__value_offset(size_t key_size)
{
	return (key_size + 7) & ~(size_t)7;
}

#endif
