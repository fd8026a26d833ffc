// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* funclatency: time kernel or user-space functions and print their latency, like bcc's funclatency. */
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "container.h"
#include "cli.h"
#include "ksyms.h"
#include "maps.h"
#include "procmaps.h"
#include "probe.h"
#include "prom.h"
#include "report.h"
#include "run.h"
#include "tool.h"
#include "uprobes.h"
#include "funclatency.h"
#include "funclatency.skel.h"
#include "funclatency.legacy.h"

#define MAX_PROBES 1000	/* functions one pattern may attach to, as bcc */

enum method { METHOD_AUTO, METHOD_FENTRY, METHOD_KPROBE_MULTI, METHOD_KPROBE };
enum { KEY_METHOD = CLI_KEY_TOOL };

static const char *const method_names[] = {
	[METHOD_AUTO] = "auto", [METHOD_FENTRY] = "fentry",
	[METHOD_KPROBE_MULTI] = "kprobe-multi", [METHOD_KPROBE] = "kprobe",
};

static struct env {
	const char *pattern;
	const char *unit;
	__u64 unit_ns;
	bool per_function, regex;
	pid_t pid;
	const char *cgroup;
	unsigned int level;
	enum method method;
	bool kprobes_given, method_given;	/* -k, --method: for kernel functions only */
} env = { .unit = "nsecs", .unit_ns = 1, .level = FUNC_MAX_DEPTH };

static struct cli cli;

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Trace this process only" },
	{ "interval", 'i', "SECONDS", 0, "Print a summary every SECONDS" },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS" },
	{ "microseconds", 'u', NULL, 0, "Microsecond histogram" },
	{ "milliseconds", 'm', NULL, 0, "Millisecond histogram" },
	{ "function", 'F', NULL, 0, "Print a histogram per function" },
	{ "regexp", 'r', NULL, 0, "PATTERN is a regular expression (else a shell wildcard)" },
	{ "cgroup", 'c', "PATH|ID", 0,
	  "Trace tasks in this cgroup v2 only (or a container's, by its id)" },
	{ "level", 'l', "LEVEL", 0, "Time nested or recursive calls up to LEVEL deep (1-32)" },
	{ "kprobes", 'k', NULL, 0, "Use kprobes for kernel functions, not fentry" },
	{ "method", KEY_METHOD, "METHOD", 0,
	  "Kernel functions: fentry, kprobe-multi or kprobe (default: the best available)" },
	{},
};

/*
 * A malformed pattern is a usage error, found before root, the pid or
 * anything else is checked; options for kernel functions beside a user-space
 * one are said to be ignored.
 */
