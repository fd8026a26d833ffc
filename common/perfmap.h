/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* JIT symbols from /tmp/perf-PID.map, a file the traced process's user writes. */
#ifndef BPFSCOPE_PERFMAP_H
#define BPFSCOPE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most of a map read: JITs append for ever, and the file is theirs to fill. */
#define PERFMAP_MAX_BYTES (64u << 20)

struct perfmap_sym {
	uint64_t start, size;
	const char *name;	/* into the map's own copy of the file */
};

struct perfmap {
	struct perfmap_sym *syms;	/* sorted by start */
	size_t n;
	char *text;			/* the file, names cut out of it in place */
	size_t bytes;			/* what it holds: the text and the symbols */
	int truncated;			/* it was longer than PERFMAP_MAX_BYTES */
};

/*
 * Parses "START SIZE name" lines (hex numbers) from @text, which the map
 * takes over (names point into it); malformed lines are skipped.
 * 0 or -ENOMEM.
 */
int perfmap__parse(struct perfmap *m, char *text, size_t len);

/*
 * Reads the map of the process that is @nspid in its own pid namespace and
 * whose root is @rootfd: /tmp/perf-NSPID.map there. Trusted only as a
 * regular file, not a symlink, owned by @owner or root, read up to
 * PERFMAP_MAX_BYTES. 0, -ENOENT when there is none, or negative errno
 * (-EPERM: someone else's).
 */
int perfmap__load(struct perfmap *m, int rootfd, pid_t nspid, uid_t owner);

/* The symbol holding @addr, or NULL. */
const struct perfmap_sym *perfmap__find(const struct perfmap *m, uint64_t addr);

void perfmap__free(struct perfmap *m);

#endif
