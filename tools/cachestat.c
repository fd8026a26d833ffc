// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cachestat: page-cache hits, misses and dirtied pages per interval, like bcc's cachestat. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "escape.h"
#include "json.h"
#include "probe.h"
#include "prom.h"
#include "report.h"
#include "proc.h"
#include "run.h"
#include "tool.h"
#include "cachestat.h"
#include "cachestat.skel.h"

enum method { METHOD_AUTO, METHOD_TRACEPOINT, METHOD_FENTRY, METHOD_KPROBE };

static const char *const method_names[] = {
	[METHOD_AUTO] = "auto", [METHOD_TRACEPOINT] = "tracepoint",
	[METHOD_FENTRY] = "fentry", [METHOD_KPROBE] = "kprobe",
};

enum { KEY_METHOD = CLI_KEY_TOOL, KEY_TOP };

static struct env {
	enum method method;
	bool per_process;
	pid_t pid;
	unsigned int top;
	bool top_set;
} env = { .top = 20 };

static const struct argp_option options[] = {
	{ "method", KEY_METHOD, "METHOD", 0,
	  "How to count: tracepoint, fentry, kprobe (default: the first this kernel has)" },
	{ "pid", 'p', "PID", 0, "Count only this process's page-cache events" },
	{ "processes", 'P', NULL, 0, "A line per process, most page-cache lookups first (like cachetop)" },
	{ "top", KEY_TOP, "N", 0, "With -P, print at most N processes per interval (default 20; 0: all)" },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case KEY_METHOD:
		for (int m = METHOD_AUTO; m <= METHOD_KPROBE; m++)
			if (!strcmp(arg, method_names[m])) {
				env.method = m;
				return 0;
			}
		argp_error(state, "invalid method '%s': expected tracepoint, fentry or kprobe", arg);
		return EINVAL;
	case 'p':
		env.pid = cli__parse_pid(state, "PID", arg);
		break;
	case 'P':
		env.per_process = true;
		break;
	case KEY_TOP:
		env.top = cli__parse_ulong(state, "number of processes", arg, 0, 1000000);
		env.top_set = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct cli cli = {
	.name = "cachestat",
	.doc = "Count page cache hits and misses, every second by default.",
	.examples =
		"    cachestat             # a line every second until Ctrl-C\n"
		"    cachestat -T 5 12     # with the time, every 5 seconds, for a minute\n"
		"    cachestat --json 1 10 # JSON lines\n"
		"    cachestat -v --method kprobe   # force the kprobe method\n"
		"    cachestat -P 5        # top processes by page-cache lookups, every 5 s\n"
		"    cachestat -p 1234     # only process 1234\n"
		"    cachestat -P --prometheus 9100   # serve /metrics on localhost:9100\n",
	.options = options,
	.parser = parse_opt,
	.positional = CLI_POS_INTERVAL_COUNT,
	.flags = CLI_TIMESTAMP | CLI_PROMETHEUS,
};

/* Kernel functions that count each event, newest name first. */
struct target {
	const char *func;
	bool folio;		/* takes a folio rather than a page */
	int arg;		/* which argument it is */
};

/*
 * The functions that fire (or, before 6.11, would fire) the filemap
 * tracepoints, so that all methods count the same events: reads as the
 * range a read asks for, faults, fault-around windows, insertions and
 * dirtyings.
 */
static const struct target read_funcs[] = {
	{ "filemap_read", false, 0 }, { "generic_file_buffered_read", false, 0 }, {},
};
static const struct target fault_funcs[] = { { "filemap_fault", false, 0 }, {} };
static const struct target map_funcs[] = { { "filemap_map_pages", false, 0 }, {} };
static const struct target added_funcs[] = {
	{ "__filemap_add_folio", true, 1 }, { "filemap_add_folio", true, 1 },
	{ "add_to_page_cache_lru", false, 0 }, {},
};
static const struct target dirtied_funcs[] = {
	{ "folio_account_dirtied", true, 0 }, { "account_page_dirtied", false, 0 },
	{ "__folio_mark_dirty", true, 0 }, { "__set_page_dirty", false, 0 }, {},
};

enum { FN_READ, FN_FAULT, FN_MAP, FN_ADDED, FN_DIRTIED, NR_FN };

static const struct target *const fn_lists[NR_FN] = {
	read_funcs, fault_funcs, map_funcs, added_funcs, dirtied_funcs,
};

static const char *const tracepoints[] = {
	"mm_filemap_get_pages", "mm_filemap_map_pages", "mm_filemap_fault",
	"mm_filemap_add_to_page_cache", "writeback_dirty_folio",
};

static bool have_tracepoints(void)
{
	for (size_t i = 0; i < sizeof(tracepoints) / sizeof(tracepoints[0]); i++)
		if (!probe__tp_btf(tracepoints[i]))
			return false;
	return true;
}

static const struct target *find(const struct target *t, enum method m)
{
	for (; t->func; t++)
		if (m == METHOD_FENTRY ? probe__btf_func(t->func) : probe__kallsyms(t->func))
			return t;
	return NULL;
}

/* The functions of @m on this kernel; false (with the reason) if one is missing. */
static bool have_functions(enum method m, const struct target *out[NR_FN])
{
	for (int i = 0; i < NR_FN; i++) {
		out[i] = find(fn_lists[i], m);
		if (!out[i]) {
			pr_debug("%s: no %s in this kernel's %s", method_names[m], fn_lists[i]->func,
				 m == METHOD_FENTRY ? "BTF" : "kallsyms");
			return false;
		}
	}
	return true;
}

static enum method choose(const struct target *fn[NR_FN])
{
	switch (env.method) {
	case METHOD_TRACEPOINT:
		if (have_tracepoints())
			return METHOD_TRACEPOINT;
		pr_err("kernel has no filemap tracepoints (mm_filemap_get_pages and others, Linux 6.11+); "
		       "try --method fentry or --method kprobe");
		return METHOD_AUTO;
	case METHOD_FENTRY:
		if (!probe__fentry())
			pr_err("kernel refuses fentry programs; try --method kprobe%s",
			       have_tracepoints() ? " or --method tracepoint" : "");
		else if (have_functions(METHOD_FENTRY, fn))
			return METHOD_FENTRY;
		else
			pr_err("kernel has none of the page-cache functions fentry needs (-v says which)");
		return METHOD_AUTO;
	case METHOD_KPROBE:
		if (!probe__kprobe())
			pr_err("kernel has no kprobes (CONFIG_KPROBE_EVENTS)%s",
			       have_tracepoints() ? "; try --method tracepoint" : "");
		else if (have_functions(METHOD_KPROBE, fn))
			return METHOD_KPROBE;
		else
			pr_err("kernel has none of the page-cache functions to kprobe (-v says which)");
		return METHOD_AUTO;
	case METHOD_AUTO:
		break;
	}
	if (have_tracepoints())
		return METHOD_TRACEPOINT;
	if (probe__fentry() && have_functions(METHOD_FENTRY, fn)) {
		pr_debug("kernel has no filemap tracepoints; using fentry");
		return METHOD_FENTRY;
	}
	if (probe__kprobe() && have_functions(METHOD_KPROBE, fn)) {
		pr_debug("kernel has no filemap tracepoints and no usable fentry; using kprobes");
		return METHOD_KPROBE;
	}
	pr_err("kernel has no filemap tracepoints, no fentry support and no kprobes: "
	       "nothing to count page-cache events with");
	return METHOD_AUTO;
}

static struct bpf_program *fentry_prog(struct cachestat_bpf *obj, int i)
{
	struct bpf_program *progs[NR_FN] = {
		obj->progs.cachestat_fentry_read, obj->progs.cachestat_fentry_fault,
		obj->progs.cachestat_fentry_map_pages, obj->progs.cachestat_fentry_added,
		obj->progs.cachestat_fentry_dirtied,
	};

	return progs[i];
}

static int configure(struct cachestat_bpf *obj, enum method m, const struct target *fn[NR_FN])
{
	struct bpf_program *prog;
	int err;

	obj->rodata->page_shift = __builtin_ctz(sysconf(_SC_PAGESIZE));
	obj->rodata->per_process = env.per_process;
	obj->rodata->target_tgid = env.pid;
	if (!env.per_process)
		bpf_map__set_max_entries(obj->maps.procs, 1);

	bpf_object__for_each_program(prog, obj->obj) {
		const char *name = bpf_program__name(prog);
		bool on = m == METHOD_FENTRY ? strstr(name, "_fentry_") != NULL :
			  m == METHOD_KPROBE ? strstr(name, "_kprobe_") != NULL :
			  !strstr(name, "_fentry_") && !strstr(name, "_kprobe_");

		/* Renaming processes at exec: any method, -P only. */
		if (!strcmp(name, "cachestat_exec"))
			on = env.per_process && probe__tp_btf("sched_process_exec");
		bpf_program__set_autoload(prog, on);
		if (m == METHOD_KPROBE && strcmp(name, "cachestat_exec"))
			bpf_program__set_autoattach(prog, false);
	}
	if (m == METHOD_TRACEPOINT) {
		pr_debug("counting with the filemap and writeback tracepoints (tp_btf)");
		return 0;
	}
	/* Only the tracepoints keep state with the task: 5.10 could not create the map. */
	bpf_map__set_autocreate(obj->maps.lookups, false);
	obj->rodata->added_folio = fn[FN_ADDED]->folio;
	obj->rodata->added_arg = fn[FN_ADDED]->arg;
	obj->rodata->dirtied_folio = fn[FN_DIRTIED]->folio;
	pr_debug("counting with %s on %s, %s, %s, %s and %s", method_names[m],
		 fn[FN_READ]->func, fn[FN_FAULT]->func, fn[FN_MAP]->func, fn[FN_ADDED]->func,
		 fn[FN_DIRTIED]->func);
	if (m == METHOD_FENTRY) {
		for (int i = 0; i < NR_FN; i++) {
			err = bpf_program__set_attach_target(fentry_prog(obj, i), 0, fn[i]->func);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Each function gets exactly one probe, so no event is counted twice. */
static int attach_kprobes(struct cachestat_bpf *obj, const struct target *fn[NR_FN])
{
	struct bpf_program *progs[NR_FN] = {
		obj->progs.cachestat_kprobe_read, obj->progs.cachestat_kprobe_fault,
		obj->progs.cachestat_kprobe_map_pages, obj->progs.cachestat_kprobe_added,
		obj->progs.cachestat_kprobe_dirtied,
	};
	struct bpf_link **links[NR_FN] = {
		&obj->links.cachestat_kprobe_read, &obj->links.cachestat_kprobe_fault,
		&obj->links.cachestat_kprobe_map_pages, &obj->links.cachestat_kprobe_added,
		&obj->links.cachestat_kprobe_dirtied,
	};

	for (int i = 0; i < NR_FN; i++) {
		*links[i] = bpf_program__attach_kprobe(progs[i], false, fn[i]->func);
		if (!*links[i]) {
			int err = -errno;

			pr_err("cannot attach a kprobe to %s: %s", fn[i]->func, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int read_meminfo(unsigned long long *buffers_kb, unsigned long long *cached_kb)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	*buffers_kb = *cached_kb = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "Buffers: %llu kB", buffers_kb);
		sscanf(line, "Cached: %llu kB", cached_kb);
	}
	fclose(f);
	return 0;
}

static int take_counts(struct cachestat_bpf *obj, struct cachestat_counts *sum)
{
	int ncpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(obj->maps.counts);
	struct cachestat_counts *percpu = calloc(ncpus, sizeof(*percpu));
	__u32 zero = 0;
	int err = 0;

	if (!percpu)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(fd, &zero, percpu)) {
		err = -errno;
	} else {
		for (int i = 0; i < ncpus; i++) {
			sum->accessed += percpu[i].accessed;
			sum->added += percpu[i].added;
			sum->dirtied += percpu[i].dirtied;
		}
		memset(percpu, 0, ncpus * sizeof(*percpu));
		if (bpf_map_update_elem(fd, &zero, percpu, BPF_ANY))
			err = -errno;
	}
	free(percpu);
	return err;
}

static void print_header(void)
{
	/* With --json, on stderr: something to wait for that is not JSON. */
	if (cli.prometheus || cli.json) {
		run__banner(&cli, "Tracing page cache lookups%s... Hit Ctrl-C to end.",
			    env.per_process && !cli.prometheus ? " per process" : "");
		return;
	}
	if (env.per_process) {
		printf("Tracing page cache lookups per process... Hit Ctrl-C to end.\n");
	} else {
		if (cli.timestamp)
			printf("%-8s ", "TIME");
		printf("%8s %8s %8s %8s %12s %10s\n", "HITS", "MISSES", "DIRTIES", "HITRATIO",
		       "BUFFERS_MB", "CACHED_MB");
	}
	/* The header says "attached": do not let a pipe's buffer hold it back. */
	fflush(stdout);
}

struct verdict {
	long long hits, misses;
	double ratio;
};

/*
 * bcc's arithmetic: a page added for a write is not a read miss, so dirtied
 * pages come off the insertions; every lookup not a miss hit.
 */
static struct verdict judge(const struct cachestat_counts *c)
{
	struct verdict v;

	v.misses = (long long)c->added - (long long)c->dirtied;
	if (v.misses < 0)
		v.misses = 0;
	v.hits = (long long)c->accessed - v.misses;
	if (v.hits < 0)
		v.hits = 0;
	v.ratio = v.hits + v.misses ? 100.0 * v.hits / (v.hits + v.misses) : 0;
	return v;
}

static void json_time(struct json *j, const struct report_info *info)
{
	char t[16];
	FILE *m;

	if (!cli.timestamp)
		return;
	m = fmemopen(t, sizeof(t), "w");
	run__print_time(m, info->when);
	fclose(m);
	json__str(j, "time", t);
}

static void json_counts(struct json *j, const struct cachestat_counts *c)
{
	struct verdict v = judge(c);

	json__i64(j, "hits", v.hits);
	json__i64(j, "misses", v.misses);
	json__u64(j, "dirties", c->dirtied);
	json__double(j, "hitratio", v.ratio);
}

static int report_total(struct cachestat_bpf *obj, const struct report_info *info)
{
	unsigned long long buffers, cached;
	struct cachestat_counts c;
	struct verdict v;
	int err;

	err = take_counts(obj, &c);
	if (err)
		return err;
	read_meminfo(&buffers, &cached);
	v = judge(&c);

	if (cli.json) {
		struct json j;

		json__begin_line(&j, stdout);
		json_time(&j, info);
		json_counts(&j, &c);
		json__u64(&j, "buffers_mb", buffers / 1024);
		json__u64(&j, "cached_mb", cached / 1024);
		json__u64(&j, "accessed", c.accessed);
		json__u64(&j, "added", c.added);
		json__end_line(&j);
		return 0;
	}
	if (cli.timestamp) {
		run__print_time(stdout, info->when);
		putchar(' ');
	}
	printf("%8lld %8lld %8llu %7.2f%% %12llu %10llu\n", v.hits, v.misses,
	       (unsigned long long)c.dirtied, v.ratio, buffers / 1024, cached / 1024);
	return 0;
}

struct proc_row {
	__u32 pid;
	struct cachestat_proc p;
};

static int cmp_rows(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	if (x->p.c.accessed != y->p.c.accessed)
		return x->p.c.accessed < y->p.c.accessed ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Each process's counts since the last report, taken out of the map, busiest first. */
static ssize_t take_rows(struct cachestat_bpf *obj, struct proc_row **out)
{
	int fd = bpf_map__fd(obj->maps.procs);
	size_t n = 0, cap = bpf_map__max_entries(obj->maps.procs);
	struct proc_row *rows = calloc(cap, sizeof(*rows));
	__u32 key, *prev = NULL;

	if (!rows)
		return -ENOMEM;
	while (n < cap && !bpf_map_get_next_key(fd, prev, &key)) {
		rows[n].pid = key;
		if (!bpf_map_lookup_elem(fd, &key, &rows[n].p))
			n++;
		prev = &rows[n ? n - 1 : 0].pid;
	}
	for (size_t i = 0; i < n; i++) {
		char comm[TASK_COMM_LEN];

		bpf_map_delete_elem(fd, &rows[i].pid);
		/*
		 * The kernel side names a process at its first event, which
		 * for a new one is often before its exec; prefer its name now.
		 */
		if (proc__exists(rows[i].pid)) {
			proc__comm(rows[i].pid, comm, sizeof(comm));
			if (comm[0] != '[')
				memcpy(rows[i].p.comm, comm, sizeof(comm));
		}
	}
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_rows);
	*out = rows;
	return n;
}

/* -P: a line per process, like bcc's cachetop but in scrolling output. */
static int report_processes(struct cachestat_bpf *obj, const struct report_info *info)
{
	struct proc_row *rows;
	ssize_t n = take_rows(obj, &rows);

	if (n < 0)
		return n;
	if (env.top && (size_t)n > env.top)
		n = env.top;

	if (!cli.json) {
		putchar('\n');
		if (cli.timestamp) {
			run__print_time(stdout, info->when);
			putchar('\n');
		}
		printf("%7s %-16s %8s %8s %8s %8s\n", "PID", "COMM", "HITS", "MISSES", "DIRTIES",
		       "HITRATIO");
	}
	for (ssize_t i = 0; i < n; i++) {
		const struct cachestat_counts *c = &rows[i].p.c;
		struct verdict v = judge(c);
		char comm[4 * sizeof(rows[i].p.comm) + 1];

		if (cli.json) {
			struct json j;

			json__begin_line(&j, stdout);
			json_time(&j, info);
			json__u64(&j, "pid", rows[i].pid);
			json__str(&j, "comm", rows[i].p.comm);
			json_counts(&j, c);
			json__u64(&j, "accessed", c->accessed);
			json__u64(&j, "added", c->added);
			json__end_line(&j);
			continue;
		}
		escape__format(comm, sizeof(comm), rows[i].p.comm, ESCAPE_TEXT);
		printf("%7u %-16s %8lld %8lld %8llu %7.2f%%\n", rows[i].pid, comm,
		       v.hits, v.misses, (unsigned long long)c->dirtied, v.ratio);
	}
	free(rows);
	return 0;
}

/* Raw counts, whose rates give bcc's verdicts: hits and misses do not add up across intervals. */
static void prom_counts(const struct label *l, int nl, const struct cachestat_counts *c)
{
	prom__add_counter("lookups_total", "Page cache lookups by reads and faults "
			  "(mm_filemap_get_pages, mm_filemap_map_pages, mm_filemap_fault or the "
			  "functions that fire them)", l, nl, c->accessed);
	prom__add_counter("additions_total", "Pages added to the page cache: read misses, "
			  "and pages new to a write (mm_filemap_add_to_page_cache or "
			  "__filemap_add_folio)", l, nl, c->added);
	prom__add_counter("dirtied_total", "Pages newly dirtied (writeback_dirty_folio or "
			  "folio_account_dirtied)", l, nl, c->dirtied);
}

static int report_prom(struct cachestat_bpf *obj)
{
	struct cachestat_counts c;
	struct proc_row *rows;
	ssize_t n;
	int err;

	prom__lost("processes_dropped_full_map", obj->bss->lost_procs);
	if (!env.per_process) {
		err = take_counts(obj, &c);
		if (!err)
			prom_counts(NULL, 0, &c);
		return err;
	}
	n = take_rows(obj, &rows);
	if (n < 0)
		return n;
	for (ssize_t i = 0; i < n; i++) {
		struct label l[2] = {
			{ "pid", NULL, rows[i].pid },
			{ "comm", rows[i].p.comm },
		};

		prom_counts(l, 2, &rows[i].p.c);
	}
	free(rows);
	return 0;
}

static int report(void *ctx, const struct report_info *info)
{
	if (prom__active())
		return report_prom(ctx);
	return env.per_process ? report_processes(ctx, info) : report_total(ctx, info);
}

int main(int argc, char **argv)
{
	const struct target *fn[NR_FN] = {};
	struct cachestat_bpf *obj;
	enum method m;
	struct run run;
	int err;

	cli__parse(&cli, argc, argv);
	if (!env.per_process)
		tool__warn_ignored("without -P there are no per-process lines",
				   env.top_set ? "--top" : NULL);
	else if (cli.prometheus)
		tool__warn_ignored("--prometheus serves every process's counts",
				   env.top_set ? "--top" : NULL);
	if (!cli.interval)
		cli.interval = 1;	/* bcc prints every second by default */
	if (tool__check_host())
		return EXIT_RUNTIME;
	if (tool__target(env.pid, false))
		return EXIT_RUNTIME;
	m = choose(fn);
	if (m == METHOD_AUTO)
		return EXIT_RUNTIME;

	obj = cachestat_bpf__open();
	if (!obj) {
		tool__report_bpf_error("open BPF object", -errno);
		return EXIT_RUNTIME;
	}
	err = configure(obj, m, fn);
	if (!err)
		err = tool__load(obj->skeleton);
	if (!err)
		err = tool__attach(obj->skeleton);
	if (!err && m == METHOD_KPROBE)
		err = attach_kprobes(obj, fn);
	if (err)
		goto out;

	print_header();
	run__init(&run, &cli);
	run.report = report;
	run.reads = "counters";
	run.ctx = obj;
	err = run__loop(&run);
	if (obj->bss->lost_procs)
		pr_warn("%llu events of processes not counted: more than %u processes (-P)",
			(unsigned long long)obj->bss->lost_procs,
			bpf_map__max_entries(obj->maps.procs));
out:
	cachestat_bpf__destroy(obj);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
