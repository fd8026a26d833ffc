/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Command-line parsing shared by every tool: argp, the common options, positionals. */
#ifndef BPFSCOPE_CLI_H
#define BPFSCOPE_CLI_H

#include <argp.h>
#include <stdbool.h>
#include <sys/types.h>

/* Which bcc-style positional arguments the tool takes. */
enum cli_positional {
	CLI_POS_NONE,
	CLI_POS_INTERVAL_COUNT,		/* [interval [count]] */
	CLI_POS_DURATION,		/* [duration] */
};

/* Common options a tool opts into beyond -h, -V, -v and --json. */
enum cli_flags {
	CLI_TIMESTAMP	= 1 << 0,	/* -T */
	CLI_PERCENTILES	= 1 << 1,	/* --percentiles */
	CLI_PROMETHEUS	= 1 << 2,	/* --prometheus, --prometheus-series */
};

/* Keys of long-only options start here, above every printable letter. */
#define CLI_KEY_TOOL 0x1000

struct cli {
	/* Set by the tool. */
	const char *name;
	const char *doc;		/* one-line summary for --help */
	const char *args_doc;		/* NULL: derived from @positional */
	const char *examples;		/* EXAMPLES epilog, one per line */
	const struct argp_option *options;
	argp_parser_t parser;		/* the tool's own keys; ARGP_ERR_UNKNOWN otherwise */
	const struct argp *group;	/* options shared by a kind of tool, or NULL */
	enum cli_positional positional;
	unsigned int flags;

	/* Set by parsing. */
	bool verbose;
	bool json;
	bool timestamp;
	bool percentiles;
	unsigned int interval;		/* seconds; 0: report once, at the end */
	unsigned int count;		/* reports; 0: until interrupted */
	unsigned int duration;		/* seconds; 0: until interrupted */
	const char *prometheus;		/* [ADDR:]PORT to serve /metrics on, or NULL */
	unsigned int prometheus_series;	/* label sets per metric */
};

/*
 * Parses argv for @cli: the tool's options first, then its group's, the
 * common ones and the positionals; the tool's parser finds @cli in
 * state->input. Usage errors print argp's message and exit 2; --help and
 * --version print and exit 0.
 */
int cli__parse(struct cli *cli, int argc, char **argv);

/* Helpers for tool parsers: each reports a usage error (exit 2) on bad input. */
unsigned int cli__parse_seconds(struct argp_state *state, const char *what, const char *arg);
unsigned long cli__parse_ulong(struct argp_state *state, const char *what, const char *arg,
			       unsigned long min, unsigned long max);
pid_t cli__parse_pid(struct argp_state *state, const char *what, const char *arg);
/* "PID[,PID...]" into @out (at most @max); returns how many. */
int cli__parse_pids(struct argp_state *state, const char *what, const char *arg,
		    pid_t *out, int max);
/* The cgroup v2 path @arg of option @opt ("-c", "--cgroup"); empty is a usage error. */
const char *cli__parse_cgroup(struct argp_state *state, const char *opt, const char *arg);

#endif
