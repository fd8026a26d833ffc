// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bcc's offcputime/offwaketime options, parsed once for both tools. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "cli.h"
#include "offcpu_opts.h"
#include "probe.h"
#include "run.h"
#include "stackopts.h"
#include "stackreport.h"
#include "stackread.h"
#include "syms.h"
#include "tool.h"
#include "unwinder.h"

enum { KEY_STACK_STORAGE = CLI_KEY_TOOL + 0x100, KEY_HASH_STORAGE, KEY_STATE };

struct offcpu_opts offcpu = { .stack_storage = 16384, .hash_storage = 10240, .min_us = 1,
			      .max_us = ULLONG_MAX };

const struct argp_option offcpu_options[] = {
	{ "pid", 'p', "PID", 0, "Trace this PID only" },
	{ "tid", 't', "TID", 0, "Trace this TID only" },
	{ "user-threads-only", 'u', NULL, 0, "User threads only (no kernel threads)" },
	{ "kernel-threads-only", 'k', NULL, 0, "Kernel threads only (no user threads)" },
	{ "user-stacks-only", 'U', NULL, 0, "Show stacks from user space only" },
	{ "kernel-stacks-only", 'K', NULL, 0, "Show stacks from kernel space only" },
	{ "delimited", 'd', NULL, 0, "Insert a delimiter between kernel and user stacks" },
	{ "folded", 'f', NULL, 0, "Output folded format, one line per stack" },
	{ "stack-storage-size", KEY_STACK_STORAGE, "SIZE", 0,
	  "Stack traces the kernel can keep (default 16384)" },
	{ "hash-storage-size", KEY_HASH_STORAGE, "SIZE", 0,
	  "Distinct stacks (or stack pairs) the kernel can total (default 10240)" },
	{ "min-block-time", 'm', "MIN", 0, "Only blocks of at least MIN microseconds (default 1)" },
	{ "max-block-time", 'M', "MAX", 0, "Only blocks of at most MAX microseconds" },
	{ "state", KEY_STATE, "STATE", 0,
	  "Only threads leaving the CPU in a state of this bitmask (0: runnable, 1: "
	  "interruptible sleep, 2: uninterruptible)" },
	{},
};

error_t offcpu__parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p': offcpu.pid = cli__parse_pid(state, "PID", arg); break;
	case 't': offcpu.tid = cli__parse_pid(state, "TID", arg); break;
	case 'u': offcpu.user_threads = true; break;
	case 'k': offcpu.kernel_threads = true; break;
	case 'U': offcpu.user_only = true; break;
	case 'K': offcpu.kernel_only = true; break;
	case 'd': offcpu.delimit = true; break;
	case 'f': offcpu.folded = true; break;
	case KEY_STACK_STORAGE:
		offcpu.stack_storage = cli__parse_ulong(state, "stack storage size", arg, 1, 1 << 24);
		break;
	case KEY_HASH_STORAGE:
		offcpu.hash_storage = cli__parse_ulong(state, "hash storage size", arg, 1, 1 << 24);
		break;
	case 'm':
		offcpu.min_us = cli__parse_ulong(state, "minimum block time", arg, 0, ULONG_MAX);
		break;
	case 'M':
		offcpu.max_us = cli__parse_ulong(state, "maximum block time", arg, 0, ULONG_MAX);
		break;
	case KEY_STATE:
		offcpu.state = cli__parse_ulong(state, "state", arg, 0, LONG_MAX);
		offcpu.state_set = true;
		break;
	case ARGP_KEY_END:
		stackreport__check_args(state, stack_opts.svg, stack_opts.pprof,
					offcpu.folded || ((struct cli *)state->input)->json);
		if (offcpu.user_threads && offcpu.kernel_threads)
			argp_error(state, "-u and -k exclude each other");
		if (offcpu.user_only && offcpu.kernel_only)
			argp_error(state, "-U and -K exclude each other");
		if (offcpu.pid && offcpu.tid)
			argp_error(state, "-p and -t exclude each other");
		if (offcpu.min_us > offcpu.max_us)
			argp_error(state, "-m %llu is above -M %llu", offcpu.min_us, offcpu.max_us);
		stack_opts__warn_ignored(&(struct stack_view){
			.user_only = offcpu.user_only, .kernel_only = offcpu.kernel_only,
			.delimit = offcpu.delimit, .folded = offcpu.folded,
			.json = ((struct cli *)state->input)->json });
		return ARGP_ERR_UNKNOWN;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

