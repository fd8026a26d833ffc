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
#include "escape.h"
#include "json.h"
#include "offcpu_opts.h"
#include "probe.h"
#include "run.h"
#include "stackread.h"
#include "stackopts.h"
#include "stackreport.h"
#include "stackset.h"
#include "syms.h"
#include "tool.h"
#include "unwinder.h"
#include "offwaketime.h"
#include "offwaketime.skel.h"
#include "offwaketime.legacy.h"

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
	.group = &stack_opts_argp,
	.positional = CLI_POS_DURATION,
};

struct offwake {
	struct offwaketime_bpf *obj;
	struct syms *syms;
	struct unwinder *unwinder;
	struct ring_buffer *pids;
	struct stackreport report;
};

/*
 * bcc's fold: target name, the target's stack from its root down to where it
 * blocked, "--", then the waker's stack from where it woke the target back
 * up to its root, and the waker's name on top; before all, where the target
 * runs (stackreport__container).
 */
static size_t fold(struct stackreport *r, const void *k, struct frame *out)
{
	const struct offwake_key *key = k;
	static struct frame t[STACKREPORT_MAX_THREAD], w[STACKREPORT_MAX_THREAD];
	size_t nt = stackreport__thread(r, &key->target_proc, key->target_user_stack,
					key->target_kernel_stack, t);
	size_t nw = stackreport__thread(r, &key->waker_proc, key->waker_user_stack,
					key->waker_kernel_stack, w);
	size_t n = stackreport__container(r, &key->target_proc, out);

	out[n++] = (struct frame){ .name = key->target, .kind = FRAME_ROOT };
	for (size_t i = nt; i-- > 0;)
		out[n++] = t[i];
	out[n++] = (struct frame){ .name = "--", .kind = FRAME_SEPARATOR };
	for (size_t i = 0; i < nw; i++)
		out[n++] = w[i];
	out[n++] = (struct frame){ .name = key->waker, .kind = FRAME_ROOT };
	return n;
}

static void print_name(const char *what, const char *comm, __u32 tid)
{
	printf("    %-16s ", what);
	escape__print(stdout, comm, ESCAPE_TEXT);
	printf(" %u\n", tid);
}

/* bcc's layout: the waker's stack, "--", the target's stack, then the time. */
static void print_text(struct stackreport *r, const void *k, uint64_t total)
{
	const struct offwake_key *key = k;
	static struct frame f[STACKREPORT_MAX_THREAD];

	print_name("waker:", key->waker, key->waker_tid);
	stackreport__print_frames(f, stackreport__thread(r, &key->waker_proc,
							 key->waker_user_stack,
							 key->waker_kernel_stack, f));
	printf("    %-16s %s\n", "--", "--");
	stackreport__print_frames(f, stackreport__thread(r, &key->target_proc,
							 key->target_user_stack,
							 key->target_kernel_stack, f));
	print_name("target:", key->target, key->target_tid);
	printf("        %llu\n\n", (unsigned long long)total);
}

static void json_fields(struct stackreport *r, const void *k, uint64_t total, struct json *j)
{
	const struct offwake_key *key = k;

	json__str(j, "target", key->target);
	json__u64(j, "target_pid", key->target_tid);
	json__str(j, "waker", key->waker);
	json__u64(j, "waker_pid", key->waker_tid);
	json__u64(j, "total_us", total);
}

static void track(struct stackreport *r, const void *k)
{
	const struct offwake_key *key = k;

	if (r->kernel_only)
		return;
	if (key->target_user_stack != STACK_NONE)
		syms__track(r->syms, &key->target_proc);
	if (key->waker_user_stack != STACK_NONE)
		syms__track(r->syms, &key->waker_proc);
}

static const struct stackreport_ops ops = {
	.fold = fold,
	.print_text = print_text,
	.json_fields = json_fields,
	.track = track,
};

/* A safety net for pids the ring buffer could not announce (it was full). */
static int tick(void *ctx)
{
	return stackreport__track(&((struct offwake *)ctx)->report);
}

