/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The run loop every tool shares: intervals, count, duration and signals. */
#ifndef BPFSCOPE_RUN_H
#define BPFSCOPE_RUN_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

struct cli;
struct ring_buffer;

struct report_info {
	unsigned int seq;	/* 1 for the first report */
	bool last;		/* no report follows this one */
	time_t when;
};

struct run {
	unsigned int interval;	/* seconds between reports; 0: one report at the end */
	unsigned int count;	/* stop after this many reports; 0: no limit */
	unsigned int duration;	/* stop after this many seconds; 0: no limit */
	/*
	 * --prometheus: the server cli__parse() started serves /metrics there,
	 * and the loop calls @report every second (interval and count are
	 * moot), whose histograms and counters go to the exposition instead of
	 * the standard output; it stops the server at the end.
	 */
	const char *prometheus;

	/* Prints one report and clears what it reported. */
	int (*report)(void *ctx, const struct report_info *info);
	/*
	 * What @report reads, for the message when it fails ("cannot read
	 * histograms: ..."); NULL when @report says what went wrong itself.
	 */
	const char *reads;
	/*
	 * Optional: a ring buffer whose callbacks handle events as they come;
	 * the loop waits on it and on the stop signals at once.
	 */
	struct ring_buffer *events;
	/* Optional: called every tick_ms (default 1000), e.g. to note new processes. */
	int (*tick)(void *ctx);
	unsigned int tick_ms;
	void *ctx;
};

/* Fills interval, count and duration from the parsed command line; clears the rest. */
void run__init(struct run *r, const struct cli *cli);

/*
 * Runs until the count of reports, the duration or SIGINT/SIGTERM/SIGHUP,
 * whichever comes first; every way out prints a last report. A report
 * that cannot be written to the standard output ends the run. Returns 0,
 * or the first negative error, which it has said on stderr.
 */
int run__loop(const struct run *r);

/* CLOCK_MONOTONIC in ns: bpf_ktime_get_ns()'s clock, and a task's start_time's. */
unsigned long long run__now_ns(void);

/*
 * Installs the SIGINT/SIGTERM/SIGHUP handlers that make the loop stop (one
 * a second or more after the first ends the tool at once), and refuses to
 * start with the standard output closed. cli__parse() calls it: a
 * background job of a shell script starts with SIGINT ignored, and a
 * signal sent on seeing the banner must not be lost.
 */
void run__catch_signals(void);

/* True once a stop signal arrived; for tools with their own waits. */
bool run__stopping(void);

/*
 * Prints a tool's "Tracing ... Hit Ctrl-C to end." line: on stdout like
 * bcc, or on stderr with --json so that stdout stays pure JSON.
 */
void run__banner(const struct cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prints "HH:MM:SS" of @when (no newline). */
void run__print_time(FILE *f, time_t when);

#endif
