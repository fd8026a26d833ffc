// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The argp layer every tool shares: common options, bcc's positionals, help epilog. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "prom.h"
#include "run.h"
#include "tool.h"

enum {
	KEY_JSON = 0x0f00,
	KEY_PERCENTILES,
	KEY_COMPLETE,
	KEY_PROMETHEUS,
	KEY_PROMETHEUS_SERIES,
};

static struct cli *cli;
static const struct argp *whole;	/* the tool's options, its group's and the common ones */

unsigned long cli__parse_ulong(struct argp_state *state, const char *what, const char *arg,
			       unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max)
		argp_error(state, "invalid %s '%s': expected a whole number from %lu to %lu",
			   what, arg, min, max);
	return v;
}

unsigned int cli__parse_seconds(struct argp_state *state, const char *what, const char *arg)
{
	return cli__parse_ulong(state, what, arg, 1, UINT_MAX / 1000);
}

pid_t cli__parse_pid(struct argp_state *state, const char *what, const char *arg)
{
	return cli__parse_ulong(state, what, arg, 1, INT_MAX);
}

int cli__parse_pids(struct argp_state *state, const char *what, const char *arg,
		    pid_t *out, int max)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int n = 0;

	if (!copy)
		argp_failure(state, EXIT_RUNTIME, ENOMEM, "cannot parse %s", what);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			argp_error(state, "too many %ss in '%s': at most %d", what, arg, max);
		out[n++] = cli__parse_pid(state, what, tok);
	}
	free(copy);
	if (!n)
		argp_error(state, "invalid %s list '%s'", what, arg);
	return n;
}

const char *cli__parse_cgroup(struct argp_state *state, const char *opt, const char *arg)
{
	/* "" would resolve to the cgroup2 root: every task, the opposite of a filter. */
	if (!*arg)
		argp_error(state, "%s needs a cgroup v2 path, such as system.slice/nginx.service "
			   "or /sys/fs/cgroup/user.slice; leave %s out for every cgroup", opt, opt);
	return arg;
}

static void parse_positional(struct argp_state *state, const char *arg)
{
	switch (cli->positional) {
	case CLI_POS_INTERVAL_COUNT:
		if (state->arg_num == 0) {
			cli->interval = cli__parse_seconds(state, "interval", arg);
			return;
		}
		if (state->arg_num == 1) {
			cli->count = cli__parse_ulong(state, "count", arg, 1, UINT_MAX);
			return;
		}
		break;
	case CLI_POS_DURATION:
		if (state->arg_num == 0) {
			cli->duration = cli__parse_seconds(state, "duration", arg);
			return;
		}
		break;
	case CLI_POS_NONE:
		break;
	}
	argp_error(state, "unexpected argument '%s'", arg);
}

/*
 * --complete (hidden): every option @a and its children take, one a line,
 * "--name[=ARG]" and "-k[ ARG]", for bash completion
 * (completion/bpfscope.bash), which asks the installed tool itself and so
 * never offers an option the tool does not have.
 */
static void print_options(const struct argp *a)
{
	const char *arg = NULL;
	int flags = 0;

	for (const struct argp_option *o = a->options; o && (o->name || o->key || o->doc); o++) {
		/* An alias takes the argument of the option it follows. */
		if (!(o->flags & OPTION_ALIAS)) {
			arg = o->arg;
			flags = o->flags;
		}
		if (o->flags & (OPTION_HIDDEN | OPTION_DOC))
			continue;
		if (o->name)
			printf("--%s%s%s%s%s\n", o->name, arg && (flags & OPTION_ARG_OPTIONAL) ? "[" : "",
			       arg ? "=" : "", arg ? arg : "",
			       arg && (flags & OPTION_ARG_OPTIONAL) ? "]" : "");
		if (o->key > ' ' && o->key < 0x7f)
			printf("-%c%s%s\n", o->key, arg && !(flags & OPTION_ARG_OPTIONAL) ? " " : "",
			       arg && !(flags & OPTION_ARG_OPTIONAL) ? arg : "");
	}
	for (const struct argp_child *c = a->children; c && c->argp; c++)
		print_options(c->argp);
}

