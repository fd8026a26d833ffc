// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile: sample stack traces at a timed interval and count them in the kernel, like bcc's profile. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe.h"

#include "cgroup.h"
#include "container.h"
#include "cli.h"
#include "offcpu_opts.h"
#include "run.h"
#include "sampler.h"
#include "stackopts.h"
#include "stackreport.h"
#include "stackread.h"
#include "syms.h"
#include "tool.h"
#include "unwinder.h"
#include "profile.h"
#include "profile.skel.h"
#include "profile.legacy.h"

enum { KEY_STACK_STORAGE = CLI_KEY_TOOL, KEY_HASH_STORAGE, KEY_CGROUP, KEY_CYCLES, KEY_WALL,
       KEY_MIN_BLOCK };

static struct env {
	pid_t pid, tid;
	bool user_only, kernel_only, delimit, no_delimit, annotate, idle, folded, cycles, freq_set;
	bool wall;
	unsigned long freq, period, stack_storage, hash_storage, min_block;
	int cpu;
	const char *cgroup;
} env = { .freq = 49, .stack_storage = 16384, .hash_storage = 40960, .cpu = -1 };

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Profile this process only" },
	{ "tid", 'L', "TID", 0, "Profile this thread only" },
	{ "user-stacks-only", 'U', NULL, 0, "Show stacks from user space only" },
	{ "kernel-stacks-only", 'K', NULL, 0, "Show stacks from kernel space only" },
	{ "frequency", 'F', "HZ", 0, "Sample at this frequency (default 49)" },
	{ "count", 'c', "COUNT", 0, "Sample once every COUNT events (ns of CPU, or cycles)" },
	{ "delimited", 'd', NULL, 0, "Insert a delimiter between kernel and user stacks" },
	{ "annotations", 'a', NULL, 0, "Add _[k] to kernel frames" },
	{ "no-delimiter", 'A', NULL, 0, "No delimiter between kernel and user stacks (default)" },
	{ "include-idle", 'I', NULL, 0, "Include the CPU idle task" },
	{ "folded", 'f', NULL, 0, "Output folded format, one line per stack" },
	{ "cpu", 'C', "CPU", 0, "Sample this CPU only" },
	{ "stack-storage-size", KEY_STACK_STORAGE, "SIZE", 0, "Stack traces kept (default 16384)" },
	{ "hash-storage-size", KEY_HASH_STORAGE, "SIZE", 0, "Distinct stacks counted (default 40960)" },
	{ "cgroup", KEY_CGROUP, "PATH|ID", 0,
	  "Profile tasks in this cgroup v2 (and below) only, or a container's, by its id" },
	{ "cycles", KEY_CYCLES, NULL, 0, "Sample CPU cycles (hardware) instead of the CPU clock" },
	{ "wall", KEY_WALL, NULL, 0,
	  "Wall-clock profile: each thread's whole time, on CPU and off, by its state, in microseconds" },
	{ "min-block", KEY_MIN_BLOCK, "USECS", 0,
	  "With --wall: periods off CPU shorter than this in one [short] count, without stacks" },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p': env.pid = cli__parse_pid(state, "PID", arg); break;
	case 'L': env.tid = cli__parse_pid(state, "TID", arg); break;
	case 'U': env.user_only = true; break;
	case 'K': env.kernel_only = true; break;
	case 'F':
		env.freq = cli__parse_ulong(state, "frequency", arg, 1, 1000000);
		env.freq_set = true;
		break;
	case 'c': env.period = cli__parse_ulong(state, "count", arg, 1, ULONG_MAX); break;
	case 'd': env.delimit = true; break;
	case 'a': env.annotate = true; break;
	case 'A': env.no_delimit = true; break;
	case 'I': env.idle = true; break;
	case 'f': env.folded = true; break;
	case 'C': env.cpu = cli__parse_ulong(state, "CPU", arg, 0, 65535); break;
	case KEY_STACK_STORAGE:
		env.stack_storage = cli__parse_ulong(state, "stack storage size", arg, 1, 1 << 24);
		break;
	case KEY_HASH_STORAGE:
		env.hash_storage = cli__parse_ulong(state, "hash storage size", arg, 1, 1 << 24);
		break;
	case KEY_CGROUP: env.cgroup = cli__parse_cgroup(state, "--cgroup", arg); break;
	case KEY_CYCLES: env.cycles = true; break;
	case KEY_WALL: env.wall = true; break;
	case KEY_MIN_BLOCK:
		env.min_block = cli__parse_ulong(state, "minimum block time", arg, 0, ULONG_MAX);
		break;
	case ARGP_KEY_END:
		stackreport__check_args(state, stack_opts.svg, stack_opts.pprof,
					env.folded || ((struct cli *)state->input)->json);
		if (env.user_only && env.kernel_only)
			argp_error(state, "-U and -K exclude each other");
		if (env.period && env.freq_set)
			argp_error(state, "-F and -c exclude each other");
		if (env.pid && env.tid)
			argp_error(state, "-p and -L exclude each other");
		/* Each sample stands for 1/F s of one thread's time, on every CPU: what --wall adds to. */
		if (env.wall && (env.period || env.cycles || env.cpu >= 0 || env.idle))
			argp_error(state, "--wall counts threads' time on every CPU, at -F Hz: %s excludes it",
				   env.period ? "-c" : env.cycles ? "--cycles" : env.cpu >= 0 ? "-C" : "-I");
		if (env.min_block && !env.wall)
			argp_error(state, "--min-block needs --wall");
		/* -A (no delimiter, the default) beside -d: -A wins, in either order. */
		if (env.no_delimit)
			tool__warn_ignored("-A leaves out the delimiter", env.delimit ? "-d" : NULL);
		stack_opts__warn_ignored(&(struct stack_view){
			.user_only = env.user_only, .kernel_only = env.kernel_only,
			.delimit = env.delimit && !env.no_delimit, .annotate = env.annotate,
			.folded = env.folded, .json = ((struct cli *)state->input)->json });
		/* The idle task is pid 0, which -p and -L never match. */
		if (env.pid || env.tid)
			tool__warn_ignored(env.pid ? "-p profiles one process, not the idle task" :
					   "-L profiles one thread, not the idle task",
					   env.idle ? "-I" : NULL);
		return ARGP_ERR_UNKNOWN;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct cli cli = {
	.name = "profile",
	.doc = "Profile CPU usage by sampling stack traces at a timed interval.",
	.examples =
		"    profile                 # all CPUs at 49 Hz, until Ctrl-C\n"
		"    profile -F 99 10        # 99 Hz for 10 seconds\n"
		"    profile -p 185 -f 30    # one process, folded, for flame graphs\n"
		"    profile --svg cpu.svg 10    # a flame graph, written by the tool\n"
		"    profile --pprof cpu.pb.gz 10  # for go tool pprof, Pyroscope, Parca\n"
		"    profile --cgroup system.slice/nginx.service 10   # one service\n"
		"    profile --wall -p 185 -f 10    # its threads' whole time, on CPU and off\n",
	.options = options,
	.parser = parse_opt,
	.group = &stack_opts_argp,
	.positional = CLI_POS_DURATION,
};

