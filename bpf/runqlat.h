/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* runqlat's map layout, shared by its BPF program and user space. */
#ifndef BPFSCOPE_RUNQLAT_H
#define BPFSCOPE_RUNQLAT_H

#include "hist.h"

#define TASK_COMM_LEN 16

/* How latencies are split into histograms: -P, -L, --pidnss. */
enum runqlat_group {
	GROUP_NONE,
	GROUP_PROCESS,
	GROUP_THREAD,
	GROUP_PIDNS,
};

/* One histogram of a -P, -L or --pidnss run, keyed by pid, tid or namespace. */
struct runqlat_hist {
	struct hist hist;
	char comm[TASK_COMM_LEN];
};

#endif
