// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Draining per-CPU and hash maps between reports, never losing what BPF counts meanwhile. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "histogram.h"
#include "maps.h"

int map__take_percpu_hist(int fd, struct hist *taken, struct hist *out)
{
	int ncpus = libbpf_num_possible_cpus();
	struct hist *percpu, sum = {};
	__u32 zero = 0;
	int err = 0;

	if (ncpus < 0)
		return ncpus;
	percpu = calloc(ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, percpu)) {
		err = -errno;
		goto out;
	}
	for (int i = 0; i < ncpus; i++)
		hist__merge(&sum, &percpu[i]);
	/*
	 * Read, then zeroed, the copies would lose what came between (bcc
	 * does); counts only grow, and the difference is the interval's.
	 */
	for (int i = 0; i < HIST_SLOTS; i++)
		out->slots[i] = sum.slots[i] - taken->slots[i];
	out->sum = sum.sum - taken->sum;
	*taken = sum;
out:
	free(percpu);
	return err;
}

ssize_t map__take_all(int fd, size_t key_size, size_t value_size, void **out)
{
	size_t voff = map__value_offset(key_size), rec = voff + value_size;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char *recs, *prev = NULL;
	size_t n = 0;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	recs = calloc(info.max_entries ? info.max_entries : 1, rec);
	if (!recs)
		return -ENOMEM;
	/* The keys first: deleting as it goes would lose its place in the map. */
	while (n < info.max_entries && !bpf_map_get_next_key(fd, prev, recs + n * rec)) {
		prev = recs + n * rec;
		n++;
	}
	/*
	 * Then each entry read and deleted at once: counted in between, an
	 * event would be lost (BPF programs go on updating meanwhile). Before
	 * 5.14 hash maps cannot: read, then delete.
	 */
	for (size_t i = 0; i < n; i++) {
		char *r = recs + i * rec;

		if (!bpf_map_lookup_and_delete_elem(fd, r, r + voff))
			continue;
		if (bpf_map_lookup_elem(fd, r, r + voff)) {
			/* Gone meanwhile: drop the record. */
			memmove(r, r + rec, (n - i - 1) * rec);
			n--;
			i--;
			continue;
		}
		bpf_map_delete_elem(fd, r);
	}
	*out = recs;
	return n;
}

int swapped__set_max_entries(struct swapped *s, __u32 entries)
{
	return bpf_map__set_max_entries(s->map[0], entries) ?:
	       bpf_map__set_max_entries(s->map[1], entries);
}

__u32 swapped__max_entries(const struct swapped *s)
{
	return bpf_map__max_entries(s->map[0]);
}

int swapped__fd(const struct swapped *s)
{
	return bpf_map__fd(s->map[s->active]);
}

int swapped__swap(struct swapped *s)
{
	int next = !s->active, fd = bpf_map__fd(s->map[next]);
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(s->slot), &zero, &fd, BPF_ANY))
		return -errno;
	fd = bpf_map__fd(s->map[s->active]);
	s->active = next;
	return fd;
}

ssize_t swapped__take(struct swapped *s, size_t key_size, size_t value_size, void **out)
{
	int fd = swapped__swap(s);

	return fd < 0 ? fd : map__take_all(fd, key_size, value_size, out);
}