static error_t parse_common(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP | ARGP_HELP_EXIT_OK);
		break;
	case 'v':
		cli->verbose = true;
		tool__set_verbose(true);
		break;
	case 'T':
		cli->timestamp = true;
		break;
	case KEY_JSON:
		cli->json = true;
		break;
	case KEY_PERCENTILES:
		cli->percentiles = true;
		break;
	case KEY_PROMETHEUS:
		if (!prom__valid_listen(arg))
			argp_error(state, "--prometheus '%s': expected [ADDR:]PORT, e.g. 9100, "
				   "0.0.0.0:9100 or [::1]:9100", arg);
		cli->prometheus = arg;
		break;
	case KEY_PROMETHEUS_SERIES:
		cli->prometheus_series = cli__parse_ulong(state, "--prometheus-series", arg, 1,
							  100000);
		break;
	case KEY_COMPLETE:
		print_options(whole);
		printf("--help\n-h\n--usage\n--version\n-V\n");
		exit(fflush(stdout) ? EXIT_RUNTIME : 0);
	case ARGP_KEY_ARG:
		parse_positional(state, arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char *default_args_doc(enum cli_positional pos)
{
	switch (pos) {
	case CLI_POS_INTERVAL_COUNT:
		return "[interval [count]]";
	case CLI_POS_DURATION:
		return "[duration]";
	default:
		return NULL;
	}
}

int cli__parse(struct cli *c, int argc, char **argv)
{
	static char version[128];
	static char doc[4096];
	struct argp_option common[12] = {};
	int n = 0;

	cli = c;
	tool__init(c->name);
	snprintf(version, sizeof(version), "%s (bpfscope) %s", c->name, BPFSCOPE_VERSION);
	argp_program_version = version;
	argp_err_exit_status = EXIT_USAGE;

	common[n++] = (struct argp_option){ "verbose", 'v', NULL, 0,
		"Print libbpf's debug log and the attach method chosen", -1 };
	common[n++] = (struct argp_option){ "json", KEY_JSON, NULL, 0,
		"Print one JSON object per line instead of text", -1 };
	if (c->flags & CLI_TIMESTAMP)
		common[n++] = (struct argp_option){ "timestamp", 'T', NULL, 0,
			"Include a timestamp (HH:MM:SS) with each report", -1 };
	if (c->flags & CLI_PERCENTILES)
		common[n++] = (struct argp_option){ "percentiles", KEY_PERCENTILES, NULL, 0,
			"Add p50/p90/p99/max lines, estimated from the histogram buckets", -1 };
	if (c->flags & CLI_PROMETHEUS) {
		common[n++] = (struct argp_option){ "prometheus", KEY_PROMETHEUS, "[ADDR:]PORT", 0,
			"Keep running and serve what was counted since start at /metrics, for "
			"Prometheus (ADDR: 127.0.0.1 unless given)", -1 };
		common[n++] = (struct argp_option){ "prometheus-series", KEY_PROMETHEUS_SERIES, "N", 0,
			"Label sets each metric keeps apart; later ones are added up in an [other] "
			"series (default 200)", -1 };
	}
	common[n++] = (struct argp_option){ NULL, 'h', NULL, OPTION_HIDDEN, "Show this help", -1 };
	common[n++] = (struct argp_option){ "complete", KEY_COMPLETE, NULL, OPTION_HIDDEN,
		"List every option, for bash completion", -1 };

	struct argp common_argp = { common, parse_common };
	struct argp_child children[3] = { { &common_argp, 0, NULL, 0 } };

	if (c->group) {
		children[1] = children[0];
		children[0] = (struct argp_child){ c->group, 0, NULL, 0 };
	}

	snprintf(doc, sizeof(doc), "%s\v%s%s", c->doc, c->examples ? "EXAMPLES:\n" : "",
		 c->examples ? c->examples : "");
	struct argp argp = {
		.options = c->options,
		.parser = c->parser,
		.args_doc = c->args_doc ? c->args_doc : default_args_doc(c->positional),
		.doc = doc,
		.children = children,
	};

	whole = &argp;
	/* Every tool parses first: from here on Ctrl-C ends it with a report. */
	run__catch_signals();
	/*
	 * getopt names the program by argv[0] in "invalid option": make that
	 * the tool's name, as on every other message, not the path it ran by.
	 */
	if (argc > 0)
		argv[0] = (char *)c->name;
	c->prometheus_series = PROM_SERIES_DEFAULT;
	argp_parse(&argp, argc, argv, 0, NULL, c);
	if (c->prometheus) {
		tool__warn_ignored("--prometheus serves all that was counted since start",
				   c->json ? "--json" : NULL, c->timestamp ? "-T" : NULL,
				   c->percentiles ? "--percentiles" : NULL,
				   c->interval ? "the interval" : NULL, c->count ? "the count" : NULL);
		c->json = c->timestamp = c->percentiles = false;
		c->interval = c->count = 0;
		/* Now, so that a busy port fails before anything is loaded. */
		if (prom__start(c->prometheus, c->prometheus_series))
			exit(EXIT_RUNTIME);
	}
	return 0;
}