static void check_pattern(struct argp_state *state)
{
	const char *colon = strchr(env.pattern, ':'), *pattern = colon ? colon + 1 : env.pattern;
	regex_t re;

	if (colon && (colon == env.pattern || !*pattern))
		argp_error(state, "'%s': expected LIB:PATTERN, e.g. c:read", env.pattern);
	if (colon)
		tool__warn_ignored("LIB:PATTERN names user-space functions, traced by uprobes",
				   env.kprobes_given ? "-k" : NULL,
				   env.method_given ? "--method" : NULL);
	if (!env.regex)
		return;
	if (uprobes__regcomp(&re, pattern))
		argp_error(state, "invalid regular expression '%s'", pattern);
	regfree(&re);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p': env.pid = cli__parse_pid(state, "PID", arg); break;
	case 'i': cli.interval = cli__parse_seconds(state, "interval", arg); break;
	case 'd': cli.duration = cli__parse_seconds(state, "duration", arg); break;
	case 'u':
	case 'm':
		if (env.unit_ns != 1 && env.unit_ns != (key == 'u' ? 1000 : 1000000))
			argp_error(state, "-u and -m: choose one unit");
		env.unit = key == 'u' ? "usecs" : "msecs";
		env.unit_ns = key == 'u' ? 1000 : 1000000;
		break;
	case 'F': env.per_function = true; break;
	case 'r': env.regex = true; break;
	case 'c': env.cgroup = cli__parse_cgroup(state, "-c", arg); break;
	case 'l': env.level = cli__parse_ulong(state, "level", arg, 1, FUNC_MAX_DEPTH); break;
	case 'k':
		env.method = METHOD_KPROBE;
		env.kprobes_given = true;
		break;
	case KEY_METHOD:
		for (int m = METHOD_FENTRY; m <= METHOD_KPROBE; m++)
			if (!strcmp(arg, method_names[m])) {
				env.method = m;
				env.method_given = true;
				return 0;
			}
		argp_error(state, "invalid method '%s': expected fentry, kprobe-multi or kprobe", arg);
		break;
	case ARGP_KEY_ARG:
		if (env.pattern)
			argp_error(state, "one pattern only: unexpected '%s'", arg);
		env.pattern = arg;
		break;
	case ARGP_KEY_END:
		if (!env.pattern)
			argp_error(state, "a function pattern is required");
		check_pattern(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct cli cli = {
	.name = "funclatency",
	.doc = "Time functions and print their latency as a histogram.",
	.args_doc = "[LIB:]PATTERN",
	.examples =
		"    funclatency do_sys_open        # kernel function\n"
		"    funclatency -u vfs_read        # microseconds\n"
		"    funclatency c:read             # libc's read()\n"
		"    funclatency -p 181 pthread:*mutex*   # in one process, a wildcard\n"
		"    funclatency -F '/usr/bin/app:handle_*'   # a histogram per function\n"
		"    funclatency -r 'c:^(read|write)$' -i 1 -d 10\n"
		"    funclatency -F --prometheus 9100 'vfs_*'   # serve /metrics on localhost:9100\n",
	.options = options,
	.parser = parse_opt,
	.positional = CLI_POS_NONE,
	.flags = CLI_TIMESTAMP | CLI_PERCENTILES | CLI_PROMETHEUS,
};

struct target {
	struct funclatency_bpf *obj;
	char **names;		/* by cookie */
	size_t n;
	enum method method;	/* for kernel functions */
	struct bpf_link **links;
	size_t nlinks;
	/* User functions: found before the programs load, which depend on them being Go's. */
	struct uprobe_func *funcs;
	ssize_t nfuncs;
	bool go;
	int fd;
	char path[PATH_MAX];
};

static int add_link(struct target *t, struct bpf_link *link)
{
	struct bpf_link **l;

	if (!link)
		return -errno;
	l = realloc(t->links, (t->nlinks + 1) * sizeof(*l));
	if (!l) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	t->links = l;
	t->links[t->nlinks++] = link;
	return 0;
}

/* The functions of @lib that @pattern names: a Go binary's from its own table. */
static int resolve_user(struct target *t, const char *lib, const char *pattern)
{
	const char *path = t->path, *why = NULL;
	ssize_t n;

	t->fd = uprobes__open(lib, env.pid, t->path, sizeof(t->path));
	if (t->fd == -EINVAL) {
		pr_err("%s is not a regular file", lib);
		return t->fd;
	}
	if (t->fd < 0 && strchr(lib, '/')) {
		pr_err("%s: %s%s", lib, strerror(-t->fd),
		       env.pid ? " (as the process sees its file system)" : "");
		return t->fd;
	}
	if (t->fd < 0) {
		pr_err("library '%s' not found%s", lib,
		       env.pid ? " in the process's maps or its /etc/ld.so.cache" :
				 " in /etc/ld.so.cache or the library directories");
		return t->fd;
	}
	t->go = uprobes__is_go(t->fd);
	if (t->go)
		n = uprobes__find_go(t->fd, pattern, env.regex, MAX_PROBES, &t->funcs, &why);
	else
		n = uprobes__find(t->fd, pattern, env.regex, MAX_PROBES, &t->funcs);
	/*
	 * Since glibc 2.34 libpthread is an empty stub and its functions
	 * (pthread_mutex_lock...) are libc's: bcc's pthread:*mutex* finds them there.
	 */
	if (n == -ENOENT && !strncmp(basename(t->path), "libpthread.so", 13)) {
		char libc[PATH_MAX];
		int fd = uprobes__open("c", env.pid, libc, sizeof(libc));

		if (fd >= 0 && (n = uprobes__find(fd, pattern, env.regex, MAX_PROBES,
						 &t->funcs)) > 0) {
			pr_debug("%s has no '%s': glibc 2.34 moved them into %s", t->path, pattern,
				 libc);
			close(t->fd);
			t->fd = fd;
			memcpy(t->path, libc, sizeof(libc));
		} else {
			if (fd >= 0)
				close(fd);
			n = -ENOENT;
		}
	}
	if (n == -ENOENT)
		pr_err("no function matches '%s' in %s", pattern, path);
	else if (n == -E2BIG)
		pr_err("'%s' matches more than %d functions in %s: narrow the pattern", pattern,
		       MAX_PROBES, path);
	else if (n == -EINVAL)
		pr_err("invalid regular expression '%s'", pattern);
	else if (n == -ENOEXEC)
		pr_err("%s is not an ELF file", path);
	else if (n == -ENOTSUP)
		pr_err("%s: %s", path, why);
	else if (n == -EILSEQ)
		pr_err("%s: %s could not be disassembled whole: its returns are not all known", path,
		       why);
	else if (t->go && n < 0)
		pr_err("%s: Go symbol table not read: %s", path,
		       why ? why : n == -EBADMSG ? "malformed" : strerror(-n));
	else if (n < 0)
		pr_err("cannot read %s: %s", path, strerror(-n));
	if (n < 0)
		return n;
	t->nfuncs = n;
	t->names = calloc(n, sizeof(*t->names));
	return t->names ? 0 : -ENOMEM;
}

/*
 * A uprobe at each function's entry, and a uretprobe or, in Go, a uprobe
 * at each of its return instructions.
 */
static int attach_user(struct target *t)
{
	struct bpf_program *entry = t->go ? t->obj->progs.funclatency_go_entry :
					    t->obj->progs.funclatency_entry;
	pid_t pid = env.pid ? env.pid : -1;
	char fdpath[64];
	int err = 0;

	/* The very file opened and checked above, whatever its path names by now. */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", t->fd);
	for (ssize_t i = 0; i < t->nfuncs && !err; i++) {
		const struct uprobe_func *f = &t->funcs[i];
		/* The BPF for kernels before 5.17 reads no cookie: it goes by address. */
		__u64 cookie = tool__legacy_bpf() ? 0 : i;
		LIBBPF_OPTS(bpf_uprobe_opts, at_entry, .bpf_cookie = cookie);
		LIBBPF_OPTS(bpf_uprobe_opts, at_ret, .bpf_cookie = cookie, .retprobe = !t->go);

		t->names[t->n++] = strdup(f->name);
		if (t->go)
			pr_debug("uprobes on %s:%s: its entry (file offset 0x%llx) and %zu returns",
				 t->path, f->name, (unsigned long long)f->offset, f->nrets);
		else
			pr_debug("uprobe and uretprobe on %s:%s (file offset 0x%llx)", t->path,
				 f->name, (unsigned long long)f->offset);
		err = add_link(t, bpf_program__attach_uprobe_opts(entry, pid, fdpath, f->offset,
								  &at_entry));
		if (!t->go && !err)
			err = add_link(t, bpf_program__attach_uprobe_opts(
					t->obj->progs.funclatency_return, pid, fdpath, f->offset,
					&at_ret));
		for (size_t k = 0; t->go && k < f->nrets && !err; k++)
			err = add_link(t, bpf_program__attach_uprobe_opts(
					t->obj->progs.funclatency_go_return, pid, fdpath, f->rets[k],
					&at_ret));
		if (err)
			pr_err("cannot attach a uprobe to %s:%s: %s", t->path, f->name,
			       strerror(-err));
	}
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The BPF for kernels before 5.17 (no bpf_loop) reads no attach cookie,
 * which 5.10 lacks, so for -F it knows a function by the address its probe
 * fires at, also on 5.15 and 5.16, which have cookies: these are the
 * addresses, each with its function's number. How many there will be,
 * before load; a user function's addresses are its process's (-p).
 */
static size_t fids_needed(const struct target *t)
{
	size_t n = 0;

	if (!env.per_function || !tool__legacy_bpf())
		return 0;
	if (t->nfuncs <= 0)
		return 2 * t->n;	/* kernel: the entry and, on x86, one byte in */
	for (ssize_t i = 0; i < t->nfuncs; i++)
		n += 1 + (t->go ? t->funcs[i].nrets : 0);
	return n;
}

static int put_fid(int fd, __u64 addr, __u32 fid)
{
	return bpf_map_update_elem(fd, &addr, &fid, BPF_ANY) ? -errno : 0;
}

/* Kernel functions' addresses, from kallsyms. */
static int fill_kernel_fids(const struct target *t, int fd)
{
	char line[512], **name;
	struct ksym_line l;
	size_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	int err = 0;

	if (!f)
		return -errno;
	/* t->names is sorted: each kallsyms line is one bsearch. */
	while (!err && fgets(line, sizeof(line), f)) {
		char *key = l.name;

		if (ksyms__parse_line(line, &l) || !ksyms__is_text(l.type))
			continue;
		name = bsearch(&key, t->names, t->n, sizeof(*t->names), cmp_str);
		if (!name)
			continue;
		/* An int3 kprobe, or one on ftrace, fires with ip one byte past the entry on x86. */
		err = put_fid(fd, l.addr, name - t->names);
#if defined(__x86_64__)
		if (!err)
			err = put_fid(fd, l.addr + 1, name - t->names);
#endif
		found++;
	}
	fclose(f);
	if (!err && !found)
		err = -ENOENT;
	return err;
}

/* User functions' addresses in process -p: where its maps put their file offsets. */
static int fill_user_fids(const struct target *t, int fd)
{
	char path[64], line[4096];
	struct maps_entry e;
	struct stat st;
	int err = 0;
	FILE *f;

	if (fstat(t->fd, &st))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", env.pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		if (procmaps__parse_line(line, &e) || !e.exec || e.inode != st.st_ino ||
		    makedev(e.dev_major, e.dev_minor) != st.st_dev)
			continue;
		for (ssize_t i = 0; i < t->nfuncs && !err; i++) {
			const struct uprobe_func *fn = &t->funcs[i];

			if (fn->offset >= e.pgoff && fn->offset - e.pgoff < e.end - e.start)
				err = put_fid(fd, e.start + fn->offset - e.pgoff, i);
			for (size_t k = 0; t->go && k < fn->nrets && !err; k++)
				if (fn->rets[k] >= e.pgoff && fn->rets[k] - e.pgoff < e.end - e.start)
					err = put_fid(fd, e.start + fn->rets[k] - e.pgoff, i);
		}
	}
	fclose(f);
	return err;
}

/*
 * Where kernel function names come from: ftrace's list of the functions it
 * can hook (what kprobe.multi and kprobes attach to without surprises), or,
 * without tracefs, kallsyms' text symbols.
 */
static FILE *open_kernel_funcs(bool *kallsyms)
{
	const char *dir = probe__tracefs();
	char path[128];
	FILE *f;

	if (dir) {
		snprintf(path, sizeof(path), "%s/available_filter_functions", dir);
		f = fopen(path, "r");
		*kallsyms = false;
		if (f)
			return f;
	}
	*kallsyms = true;
	return fopen("/proc/kallsyms", "r");
}

/* Kernel functions matching the pattern, sorted, each name once. */
static ssize_t kernel_matches(const char *pattern, char ***out)
{
	char line[512], name[256], **names = NULL;
	size_t n = 0, cap = 0, uniq = 0;
	bool kallsyms;
	regex_t re;
	FILE *f;

	if (env.regex && uprobes__regcomp(&re, pattern))
		return -EINVAL;
	f = open_kernel_funcs(&kallsyms);
	while (f && fgets(line, sizeof(line), f)) {
		struct ksym_line l;

		/* "name [module]" in ftrace's list, "addr type name [module]" in kallsyms. */
		if (kallsyms) {
			if (ksyms__parse_line(line, &l) || (l.type != 't' && l.type != 'T'))
				continue;
			snprintf(name, sizeof(name), "%s", l.name);
		} else if (sscanf(line, "%255s", name) != 1) {
			continue;
		}
		/* .isra/.constprop/.cold copies: no BTF, and not what anyone asks for. */
		if (strchr(name, '.') ||
		    (env.regex ? regexec(&re, name, 0, NULL, 0) : fnmatch(pattern, name, 0)))
			continue;
		/* Static functions can share a name: collect generously, dedupe below. */
		if (n == 4 * MAX_PROBES)
			break;
		if (n == cap) {
			char **t;

			cap = cap ? cap * 2 : 16;
			t = realloc(names, cap * sizeof(*names));
			if (!t)
				break;
			names = t;
		}
		if (!(names[n] = strdup(name)))
			break;
		n++;
	}
	if (f)
		fclose(f);
	if (env.regex)
		regfree(&re);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (uniq && !strcmp(names[uniq - 1], names[i]))
			free(names[i]);
		else
			names[uniq++] = names[i];
	}
	if (uniq > MAX_PROBES) {
		for (size_t i = 0; i < uniq; i++)
			free(names[i]);
		free(names);
		return -E2BIG;
	}
	*out = names;
	return (ssize_t)uniq;
}

