/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BPF side of every stack tool: the stack map, and new processes announced to user space. */
#ifndef BPFSCOPE_STACKS_BPF_H
#define BPFSCOPE_STACKS_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
	__uint(max_entries, 1024);
} stacks SEC(".maps");

/*
 * Processes seen for the first time, so user space reads their maps while
 * they live: one that exits before the report would otherwise be
 * [unknown].
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} new_pids SEC(".maps");

/* Adds @delta to @key's total in @totals; a new entry announces @tgid (and @other_tgid). */
static __always_inline bool stack_count_add(void *totals, const void *key, __u64 delta,
					    __u32 tgid, __u32 other_tgid)
{
	__u64 zero = 0, *total = bpf_map_lookup_elem(totals, key);

	if (!total) {
		if (bpf_map_update_elem(totals, key, &zero, BPF_NOEXIST) == 0) {
			bpf_ringbuf_output(&new_pids, &tgid, sizeof(tgid), 0);
			if (other_tgid && other_tgid != tgid)
				bpf_ringbuf_output(&new_pids, &other_tgid, sizeof(other_tgid), 0);
		}
		total = bpf_map_lookup_elem(totals, key);
		if (!total)
			return false;
	}
	__sync_fetch_and_add(total, delta);
	return true;
}

#endif
