/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Turning a cgroup v2 path into what BPF programs compare: its id and depth. */
#ifndef BPFSCOPE_CGROUP_H
#define BPFSCOPE_CGROUP_H

#include <stdint.h>

struct cgroup_target {
	uint64_t id;	/* kernfs id (the directory's inode number) */
	int level;	/* 0 for the root of the hierarchy */
};

/*
 * Resolves @path, absolute or relative to the cgroup2 mount (e.g.
 * "/sys/fs/cgroup/system.slice" or "system.slice"). Returns 0, -ENOENT
 * when there is no such cgroup, -ENOTDIR when @path is not in cgroup v2.
 */
int cgroup__resolve(const char *path, struct cgroup_target *out);

/* The cgroup2 mount point, or NULL when cgroup v2 is not mounted. */
const char *cgroup__mountpoint(void);

#endif