static enum method choose_kernel_method(size_t n, const char *first)
{
	bool fentry = probe__fentry() && probe__btf_func(first);

	switch (env.method) {
	case METHOD_FENTRY:
		if (n > 1)
			pr_err("fentry attaches one function; '%s' matches %zu (use --method "
			       "kprobe-multi or kprobe)", env.pattern, n);
		else if (!fentry)
			pr_err("kernel refuses fentry programs (or %s has no BTF): try --method kprobe",
			       first);
		else
			return METHOD_FENTRY;
		return METHOD_AUTO;
	case METHOD_KPROBE_MULTI:
		if (probe__kprobe_multi())
			return METHOD_KPROBE_MULTI;
		pr_err("kernel has no kprobe.multi (Linux 5.18+ built with CONFIG_FPROBE): "
		       "try --method kprobe");
		return METHOD_AUTO;
	case METHOD_KPROBE:
		if (probe__kprobe())
			return METHOD_KPROBE;
		pr_err("kernel has no kprobes (CONFIG_KPROBE_EVENTS)");
		return METHOD_AUTO;
	case METHOD_AUTO:
		break;
	}
	if (n == 1 && fentry)
		return METHOD_FENTRY;
	if (n > 1 && probe__kprobe_multi())
		return METHOD_KPROBE_MULTI;
	if (probe__kprobe())
		return METHOD_KPROBE;
	if (fentry)
		pr_err("'%s' matches %zu functions: fentry attaches one, and this kernel has no "
		       "kprobes for the rest", env.pattern, n);
	else if (probe__fentry())
		pr_err("%s has no BTF, so fentry cannot attach to it, and this kernel has no "
		       "kprobes", first);
	else
		pr_err("kernel has no kprobes and refuses fentry: cannot trace kernel functions "
		       "such as '%s' (user-space functions, LIB:FUNC, still work)", first);
	return METHOD_AUTO;
}

