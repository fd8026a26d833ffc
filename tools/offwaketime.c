// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offwaketime: blocked time by stack, joined with the stack of the waker, like bcc's offwaketime. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "json.h"
#include "offcpu_opts.h"
#include "probe.h"
#include "run.h"
#include "stacks.h"
#include "stackreport.h"
#include "stackset.h"
#include "syms.h"
#include "tool.h"
#include "offwaketime.h"
#include "offwaketime.skel.h"

static struct cli cli = {
	.name = "offwaketime",
	.doc = "Summarize blocked time by the blocked thread's stack and its waker's stack.",
	.examples =
		"    offwaketime             # until Ctrl-C\n"
		"    offwaketime 5           # for 5 seconds only\n"
		"    offwaketime -f 5        # folded: target;stack;--;waker stack;waker count\n"
		"    offwaketime -p 185 -m 1000   # process 185, blocks of 1 ms or more\n",
	.options = offcpu_options,
	.parser = offcpu__parse,
	.positional = CLI_POS_DURATION,
};

struct offwake {
	struct offwaketime_bpf *obj;
	struct syms *syms;
	struct stacks *stacks;
	struct ring_buffer *pids;
};

struct record {
	struct offwake_key key;
	__u64 total;
};

/* Leaf-first frames of one thread's stacks: kernel, then [delimiter], then user. */
struct thread_stack {
	struct frame f[2 * STACKS_MAX_DEPTH + 1];
	int n;
};

static void read_thread(struct offwake *o, pid_t tgid, int ustack, int kstack,
			struct thread_stack *ts)
{
	struct frame user[STACKS_MAX_DEPTH];
	int nk = 0, nu = 0;

	ts->n = 0;
	if (!offcpu.user_only)
		nk = stacks__kernel(o->stacks, kstack, ts->f);
	if (!offcpu.kernel_only)
		nu = stacks__user(o->stacks, tgid, ustack, user);
	ts->n = nk;
	if (offcpu.delimit && nk && nu)
		ts->f[ts->n++] = (struct frame){ .name = "-", .kind = FRAME_SEPARATOR };
	for (int i = 0; i < nu; i++)
		ts->f[ts->n++] = user[i];
}

static int cmp_record(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	return (x->total > y->total) - (x->total < y->total);
}

/* A safety net for pids the ring buffer could not announce (it was full). */
static int tick(void *ctx)
{
	struct offwake *o = ctx;
	int fd = bpf_map__fd(o->obj->maps.totals);
	struct offwake_key key, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &key)) {
		syms__track_pid(o->syms, key.target_tgid);
		syms__track_pid(o->syms, key.waker_tgid);
		prev = &key;
	}
	return 0;
}

/*
 * bcc's fold: target name, the target's stack from its root down to where it
 * blocked, "--", then the waker's stack from where it woke the target back
 * up to its root, and the waker's name on top.
 */
static size_t fold(const struct record *r, const struct thread_stack *t,
		   const struct thread_stack *w, struct frame *out)
{
	size_t n = 0;

	out[n++] = (struct frame){ .name = r->key.target, .kind = FRAME_ROOT };
	for (int i = t->n - 1; i >= 0; i--)
		out[n++] = t->f[i];
	out[n++] = (struct frame){ .name = "--", .kind = FRAME_SEPARATOR };
	for (int i = 0; i < w->n; i++)
		out[n++] = w->f[i];
	out[n++] = (struct frame){ .name = r->key.waker, .kind = FRAME_ROOT };
	return n;
}

static void print_record(struct offwake *o, const struct record *r, struct stackset *set,
			 bool text)
{
	static struct thread_stack t, w;
	static struct frame f[4 * STACKS_MAX_DEPTH + 8];
	size_t n;

	read_thread(o, r->key.target_tgid, r->key.target_user_stack, r->key.target_kernel_stack, &t);
	read_thread(o, r->key.waker_tgid, r->key.waker_user_stack, r->key.waker_kernel_stack, &w);
	n = fold(r, &t, &w, f);
	if (set)
		stackset__add(set, f, n, r->total);
	if (!text)
		return;
	if (cli.json) {
		struct json j;

		json__begin_line(&j, stdout);
		json__str(&j, "target", r->key.target);
		json__u64(&j, "target_pid", r->key.target_pid);
		json__str(&j, "waker", r->key.waker);
		json__u64(&j, "waker_pid", r->key.waker_pid);
		json__u64(&j, "total_us", r->total);
		json__begin_array(&j, "frames");	/* the folded line's, without the names */
		for (size_t i = 1; i + 1 < n; i++)
			json__str(&j, NULL, f[i].name);
		json__end_array(&j);
		json__end_line(&j);
		return;
	}
	printf("    %-16s %s %u\n", "waker:", r->key.waker, r->key.waker_pid);
	for (int i = 0; i < w.n; i++)
		printf("    %s\n", w.f[i].name);
	printf("    %-16s %s\n", "--", "--");
	for (int i = 0; i < t.n; i++)
		printf("    %s\n", t.f[i].name);
	printf("    %-16s %s %u\n", "target:", r->key.target, r->key.target_pid);
	printf("        %llu\n\n", (unsigned long long)r->total);
}

