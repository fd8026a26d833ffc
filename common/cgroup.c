// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroup v2 paths to (id, level) pairs for in-kernel ancestry checks. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "cgroup.h"

const char *cgroup__mountpoint(void)
{
	static char mnt[PATH_MAX];
	char line[4096], type[64], dir[PATH_MAX];
	FILE *f;

	if (mnt[0])
		return mnt;
	f = fopen("/proc/self/mounts", "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %4095s %63s", dir, type) == 2 && !strcmp(type, "cgroup2")) {
			snprintf(mnt, sizeof(mnt), "%s", dir);
			break;
		}
	}
	fclose(f);
	return mnt[0] ? mnt : NULL;
}

int cgroup__resolve(const char *path, struct cgroup_target *out)
{
	const char *mnt = cgroup__mountpoint();
	char full[PATH_MAX], real[PATH_MAX], mreal[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	const char *rel;
	int level = 0;

	if (!mnt)
		return -ENOTDIR;
	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "%s/%s", mnt, path);
	if (!realpath(full, real) || stat(real, &st))
		return -ENOENT;
	if (!S_ISDIR(st.st_mode) || statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -ENOTDIR;
	if (!realpath(mnt, mreal))
		return -ENOTDIR;

	rel = real + strlen(mreal);
	if (strncmp(real, mreal, strlen(mreal)) || (*rel && *rel != '/'))
		return -ENOTDIR;
	for (const char *p = rel; *p; p++)
		if (*p == '/' && p[1])
			level++;

	out->id = st.st_ino;
	out->level = level;
	return 0;
}