/*
 * Finds the kernel functions matching @pattern and picks how to attach to
 * them; before load, since which programs load depends on it.
 */
static int resolve_kernel(struct target *t, const char *pattern)
{
	ssize_t n;

	n = kernel_matches(pattern, &t->names);
	if (n == -EINVAL) {
		pr_err("invalid regular expression '%s'", pattern);
		return n;
	}
	if (n > 0)
		t->n = n;
	if (n == -E2BIG) {
		pr_err("'%s' matches more than %d kernel functions: narrow the pattern", pattern,
		       MAX_PROBES);
		return n;
	}
	if (n <= 0) {
		pr_err("no function matches '%s' in the kernel", pattern);
		return n ? n : -ENOENT;
	}
	t->method = choose_kernel_method(n, t->names[0]);
	if (t->method == METHOD_AUTO)
		return -ENOTSUP;
	pr_debug("attaching to %zd kernel function%s with %s", n, n > 1 ? "s" : "",
		 method_names[t->method]);
	return 0;
}

/* Attaches the loaded kprobe or kprobe.multi programs to t->names. */
static int attach_kernel(struct target *t)
{
	struct funclatency_bpf *obj = t->obj;
	size_t n = t->n;
	int err = 0;

	if (t->method == METHOD_KPROBE_MULTI) {
		__u64 *cookies = calloc(n, sizeof(*cookies));

		if (!cookies)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			cookies[i] = i;
		LIBBPF_OPTS(bpf_kprobe_multi_opts, entry, .syms = (const char **)t->names,
			    .cnt = n, .cookies = cookies);
		LIBBPF_OPTS(bpf_kprobe_multi_opts, ret, .syms = (const char **)t->names, .cnt = n,
			    .cookies = cookies, .retprobe = true);
		err = add_link(t, bpf_program__attach_kprobe_multi_opts(
					obj->progs.funclatency_multi_entry, NULL, &entry));
		if (!err)
			err = add_link(t, bpf_program__attach_kprobe_multi_opts(
						obj->progs.funclatency_multi_return, NULL, &ret));
		free(cookies);
		if (err)
			pr_err("cannot attach kprobe.multi to %zu functions: %s", n, strerror(-err));
		return err;
	}
	for (size_t i = 0; i < n && !err; i++) {
		__u64 cookie = tool__legacy_bpf() ? 0 : i;
		LIBBPF_OPTS(bpf_kprobe_opts, entry, .bpf_cookie = cookie);
		LIBBPF_OPTS(bpf_kprobe_opts, ret, .bpf_cookie = cookie, .retprobe = true);

		err = add_link(t, bpf_program__attach_kprobe_opts(obj->progs.funclatency_entry,
								  t->names[i], &entry));
		if (!err)
			err = add_link(t, bpf_program__attach_kprobe_opts(
						obj->progs.funclatency_return, t->names[i], &ret));
		if (err)
			pr_err("cannot attach a kprobe to %s: %s", t->names[i], strerror(-err));
	}
	return err;
}