static int report(void *ctx, const struct report_info *info)
{
	struct offwake *o = ctx;
	int fd = bpf_map__fd(o->obj->maps.totals);
	struct offwake_key key, *prev = NULL;
	struct stackset *set = NULL;
	struct record *all = NULL;
	size_t n = 0, cap = 0;

	while (!bpf_map_get_next_key(fd, prev, &key)) {
		if (n == cap) {
			struct record *t;

			cap = cap ? cap * 2 : 1024;
			t = realloc(all, cap * sizeof(*t));
			if (!t) {
				free(all);
				return -ENOMEM;
			}
			all = t;
		}
		all[n].key = key;
		if (!bpf_map_lookup_elem(fd, &key, &all[n].total))
			n++;
		prev = &key;
	}
	if (n)
		qsort(all, n, sizeof(*all), cmp_record);
	if (offcpu.folded || offcpu.svg || offcpu.pprof)
		set = stackset__new();
	for (size_t i = 0; i < n; i++)
		print_record(o, &all[i], set, !offcpu.folded);
	if (set) {
		struct flamegraph_opts fg = {
			"Off-CPU time with wakers",
			"offwaketime: blocked stack, --, the waker's stack reversed; microseconds", "us",
		};
		struct pprof_opts pp = {
			.type = "offcpu", .unit = "microseconds", .period_type = "offcpu",
			.period_unit = "microseconds", .period = 1,
			.time_nanos = (int64_t)time(NULL) * 1000000000,
		};

		stackset__sort(set);
		if (offcpu.folded)
			stackset__write_folded(set, stdout);
		fflush(stdout);
		stackreport__write_files(set, offcpu.svg, offcpu.pprof, &fg, &pp);
		stackset__free(set);
	}
	free(all);
	return 0;
}

int main(int argc, char **argv)
{
	struct offwake o = {};
	struct run run;
	bool btf;
	int err;

	cli__parse(&cli, argc, argv);
	if (tool__check_privileges())
		return EXIT_RUNTIME;
	if (offcpu__check_target())
		return EXIT_RUNTIME;
	o.syms = syms__new();
	o.obj = offwaketime_bpf__open();
	if (!o.obj || !o.syms) {
		tool__report_bpf_error("open BPF object", -errno);
		syms__free(o.syms);
		return EXIT_RUNTIME;
	}
	btf = probe__tp_btf("sched_switch") && probe__tp_btf("sched_waking");
	o.obj->rodata->filter = offcpu__filter();
	bpf_map__set_max_entries(o.obj->maps.stacks, offcpu.stack_storage);
	bpf_program__set_autoload(o.obj->progs.offwaketime_switch, btf);
	bpf_program__set_autoload(o.obj->progs.offwaketime_waking, btf);
	bpf_program__set_autoload(o.obj->progs.offwaketime_raw_switch, !btf);
	bpf_program__set_autoload(o.obj->progs.offwaketime_raw_waking, !btf);
	if (btf)
		bpf_map__set_max_entries(o.obj->maps.blocked_tid, 1);
	pr_debug("attaching to sched_switch and sched_waking with %s", btf ? "tp_btf" : "raw_tp");

	err = tool__load(o.obj->skeleton);
	if (!err)
		err = tool__attach(o.obj->skeleton);
	if (err)
		goto out;
	o.stacks = stacks__new(o.syms, bpf_map__fd(o.obj->maps.stacks));
	if (!o.stacks) {
		err = -ENOMEM;
		goto out;
	}
	offcpu__banner(&cli, "blocked time");
	run__init(&run, &cli);
	run.report = report;
	run.tick = tick;
	run.ctx = &o;
	o.pids = offcpu__follow_pids(bpf_map__fd(o.obj->maps.new_pids), o.syms);
	run.events = o.pids;
	err = run__loop(&run);
	if (err)
		pr_err("cannot read the maps: %s", strerror(-err));
	offcpu__warn_lost(&o.obj->bss->lost, o.stacks, o.obj->maps.totals, "blocked periods", "stack pairs");
out:
	ring_buffer__free(o.pids);
	stacks__free(o.stacks);
	offwaketime_bpf__destroy(o.obj);
	syms__free(o.syms);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
