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

/*
 * User-space functions: calls are matched by stack pointer, not by count,
 * so a longjmp out of a timed call (or a return the kernel missed) costs
 * that call's timing, never every later one of the thread.
 */
const volatile bool by_sp;

/* Counted for the warnings user space prints at exit. */
__u64 too_deep, lost_stacks, lost_hists, unreturned;
__u64 go_unread, go_lost;	/* Go: a goroutine not read, a call not held */

/*
 * A return leaves its stack pointer above the call's entry one: by the
 * return address on x86, equal on arm64 (returns through the link register).
 */
#if defined(__TARGET_ARCH_arm64)
#define RET_SP_SLACK 1
#else
#define RET_SP_SLACK 0
#endif

/*
 * The calls a thread is inside, innermost last: a return always closes the
 * innermost one, so recursion and nesting time right.
 */
struct call {
	__u64 sp;		/* at entry (by_sp only) */
	__u64 ts;
	__u32 fid;		/* the function, where attach cookies cannot say (-F, legacy) */
	__u32 pad;
};

struct stack {
	__u32 depth;		/* calls held in @calls */
	__u32 untimed;		/* by count: calls entered past -l, not held */
	struct call calls[FUNC_MAX_DEPTH];
};

/*
 * Each thread's calls, with the thread; before 5.12 (the legacy BPF side)
 * in a hash by thread id, whose entry goes when the thread is out of every
 * call. User space sizes the map not used down to nothing.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* threads inside a call, not every thread */
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack);
} stacks_tid SEC(".maps");

/*
 * Kernels before 5.15 have no attach cookies: for -F, the legacy BPF side
 * knows a function by the address its probe fires at, which user space
 * maps to the function's number here.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u32);
} fids SEC(".maps");

static __always_inline struct stack *stack_of(bool create)
{
#ifdef BPFSCOPE_LEGACY
	__u32 tid = bpf_get_current_pid_tgid();

	if (create) {
		static const struct stack zero;

		bpf_map_update_elem(&stacks_tid, &tid, &zero, BPF_NOEXIST);
	}
	return bpf_map_lookup_elem(&stacks_tid, &tid);
#else
	return bpf_task_storage_get(&stacks, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
#endif
}

/* A thread out of every call: its hash entry goes (task storage stays). */
static __always_inline void stack_idle(struct stack *s)
{
#ifdef BPFSCOPE_LEGACY
	__u32 tid = bpf_get_current_pid_tgid();

	if (!s->depth && !s->untimed)
		bpf_map_delete_elem(&stacks_tid, &tid);
#endif
}

/* Which function the probe that runs @ctx is on. */
static __always_inline __u32 fid_of(struct pt_regs *ctx)
{
#ifdef BPFSCOPE_LEGACY
	__u64 ip = PT_REGS_IP(ctx);
	__u32 *fid;

	if (!per_function)
		return 0;
	fid = bpf_map_lookup_elem(&fids, &ip);
	return fid ? *fid : 0;
#else
	return bpf_get_attach_cookie(ctx);
#endif
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} hist_all SEC(".maps");

/* By function index, the attach cookie. */
SWAPPED_HASH(hist_by, __u32, struct hist, 1024);

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

static __always_inline int entry(__u64 sp, __u32 fid)
{
	struct stack *s;
	__u32 d;

	if (!wanted())
		return 0;
	s = stack_of(true);
	if (!s) {
		__sync_fetch_and_add(&lost_stacks, 1);
		return 0;
	}
	if (by_sp) {
		/* Calls at or below this frame returned without our seeing it. */
		for (int i = 0; i < FUNC_MAX_DEPTH; i++) {
			d = s->depth;
			if (!d || s->calls[(d - 1) & (FUNC_MAX_DEPTH - 1)].sp > sp)
				break;
			s->depth = d - 1;
			__sync_fetch_and_add(&unreturned, 1);
		}
	}
	d = s->depth;
	if (d < max_depth && d < FUNC_MAX_DEPTH && !s->untimed) {
		/* Keep clang from dropping the bound the verifier needs to see. */
		barrier_var(d);
		s->calls[d & (FUNC_MAX_DEPTH - 1)] = (struct call){ sp, bpf_ktime_get_ns(), fid };
		s->depth = d + 1;
	} else {
		/* By stack pointer a deeper call's return matches nothing held: no count needed. */
		if (!by_sp)
			s->untimed++;
		__sync_fetch_and_add(&too_deep, 1);
	}
	return 0;
}

/* A call of function @fid took @delta units. */
static __always_inline void record(__u32 fid, __u64 delta)
{
	__u32 key = fid, zero = 0;
	struct hist *h;

	if (!per_function) {
		h = bpf_map_lookup_elem(&hist_all, &zero);
		if (h)
			hist_add_local(h, delta);
		return;
	}
	h = swapped_lookup_or_init(&hist_by, &key, &empty_hist);
	if (h)
		hist_add_shared(h, delta);
	else
		__sync_fetch_and_add(&lost_hists, 1);
}

/*
 * A return of function @fid (from its attach cookie; -1: the one its
 * call was entered as, where there are no cookies).
 */
