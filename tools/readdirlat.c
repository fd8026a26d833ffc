// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* readdirlat: how long directory listings (getdents64) take, per process and directory. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "escape.h"
#include "json.h"
#include "maps.h"
#include "probe.h"
#include "prom.h"
#include "report.h"
#include "run.h"
#include "tool.h"
#include "readdirlat.h"
#include "readdirlat.skel.h"
#include "readdirlat.legacy.h"

enum { KEY_MIN_US = CLI_KEY_TOOL };

static struct env {
	bool msecs, summary;
	enum rdl_group group;
	pid_t pid;
	const char *comm;
	long long min_us;	/* -1: no per-call lines */
} env = { .min_us = -1 };

static const struct argp_option options[] = {
	{ "milliseconds", 'm', NULL, 0, "Millisecond histogram" },
	{ "pids", 'P', NULL, 0, "Print a histogram per process" },
	{ "dirs", 'D', NULL, 0, "Print a histogram per directory" },
	{ "summary", 'S', NULL, 0, "Print a table per directory and process: calls, scans, "
				   "calls per scan, buffer size, bytes, entries, latency" },
	{ "pid", 'p', "PID", 0, "Trace this process only" },
	{ "comm", 'c', "COMM", 0, "Trace processes with this name only" },
	{ "min-us", KEY_MIN_US, "N", 0, "Print a line per call slower than N microseconds" },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'm': env.msecs = true; break;
	case 'S': env.summary = true; break;
	case 'P':
	case 'D':
		if (env.group != RDL_GROUP_NONE)
			argp_error(state, "-P and -D exclude each other");
		env.group = key == 'P' ? RDL_GROUP_PROCESS : RDL_GROUP_DIR;
		break;
	case 'p': env.pid = cli__parse_pid(state, "PID", arg); break;
	case 'c':
		/* "" would match every process: the opposite of what -c asks for. */
		if (!*arg)
			argp_error(state, "-c needs a process name, as in /proc/PID/comm (such as "
				   "node); leave -c out for every process");
		if (strlen(arg) >= TASK_COMM_LEN)
			argp_error(state, "COMM '%s' is longer than the kernel's %d characters",
				   arg, TASK_COMM_LEN - 1);
		env.comm = arg;
		break;
	case KEY_MIN_US:
		env.min_us = cli__parse_ulong(state, "--min-us", arg, 0, LLONG_MAX / 1000);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct cli cli = {
	.name = "readdirlat",
	.doc = "Summarize directory read (getdents64) latency, per process and directory.",
	.examples =
		"    readdirlat              # latency histogram until Ctrl-C\n"
		"    readdirlat -S 5         # table per directory and process, every 5 s\n"
		"    readdirlat -D -c node   # a histogram per directory listed by 'node'\n"
		"    readdirlat --min-us 1000   # each call slower than 1 ms\n"
		"    readdirlat -P --json --percentiles 10\n"
		"    readdirlat -D --prometheus 9100   # serve /metrics on localhost:9100\n",
	.options = options,
	.parser = parse_opt,
	.positional = CLI_POS_INTERVAL_COUNT,
	.flags = CLI_TIMESTAMP | CLI_PERCENTILES | CLI_PROMETHEUS,
};

static const char *unit(void)
{
	return env.msecs ? "msecs" : "usecs";
}

/*
 * "/proc", from the names the kernel walked; "..." where the walk was cut,
 * before the path or after a name longer than the kernel side kept.
 */
static void dir_name(struct readdirlat_bpf *obj, const struct dir_key *key, char *buf,
		     size_t size)
{
	const char *comp[DIR_DEPTH];
	struct dir_path p;
	size_t len = 0, off = 0;
	int depth = 0;

	if (!key->ino || bpf_map_lookup_elem(bpf_map__fd(obj->maps.dirs), key, &p)) {
		snprintf(buf, size, "[unknown]");
		return;
	}
	p.names[sizeof(p.names) - 1] = '\0';
	while (depth < (int)p.depth && depth < DIR_DEPTH && off < sizeof(p.names)) {
		comp[depth++] = &p.names[off];
		off += strlen(&p.names[off]) + 1;
	}
	buf[0] = '\0';
	if (p.cut)
		len += snprintf(buf, size, "...");
	for (int i = depth - 1; i >= 0 && len < size; i--)
		len += snprintf(buf + len, size - len, "/%s%s", comp[i],
				p.long_names & (1U << i) ? "..." : "");
	if (!depth && !p.cut)
		snprintf(buf, size, "/");
}

struct hist_rec {
	struct rdl_hist_key key;
	struct rdl_hist h;
};

struct summary_rec {
	struct rdl_hist_key key;
	struct rdl_summary s;
};

static int cmp_hist(const void *a, const void *b)
{
	const struct rdl_hist_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return (x->dir.ino > y->dir.ino) - (x->dir.ino < y->dir.ino);
}

/* Most time spent first. */
static int cmp_summary(const void *a, const void *b)
{
	const struct rdl_summary *x = &((const struct summary_rec *)a)->s;
	const struct rdl_summary *y = &((const struct summary_rec *)b)->s;

	if (x->lat_sum_ns != y->lat_sum_ns)
		return x->lat_sum_ns > y->lat_sum_ns ? -1 : 1;
	return 0;
}

/* The single histogram's sums at the last report (map__take_percpu_hist). */
static struct hist taken;
/* The histograms by process or directory, and -S's summaries (SWAPPED_HASH). */
static struct swapped hist_by, summaries;

static int report_hists(struct readdirlat_bpf *obj, const struct report_info *info)
{
	struct hist_report r = {
		.cli = &cli, .when = info->when, .unit = unit(), .metric = "getdents_seconds",
		.help = "Latency of directory reads, from entry to exit of the getdents64 "
			"system call (its syscalls tracepoints)",
	};
	struct hist_rec *all;
	struct hist total;
	ssize_t n;
	int err;

	if (env.group == RDL_GROUP_NONE) {
		err = map__take_percpu_hist(bpf_map__fd(obj->maps.hist_all), &taken, &total);
		if (!err)
			report__hist(&r, &total, NULL, NULL, 0);
		return err;
	}
	n = swapped__take(&hist_by, sizeof(struct rdl_hist_key),
			   sizeof(struct rdl_hist), (void **)&all);
	if (n < 0)
		return n;
	qsort(all, n, sizeof(*all), cmp_hist);
	for (ssize_t i = 0; i < n; i++) {
		char dir[PATH_MAX], title[PATH_MAX + 32];
		struct label l[2];

		if (env.group == RDL_GROUP_PROCESS) {
			l[0] = (struct label){ "pid", NULL, all[i].key.tgid };
			l[1] = (struct label){ "comm", all[i].h.comm };
			snprintf(title, sizeof(title), "pid = %u %s", all[i].key.tgid, all[i].h.comm);
			report__hist(&r, &all[i].h.hist, title, l, 2);
		} else {
			dir_name(obj, &all[i].key.dir, dir, sizeof(dir));
			l[0] = (struct label){ "dir", dir };
			snprintf(title, sizeof(title), "dir = %s", dir);
			report__hist(&r, &all[i].h.hist, title, l, 1);
		}
	}
	free(all);
	return 0;
}

static int report_summary(struct readdirlat_bpf *obj, const struct report_info *info)
{
	struct summary_rec *all;
	ssize_t n;

	n = swapped__take(&summaries, sizeof(struct rdl_hist_key),
			   sizeof(struct rdl_summary), (void **)&all);
	if (n < 0)
		return n;
	qsort(all, n, sizeof(*all), cmp_summary);
	/* DIR last: a path of any length leaves the other columns in line. */
	if (!cli.json)
		printf("%-16s %-7s %7s %6s %10s %6s %10s %8s %9s %9s %s\n", "COMM", "PID", "CALLS",
		       "SCANS", "CALLS/SCAN", "BUFSZ", "BYTES", "ENTRIES", "AVG_us", "MAX_us",
		       "DIR");
	for (ssize_t i = 0; i < n; i++) {
		const struct rdl_summary *s = &all[i].s;
		double per_scan = s->scans ? (double)s->calls / s->scans : 0;
		double avg_us = s->calls ? s->lat_sum_ns / 1000.0 / s->calls : 0;
		char dir[PATH_MAX], edir[PATH_MAX], ecomm[4 * sizeof(s->comm) + 1], entries[24];

		dir_name(obj, &all[i].key.dir, dir, sizeof(dir));
		if (cli.json) {
			struct json j;

			json__begin_line(&j, stdout);
			json__str(&j, "comm", s->comm);
			json__u64(&j, "pid", all[i].key.tgid);
			json__str(&j, "dir", dir);
			json__u64(&j, "calls", s->calls);
			json__u64(&j, "scans", s->scans);
			json__double(&j, "calls_per_scan", per_scan);
			json__u64(&j, "bufsz", s->bufsz);
			json__u64(&j, "bytes", s->bytes);
			if (tool__legacy_bpf())
				json__null(&j, "entries");
			else
				json__u64(&j, "entries", s->entries);
			json__u64(&j, "errors", s->errors);
			json__double(&j, "avg_us", avg_us);
			json__double(&j, "max_us", s->lat_max_ns / 1000.0);
			json__end_line(&j);
			continue;
		}
		escape__format(ecomm, sizeof(ecomm), s->comm, ESCAPE_TEXT);
		escape__format(edir, sizeof(edir), dir, ESCAPE_TEXT);
		/* Kernels before 5.17 cannot walk the records (no bpf_loop): "-". */
		if (tool__legacy_bpf())
			snprintf(entries, sizeof(entries), "-");
		else
			snprintf(entries, sizeof(entries), "%llu", (unsigned long long)s->entries);
		printf("%-16s %-7u %7llu %6llu %10.2f %6u %10llu %8s %9.1f %9.1f %s\n",
		       ecomm, all[i].key.tgid, (unsigned long long)s->calls,
		       (unsigned long long)s->scans, per_scan, s->bufsz,
		       (unsigned long long)s->bytes, entries, avg_us, s->lat_max_ns / 1000.0, edir);
	}
	free(all);
	return 0;
}

static int report(void *ctx, const struct report_info *info)
{
	if (env.min_us >= 0)
		return 0;	/* the lines were the report */
	report__begin(&cli, info->when);
	if (prom__active()) {
		struct readdirlat_bpf *obj = ctx;

		prom__lost("calls_untimed_no_task_storage", obj->bss->lost_calls);
		prom__lost("calls_dropped_histograms_full", obj->bss->lost_rows);
		prom__lost("directories_unnamed_full_map", obj->bss->lost_dirs);
	}
	if (env.summary)
		return report_summary(ctx, info);
	return report_hists(ctx, info);
}

static int on_event(void *ctx, void *data, size_t size)
{
	const struct rdl_event *e = data;
	char dir[PATH_MAX];
	time_t now = time(NULL);

	dir_name(ctx, &e->dir, dir, sizeof(dir));
	if (cli.json) {
		struct json j;
		char t[16];
		FILE *m = fmemopen(t, sizeof(t), "w");

		run__print_time(m, now);
		fclose(m);
		json__begin_line(&j, stdout);
		json__str(&j, "time", t);
		json__str(&j, "comm", e->comm);
		json__u64(&j, "pid", e->tgid);
		json__u64(&j, "tid", e->pid);
		json__str(&j, "dir", dir);
		json__u64(&j, "bufsz", e->bufsz);
		json__i64(&j, "bytes", e->ret);
		json__double(&j, "lat_us", e->lat_ns / 1000.0);
		json__end_line(&j);
	} else {
		char edir[PATH_MAX], ecomm[4 * sizeof(e->comm) + 1];

		escape__format(ecomm, sizeof(ecomm), e->comm, ESCAPE_TEXT);
		escape__format(edir, sizeof(edir), dir, ESCAPE_TEXT);
		run__print_time(stdout, now);
		printf(" %-16s %-7u %6u %8lld %10.1f %s\n", ecomm, e->tgid, e->bufsz,
		       (long long)e->ret, e->lat_ns / 1000.0, edir);
	}
	return 0;
}

/* What a run could not count, at exit, each with what to do about it. */
static void report_losses(struct readdirlat_bpf *obj)
{
	const char *rows = env.summary && env.group != RDL_GROUP_NONE ? "histograms and -S rows" :
			   env.summary ? "-S rows" : "histograms";

	if (obj->bss->lost_calls)
		pr_warn("%llu calls not timed: no memory for a thread's task storage; trace fewer "
			"with -p or -c", (unsigned long long)obj->bss->lost_calls);
	if (obj->bss->lost_rows)
		pr_warn("%llu calls not counted: more than %u %s; trace fewer with -p or -c",
			(unsigned long long)obj->bss->lost_rows,
			swapped__max_entries(env.summary ? &summaries : &hist_by),
			rows);
	if (obj->bss->lost_events)
		pr_warn("%llu slow-call lines lost: the ring buffer was full; raise --min-us",
			(unsigned long long)obj->bss->lost_events);
	if (obj->bss->lost_dirs)
		pr_warn("%llu directories not named (shown as [unknown]): more than %u directories; "
			"trace fewer with -p or -c", (unsigned long long)obj->bss->lost_dirs,
			bpf_map__max_entries(obj->maps.dirs));
}

/*
 * Options another one makes moot are said rather than dropped silently; the
 * kernel side then keeps no histograms that nothing would print.
 */
static void warn_ignored(void)
{
	if (cli.prometheus) {
		tool__warn_ignored("--prometheus serves histograms",
				   env.summary ? "-S" : NULL, env.min_us >= 0 ? "--min-us" : NULL);
		env.summary = false;
		env.min_us = -1;
	} else if (env.min_us >= 0) {
		tool__warn_ignored("--min-us prints calls",
				   env.summary ? "-S" : NULL,
				   env.group == RDL_GROUP_PROCESS ? "-P" : NULL,
				   env.group == RDL_GROUP_DIR ? "-D" : NULL,
				   env.msecs ? "-m" : NULL,
				   cli.timestamp ? "-T" : NULL,
				   cli.percentiles ? "--percentiles" : NULL);
		env.summary = false;
		env.group = RDL_GROUP_NONE;
	} else if (env.summary) {
		tool__warn_ignored("-S prints a table",
				   env.group == RDL_GROUP_PROCESS ? "-P" : NULL,
				   env.group == RDL_GROUP_DIR ? "-D" : NULL,
				   env.msecs ? "-m" : NULL,
				   cli.percentiles ? "--percentiles" : NULL);
		env.group = RDL_GROUP_NONE;
	}
}

static int configure(struct readdirlat_bpf *obj)
{
	bool tp = probe__tracepoint("syscalls", "sys_enter_getdents64") &&
		  probe__tracepoint("syscalls", "sys_exit_getdents64");
	bool legacy = tp && probe__tracepoint("syscalls", "sys_enter_getdents");
	struct bpf_program *prog;

	obj->rodata->group = env.group;
	obj->rodata->summary = env.summary;
	obj->rodata->events = env.min_us >= 0;
	obj->rodata->min_ns = env.min_us >= 0 ? env.min_us * 1000 : 0;
	obj->rodata->unit_ns = env.msecs ? 1000000 : 1000;
	obj->rodata->target_tgid = env.pid;
	if (env.comm)
		strncpy((char *)obj->rodata->target_comm, env.comm, TASK_COMM_LEN - 1);

	bpf_object__for_each_program(prog, obj->obj) {
		const char *name = bpf_program__name(prog);
		bool raw = strstr(name, "_raw_") != NULL;
		bool old = !raw && (!strcmp(name, "readdirlat_enter") || !strcmp(name, "readdirlat_exit"));

		bpf_program__set_autoload(prog, raw ? !tp : tp && (!old || legacy));
	}
	tool__thread_maps(obj->maps.calls, obj->maps.calls_tid, 10240);
	hist_by = SWAPPED(obj->maps, hist_by);
	summaries = SWAPPED(obj->maps, summaries);
	if (env.group == RDL_GROUP_NONE)
		swapped__set_max_entries(&hist_by, 1);
	/* Names take most of readdirlat's memory: none where nothing shows them. */
	if (env.group != RDL_GROUP_DIR && !env.summary && env.min_us < 0)
		bpf_map__set_max_entries(obj->maps.dirs, 1);
	if (!env.summary)
		swapped__set_max_entries(&summaries, 1);
	if (env.min_us < 0)
		bpf_map__set_max_entries(obj->maps.slow, 4096);
	pr_debug("attaching to %s", tp ? "the syscalls:sys_enter/exit_getdents(64) tracepoints" :
		 "raw_syscalls sys_enter/sys_exit (no per-syscall tracepoints: every syscall "
		 "is filtered by number, which costs more)");
	return 0;
}

int main(int argc, char **argv)
{
	struct ring_buffer *rb = NULL;
	struct readdirlat_bpf *obj;
	struct run run;
	int err;

	cli__parse(&cli, argc, argv);
	warn_ignored();
	if (tool__check_host())
		return EXIT_RUNTIME;
	if (tool__target(env.pid, false))
		return EXIT_RUNTIME;

	obj = tool__open_skeleton(readdirlat);
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

	run__init(&run, &cli);
	run.report = report;
	run.reads = "the maps";
	run.ctx = obj;
	if (env.min_us >= 0) {
		rb = ring_buffer__new(bpf_map__fd(obj->maps.slow), on_event, obj, NULL);
		if (!rb) {
			err = -errno;
			pr_err("cannot open the event ring buffer: %s", strerror(-err));
			goto out;
		}
		run.events = rb;
	}
	run__banner(&cli, "Tracing directory reads (getdents64)... Hit Ctrl-C to end.");
	if (env.min_us >= 0 && !cli.json)
		printf("%-8s %-16s %-7s %6s %8s %10s %s\n", "TIME", "COMM", "PID", "BUFSZ",
		       "BYTES", "LAT(us)", "DIR");
	err = run__loop(&run);
	report_losses(obj);
	if (obj->bss->entries_capped)
		pr_warn("%llu calls returned more than 4096 entries: ENTRIES counts only those",
			(unsigned long long)obj->bss->entries_capped);
out:
	ring_buffer__free(rb);
	readdirlat_bpf__destroy(obj);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
