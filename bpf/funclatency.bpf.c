// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* funclatency: time kernel or user functions, entry to return, as histograms. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "funclatency.h"

const volatile __u64 unit_ns = 1;
const volatile bool per_function;	/* -F: histograms keyed by the attach cookie */
const volatile pid_t target_tgid;
const volatile __u32 max_depth = FUNC_MAX_DEPTH;
const volatile bool filter_cgroup;
const volatile __u64 cgroup_id;
const volatile int cgroup_level;

/* Counted for the warnings user space prints at exit. */
__u64 too_deep, lost_stacks, lost_hists;

/*
 * Entry times of the calls a thread is inside, innermost last: a return
 * always closes the innermost call, so recursion and nesting time right.
 */
struct stack {
	__u32 depth;		/* calls entered, timed or not */
	__u32 pad;
	__u64 ts[FUNC_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} hist_all SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);		/* function index, the attach cookie */
	__type(value, struct hist);
} hist_by SEC(".maps");

static const struct hist empty_hist;

static __always_inline bool wanted(void)
{
	if (target_tgid && (bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return false;
	if (filter_cgroup &&
	    !task_in_cgroup((struct task_struct *)bpf_get_current_task(), cgroup_id, cgroup_level))
		return false;
	return true;
}

static __always_inline int entry(void)
{
	struct stack *s;
	__u32 d;

	if (!wanted())
		return 0;
	s = bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		__sync_fetch_and_add(&lost_stacks, 1);
		return 0;
	}
	d = s->depth++;
	if (d < max_depth && d < FUNC_MAX_DEPTH) {
		/* Keep clang from dropping the bound the verifier needs to see. */
		barrier_var(d);
		s->ts[d & (FUNC_MAX_DEPTH - 1)] = bpf_ktime_get_ns();
	}
	else
		__sync_fetch_and_add(&too_deep, 1);
	return 0;
}

static __always_inline int ret(__u64 cookie)
{
	struct stack *s;
	struct hist *h;
	__u64 delta;
	__u32 d, key = cookie, zero = 0;

	/*
	 * Only the cheap pid test: a task that left the cgroup mid-call must
	 * still pop its entry, or every later call of it would be mistimed.
	 */
	if (target_tgid && (bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	s = bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), 0, 0);
	if (!s || !s->depth)
		return 0;	/* entered before we attached */
	d = --s->depth;
	if (d >= max_depth || d >= FUNC_MAX_DEPTH)
		return 0;
	barrier_var(d);
	delta = (bpf_ktime_get_ns() - s->ts[d & (FUNC_MAX_DEPTH - 1)]) / unit_ns;

	if (!per_function) {
		h = bpf_map_lookup_elem(&hist_all, &zero);
		if (h)
			hist_add_local(h, delta);
		return 0;
	}
	h = map_lookup_or_init(&hist_by, &key, &empty_hist);
	if (h)
		hist_add_shared(h, delta);
	else
		__sync_fetch_and_add(&lost_hists, 1);
	return 0;
}

/* uprobes and single kprobes: the cookie names the function. */
SEC("kprobe")
int funclatency_entry(struct pt_regs *ctx)
{
	return entry();
}

SEC("kretprobe")
int funclatency_return(struct pt_regs *ctx)
{
	return ret(bpf_get_attach_cookie(ctx));
}

SEC("kprobe.multi")
int funclatency_multi_entry(struct pt_regs *ctx)
{
	return entry();
}

SEC("kretprobe.multi")
int funclatency_multi_return(struct pt_regs *ctx)
{
	return ret(bpf_get_attach_cookie(ctx));
}

/* fentry/fexit: one function, so cookie 0. */
SEC("fentry")
int BPF_PROG(funclatency_fentry)
{
	return entry();
}

SEC("fexit")
int BPF_PROG(funclatency_fexit)
{
	return ret(0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
