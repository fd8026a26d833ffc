// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Continuous profiles: one pprof file per interval in a directory, a bounded number kept. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "outfile.h"
#include "pprofdir.h"
#include "tool.h"

#define SUFFIX ".pb.gz"

int pprofdir__check(const char *dir)
{
	struct stat st;

	if (stat(dir, &st)) {
		pr_err("--pprof-dir %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("--pprof-dir %s: not a directory", dir);
		return -ENOTDIR;
	}
	if (access(dir, W_OK | X_OK)) {
		pr_err("--pprof-dir %s: cannot write there: %s", dir, strerror(errno));
		return -errno;
	}
	return 0;
}

/* One of ours: TOOL-YYYYmmddTHHMMSS.mmmZ.pb.gz. */
static int is_ours(const struct dirent *d)
{
	size_t len = strlen(tool_name), n = strlen(d->d_name);

	return n == len + 1 + 20 + strlen(SUFFIX) && !strncmp(d->d_name, tool_name, len) &&
	       d->d_name[len] == '-' && !strcmp(d->d_name + n - strlen(SUFFIX), SUFFIX);
}

/* Removes the oldest of our files beyond @keep; only regular files of this user, never through a link. */
static void remove_old(const char *dir, unsigned int keep)
{
	struct dirent **names;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int n = fd < 0 ? -1 : scandirat(fd, ".", &names, is_ours, alphasort);
	int mine = 0;

	for (int i = n - 1; i >= 0; i--) {
		struct stat st;

		if (fstatat(fd, names[i]->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		/* Names sort as times do: newest first from the end. */
		if ((unsigned int)++mine > keep && unlinkat(fd, names[i]->d_name, 0))
			pr_warn("cannot remove %s/%s: %s", dir, names[i]->d_name, strerror(errno));
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	if (n >= 0)
		free(names);
	if (fd >= 0)
		close(fd);
}

int pprofdir__write(const char *dir, const struct stackset *set, struct pprof_opts *opts,
		    unsigned int keep)
{
	struct timespec now;
	time_t start = opts->time_nanos / 1000000000;
	int ms = opts->time_nanos / 1000000 % 1000;
	char path[PATH_MAX], stamp[32];
	struct outfile *o;
	struct tm tm;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	opts->duration_nanos = now.tv_sec * 1000000000LL + now.tv_nsec - opts->time_nanos;
	gmtime_r(&start, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	if (snprintf(path, sizeof(path), "%s/%s-%s.%03dZ" SUFFIX, dir, tool_name, stamp, ms) >=
	    (int)sizeof(path)) {
		pr_err("--pprof-dir %s: name too long", dir);
		return -ENAMETOOLONG;
	}
	o = outfile__open(path);
	if (!o)
		return -EIO;
	err = pprof__write(set, outfile__stream(o), opts);
	if (err) {
		pr_err("cannot write %s: %s", path, strerror(-err));
		outfile__discard(o);
		return err;
	}
	err = outfile__commit(o);
	if (err)
		return err;
	pr_debug("%s written", path);
	opts->time_nanos += opts->duration_nanos;
	remove_old(dir, keep);
	return 0;
}
