/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Opening files other users control, as root: regular files only, inside a process's own root. */
#ifndef BPFSCOPE_PROCFILE_H
#define BPFSCOPE_PROCFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

struct maps_entry;

/*
 * Every open here is made with O_PATH first, checked to be a regular file
 * and only then reopened for reading (O_NONBLOCK), so that a FIFO cannot
 * block us and a device cannot be opened, with whatever opening it does.
 * Errors are negative errno; a file of another kind is -EINVAL.
 */

/*
 * The root directory of process @pid as an O_PATH descriptor: what "/"
 * means to it (its container's root); @pid 0 is our own.
 */
int procfile__open_root(pid_t pid);

enum procfile_follow {
	PROCFILE_NOFOLLOW,	/* the last component must not be a symlink */
	PROCFILE_FOLLOW,	/* symlinks are followed, but never out of the root */
};

/*
 * Opens @path as the process whose root is @rootfd sees it: absolute
 * symlinks and ".." stay inside that root (openat2 RESOLVE_IN_ROOT), and
 * /proc magic links are not followed. Fills @st when given.
 */
int procfile__openat(int rootfd, const char *path, enum procfile_follow follow,
		     struct stat *st);

/*
 * Opens the file that process @pid maps at @e: through
 * /proc/PID/map_files, which names the mapped file itself whatever its path
 * now is; or, without the privilege for that, through @rootfd. The file's
 * device and inode must be those of the mapping.
 */
int procfile__open_mapped(pid_t pid, const struct maps_entry *e, int rootfd, struct stat *st);

/*
 * The identity of the file process @pid maps at @e, through map_files
 * without opening it; -errno (-EPERM without CAP_SYS_ADMIN, -ESTALE if
 * it is not the mapping's device and inode).
 */
int procfile__stat_mapped(pid_t pid, const struct maps_entry *e, struct stat *st);

/*
 * Reads @fd, at most @max bytes, into a new NUL-terminated buffer. 0 when
 * that was all of it, 1 when there was more, or negative errno.
 */
int procfile__read(int fd, size_t max, char **buf, size_t *len);

/*
 * The uid owning process @pid (its /proc directory), and the start time of
 * the process in clock ticks since boot (/proc/PID/stat); 0 or -ESRCH.
 */
int procfile__identity(pid_t pid, uid_t *uid, unsigned long long *start_ticks);

/* The start time in a /proc/PID/stat text @stat (NUL-terminated); 0 or -ESRCH. */
int procfile__stat_start(const char *stat, unsigned long long *start_ticks);

/* The pid of @pid in its own (innermost) pid namespace, from /proc/PID/status. */
pid_t procfile__nspid(pid_t pid);

/* A /proc/PID/status line: if it is NSpid's, the innermost pid to @ns, and true. */
bool procfile__status_nspid(const char *line, pid_t *ns);

/*
 * Raises the soft limit of open files to the hard one: a system-wide run
 * keeps a descriptor for each binary until its report. Returns the limit.
 */
unsigned long procfile__raise_nofile(void);

#endif
