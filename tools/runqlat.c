// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* runqlat: summarize run-queue (scheduler) latency as histograms, like bcc's runqlat. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysinfo.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "container.h"
#include "cli.h"
#include "histogram.h"
#include "report.h"
#include "maps.h"
#include "probe.h"
#include "prom.h"
#include "run.h"
#include "tool.h"
#include "runqlat.h"
#include "runqlat.skel.h"

enum { KEY_PIDNSS = CLI_KEY_TOOL };

static struct env {
	bool msecs;
	enum runqlat_group group;
	pid_t pid;
	const char *cgroup;
} env;

static const struct argp_option options[] = {
	{ "milliseconds", 'm', NULL, 0, "Millisecond histogram" },
	{ "pids", 'P', NULL, 0, "Print a histogram per process ID" },
	{ "tids", 'L', NULL, 0, "Print a histogram per thread ID" },
	{ "pidnss", KEY_PIDNSS, NULL, 0, "Print a histogram per PID namespace" },
	{ "pid", 'p', "PID", 0, "Trace this PID only" },
	{ "cgroup", 'c', "PATH|ID", 0,
	  "Trace tasks in this cgroup v2 (and below) only, or a container's, by its id" },
	{},
};

static void set_group(struct argp_state *state, enum runqlat_group g)
{
	if (env.group != GROUP_NONE && env.group != g)
		argp_error(state, "-P, -L and --pidnss exclude each other");
	env.group = g;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'm':
		env.msecs = true;
		break;
	case 'P':
		set_group(state, GROUP_PROCESS);
		break;
	case 'L':
		set_group(state, GROUP_THREAD);
		break;
	case KEY_PIDNSS:
		set_group(state, GROUP_PIDNS);
		break;
	case 'p':
		env.pid = cli__parse_pid(state, "PID", arg);
		break;
	case 'c':
		env.cgroup = cli__parse_cgroup(state, "-c", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct cli cli = {
	.name = "runqlat",
	.doc = "Summarize run queue (scheduler) latency as a histogram.",
	.examples =
		"    runqlat             # summarize run queue latency until Ctrl-C\n"
		"    runqlat -mT 1       # msecs, with timestamps, every second\n"
		"    runqlat 5 3         # three 5-second summaries\n"
		"    runqlat -P          # a histogram per process\n"
		"    runqlat -p 185      # only process 185\n"
		"    runqlat -c system.slice/nginx.service   # only this cgroup\n"
		"    runqlat --json --percentiles 10\n"
		"    runqlat -P --prometheus 9100   # serve /metrics on localhost:9100\n",
	.options = options,
	.parser = parse_opt,
	.positional = CLI_POS_INTERVAL_COUNT,
	.flags = CLI_TIMESTAMP | CLI_PERCENTILES | CLI_PROMETHEUS,
};

static const char *unit(void)
{
	return env.msecs ? "msecs" : "usecs";
}

struct keyed {
	__u32 key;
	struct runqlat_hist h;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* The single histogram's sums at the last report (map__take_percpu_hist). */
static struct hist taken;
/* The histograms by process, thread or pid namespace (SWAPPED_HASH). */
static struct swapped hist_by;

static int report(void *ctx, const struct report_info *info)
{
	static const char *const labels[] = {
		[GROUP_PROCESS] = "pid", [GROUP_THREAD] = "tid", [GROUP_PIDNS] = "pidns",
	};
	struct hist_report r = {
		.cli = &cli, .when = info->when, .unit = unit(), .metric = "wait_seconds",
		.help = "Time threads waited runnable on a run queue for a CPU, from their "
			"wakeup (sched_wakeup, sched_wakeup_new) or preemption to sched_switch",
	};
	struct runqlat_bpf *obj = ctx;
	struct keyed *all;
	struct hist total;
	ssize_t n;
	int err;

	report__begin(&cli, info->when);
	if (prom__active()) {
		prom__lost("wakeups_untimed_full_map", obj->bss->lost_starts);
		prom__lost("waits_dropped_histograms_full", obj->bss->lost_hists);
		prom__lost("waits_dropped_switch_untraced", obj->bss->lost_untraced);
	}
	if (env.group == GROUP_NONE) {
		err = map__take_percpu_hist(bpf_map__fd(obj->maps.hist_all), &taken, &total);
		if (!err)
			report__hist(&r, &total, NULL, NULL, 0);
		return err;
	}

	n = swapped__take(&hist_by, sizeof(__u32),
			   sizeof(struct runqlat_hist), (void **)&all);
	if (n < 0)
		return n;
	qsort(all, n, sizeof(*all), cmp_keyed);
	for (ssize_t i = 0; i < n; i++) {
		const char *comm = env.group == GROUP_PIDNS ? NULL : all[i].h.comm;
		struct label l[2] = {
			{ labels[env.group], NULL, all[i].key },
			{ "comm", comm },
		};
		char title[64];

		snprintf(title, sizeof(title), "%s = %u%s%s", labels[env.group], all[i].key,
			 comm ? " " : "", comm ? comm : "");
		report__hist(&r, &all[i].h.hist, title, l, comm ? 2 : 1);
	}
	free(all);
	return 0;
}

/*
 * Kernels without task storage for tracing programs keep each thread's
 * last event in a preallocated hash by tid, held until the thread exits:
 * room for twice the threads running now, within bounds.
 */
static __u32 tid_map_size(void)
{
	struct sysinfo si;
	__u32 n = 10240;

	/* procs is a 16-bit count: at most 131,070 entries, about 10 MiB. */
	if (!sysinfo(&si) && si.procs * 2u > n)
		n = si.procs * 2u;
	return n;
}

static int configure(struct runqlat_bpf *obj)
{
	bool btf = probe__tp_btf("sched_switch") && probe__tp_btf("sched_wakeup") &&
		   probe__tp_btf("sched_wakeup_new") && probe__task_storage();
	struct bpf_program *prog;

	obj->rodata->group = env.group;
	obj->rodata->unit_ns = env.msecs ? 1000000 : 1000;
	obj->rodata->target_tgid = env.pid;

	if (env.cgroup) {
		struct cgroup_target cg;
		int err = container__resolve(env.cgroup, &cg);

		if (err)
			return err;
		obj->rodata->filter_cgroup = true;
		obj->rodata->cgroup_id = cg.id;
		obj->rodata->cgroup_level = cg.level;
	}

	bpf_object__for_each_program(prog, obj->obj) {
		bool is_btf = bpf_program__type(prog) == BPF_PROG_TYPE_TRACING;

		bpf_program__set_autoload(prog, is_btf == btf);
	}
	/* Each path uses one start-time map: the other is made small, or not at all. */
	if (btf)
		bpf_map__set_max_entries(obj->maps.start_tid, 1);
	else
		bpf_map__set_autocreate(obj->maps.start_task, false);
	if (!btf && !bpf_map__set_max_entries(obj->maps.start_tid, tid_map_size()))
		pr_debug("thread table: %u entries", bpf_map__max_entries(obj->maps.start_tid));
	hist_by = SWAPPED(obj->maps, hist_by);
	if (env.group == GROUP_NONE)
		swapped__set_max_entries(&hist_by, 1);
	pr_debug("attaching to sched_wakeup, sched_wakeup_new, sched_switch and sched_process_exit with %s",
		 btf ? "tp_btf" : !probe__task_storage() ?
		 "raw_tp (no task storage for tracing programs, Linux 5.12)" :
		 "raw_tp (no BTF tracepoints in this kernel)");
	return 0;
}

static void report_losses(struct runqlat_bpf *obj)
{
	static const char *const per[] = {
		[GROUP_PROCESS] = "process (-P): trace fewer with -p or -c",
		[GROUP_THREAD] = "thread (-L): trace fewer with -p or -c, or use -P",
		[GROUP_PIDNS] = "PID namespace (--pidnss): trace fewer with -c",
	};

	if (obj->bss->lost_starts)
		pr_warn("%llu wakeups not timed: task storage or the tid map (%u entries) was full; "
			"trace fewer threads with -p or -c", (unsigned long long)obj->bss->lost_starts,
			bpf_map__max_entries(obj->maps.start_tid));
	/* Only -P, -L and --pidnss make more than the one histogram. */
	if (obj->bss->lost_hists)
		pr_warn("%llu latencies dropped: more than %u histograms, one per %s",
			(unsigned long long)obj->bss->lost_hists,
			swapped__max_entries(&hist_by),
			env.group < sizeof(per) / sizeof(per[0]) && per[env.group] ?
			per[env.group] : "group");
	if (obj->bss->lost_untraced)
		pr_warn("%llu waits dropped: the kernel did not report the thread's wakeup or switch onto a CPU",
			(unsigned long long)obj->bss->lost_untraced);
}

int main(int argc, char **argv)
{
	struct runqlat_bpf *obj;
	struct run run;
	int err;

	cli__parse(&cli, argc, argv);
	if (tool__check_host())
		return EXIT_RUNTIME;
	if (tool__target(env.pid, false))
		return EXIT_RUNTIME;

	obj = runqlat_bpf__open();
	if (!obj) {
		tool__report_bpf_error("open BPF object", -errno);
		return EXIT_RUNTIME;
	}
	err = configure(obj);
	if (!err)
		err = tool__load(obj->skeleton);
	if (!err)
		err = tool__attach(obj->skeleton);
	if (err)
		goto out;
	obj->bss->traced_since = run__now_ns();

	run__banner(&cli, "Tracing run queue latency... Hit Ctrl-C to end.");
	run__init(&run, &cli);
	run.report = report;
	run.reads = "histograms";
	run.ctx = obj;
	err = run__loop(&run);
	report_losses(obj);
out:
	runqlat_bpf__destroy(obj);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