/* The single histogram's sums at the last report (map__take_percpu_hist). */
static struct hist taken;
/* Calls timed so far, of all reports: none says the kernel reported no returns. */
static unsigned long long timed;

static void count_timed(const struct hist *h)
{
	for (int i = 0; i < HIST_SLOTS; i++)
		timed += h->slots[i];
}
/* The histograms by function (SWAPPED_HASH). */
static struct swapped hist_by;

static int report(void *ctx, const struct report_info *info)
{
	struct target *t = ctx;
	struct hist_report r = {
		.cli = &cli, .when = info->when, .unit = env.unit, .summary = true,
		.metric = "call_seconds",
		.help = "Time from a function's entry to its return (fentry and fexit, kprobes "
			"and kretprobes, or uprobes and uretprobes), by function or by the "
			"pattern given",
	};
	struct label pattern = { "function", env.pattern };
	struct rec {
		__u32 key;
		struct hist h;
	} *all;
	struct hist total;
	ssize_t n;
	int err;

	report__begin(&cli, info->when);
	if (prom__active()) {
		prom__lost("calls_untimed_too_deep", t->obj->bss->too_deep);
		prom__lost("calls_untimed_no_return", t->obj->bss->unreturned);
		prom__lost("calls_untimed_no_task_storage", t->obj->bss->lost_stacks);
		prom__lost("calls_dropped_histograms_full", t->obj->bss->lost_hists);
		prom__lost("go_calls_untimed_goroutine_unread", t->obj->bss->go_unread);
		prom__lost("go_calls_untimed_map_refused", t->obj->bss->go_lost);
	}
	if (!env.per_function) {
		err = map__take_percpu_hist(bpf_map__fd(t->obj->maps.hist_all), &taken, &total);
		/* A metric says what it times; the text report never did. */
		if (!err) {
			count_timed(&total);
			report__hist(&r, &total, NULL, &pattern, prom__active());
		}
		return err;
	}
	n = swapped__take(&hist_by, sizeof(__u32), sizeof(struct hist),
			   (void **)&all);
	if (n < 0)
		return n;
	for (size_t i = 0; i < t->n; i++) {
		for (ssize_t k = 0; k < n; k++) {
			struct label l = { "function", t->names[i] };
			char title[300];

			if (all[k].key != i)
				continue;
			snprintf(title, sizeof(title), "Function = %s", t->names[i]);
			count_timed(&all[k].h);
			report__hist(&r, &all[k].h, title, &l, 1);
		}
	}
	free(all);
	return 0;
}

