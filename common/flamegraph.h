/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Writing a stack set as an interactive flame graph in SVG, with no external script. */
#ifndef BPFSCOPE_FLAMEGRAPH_H
#define BPFSCOPE_FLAMEGRAPH_H

#include <stdio.h>

struct stackset;

struct flamegraph_opts {
	const char *title;	/* what was measured: "CPU profile, 99 Hz" */
	const char *subtitle;	/* how: command, host, duration */
	const char *unit;	/* "samples", "us" */
};

/* Writes the SVG to @f; 0, or negative errno. */
int flamegraph__write(const struct stackset *set, FILE *f, const struct flamegraph_opts *opts);

#endif
