// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* biolatency: summarize block device I/O latency as histograms, like bcc's biolatency. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "container.h"
#include "cli.h"
#include "maps.h"
#include "probe.h"
#include "prom.h"
#include "report.h"
#include "run.h"
#include "tool.h"
#include "biolatency.h"
#include "biolatency.skel.h"

static struct env {
	bool queued, msecs, per_disk, per_flags, extended;
	const char *disk;
	const char *cgroup;
} env;

static const struct argp_option options[] = {
	{ "queued", 'Q', NULL, 0, "Include OS queued time in I/O time" },
	{ "milliseconds", 'm', NULL, 0, "Millisecond histogram" },
	{ "disks", 'D', NULL, 0, "Print a histogram per disk device" },
	{ "flags", 'F', NULL, 0, "Print a histogram per set of I/O flags" },
	{ "disk", 'd', "DISK", 0,
	  "Trace this disk only: vda or /dev/vda (a partition means its disk)" },
	{ "cgroup", 'c', "PATH|ID", 0,
	  "Trace I/O issued by tasks in this cgroup v2 only (or a container's, by its id)" },
	{ "extension", 'e', NULL, 0, "Summarize average and total I/O time" },
	{ NULL, 'j', NULL, 0, "JSON output (same as --json)" },
	{},
};

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Whole disks, as the kernel names them: the entries of /sys/block, in order. */
static void list_disks(char *buf, size_t size)
{
	struct dirent **d;
	int n = scandir("/sys/block", &d, not_hidden, versionsort);
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		len += snprintf(buf + len, len < size ? size - len : 0, "%s%s",
				len ? ", " : "", d[i]->d_name);
		free(d[i]);
	}
	if (n >= 0)
		free(d);
	if (!buf[0])
		snprintf(buf, size, "none");
}

static struct cli cli;

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'Q': env.queued = true; break;
	case 'm': env.msecs = true; break;
	case 'D': env.per_disk = true; break;
	case 'F': env.per_flags = true; break;
	case 'd':
		/* "" would trace every disk: the opposite of what -d asks for. */
		if (!*arg) {
			char known[1024];

			list_disks(known, sizeof(known));
			argp_error(state, "-d needs a disk, such as vda or /dev/vda (known: %s)",
				   known);
		}
		env.disk = arg;
		break;
	case 'c': env.cgroup = cli__parse_cgroup(state, "-c", arg); break;
	case 'e': env.extended = true; break;
	case 'j': cli.json = true; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct cli cli = {
	.name = "biolatency",
	.doc = "Summarize block device I/O latency as a histogram.",
	.examples =
		"    biolatency                # summarize block I/O latency until Ctrl-C\n"
		"    biolatency -mT 1          # msecs, with timestamps, every second\n"
		"    biolatency -Q             # include OS queued time\n"
		"    biolatency -D             # a histogram per disk\n"
		"    biolatency -F             # a histogram per I/O flag set\n"
		"    biolatency -d nvme0n1 5 3 # one disk, three 5-second summaries\n"
		"    biolatency -e --json 10   # JSON with averages every 10 seconds\n"
		"    biolatency -D --prometheus 9100   # serve /metrics on localhost:9100\n",
	.options = options,
	.parser = parse_opt,
	.positional = CLI_POS_INTERVAL_COUNT,
	.flags = CLI_TIMESTAMP | CLI_PERCENTILES | CLI_PROMETHEUS,
};

/* Request flag names, from the running kernel's enums. */
static struct {
	char *op[256];		/* by REQ_OP_* value */
	char *flag[32];		/* by __REQ_* bit */
	__u32 op_mask;
} names;

/* "WRITE_ZEROES" -> "WriteZeroes"; a few as bcc spells them. */
static char *camel(const char *s)
{
	static const char *const bcc[][2] = {
		{ "META", "Metadata" }, { "PRIO", "Priority" }, { "RAHEAD", "ReadAhead" },
		{ "FUA", "ForcedUnitAccess" }, { "NOMERGE", "NoMerge" }, { "NOWAIT", "NoWait" },
		{ "PREFLUSH", "PreFlush" }, { "NOUNMAP", "NoUnmap" },
	};
	char *out, *o;
	bool up = true;

	/* bcc's names are longer than the kernel's: "FUA" is "ForcedUnitAccess". */
	for (size_t i = 0; i < sizeof(bcc) / sizeof(bcc[0]); i++)
		if (!strcmp(s, bcc[i][0]))
			return strdup(bcc[i][1]);
	out = o = malloc(strlen(s) + 1);
	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == '_') {
			up = true;
			continue;
		}
		*o++ = up ? toupper(*s) : tolower(*s);
		up = false;
	}
	*o = '\0';
	return out;
}