int main(int argc, char **argv)
{
	struct target t = { .fd = -1 };
	struct run run;
	char *colon, *lib = NULL;
	const char *pattern;
	bool fentry = false, multi = false;
	int err;

	cli__parse(&cli, argc, argv);
	if (tool__check_host())
		return EXIT_RUNTIME;
	if (tool__target(env.pid, false))
		return EXIT_RUNTIME;
	pattern = env.pattern;
	colon = strchr(env.pattern, ':');
	if (colon) {
		lib = strndup(env.pattern, colon - env.pattern);
		if (!lib)
			return EXIT_RUNTIME;
		pattern = colon + 1;
	}

	t.obj = tool__open_skeleton(funclatency);
	if (!t.obj) {
		tool__report_bpf_error("open BPF object", -errno);
		return EXIT_RUNTIME;
	}
	t.obj->rodata->unit_ns = env.unit_ns;
	t.obj->rodata->per_function = env.per_function;
	t.obj->rodata->target_tgid = env.pid;
	t.obj->rodata->max_depth = env.level;
	t.obj->rodata->by_sp = lib != NULL;
	if (env.cgroup) {
		struct cgroup_target cg;

		err = container__resolve(env.cgroup, &cg);
		if (err)
			goto out;
		t.obj->rodata->filter_cgroup = true;
		t.obj->rodata->cgroup_id = cg.id;
		t.obj->rodata->cgroup_level = cg.level;
	}
	hist_by = SWAPPED(t.obj->maps, hist_by);
	if (!env.per_function)
		swapped__set_max_entries(&hist_by, 1);
	tool__thread_maps(t.obj->maps.stacks, t.obj->maps.stacks_tid, 16384);

	/* Which programs load depends on what the pattern needs. */
	if (lib) {
		err = resolve_user(&t, lib, pattern);
		if (err)
			goto out;
	} else {
		err = resolve_kernel(&t, pattern);
		if (err)
			goto out;
		fentry = t.method == METHOD_FENTRY;
		multi = t.method == METHOD_KPROBE_MULTI;
		if (fentry) {
			bpf_program__set_attach_target(t.obj->progs.funclatency_fentry, 0, t.names[0]);
			bpf_program__set_attach_target(t.obj->progs.funclatency_fexit, 0, t.names[0]);
		}
	}
	bpf_program__set_autoload(t.obj->progs.funclatency_fentry, fentry);
	bpf_program__set_autoload(t.obj->progs.funclatency_fexit, fentry);
	bpf_program__set_autoload(t.obj->progs.funclatency_multi_entry, multi);
	bpf_program__set_autoload(t.obj->progs.funclatency_multi_return, multi);
	bpf_program__set_autoload(t.obj->progs.funclatency_entry, !fentry && !multi && !t.go);
	bpf_program__set_autoload(t.obj->progs.funclatency_return, !fentry && !multi && !t.go);
	bpf_program__set_autoload(t.obj->progs.funclatency_go_entry, t.go);
	bpf_program__set_autoload(t.obj->progs.funclatency_go_return, t.go);
	if (fids_needed(&t)) {
		if (lib && !env.pid) {
			pr_err("-F on user-space functions needs Linux 5.17 (bpf_loop, with "
			       "which funclatency's BPF reads attach cookies) unless -p names "
			       "the process");
			err = -ENOTSUP;
			goto out;
		}
		bpf_map__set_max_entries(t.obj->maps.fids, fids_needed(&t));
		pr_debug("-F: functions known by their addresses (the BPF for kernels before 5.17 "
			 "reads no attach cookies)");
	}
	err = tool__load(t.obj->skeleton);
	if (err)
		goto out;
	if (fids_needed(&t)) {
		int fd = bpf_map__fd(t.obj->maps.fids);

		err = lib ? fill_user_fids(&t, fd) : fill_kernel_fids(&t, fd);
		if (err) {
			pr_err("cannot map -F's functions to their addresses: %s", strerror(-err));
			goto out;
		}
	}
	if (fentry)
		err = tool__attach(t.obj->skeleton);
	else if (lib)
		err = attach_user(&t);
	else
		err = attach_kernel(&t);
	if (err)
		goto out;

	run__banner(&cli, "Tracing %zu function%s for \"%s\"... Hit Ctrl-C to end.", t.n,
		    t.n == 1 ? "" : "s", env.pattern);
	run__init(&run, &cli);
	run.report = report;
	run.reads = "histograms";
	run.ctx = &t;
	err = run__loop(&run);
	/* Entries held until the stack was full, none ever popped: no return was seen. */
	if (t.obj->bss->too_deep && !timed)
		pr_warn("%llu calls were not timed: none of the calls traced returned while traced "
			"(still running, or the kernel reported no return)",
			(unsigned long long)t.obj->bss->too_deep);
	else if (t.obj->bss->too_deep && env.level < FUNC_MAX_DEPTH)
		pr_warn("%llu calls nested deeper than %u were not timed: raise -l (at most %u)",
			(unsigned long long)t.obj->bss->too_deep, env.level, FUNC_MAX_DEPTH);
	else if (t.obj->bss->too_deep)
		pr_warn("%llu calls nested deeper than %u (the most -l allows) were not timed",
			(unsigned long long)t.obj->bss->too_deep, env.level);
	if (t.obj->bss->unreturned)
		pr_warn("%llu calls were left without a return (longjmp, an exception, or a return "
			"the kernel missed) and were not timed", (unsigned long long)t.obj->bss->unreturned);
	if (t.obj->bss->lost_stacks)
		pr_warn("%llu calls not timed: no memory for a thread's task storage",
			(unsigned long long)t.obj->bss->lost_stacks);
	if (t.obj->bss->go_unread)
		pr_warn("%llu Go calls or returns not timed: their goroutine could not be read "
			"(its page not present just then)", (unsigned long long)t.obj->bss->go_unread);
	if (t.obj->bss->go_lost)
		pr_warn("%llu Go calls not timed: the map of calls in progress refused them",
			(unsigned long long)t.obj->bss->go_lost);
	if (t.obj->bss->lost_hists)
		pr_warn("%llu calls not counted: more than %u per-function histograms; narrow the "
			"pattern, or leave out -F for one histogram of them all",
			(unsigned long long)t.obj->bss->lost_hists,
			swapped__max_entries(&hist_by));
out:
	if (t.fd >= 0)
		close(t.fd);
	if (t.nfuncs > 0)
		uprobes__free(t.funcs, t.nfuncs);
	for (size_t i = 0; i < t.nlinks; i++)
		bpf_link__destroy(t.links[i]);
	for (size_t i = 0; i < t.n; i++)
		free(t.names[i]);
	free(t.names);
	free(t.links);
	free(lib);
	funclatency_bpf__destroy(t.obj);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