struct profile {
	struct profile_bpf *obj;
	struct syms *syms;
	struct unwinder *unwinder;
	struct ring_buffer *pids;
	struct stackreport report;
	struct sampler *sampler;
	struct bpf_link *wall_switch, *wall_iter;
};

/*
 * --wall: one pass of the iterator over every thread. At start it gives
 * threads off CPU since before then their periods; at each report it
 * counts the periods still open up to then, the rest left to the next.
 */
static int wall_pass(struct profile *p)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = bpf_iter_create(bpf_link__fd(p->wall_iter));
	if (fd < 0)
		return -errno;
	/* The program writes nothing: reading to the end runs it on every thread. */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

/* --wall's kernel side, attached before sampling starts. */
static int wall_start(struct profile *p)
{
	int err;

	p->wall_switch = bpf_program__attach(p->obj->progs.profile_wall_switch);
	if (!p->wall_switch) {
		err = -errno;
		tool__report_bpf_error("attach to sched_switch", err);
		return err;
	}
	p->wall_iter = bpf_program__attach_iter(p->obj->progs.profile_wall_iter, NULL);
	err = p->wall_iter ? wall_pass(p) : -errno;
	if (err)
		tool__report_bpf_error("read the threads (a task iterator)", err);
	return err;
}

/* About once a second: follow CPUs coming and going, note new processes. */
static int tick(void *ctx)
{
	struct profile *p = ctx;

	sampler__refresh(p->sampler);
	return stackreport__track(&p->report);
}