static void load_flag_names(void)
{
	const struct btf *btf = probe__vmlinux_btf();
	int id;

	names.op_mask = 0xff;
	if (!btf)
		return;
	/* enum req_op since 5.19, enum req_opf before. */
	id = btf__find_by_name_kind(btf, "req_op", BTF_KIND_ENUM);
	if (id < 0)
		id = btf__find_by_name_kind(btf, "req_opf", BTF_KIND_ENUM);
	if (id > 0) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e = btf_enum(t);

		for (int i = 0; i < btf_vlen(t); i++) {
			const char *n = btf__name_by_offset(btf, e[i].name_off);

			if (!strncmp(n, "REQ_OP_", 7) && e[i].val >= 0 && e[i].val < 256 &&
			    strcmp(n, "REQ_OP_LAST"))
				names.op[e[i].val] = camel(n + 7);
		}
	}
	id = btf__find_by_name_kind(btf, "req_flag_bits", BTF_KIND_ENUM);
	if (id > 0) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e = btf_enum(t);

		for (int i = 0; i < btf_vlen(t); i++) {
			const char *n = btf__name_by_offset(btf, e[i].name_off);

			if (strncmp(n, "__REQ_", 6) || !strncmp(n, "__REQ_NR", 8) ||
			    e[i].val < 0 || e[i].val >= 32)
				continue;
			names.flag[e[i].val] = camel(n + 6);
			/* The first flag bit sits right above the operation bits. */
			if (!strcmp(n, "__REQ_FAILFAST_DEV"))
				names.op_mask = (1U << e[i].val) - 1;
		}
	}
}

/* bcc's spelling: flags first, highest bit leftmost, then the operation: "Sync-Write". */
static void flags_string(__u32 flags, char *buf, size_t size)
{
	const char *op = names.op[flags & names.op_mask & 0xff];
	size_t len = 0;

	buf[0] = '\0';
	for (int bit = 31; bit >= 0; bit--) {
		if (!(flags & (1U << bit)) || (1U << bit) <= names.op_mask || !names.flag[bit])
			continue;
		len += snprintf(buf + len, len < size ? size - len : 0, "%s-", names.flag[bit]);
	}
	snprintf(buf + (len < size ? len : size - 1), len < size ? size - len : 1, "%s",
		 op ? op : "Unknown");
}

/*
 * The block device a path names (bcc users type -d /dev/sda; /dev/mapper/
 * and /dev/disk/by-id/ links work too): its directory under /sys.
 */
static bool sys_dir_of_path(const char *path, char *real)
{
	char sys[64];
	struct stat st;

	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return false;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	return realpath(sys, real) != NULL;
}

/* -d DISK: the device number of the disk, or of the disk a partition is on. */
static int resolve_disk(const char *name, __u32 *dev)
{
	char path[PATH_MAX + 32], real[PATH_MAX], disk[NAME_MAX + 1], known[1024];
	unsigned int major, minor;
	bool found;
	FILE *f;

	if (strchr(name, '/')) {
		found = sys_dir_of_path(name, real);
	} else {
		snprintf(path, sizeof(path), "/sys/class/block/%s", name);
		found = realpath(path, real) != NULL;
	}
	/* Only a block device has a dev file: not "." or "..", which realpath() takes. */
	if (found) {
		snprintf(path, sizeof(path), "%s/dev", real);
		found = access(path, F_OK) == 0;
	}
	if (!found) {
		list_disks(known, sizeof(known));
		pr_err("disk '%s' not found (known: %s)", name, known);
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) == 0) {
		snprintf(disk, sizeof(disk), "%s", basename(dirname(real)));
		pr_warn("%s is a partition of %s: tracing all of %s", name, disk, disk);
	} else {
		snprintf(disk, sizeof(disk), "%s", basename(real));
	}
	snprintf(path, sizeof(path), "/sys/block/%s/dev", disk);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%u:%u", &major, &minor) != 2) {
		if (f)
			fclose(f);
		pr_err("cannot read the device number of %s", disk);
		return -ENOENT;
	}
	fclose(f);
	*dev = (major << 20) | minor;
	return 0;
}

static const char *unit(void)
{
	return env.msecs ? "msecs" : "usecs";
}

