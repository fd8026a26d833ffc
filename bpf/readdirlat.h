/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* readdirlat's map and event layout, shared by its BPF program and user space. */
#ifndef BPFSCOPE_READDIRLAT_H
#define BPFSCOPE_READDIRLAT_H

#include "hist.h"

#define TASK_COMM_LEN 16
/* A directory is named by its last DIR_DEPTH components, each cut at DIR_NAME_LEN - 1. */
#define DIR_DEPTH 8
#define DIR_NAME_LEN 32

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

/* comp[0] is the directory's own name, comp[depth - 1] the one below "/". */
struct dir_path {
	__u32 depth;
	__u32 cut;		/* the walk stopped before reaching "/" */
	char comp[DIR_DEPTH][DIR_NAME_LEN];
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