struct offcpu_filter offcpu__filter(void)
{
	return (struct offcpu_filter){
		.tgid = offcpu.pid,
		.tid = offcpu.tid,
		.user_threads_only = offcpu.user_threads,
		.kernel_threads_only = offcpu.kernel_threads,
		.user_stacks = !offcpu.kernel_only,
		.kernel_stacks = !offcpu.user_only,
		.filter_state = offcpu.state_set,
		.state_mask = offcpu.state,
		.min_us = offcpu.min_us,
		.max_us = offcpu.max_us,
	};
}

int offcpu__check_target(void)
{
	return offcpu.pid ? tool__target(offcpu.pid, false) : tool__target(offcpu.tid, true);
}

int offcpu__check_files(size_t key_size)
{
	return stackreport__check_files(stack_opts.svg, stack_opts.pprof, stack_opts.pprof_dir) ?:
	       tool__check_map_memory("--stack-storage-size", offcpu.stack_storage,
				      STACKREAD_ENTRY_BYTES) ?:
	       /* --pprof-dir swaps between two maps of it. */
	       tool__check_map_memory("--hash-storage-size", offcpu.hash_storage,
				      (key_size + sizeof(__u64) + STACKREAD_MAP_OVERHEAD) *
				      (stack_opts.pprof_dir ? 2 : 1));
}

void offcpu__banner(const struct cli *cli, const char *what)
{
	char who[64] = "all threads", dur[32] = "... Hit Ctrl-C to end.";

	if (offcpu.pid)
		snprintf(who, sizeof(who), "PID %d", offcpu.pid);
	else if (offcpu.tid)
		snprintf(who, sizeof(who), "TID %d", offcpu.tid);
	else if (offcpu.user_threads)
		snprintf(who, sizeof(who), "user threads");
	else if (offcpu.kernel_threads)
		snprintf(who, sizeof(who), "kernel threads");
	if (cli->duration)
		snprintf(dur, sizeof(dur), " for %u secs.", cli->duration);
	/* Folded, JSON and a file on stdout keep it for data: the line goes to stderr. */
	fprintf(offcpu.folded || cli->json || stack_opts__stdout_taken() ? stderr : stdout,
		"Tracing %s (us) of %s by %s stack%s\n", what, who,
		offcpu.user_only ? "user" : offcpu.kernel_only ? "kernel" : "user + kernel", dur);
	fflush(NULL);
}

int offcpu__unwind_setup(const struct unwind_bpf *m)
{
	if (offcpu.kernel_only)
		stack_opts.unwind.method = UNWIND_FP;	/* no user stacks to walk */
	return unwind__configure(&stack_opts.unwind, m, offcpu.pid || offcpu.tid);
}

struct unwinder *offcpu__unwinder(struct syms *syms, const struct unwind_bpf *m)
{
	struct unwinder *u = unwinder__new(syms, m);

	/* Its tables now, so that its first blocks have them. */
	if (u && offcpu.pid)
		syms__track(syms, &(struct proc_key){ .tgid = offcpu.pid });
	return u;
}

void offcpu__size_totals(struct bpf_map *a, struct bpf_map *b)
{
	bpf_map__set_max_entries(a, offcpu.hash_storage);
	/* The second takes the first's place at each --pprof-dir report only. */
	bpf_map__set_max_entries(b, stack_opts.pprof_dir ? offcpu.hash_storage : 1);
}

int offcpu__report_init(struct stackreport *r, const struct cli *cli, struct syms *syms,
			int stacks_fd, const struct swapped *totals)
{
	*r = (struct stackreport){
		.cli = cli,
		.syms = syms,
		.stacks = stackread__new(syms, stacks_fd),
		.counts = *totals,
		.user_only = offcpu.user_only,
		.kernel_only = offcpu.kernel_only,
		.delimit = offcpu.delimit,
		.folded = offcpu.folded,
		.containers = stack_opts.containers,
		.svg = stack_opts.svg,
		.pprof = stack_opts.pprof,
		.pprof_dir = stack_opts.pprof_dir,
		.pprof_keep = stack_opts.pprof_keep,
		.profile = { .type = "offcpu", .unit = "microseconds", .period_type = "offcpu",
			     .period_unit = "microseconds", .period = 1,
			     .time_nanos = (int64_t)time(NULL) * 1000000000,
			     .container_frames = stack_opts.containers },
	};
	return r->stacks ? 0 : -ENOMEM;
}