struct keyed {
	struct bio_key key;
	struct bio_hist h;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct bio_key *x = &((const struct keyed *)a)->key;
	const struct bio_key *y = &((const struct keyed *)b)->key;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

/* The single histogram's sums at the last report (map__take_percpu_hist). */
static struct hist taken;
/* The histograms by disk or flags (SWAPPED_HASH). */
static struct swapped hist_by;

static int report(void *ctx, const struct report_info *info)
{
	struct hist_report r = {
		.cli = &cli, .when = info->when, .unit = unit(), .summary = env.extended,
		/* -Q measures something else: a name of its own, never mixed with the other. */
		.metric = env.queued ? "queued_io_seconds" : "io_seconds",
		.help = env.queued ?
			"Block I/O latency including the time queued in the OS (-Q), from a "
			"request's insertion into the OS queue (block_rq_insert) to its "
			"completion (block_rq_complete)" :
			"Block I/O latency, the device's service time, from a request's issue "
			"to the device (block_rq_issue) to its completion (block_rq_complete)",
	};
	struct biolatency_bpf *obj = ctx;
	struct keyed *all;
	struct hist total;
	ssize_t n;
	int err;

	report__begin(&cli, info->when);
	if (prom__active()) {
		prom__lost("requests_untimed_full_map", obj->bss->lost_starts);
		prom__lost("requests_dropped_histograms_full", obj->bss->lost_hists);
	}
	if (!env.per_disk && !env.per_flags) {
		err = map__take_percpu_hist(bpf_map__fd(obj->maps.hist_all), &taken, &total);
		if (!err)
			report__hist(&r, &total, NULL, NULL, 0);
		return err;
	}
	n = swapped__take(&hist_by, sizeof(struct bio_key),
			   sizeof(struct bio_hist), (void **)&all);
	if (n < 0)
		return n;
	qsort(all, n, sizeof(*all), cmp_keyed);
	for (ssize_t i = 0; i < n; i++) {
		struct label l[2];
		char flags[256], title[320];
		int nl = 0, len = 0;

		if (env.per_disk) {
			l[nl++] = (struct label){ "disk", all[i].h.disk };
			len += snprintf(title + len, sizeof(title) - len, "disk = %s", all[i].h.disk);
		}
		if (env.per_flags) {
			flags_string(all[i].key.flags, flags, sizeof(flags));
			l[nl++] = (struct label){ "flags", flags };
			snprintf(title + len, sizeof(title) - len, "%sflags = %s", len ? " " : "",
				 flags);
		}
		report__hist(&r, &all[i].h.hist, title, l, nl);
	}
	free(all);
	return 0;
}

static int configure(struct biolatency_bpf *obj)
{
	bool btf = probe__tp_btf("block_rq_issue") && probe__tp_btf("block_rq_complete") &&
		   probe__tp_btf("block_rq_insert");
	struct bpf_program *prog;
	int err;

	obj->rodata->from_insert = env.queued;
	obj->rodata->per_disk = env.per_disk;
	obj->rodata->per_flags = env.per_flags;
	obj->rodata->unit_ns = env.msecs ? 1000000 : 1000;
	obj->rodata->insert_has_queue = probe__tp_nargs("block_rq_insert") == 2;
	obj->rodata->issue_has_queue = probe__tp_nargs("block_rq_issue") == 2;
	if (env.disk) {
		err = resolve_disk(env.disk, (__u32 *)&obj->rodata->target_dev);
		if (err)
			return err;
		obj->rodata->filter_dev = true;
	}
	if (env.cgroup) {
		struct cgroup_target cg;

		err = container__resolve(env.cgroup, &cg);
		if (err)
			return err;
		obj->rodata->filter_cgroup = true;
		obj->rodata->cgroup_id = cg.id;
		obj->rodata->cgroup_level = cg.level;
	}
	if (env.per_flags)
		load_flag_names();

	bpf_object__for_each_program(prog, obj->obj) {
		bool is_btf = bpf_program__type(prog) == BPF_PROG_TYPE_TRACING;
		bool is_insert = strstr(bpf_program__name(prog), "insert") != NULL;

		bpf_program__set_autoload(prog, is_btf == btf && (!is_insert || env.queued));
	}
	hist_by = SWAPPED(obj->maps, hist_by);
	if (!env.per_disk && !env.per_flags)
		swapped__set_max_entries(&hist_by, 1);
	pr_debug("attaching to block_rq_%sissue and block_rq_complete with %s",
		 env.queued ? "insert, block_rq_" : "",
		 btf ? "tp_btf" : "raw_tp (no BTF tracepoints in this kernel)");
	return 0;
}

int main(int argc, char **argv)
{
	struct biolatency_bpf *obj;
	struct run run;
	int err;

	cli__parse(&cli, argc, argv);
	if (tool__check_host())
		return EXIT_RUNTIME;

	obj = biolatency_bpf__open();
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

	run__banner(&cli, "Tracing block device I/O... Hit Ctrl-C to end.");
	run__init(&run, &cli);
	run.report = report;
	run.reads = "histograms";
	run.ctx = obj;
	err = run__loop(&run);
	if (obj->bss->lost_starts)
		pr_warn("%llu I/O requests not timed: more than %u in flight; trace one disk with -d",
			(unsigned long long)obj->bss->lost_starts,
			bpf_map__max_entries(obj->maps.start));
	/* Only -D and -F make more than the one histogram. */
	if (obj->bss->lost_hists)
		pr_warn("%llu I/O latencies dropped: more than %u histograms (-D, -F); trace one "
			"disk with -d", (unsigned long long)obj->bss->lost_hists,
			swapped__max_entries(&hist_by));
out:
	biolatency_bpf__destroy(obj);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
