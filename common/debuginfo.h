/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Finding a stripped binary's debug file, and trusting only one that is provably its own. */
#ifndef BPFSCOPE_DEBUGINFO_H
#define BPFSCOPE_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct debuginfo;

/*
 * The search: BPFSCOPE_DEBUGINFO_PATH (a colon-separated list of absolute
 * directories, for tests) or /usr/lib/debug. NULL on ENOMEM.
 */
struct debuginfo *debuginfo__new(void);
void debuginfo__free(struct debuginfo *d);

/*
 * Also asks the debuginfod servers of $DEBUGINFOD_URLS, for at most
 * @seconds in all. Off by default: a report must not wait on the network,
 * nor send other users' build-ids out, unless asked to. 0, or -ENOTSUP
 * when this build or machine has no libdebuginfod (a message says which).
 */
int debuginfo__enable_debuginfod(struct debuginfo *d, unsigned int seconds);

struct debuginfo_query {
	int rootfd;			/* the process's root (O_PATH), where its paths mean */
	const char *path;		/* the binary, as the process sees it */
	const unsigned char *build_id;	/* NULL when it has none */
	size_t build_id_len;
	const char *debuglink;		/* its .gnu_debuglink name, or NULL */
	uint32_t crc;			/* the CRC the debuglink names */
};

/*
 * A debug file for @q, opened read-only, or -ENOENT. In order: by build-id
 * under the debug directories (inside the process's root, then ours); by
 * debuglink beside the binary, in .debug/ beside it and under the debug
 * directories (inside its root); debuginfod if enabled. A file is taken
 * only when its build-id is the binary's or, where the binary has none, its
 * CRC is the debuglink's. Its path goes to @found (for -v).
 */
int debuginfo__find(struct debuginfo *d, const struct debuginfo_query *q, char *found,
		    size_t size);

/* The largest file whose CRC is read: a debug file of a binary without build-id. */
#define DEBUGINFO_MAX_CRC (1LL << 30)

/*
 * The CRC-32 .gnu_debuglink uses (zlib's), of all of @fd; 0, -EFBIG for a
 * file past DEBUGINFO_MAX_CRC, or negative errno.
 */
int debuginfo__crc(int fd, uint32_t *crc);

#endif
