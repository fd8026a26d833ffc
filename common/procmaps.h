/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Parsing lines of /proc/PID/maps, kept apart so a fuzzer can reach it alone. */
#ifndef BPFSCOPE_PROCMAPS_H
#define BPFSCOPE_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct maps_entry {
	uint64_t start, end, pgoff;
	unsigned int dev_major, dev_minor;
	uint64_t inode;
	bool exec;
	bool deleted;		/* " (deleted)": the file was removed or replaced */
	const char *path;	/* into the parsed line; "" for anonymous memory */
};

/*
 * Parses one maps line (modified in place: the path is cut from any
 * " (deleted)" suffix and the newline). 0, or -EINVAL for a malformed line.
 */
int procmaps__parse_line(char *line, struct maps_entry *e);

#endif
