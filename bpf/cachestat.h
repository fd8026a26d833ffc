/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* cachestat's counters, shared by its BPF program and user space. */
#ifndef BPFSCOPE_CACHESTAT_H
#define BPFSCOPE_CACHESTAT_H

#define TASK_COMM_LEN 16

/* Pages, not calls: large folios count for every page they hold. */
struct cachestat_counts {
	__u64 accessed;		/* page-cache lookups by reads and faults */
	__u64 added;		/* pages inserted into the page cache */
	__u64 dirtied;		/* pages newly dirtied */
};

/* One process's counts, for -P. */
struct cachestat_proc {
	struct cachestat_counts c;
	char comm[TASK_COMM_LEN];
};

#endif