static int64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t start_mono;

static int report(void *ctx, const struct report_info *info)
{
	struct profile *p = ctx;
	int err;

	/* Periods still open are cut here: counted in this report, not lost or late. */
	if (env.wall) {
		err = wall_pass(p);
		if (err)
			pr_warn("cannot count the periods off CPU still open: %s", strerror(-err));
	}

	p->report.profile.duration_nanos = now_ns(CLOCK_MONOTONIC) - start_mono;
	return stackreport__print(&p->report);
}

/* Lost data, from the kernel side (samples) and from reading back (stacks), at exit. */
static void report_losses(struct profile *p)
{
	unsigned long long user = p->obj->bss->lost_user_stacks;
	unsigned long long kernel = p->obj->bss->lost_kernel_stacks;
	unsigned long long unread = stackread__missed(p->report.stacks);

	if (user + kernel)
		pr_warn("%llu stack traces lost (%llu user, %llu kernel): the stack map was full; "
			"raise --stack-storage-size (now %lu)",
			user + kernel, user, kernel, env.stack_storage);
	else if (unread)
		pr_warn("%llu stack traces lost: raise --stack-storage-size (now %lu)",
			unread, env.stack_storage);
	if (p->obj->bss->lost_samples + p->obj->bss->wall_lost.keys)
		pr_warn("%llu %s dropped: more than %lu distinct stacks; raise --hash-storage-size",
			(unsigned long long)(p->obj->bss->lost_samples + p->obj->bss->wall_lost.keys),
			env.wall ? "samples and periods off CPU" : "samples", env.hash_storage);
	if (p->obj->bss->wall_lost.starts)
		pr_warn("%llu periods off CPU not timed: no room for the thread's start",
			(unsigned long long)p->obj->bss->wall_lost.starts);
}

static void banner(void)
{
	char who[300] = "all threads", rate[64], cpu[32] = "", dur[32] = "... Hit Ctrl-C to end.";
	/* Folded lines go straight into flame graph scripts: keep stdout clean, as bcc does. */
	FILE *out = env.folded || cli.json || stack_opts__stdout_taken() ? stderr : stdout;

	if (env.pid)
		snprintf(who, sizeof(who), "PID %d", env.pid);
	else if (env.tid)
		snprintf(who, sizeof(who), "TID %d", env.tid);
	else if (env.cgroup)
		snprintf(who, sizeof(who), "cgroup %s", env.cgroup);
	if (env.period)
		snprintf(rate, sizeof(rate), "%lu events", env.period);
	else
		snprintf(rate, sizeof(rate), "%lu Hertz", env.freq);
	if (env.cpu >= 0)
		snprintf(cpu, sizeof(cpu), " on CPU#%d", env.cpu);
	if (cli.duration)
		snprintf(dur, sizeof(dur), " for %u secs.", cli.duration);
	if (env.wall) {
		fprintf(out,
			"Wall-clock time of %s at %s on CPU, in microseconds by state, by %s stack%s\n",
			who, rate, env.user_only ? "user" : env.kernel_only ? "kernel" : "user + kernel",
			dur);
		fflush(NULL);
		return;
	}
	fprintf(out, "Sampling at %s of %s by %s stack%s%s\n",
		rate, who, env.user_only ? "user" : env.kernel_only ? "kernel" : "user + kernel",
		cpu, dur);
	fflush(NULL);
}

/* "profile -F 99 -p 42 10 on web1; ...", for the flame graph's subtitle. */
static void describe(int argc, char **argv, const char *event, char *buf, size_t size)
{
	char host[64] = "";
	size_t o = snprintf(buf, size, "profile");

	for (int i = 1; i < argc && o < size; i++)
		o += snprintf(buf + o, size - o, " %s", argv[i]);
	gethostname(host, sizeof(host) - 1);
	if (o < size)
		snprintf(buf + o, size - o, env.wall ? " on %s; threads' time, on CPU by samples of %s" :
		 " on %s; on-CPU samples of %s", host, event);
}

