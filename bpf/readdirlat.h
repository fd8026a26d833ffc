/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* readdirlat's map and event layout, shared by its BPF program and user space. */
#ifndef BPFSCOPE_READDIRLAT_H
#define BPFSCOPE_READDIRLAT_H

#include "hist.h"

#define TASK_COMM_LEN 16
/*
 * A directory is named by its last DIR_DEPTH components, whole (a name is at
 * most NAME_MAX bytes), packed back to back: components are added while the
 * names so far take less than DIR_NAMES_MAX bytes, so the last one always
 * has room for a name of DIR_NAME_LEN.
 */
#define DIR_DEPTH 8
#define DIR_NAME_LEN 256		/* NAME_MAX and its NUL */
#define DIR_NAMES_MAX 512		/* a power of two: offsets are masked with it */

enum rdl_group {
	RDL_GROUP_NONE,
	RDL_GROUP_PROCESS,	/* -P */
	RDL_GROUP_DIR,		/* -D */
};

struct dir_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

/*
 * names holds depth NUL-terminated names: the directory's own first, the
 * one below "/" last.
 */
struct dir_path {
	__u32 depth;
	__u32 cut;		/* the walk stopped before reaching "/" */
	__u32 long_names;	/* bit i: name i was longer than DIR_NAME_LEN - 1, and cut */
	__u32 used;		/* bytes of names */
	char names[DIR_NAMES_MAX + DIR_NAME_LEN];
};

struct rdl_hist_key {
	__u32 tgid;
	__u32 pad;
	struct dir_key dir;
};

struct rdl_hist {
	struct hist hist;
	char comm[TASK_COMM_LEN];
};

/* One row of -S: a process reading a directory. */
struct rdl_summary {
	__u64 calls;
	__u64 scans;		/* calls that returned 0: the end of a listing */
	__u64 bytes;
	__u64 entries;
	__u64 lat_sum_ns;
	__u64 lat_max_ns;
	__u32 bufsz;		/* the count argument of the last call */
	__u32 errors;
	char comm[TASK_COMM_LEN];
};

/* One slow call, for --min-us. */
struct rdl_event {
	__u64 lat_ns;
	__s64 ret;
	struct dir_key dir;
	__u32 pid;
	__u32 tgid;
	__u32 bufsz;
	char comm[TASK_COMM_LEN];
};

#endif