void offcpu__thread_maps(struct bpf_map *task_storage, struct bpf_map *by_tid, bool btf)
{
	if (btf)
		bpf_map__set_max_entries(by_tid, 1);
	else
		bpf_map__set_autocreate(task_storage, false);
}

const char *offcpu__method(bool btf)
{
	if (btf)
		return "tp_btf";
	if (!probe__task_storage())
		return "raw_tp (no task storage for tracing programs, Linux 5.12)";
	return "raw_tp (no BTF tracepoints)";
}

void offcpu__warn_lost(const struct offcpu_losses *lost, const struct stackread *stacks,
		       const struct bpf_map *totals, const char *periods, const char *keys)
{
	unsigned long long missed = stackread__missed(stacks);

	if (missed)
		pr_warn("%llu stack traces lost: raise --stack-storage-size (now %lu)",
			missed, offcpu.stack_storage);
	if (lost->starts)
		pr_warn("%llu %s not timed: no room to note when a thread left the CPU",
			(unsigned long long)lost->starts, periods);
	/* The thread's switch count shows switches that the tracepoint missed. */
	if (lost->untraced)
		pr_warn("%llu %s dropped: the kernel did not report the thread's leaving or "
			"return to a CPU", (unsigned long long)lost->untraced, periods);
	if (lost->keys)
		pr_warn("%llu %s dropped: the table of distinct %s was full; raise "
			"--hash-storage-size (now %u)", (unsigned long long)lost->keys, periods, keys,
			bpf_map__max_entries(totals));
}

static int on_new_pid(void *ctx, void *data, size_t size)
{
	struct proc_note e;

	if (size < sizeof(e))
		return 0;
	memcpy(&e, data, sizeof(e));
	if (e.kind == PROC_MAPS_CHANGED)
		syms__refresh(ctx, &e.proc);
	else if (e.kind == PROC_RUNTIME_FRAME)
		syms__runtime_note(ctx, &e.proc, e.value, e.data);
	else if (e.kind == PROC_EXEC)
		syms__prefetch(ctx, &e.proc);
	else if (e.kind == PROC_BINARY_WANTED)
		syms__want(ctx, &e.proc, e.value);
	else if (e.kind == PROC_EXITED)
		syms__exited(ctx, &e.proc);
	else
		syms__track(ctx, &e.proc);
	return 0;
}

/* Count @kind of the notes_lost map, over the CPUs. */
static unsigned long long notes_lost(const struct bpf_map *lost, __u32 kind)
{
	int ncpus = libbpf_num_possible_cpus();
	unsigned long long sum = 0;
	__u64 *per;

	per = ncpus > 0 ? calloc(ncpus, sizeof(*per)) : NULL;
	if (per && !bpf_map__lookup_elem(lost, &kind, sizeof(kind), per, ncpus * sizeof(*per), 0))
		for (int i = 0; i < ncpus; i++)
			sum += per[i];
	free(per);
	return sum;
}

void offcpu__warn_notes_lost(const struct bpf_map *lost)
{
	unsigned long long full = notes_lost(lost, NOTES_LOST_FULL);
	unsigned long long rate = notes_lost(lost, NOTES_LOST_RATE);

	if (full)
		pr_warn("%llu notes of new processes or new code lost (their ring buffer was full): "
			"those processes were read at the next second's check instead, too late for "
			"any that had exited ([unknown] frames); exits were found by the next sweep "
			"of /proc, their unwind rows given back later", full);
	if (rate)
		pr_warn("%llu processes not read at their exec (more than %d execs a second): each "
			"was read when a stack first showed it, its first samples walked by frame "
			"pointers, and one gone by then is [unknown]", rate, EXEC_NOTE_RATE);
}

struct ring_buffer *offcpu__follow_pids(int fd, struct syms *syms)
{
	struct ring_buffer *rb = ring_buffer__new(fd, on_new_pid, syms, NULL);

	if (!rb)
		pr_warn("cannot follow new processes (%s): the stacks of those that exit "
			"before the report will show as [unknown]", strerror(errno));
	return rb;
}
