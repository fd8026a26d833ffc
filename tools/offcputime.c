// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offcputime: summarize off-CPU time by stack trace, like bcc's offcputime. */
#include <errno.h>
#include <limits.h>
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
#include "stackread.h"
#include "stackopts.h"
#include "stackreport.h"
#include "stackset.h"
#include "syms.h"
#include "tool.h"
#include "unwinder.h"
#include "offcputime.h"
#include "offcputime.skel.h"
#include "offcputime.legacy.h"

static struct cli cli = {
	.name = "offcputime",
	.doc = "Summarize off-CPU time by stack trace.",
	.examples =
		"    offcputime             # all threads, user + kernel stacks, until Ctrl-C\n"
		"    offcputime 5           # for 5 seconds only\n"
		"    offcputime -df 5       # folded, with a delimiter: for flame graphs\n"
		"    offcputime -m 1000     # blocks of 1 ms or more\n"
		"    offcputime -p 185 -U   # process 185, user stacks only\n"
		"    offcputime --state 2   # uninterruptible sleep (disk, locks) only\n",
	.options = offcpu_options,
	.parser = offcpu__parse,
	.group = &stack_opts_argp,
	.positional = CLI_POS_DURATION,
};

struct offcpu {
	struct offcputime_bpf *obj;
	struct syms *syms;
	struct unwinder *unwinder;
	struct ring_buffer *pids;
	struct stackreport report;
};

/* A safety net for pids the ring buffer could not announce (it was full). */
static int tick(void *ctx)
{
	return stackreport__track(&((struct offcpu *)ctx)->report);
}

static int report(void *ctx, const struct report_info *info)
{
	return stackreport__print(&((struct offcpu *)ctx)->report);
}

static void configure(struct offcputime_bpf *obj)
{
	bool btf = probe__tp_btf("sched_switch") && probe__task_storage();

	obj->rodata->filter = offcpu__filter();
	obj->rodata->stack_seed = stackread__seed();
	bpf_map__set_max_entries(obj->maps.stacks, offcpu.stack_storage);
	offcpu__size_totals(obj->maps.totals_a, obj->maps.totals_b);
	bpf_program__set_autoload(obj->progs.offcputime_switch, btf);
	bpf_program__set_autoload(obj->progs.offcputime_raw_switch, !btf);
	bpf_program__set_autoload(obj->progs.offcputime_exit, btf);
	bpf_program__set_autoload(obj->progs.offcputime_raw_exit, !btf);
	offcpu__thread_maps(obj->maps.start_task, obj->maps.start_tid, btf);
	pr_debug("attaching to sched_switch with %s", offcpu__method(btf));
}

int main(int argc, char **argv)
{
	struct offcpu o = {};
	struct unwind_bpf ubpf;
	struct run run;
	int err;

	cli__parse(&cli, argc, argv);
	if (tool__check_host())
		return EXIT_RUNTIME;
	if (offcpu__check_target() || offcpu__check_files(sizeof(struct stack_key)))
		return EXIT_RUNTIME;
	o.syms = stack_opts__syms(&cli);
	if (!o.syms)
		return EXIT_RUNTIME;
	o.obj = tool__open_skeleton(offcputime);
	if (!o.obj) {
		tool__report_bpf_error("open BPF object", -errno);
		syms__free(o.syms);
		return EXIT_RUNTIME;
	}
	configure(o.obj);
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
	o.report.json_value = "total_us";
	o.report.flamegraph = (struct flamegraph_opts){
		"Off-CPU time", "offcputime: blocked time by stack, microseconds", "us" };

	offcpu__banner(&cli, "off-CPU time");
	run__init(&run, &cli);
	stack_opts__run(&run);
	run.report = report;
	run.tick = tick;
	run.ctx = &o;
	o.pids = offcpu__follow_pids(bpf_map__fd(o.obj->maps.new_pids), o.syms);
	run.events = o.pids;
	err = run__loop(&run);
	offcpu__warn_lost(&o.obj->bss->lost, o.report.stacks, o.obj->maps.totals_a,
			  "off-CPU periods", "stacks");
	syms__warn_losses(o.syms);
	unwinder__warn_losses(o.unwinder);
	offcpu__warn_notes_lost(o.obj->maps.notes_lost);
out:
	ring_buffer__free(o.pids);
	stackread__free(o.report.stacks);
	offcputime_bpf__destroy(o.obj);
	unwinder__free(o.unwinder);
	syms__free(o.syms);
	return err ? EXIT_RUNTIME : EXIT_OK;
}