int main(int argc, char **argv)
{
	struct profile p = {};
	struct sampler_opts so;
	struct unwind_bpf ubpf;
	int64_t start_wall = now_ns(CLOCK_REALTIME);
	char title[80], sub[512];
	struct run run;
	uint64_t ns;
	int err;

	cli__parse(&cli, argc, argv);
	if (tool__check_host())
		return EXIT_RUNTIME;
	if (tool__target(env.pid, false) || tool__target(env.tid, true))
		return EXIT_RUNTIME;
	if (stackreport__check_files(stack_opts.svg, stack_opts.pprof, stack_opts.pprof_dir) ||
	    tool__check_map_memory("--stack-storage-size", env.stack_storage, STACKREAD_ENTRY_BYTES) ||
	    tool__check_map_memory("--hash-storage-size", env.hash_storage,
				   (sizeof(struct stack_key) + sizeof(__u64) + STACKREAD_MAP_OVERHEAD) *
				   (stack_opts.pprof_dir ? 2 : 1)))
		return EXIT_RUNTIME;
	p.syms = stack_opts__syms(&cli);
	if (!p.syms)
		return EXIT_RUNTIME;
	p.obj = tool__open_skeleton(profile);
	if (!p.obj) {
		tool__report_bpf_error("open BPF object", -errno);
		syms__free(p.syms);
		return EXIT_RUNTIME;
	}
	p.obj->rodata->stack_seed = stackread__seed();
	p.obj->rodata->target_tgid = env.pid;
	p.obj->rodata->target_tid = env.tid;
	p.obj->rodata->include_idle = env.idle;
	p.obj->rodata->user_stacks = !env.kernel_only;
	p.obj->rodata->kernel_stacks = !env.user_only;
	if (env.cgroup) {
		struct cgroup_target cg;

		err = container__resolve(env.cgroup, &cg);
		if (err)
			goto out;
		p.obj->rodata->filter_cgroup = true;
		p.obj->rodata->cgroup_id = cg.id;
		p.obj->rodata->cgroup_level = cg.level;
	}
	bpf_map__set_max_entries(p.obj->maps.stacks, env.stack_storage);
	bpf_map__set_max_entries(p.obj->maps.counts_a, env.hash_storage);
	/* The second takes the first's place at each --pprof-dir report only. */
	bpf_map__set_max_entries(p.obj->maps.counts_b, stack_opts.pprof_dir ? env.hash_storage : 1);
	if (env.wall && (tool__legacy_bpf() || !probe__task_storage() ||
			 !probe__tp_btf("sched_switch"))) {
		pr_err("--wall needs Linux 5.17 (bpf_loop, task storage and BTF tracepoints)");
		err = -ENOTSUP;
		goto out;
	}
	bpf_program__set_autoload(p.obj->progs.profile_wall_switch, env.wall);
	bpf_program__set_autoload(p.obj->progs.profile_wall_iter, env.wall);
	bpf_map__set_autocreate(p.obj->maps.wall_periods, env.wall);
	p.obj->rodata->wall = env.wall;
	p.obj->rodata->sample_us = (1000000 + env.freq / 2) / env.freq;
	p.obj->rodata->min_block_us = env.min_block;
	if (env.kernel_only)
		stack_opts.unwind.method = UNWIND_FP;	/* no user stacks to walk */
	ubpf = UNWIND_BPF(p.obj);
	err = unwind__configure(&stack_opts.unwind, &ubpf, env.pid || env.tid);
	if (err < 0)
		goto out;
	p.obj->rodata->unwind_cfi = err;
	err = tool__load(p.obj->skeleton);
	if (err)
		goto out;
	if (p.obj->rodata->unwind_cfi) {
		p.unwinder = unwinder__new(p.syms, &ubpf);
		if (!p.unwinder) {
			err = -errno;
			goto out;
		}
		/* Its tables now, so that its first samples have them. */
		if (env.pid)
			syms__track(p.syms, &(struct proc_key){ .tgid = env.pid });
	}
	if (env.wall) {
		err = wall_start(&p);
		if (err)
			goto out;
	}
	so = (struct sampler_opts){ .cycles = env.cycles, .freq = env.period ? 0 : env.freq,
				    .period = env.period, .cpu = env.cpu };
	p.sampler = sampler__new(p.obj->progs.profile_sample, &so);
	if (!p.sampler) {
		err = -errno;
		goto out;
	}
	env.cycles = sampler__cycles(p.sampler);
	pr_debug("sampling %s on %u CPU%s", env.cycles ? "cycles" : "the CPU clock",
		 sampler__ncpus(p.sampler), sampler__ncpus(p.sampler) == 1 ? "" : "s");

	/* What one sample stands for: CPU time, unless cycles (at a varying rate with -F). */
	ns = env.cycles ? 0 : env.period ? env.period : 1000000000ULL / env.freq;
	if (env.period)
		snprintf(title, sizeof(title), "CPU profile, a sample every %lu %s", env.period,
			 env.cycles ? "cycles" : "ns");
	else if (env.wall)
		snprintf(title, sizeof(title), "Wall-clock profile, on CPU at %lu Hz", env.freq);
	else
		snprintf(title, sizeof(title), "CPU profile, %lu Hz", env.freq);
	describe(argc, argv, env.cycles ? "CPU cycles" : "the CPU clock", sub, sizeof(sub));
	p.report = (struct stackreport){
		.cli = &cli,
		.syms = p.syms,
		.stacks = stackread__new(p.syms, bpf_map__fd(p.obj->maps.stacks)),
		.counts = SWAPPED(p.obj->maps, counts),
		.user_only = env.user_only,
		.kernel_only = env.kernel_only,
		.delimit = env.delimit && !env.no_delimit,
		.annotate_kernel = env.annotate,
		.folded = env.folded,
		.containers = stack_opts.containers,
		.svg = stack_opts.svg,
		.pprof = stack_opts.pprof,
		.pprof_dir = stack_opts.pprof_dir,
		.pprof_keep = stack_opts.pprof_keep,
		.json_value = "samples",
		.flamegraph = { title, sub, "samples" },
		.profile = {
			.type = "samples", .unit = "count",
			.type2 = ns ? "cpu" : NULL, .unit2 = ns ? "nanoseconds" : NULL, .scale = ns,
			.period_type = ns ? "cpu" : "cycles", .period_unit = ns ? "nanoseconds" : "count",
			.period = ns ? (int64_t)ns : (int64_t)env.period,
			.time_nanos = start_wall,
			.container_frames = stack_opts.containers,
		},
	};
	if (env.wall) {
		/* Microseconds of threads' time; pprof's in nanoseconds, the on-CPU part beside. */
		p.report.json_value = "total_us";
		p.report.flamegraph.unit = "us";
		p.report.profile = (struct pprof_opts){
			.type = "wall", .unit = "nanoseconds", .scale1 = 1000,
			.type2 = "cpu", .unit2 = "nanoseconds", .scale = 1000,
			.type2_frame = stackreport__state_name(WALL_RUNNING), .default_type = "wall",
			.period_type = "wall", .period_unit = "nanoseconds", .period = (int64_t)ns,
			.time_nanos = start_wall, .container_frames = stack_opts.containers,
		};
	}
	if (!p.report.stacks) {
		err = -ENOMEM;
		goto out;
	}
	p.pids = offcpu__follow_pids(bpf_map__fd(p.obj->maps.new_pids), p.syms);

	start_mono = now_ns(CLOCK_MONOTONIC);
	banner();

	run__init(&run, &cli);
	stack_opts__run(&run);
	run.report = report;
	run.tick = tick;
	run.ctx = &p;
	run.events = p.pids;
	err = run__loop(&run);
	report_losses(&p);
	syms__warn_losses(p.syms);
	unwinder__warn_losses(p.unwinder);
	offcpu__warn_notes_lost(p.obj->maps.notes_lost);
out:
	bpf_link__destroy(p.wall_iter);
	bpf_link__destroy(p.wall_switch);
	sampler__free(p.sampler);
	ring_buffer__free(p.pids);
	stackread__free(p.report.stacks);
	profile_bpf__destroy(p.obj);
	unwinder__free(p.unwinder);
	syms__free(p.syms);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
