// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* biolatency: block I/O latency from issue (or insert, with -Q) to completion, as histograms. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "biolatency.h"

const volatile bool from_insert;	/* -Q */
const volatile bool per_disk;		/* -D */
const volatile bool per_flags;		/* -F */
const volatile __u64 unit_ns = 1000;
const volatile bool filter_dev;
const volatile __u32 target_dev;
const volatile bool filter_cgroup;
const volatile __u64 cgroup_id;
const volatile int cgroup_level;
/* Before 5.11, block_rq_insert and block_rq_issue passed the queue first. */
const volatile bool insert_has_queue;
const volatile bool issue_has_queue;

__u64 lost_starts;
__u64 lost_hists;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u64);		/* struct request * */
	__type(value, __u64);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} hist_all SEC(".maps");

SWAPPED_HASH(hist_by, struct bio_key, struct bio_hist, 1024);

static const struct bio_hist empty_hist;

/* The disk moved from request::rq_disk to request_queue::disk in 5.17. */
struct request___rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline struct gendisk *rq_disk(struct request *rq)
{
	struct request___rq_disk *old = (void *)rq;

	if (bpf_core_field_exists(old->rq_disk))
		return BPF_CORE_READ(old, rq_disk);
	return BPF_CORE_READ(rq, q, disk);
}

static __always_inline __u32 disk_dev(struct gendisk *disk)
{
	return ((__u32)BPF_CORE_READ(disk, major) << 20) | BPF_CORE_READ(disk, first_minor);
}

/*
 * Is request @rq the I/O of the cgroup of -c? Either its bio is charged
 * there (writeback, issued by a kworker, is charged to the cgroup that
 * dirtied the pages), or the task issuing it is in it. The charge counts
 * only where it is on cgroup v2: with the io controller on v1, or not
 * enabled for the cgroup, it names another hierarchy or an ancestor.
 */
static __always_inline bool rq_in_cgroup(struct request *rq)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup *dfl = BPF_CORE_READ(task, cgroups, dfl_cgrp), *charged = NULL;
	struct bio *bio = BPF_CORE_READ(rq, bio);

	if (bio && bpf_core_field_exists(bio->bi_blkg))
		charged = BPF_CORE_READ(bio, bi_blkg, blkcg, css.cgroup);
	if (charged && BPF_CORE_READ(charged, root) == BPF_CORE_READ(dfl, root) &&
	    cgroup_under(charged, cgroup_id, cgroup_level))
		return true;
	return cgroup_under(dfl, cgroup_id, cgroup_level);
}

static __always_inline int rq_start(struct request *rq, bool at_issue)
{
	__u64 key = (__u64)rq, ts, *inserted;

	if (filter_dev && disk_dev(rq_disk(rq)) != target_dev)
		return 0;
	if (filter_cgroup && !rq_in_cgroup(rq))
		return 0;
	ts = bpf_ktime_get_ns();
	/*
	 * With -Q, a request that was inserted keeps its insert time at issue:
	 * if it is this request's, not one left by an earlier request at the
	 * same address that never completed (inserted after this one began).
	 */
	if (at_issue && from_insert) {
		inserted = bpf_map_lookup_elem(&start, &key);
		if (inserted && *inserted >= BPF_CORE_READ(rq, start_time_ns))
			return 0;
	}
	if (bpf_map_update_elem(&start, &key, &ts, BPF_ANY))
		__sync_fetch_and_add(&lost_starts, 1);
	return 0;
}

static __always_inline int rq_done(struct request *rq)
{
	__u64 key = (__u64)rq, *tsp, delta;
	struct bio_key hkey = {};
	struct bio_hist *h;
	struct hist *all;
	__u32 zero = 0;

	tsp = bpf_map_lookup_elem(&start, &key);
	if (!tsp)
		return 0;
	delta = (bpf_ktime_get_ns() - *tsp) / unit_ns;
	bpf_map_delete_elem(&start, &key);

	if (!per_disk && !per_flags) {
		all = bpf_map_lookup_elem(&hist_all, &zero);
		if (all)
			hist_add_local(all, delta);
		return 0;
	}
	if (per_disk)
		hkey.dev = disk_dev(rq_disk(rq));
	if (per_flags)
		hkey.flags = BPF_CORE_READ(rq, cmd_flags);
	h = swapped_lookup_or_init(&hist_by, &hkey, &empty_hist);
	if (!h) {
		__sync_fetch_and_add(&lost_hists, 1);
		return 0;
	}
	if (per_disk && !h->disk[0])
		bpf_probe_read_kernel_str(h->disk, sizeof(h->disk), &rq_disk(rq)->disk_name);
	hist_add_shared(&h->hist, delta);
	return 0;
}

SEC("tp_btf/block_rq_insert")
int biolatency_insert(__u64 *ctx)
{
	if (insert_has_queue)
		return rq_start((void *)ctx[1], false);
	return rq_start((void *)ctx[0], false);
}

SEC("tp_btf/block_rq_issue")
int biolatency_issue(__u64 *ctx)
{
	if (issue_has_queue)
		return rq_start((void *)ctx[1], true);
	return rq_start((void *)ctx[0], true);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(biolatency_complete, struct request *rq)
{
	return rq_done(rq);
}

SEC("raw_tp/block_rq_insert")
int biolatency_raw_insert(__u64 *ctx)
{
	if (insert_has_queue)
		return rq_start((void *)ctx[1], false);
	return rq_start((void *)ctx[0], false);
}

SEC("raw_tp/block_rq_issue")
int biolatency_raw_issue(__u64 *ctx)
{
	if (issue_has_queue)
		return rq_start((void *)ctx[1], true);
	return rq_start((void *)ctx[0], true);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(biolatency_raw_complete, struct request *rq)
{
	return rq_done(rq);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
