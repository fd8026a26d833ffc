// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Parsing the options the stack tools share, once. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "outfile.h"
#include "run.h"
#include "stackopts.h"
#include "syms.h"
#include "tool.h"

enum {
	KEY_SVG = CLI_KEY_TOOL + 0x200, KEY_PPROF, KEY_UNWIND, KEY_UNWIND_MEMORY, KEY_DEBUGINFOD,
	KEY_PPROF_DIR, KEY_PPROF_INTERVAL, KEY_PPROF_KEEP, KEY_SYMBOL_MEMORY, KEY_NO_DEMANGLE,
	KEY_CONTAINERS,
};

struct stack_opts stack_opts = {
	.unwind = { .method = UNWIND_AUTO, .memory_mb = UNWIND_DEFAULT_MEMORY_MB },
	.pprof_interval = 60,
	.pprof_keep = 60,
	.symbol_memory_mb = SYMS_DEFAULT_MEMORY_MB,
};

static const struct argp_option options[] = {
	{ "svg", KEY_SVG, "FILE", 0, "Also write an interactive flame graph to FILE" },
	{ "pprof", KEY_PPROF, "FILE", 0, "Also write a gzipped pprof profile to FILE" },
	{ "unwind", KEY_UNWIND, "METHOD", 0,
	  "Walk user stacks by auto (call-frame information where binaries have it, the "
	  "default), dwarf (the same) or fp (frame pointers only)" },
	{ "unwind-memory", KEY_UNWIND_MEMORY, "MB", 0,
	  "Kernel memory for the unwind tables of binaries and processes (default 32)" },
	{ "pprof-dir", KEY_PPROF_DIR, "DIR", 0,
	  "Keep running and write a gzipped pprof profile into DIR every --pprof-interval, "
	  "named by its start (TOOL-YYYYmmddTHHMMSS.mmmZ.pb.gz): continuous profiles" },
	{ "pprof-interval", KEY_PPROF_INTERVAL, "SECONDS", 0,
	  "What each --pprof-dir profile covers (default 60)" },
	{ "pprof-keep", KEY_PPROF_KEEP, "N", 0,
	  "--pprof-dir profiles kept; older ones are removed (default 60)" },
	{ "debuginfod", KEY_DEBUGINFOD, "SECONDS", OPTION_ARG_OPTIONAL,
	  "Fetch missing debug files from $DEBUGINFOD_URLS, for at most SECONDS in all "
	  "(default 30)" },
	{ "symbol-memory", KEY_SYMBOL_MEMORY, "MB", 0,
	  "Memory for the symbol tables of binaries and perf maps; past it, those named "
	  "least recently are let go and read again when needed (default 256)" },
	{ "no-demangle", KEY_NO_DEMANGLE, NULL, 0,
	  "Print C++ and Rust functions by their symbols (mangled), not as the language "
	  "writes them" },
	{ "containers", KEY_CONTAINERS, NULL, 0,
	  "Start each stack with where its process runs: its container ([container ID], the "
	  "id docker, podman or Kubernetes gave it), else its cgroup; a flame graph splits "
	  "by container. JSON and pprof carry it as a label either way" },
	{},
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case KEY_SVG: stack_opts.svg = arg; break;
	case KEY_PPROF: stack_opts.pprof = arg; break;
	case KEY_PPROF_DIR:
		if (!*arg)
			argp_error(state, "--pprof-dir needs a directory");
		stack_opts.pprof_dir = arg;
		break;
	case KEY_PPROF_INTERVAL:
		stack_opts.pprof_interval = cli__parse_seconds(state, "--pprof-interval", arg);
		stack_opts.pprof_interval_given = true;
		break;
	case KEY_PPROF_KEEP:
		stack_opts.pprof_keep = cli__parse_ulong(state, "--pprof-keep", arg, 1, 1000000);
		stack_opts.pprof_keep_given = true;
		break;
	case KEY_UNWIND:
		stack_opts.unwind.method = unwind__parse_method(state, arg);
		stack_opts.unwind_given = true;
		break;
	case KEY_UNWIND_MEMORY:
		stack_opts.unwind.memory_mb = cli__parse_ulong(state, "unwind memory", arg, 1, 65536);
		stack_opts.unwind_memory_given = true;
		break;
	case KEY_DEBUGINFOD:
		stack_opts.debuginfod = arg ? cli__parse_ulong(state, "debuginfod time", arg, 1, 3600)
					    : 30;
		break;
	case KEY_SYMBOL_MEMORY:
		stack_opts.symbol_memory_mb = cli__parse_ulong(state, "symbol memory", arg, 1, 1048576);
		stack_opts.symbol_memory_given = true;
		break;
	case KEY_NO_DEMANGLE:
		stack_opts.no_demangle = true;
		break;
	case KEY_CONTAINERS:
		stack_opts.containers = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp stack_opts_argp = { options, parse };

void stack_opts__warn_ignored(const struct stack_view *v)
{
	const char *memory = stack_opts.unwind_memory_given ? "--unwind-memory" : NULL;

	if (v->user_only)
		tool__warn_ignored("-U shows user stacks only", v->delimit ? "-d" : NULL,
				   v->annotate ? "-a" : NULL);
	if (v->kernel_only)
		tool__warn_ignored("-K shows kernel stacks only", v->delimit ? "-d" : NULL,
				   stack_opts.unwind_given ? "--unwind" : NULL, memory,
				   stack_opts.symbol_memory_given ? "--symbol-memory" : NULL,
				   stack_opts.debuginfod ? "--debuginfod" : NULL,
				   stack_opts.no_demangle ? "--no-demangle" : NULL);
	else if (stack_opts.unwind.method == UNWIND_FP)
		tool__warn_ignored("--unwind=fp keeps no unwind tables", memory);
	if (stack_opts.pprof_dir) {
		tool__warn_ignored("--pprof-dir writes profiles, and prints no report",
				   stack_opts.svg ? "--svg" : NULL, stack_opts.pprof ? "--pprof" : NULL,
				   v->folded ? "-f" : NULL, v->json ? "--json" : NULL);
		stack_opts.svg = stack_opts.pprof = NULL;
	} else {
		tool__warn_ignored("without --pprof-dir there is one report, at the end",
				   stack_opts.pprof_interval_given ? "--pprof-interval" : NULL,
				   stack_opts.pprof_keep_given ? "--pprof-keep" : NULL);
	}
	if (v->folded && !stack_opts.pprof_dir)
		tool__warn_ignored("-f prints folded lines", v->json ? "--json" : NULL);
}

bool stack_opts__stdout_taken(void)
{
	return (stack_opts.svg && outfile__is_stdout(stack_opts.svg)) ||
	       (stack_opts.pprof && outfile__is_stdout(stack_opts.pprof));
}

struct syms *stack_opts__syms(const struct cli *cli)
{
	struct syms *s = syms__new();
	int err;

	if (!s) {
		pr_err("cannot make a symbolizer: %s", strerror(errno));
		return NULL;
	}
	syms__set_budget(s, (uint64_t)stack_opts.symbol_memory_mb << 20);
	syms__set_raw_names(s, stack_opts.no_demangle);
	/* Where processes run is a label of JSON and pprof, and the root with --containers. */
	if (stack_opts.containers || stack_opts.pprof || stack_opts.pprof_dir || cli->json)
		syms__want_cgroups(s);
	if (stack_opts.debuginfod) {
		err = syms__use_debuginfod(s, stack_opts.debuginfod);
		if (err) {
			syms__free(s);
			errno = -err;
			return NULL;
		}
	}
	return s;
}

void stack_opts__run(struct run *r)
{
	if (stack_opts.pprof_dir)
		r->interval = stack_opts.pprof_interval;
}