static int report(void *ctx, const struct report_info *info)
{
	return stackreport__print(&((struct offwake *)ctx)->report);
}

int main(int argc, char **argv)
{
	struct offwake o = {};
	struct unwind_bpf ubpf;
	struct run run;
	bool btf;
	int err;

	cli__parse(&cli, argc, argv);
	if (tool__check_host())
		return EXIT_RUNTIME;
	if (offcpu__check_target() || offcpu__check_files(sizeof(struct offwake_key)))
		return EXIT_RUNTIME;
	o.syms = stack_opts__syms(&cli);
	if (!o.syms)
		return EXIT_RUNTIME;
	o.obj = tool__open_skeleton(offwaketime);
	if (!o.obj) {
		tool__report_bpf_error("open BPF object", -errno);
		syms__free(o.syms);
		return EXIT_RUNTIME;
	}
	btf = probe__tp_btf("sched_switch") && probe__tp_btf("sched_waking") &&
	      probe__task_storage();
	o.obj->rodata->filter = offcpu__filter();
	o.obj->rodata->stack_seed = stackread__seed();
	bpf_map__set_max_entries(o.obj->maps.stacks, offcpu.stack_storage);
	offcpu__size_totals(o.obj->maps.totals_a, o.obj->maps.totals_b);
	bpf_program__set_autoload(o.obj->progs.offwaketime_switch, btf);
	bpf_program__set_autoload(o.obj->progs.offwaketime_waking, btf);
	bpf_program__set_autoload(o.obj->progs.offwaketime_raw_switch, !btf);
	bpf_program__set_autoload(o.obj->progs.offwaketime_raw_waking, !btf);
	bpf_program__set_autoload(o.obj->progs.offwaketime_exit, btf);
	bpf_program__set_autoload(o.obj->progs.offwaketime_raw_exit, !btf);
	offcpu__thread_maps(o.obj->maps.blocked_task, o.obj->maps.blocked_tid, btf);
	pr_debug("attaching to sched_switch and sched_waking with %s", offcpu__method(btf));

	ubpf = UNWIND_BPF(o.obj);
	err = offcpu__unwind_setup(&ubpf);
	if (err < 0)
		goto out;
	o.obj->rodata->unwind_cfi = err;
	err = tool__load(o.obj->skeleton);
	if (!err && o.obj->rodata->unwind_cfi) {
		o.unwinder = offcpu__unwinder(o.syms, &ubpf);
		if (!o.unwinder)
			err = -errno;
	}
	if (!err)
		err = tool__attach(o.obj->skeleton);
	if (err)
		goto out;
	err = offcpu__report_init(&o.report, &cli, o.syms, bpf_map__fd(o.obj->maps.stacks),
				  &SWAPPED(o.obj->maps, totals));
	if (err)
		goto out;
	o.report.key_size = sizeof(struct offwake_key);
	o.report.ops = &ops;
	o.report.flamegraph = (struct flamegraph_opts){
		"Off-CPU time with wakers",
		"offwaketime: blocked stack, --, the waker's stack reversed; microseconds", "us" };
	offcpu__banner(&cli, "blocked time");
	run__init(&run, &cli);
	stack_opts__run(&run);
	run.report = report;
	run.tick = tick;
	run.ctx = &o;
	o.pids = offcpu__follow_pids(bpf_map__fd(o.obj->maps.new_pids), o.syms);
	run.events = o.pids;
	err = run__loop(&run);
	offcpu__warn_lost(&o.obj->bss->lost, o.report.stacks, o.obj->maps.totals_a,
			  "blocked periods", "stack pairs");
	syms__warn_losses(o.syms);
	unwinder__warn_losses(o.unwinder);
	offcpu__warn_notes_lost(o.obj->maps.notes_lost);
out:
	ring_buffer__free(o.pids);
	stackread__free(o.report.stacks);
	offwaketime_bpf__destroy(o.obj);
	unwinder__free(o.unwinder);
	syms__free(o.syms);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
