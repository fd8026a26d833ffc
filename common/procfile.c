// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Safe opens of other users' files: O_PATH, a type check, then a read-only reopen. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "procfile.h"
#include "procmaps.h"

int procfile__open_root(pid_t pid)
{
	char path[64];
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/root", pid);
	fd = open(pid ? path : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* @pathfd (O_PATH) reopened for reading, if it is a regular file; closes @pathfd. */
static int reopen_regular(int pathfd, struct stat *st)
{
	struct stat own;
	char proc[64];
	int fd;

	if (!st)
		st = &own;
	if (fstat(pathfd, st)) {
		fd = -errno;
	} else if (!S_ISREG(st->st_mode)) {
		fd = -EINVAL;
	} else {
		/* The very inode the O_PATH descriptor holds, whatever its name now names. */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pathfd);
		fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	close(pathfd);
	return fd;
}

int procfile__openat(int rootfd, const char *path, enum procfile_follow follow,
		     struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow == PROCFILE_NOFOLLOW ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS) {
		/*
		 * Before Linux 5.6 nothing keeps symlinks inside the root:
		 * at least the last component must not be one.
		 */
		char full[PATH_MAX];

		snprintf(full, sizeof(full), "/proc/self/fd/%d/%s", rootfd, path);
		fd = open(full, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	return reopen_regular(fd, st);
}

static void map_file_path(char *path, size_t size, pid_t pid, const struct maps_entry *e)
{
	snprintf(path, size, "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)e->start,
		 (unsigned long long)e->end);
}

static bool is_mapped(const struct stat *st, const struct maps_entry *e)
{
	return st->st_ino == e->inode && major(st->st_dev) == e->dev_major &&
	       minor(st->st_dev) == e->dev_minor;
}

int procfile__stat_mapped(pid_t pid, const struct maps_entry *e, struct stat *st)
{
	char path[96];

	map_file_path(path, sizeof(path), pid, e);
	if (stat(path, st))
		return -errno;
	return is_mapped(st, e) ? 0 : -ESTALE;
}

int procfile__open_mapped(pid_t pid, const struct maps_entry *e, int rootfd, struct stat *st)
{
	struct stat own;
	char path[96];
	int fd;

	if (!st)
		st = &own;
	map_file_path(path, sizeof(path), pid, e);
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		fd = reopen_regular(fd, st);
	} else if ((errno == EPERM || errno == EACCES) && rootfd >= 0 && !e->deleted) {
		/* map_files needs CAP_SYS_ADMIN; CAP_BPF and CAP_PERFMON alone get here. */
		fd = procfile__openat(rootfd, e->path, PROCFILE_NOFOLLOW, st);
	} else {
		fd = -errno;
	}
	if (fd >= 0 && !is_mapped(st, e)) {
		close(fd);
		fd = -ESTALE;
	}
	return fd;
}

int procfile__read(int fd, size_t max, char **out, size_t *outlen)
{
	size_t len = 0, cap = 4096 < max ? 4096 : max;
	char *buf = malloc(cap + 1), *t, extra;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap == max)
				break;
			cap = cap * 2 < max ? cap * 2 : max;
			t = realloc(buf, cap + 1);
			if (!t) {
				free(buf);
				return -ENOMEM;
			}
			buf = t;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	/* Full: is there more than we take? */
	return len == max && read(fd, &extra, 1) == 1;
}

int procfile__identity(pid_t pid, uid_t *uid, unsigned long long *start_ticks)
{
	char path[64], buf[1024];
	struct stat st;
	ssize_t n;
	int fd;

	if (!start_ticks) {
		snprintf(path, sizeof(path), "/proc/%d", pid);
		if (stat(path, &st))
			return -ESRCH;
		if (uid)
			*uid = st.st_uid;
		return 0;
	}
	/* Each of a process's files has its directory's owner. */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = fstat(fd, &st) ? -1 : read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	if (uid)
		*uid = st.st_uid;
	buf[n] = '\0';
	return procfile__stat_start(buf, start_ticks);
}

int procfile__stat_start(const char *stat, unsigned long long *start_ticks)
{
	/* The name in parentheses may hold anything, ")" included: skip to the last. */
	const char *p = strrchr(stat, ')');

	/* Then state and 19 more fields before starttime (field 22). */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -ESRCH;
	*start_ticks = strtoull(p + 1, NULL, 10);
	return 0;
}

pid_t procfile__nspid(pid_t pid)
{
	static struct stat own;
	char path[64], line[256];
	struct stat st;
	pid_t ns = pid;
	FILE *f;

	/*
	 * In the tool's own pid namespace, as most are, it is the pid: one
	 * stat, where status (read otherwise) is the costliest file of a
	 * process to read, with all its memory counts.
	 */
	if (!own.st_ino && stat("/proc/self/ns/pid", &own))
		own.st_ino = 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
	if (own.st_ino && !stat(path, &st) && st.st_dev == own.st_dev && st.st_ino == own.st_ino)
		return pid;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (procfile__status_nspid(line, &ns))
			break;
	if (f)
		fclose(f);
	return ns;
}

bool procfile__status_nspid(const char *line, pid_t *ns)
{
	const char *p;
	char *end;

	if (strncmp(line, "NSpid:", 6))
		return false;
	/* "NSpid:\t4242\t17": the last is the innermost namespace's. */
	for (p = line + 6; *p; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p || v <= 0 || v > INT_MAX)
			break;
		*ns = v;
	}
	return true;
}

unsigned long procfile__raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur == RLIM_INFINITY ? ULONG_MAX : rl.rlim_cur;
}