static __always_inline int ret(__s64 fid, __u64 sp)
{
	struct stack *s;
	__u64 start = 0;
	__u32 d, popped = 0, entered = 0;

	/*
	 * Only the cheap pid test: a task that left the cgroup mid-call must
	 * still pop its entry, or every later call of it would be mistimed.
	 */
	if (target_tgid && (bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	s = stack_of(false);
	if (!s)
		return 0;	/* entered before we attached */
	if (by_sp) {
		/*
		 * Every held call whose frame this return leaves has ended: the
		 * outermost of them is the one returning, any inside it ended
		 * unseen. None: a call past -l, or entered before we attached.
		 */
		for (int i = 0; i < FUNC_MAX_DEPTH; i++) {
			struct call *c;

			d = s->depth;
			if (!d)
				break;
			c = &s->calls[(d - 1) & (FUNC_MAX_DEPTH - 1)];
			if (c->sp >= sp + RET_SP_SLACK)
				break;
			start = c->ts;
			entered = c->fid;
			s->depth = d - 1;
			popped++;
		}
		stack_idle(s);
		if (!popped)
			return 0;
		if (popped > 1)
			__sync_fetch_and_add(&unreturned, popped - 1);
	} else {
		if (s->untimed) {
			s->untimed--;
			stack_idle(s);
			return 0;
		}
		d = s->depth;
		if (!d)
			return 0;	/* entered before we attached */
		d--;
		s->depth = d;
		start = s->calls[d & (FUNC_MAX_DEPTH - 1)].ts;
		entered = s->calls[d & (FUNC_MAX_DEPTH - 1)].fid;
		stack_idle(s);
	}
	record(fid < 0 ? entered : fid, (bpf_ktime_get_ns() - start) / unit_ns);
	return 0;
}

/*
 * uprobes and single kprobes: the cookie names the function; without
 * cookies, the function's address (at entry: a return's is the caller's).
 */
SEC("kprobe")
int funclatency_entry(struct pt_regs *ctx)
{
#ifdef BPFSCOPE_LEGACY
	return entry(by_sp ? PT_REGS_SP(ctx) : 0, fid_of(ctx));
#else
	return entry(by_sp ? PT_REGS_SP(ctx) : 0, 0);
#endif
}

SEC("kretprobe")
int funclatency_return(struct pt_regs *ctx)
{
#ifdef BPFSCOPE_LEGACY
	return ret(-1, by_sp ? PT_REGS_SP(ctx) : 0);
#else
	return ret(bpf_get_attach_cookie(ctx), by_sp ? PT_REGS_SP(ctx) : 0);
#endif
}

SEC("kprobe.multi")
int funclatency_multi_entry(struct pt_regs *ctx)
{
	return entry(0, 0);
}

SEC("kretprobe.multi")
int funclatency_multi_return(struct pt_regs *ctx)
{
#ifdef BPFSCOPE_LEGACY
	return ret(-1, 0);	/* kprobe.multi came in 5.18: never loaded there */
#else
	return ret(bpf_get_attach_cookie(ctx), 0);
#endif
}

/* fentry/fexit: one function, so cookie 0. */
SEC("fentry")
int BPF_PROG(funclatency_fentry)
{
	return entry(0, 0);
}

SEC("fexit")
int BPF_PROG(funclatency_fexit)
{
	return ret(0, 0);
}

/*
 * Go functions, timed from their entry to each of their return
 * instructions (a uretprobe rewrites the return address on the stack,
 * which Go copies elsewhere when it grows). A goroutine may block in the
 * call and resume on another thread, so a call is known by its goroutine
 * (g, in a register of Go's ABI since 1.17) and how deep in that
 * goroutine's stack its frame is (stack.hi - sp, which copying the stack
 * keeps): recursion and nesting time right, and a call left by a panic is
 * at worst pushed out of the LRU map.
 */
struct go_call {
	__u64 g;
	__u64 depth;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct go_call);
	__type(value, __u64);
} go_calls SEC(".maps");

#if defined(__TARGET_ARCH_arm64)
#define GO_G(ctx) ((ctx)->regs[28])
#else
#define GO_G(ctx) ((ctx)->r14)
#endif

/*
 * runtime.g begins with its stack's bounds, lo then hi. A read that fails
 * (the page not present just then: moved by compaction, or being merged
 * into a huge page) costs the call its timing, counted.
 */
static __always_inline bool go_call_of(struct pt_regs *ctx, struct go_call *c)
{
	__u64 g = GO_G(ctx), hi;

	if (!g)
		return false;
	if (bpf_probe_read_user(&hi, sizeof(hi), (void *)(g + 8))) {
		__sync_fetch_and_add(&go_unread, 1);
		return false;
	}
	c->g = g;
	c->depth = hi - PT_REGS_SP(ctx);
	return true;
}

SEC("uprobe")
int funclatency_go_entry(struct pt_regs *ctx)
{
	struct go_call c;
	__u64 ts;

	if (!wanted() || !go_call_of(ctx, &c))
		return 0;
	/* Entered again from its start after the runtime grew the stack: the same call. */
	ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&go_calls, &c, &ts, BPF_ANY))
		__sync_fetch_and_add(&go_lost, 1);
	return 0;
}

SEC("uprobe")
int funclatency_go_return(struct pt_regs *ctx)
{
	struct go_call c;
	__u64 *start, delta;

	if (target_tgid && (bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	if (!go_call_of(ctx, &c))
		return 0;
	start = bpf_map_lookup_elem(&go_calls, &c);
	if (!start)
		return 0;	/* entered before we attached */
	delta = (bpf_ktime_get_ns() - *start) / unit_ns;
	bpf_map_delete_elem(&go_calls, &c);
	/* Without cookies, each return instruction's address is in fids. */
	record(fid_of(ctx), delta);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
