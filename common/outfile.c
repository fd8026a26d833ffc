// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Writing an output file beside its final path and renaming it into place. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"
#include "tool.h"

struct outfile {
	FILE *f;
	int dirfd;		/* the directory the file goes to: resolved once */
	char *path;		/* as the user gave it, for messages */
	char *base;		/* its last component */
	char tmp[NAME_MAX + 1];	/* a named temporary file; "" while unnamed */
	bool std;		/* "-" */
};

bool outfile__is_stdout(const char *path)
{
	return !strcmp(path, "-");
}

/* As many symlinks on one path as the kernel follows. */
#define MAX_LINKS 40

/*
 * May we follow symlink @link, found in directory @dir? As
 * fs.protected_symlinks has it, whatever that is set to: not where a sticky,
 * world-writable directory (/tmp) holds another user's link, which would
 * steer a root tool's file into any directory of the link owner's choice.
 */
static bool may_follow(const struct stat *link, const struct stat *dir)
{
	return (dir->st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH) ||
	       link->st_uid == geteuid() || link->st_uid == dir->st_uid;
}

/*
 * Opens (O_PATH) what @path names from directory @at, as the kernel would
 * resolve it but one name at a time, so that each symlink on the way, in
 * the path or in a link's target, is judged by may_follow() where it is.
 * A new descriptor, or -errno: -EPERM for a link not followed.
 */
static int walk(int at, const char *path, int *links)
{
	char *copy = strdup(path), *save = NULL, *target = NULL;
	int fd;

	if (!copy)
		return -ENOMEM;
	if (*path == '/')
		fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else
		fd = at == AT_FDCWD ? open(".", O_PATH | O_DIRECTORY | O_CLOEXEC) :
				      fcntl(at, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		fd = -errno;
	for (char *name = strtok_r(copy, "/", &save); name && fd >= 0;
	     name = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st, dir;
		ssize_t n;

		if (next < 0 || fstat(next, &st)) {
			next = -errno;
		} else if (S_ISLNK(st.st_mode)) {
			if (!target)
				target = malloc(PATH_MAX);
			if (!target)
				n = -ENOMEM;
			else if (++*links > MAX_LINKS)
				n = -ELOOP;
			else if (fstat(fd, &dir))
				n = -errno;
			else if (!may_follow(&st, &dir))
				n = -EPERM;
			else if ((n = readlinkat(next, "", target, PATH_MAX - 1)) < 0)
				n = -errno;
			close(next);
			next = n;
			if (n >= 0) {
				target[n] = '\0';
				next = walk(fd, target, links);
			}
		}
		close(fd);
		fd = next;
	}
	free(target);
	free(copy);
	return fd;
}

/* The directory of @path, opened, and the name in it; -errno. */
static int open_dir(const char *path, char **base)
{
	char *d = strdup(path), *b = strdup(path);
	int fd = -ENOMEM, links = 0;

	if (d && b && *path) {
		fd = walk(AT_FDCWD, dirname(d), &links);
		if (fd >= 0) {
			struct stat st;

			if (fstat(fd, &st) || !S_ISDIR(st.st_mode)) {
				close(fd);
				fd = -ENOTDIR;
			}
		}
		*base = strdup(basename(b));
		if (fd >= 0 && (!*base || !strcmp(*base, "/") || !strcmp(*base, ".") ||
				!strcmp(*base, ".."))) {
			close(fd);
			fd = *base ? -EISDIR : -ENOMEM;
			free(*base);
		}
	} else if (!*path) {
		fd = -ENOENT;
	}
	free(d);
	free(b);
	return fd;
}

int outfile__open_dir(const char *path)
{
	char *base = NULL;
	int fd = open_dir(path, &base);

	if (fd >= 0)
		free(base);
	return fd;
}

void outfile__tmp_name(char *buf, size_t size, const char *base)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
		struct timespec ts;

		/* No entropy yet (early boot): only the O_EXCL retries stand. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = ((uint64_t)ts.tv_nsec << 20 ^ ts.tv_sec) * 0x9e3779b97f4a7c15ULL ^ getpid();
	}
	snprintf(buf, size, ".%.200s.%016llx", base, (unsigned long long)r);
}

/*
 * An unnamed file in @dirfd (O_TMPFILE), which nothing else can see or
 * leave behind; where the file system has none, a hidden name made with
 * O_EXCL, so that nothing planted there is opened.
 */
static int create_tmp(struct outfile *o)
{
	int fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	for (int i = 0; i < 100; i++) {
		outfile__tmp_name(o->tmp, sizeof(o->tmp), o->base);
		fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		o->tmp[0] = '\0';
	return fd >= 0 ? fd : -errno;
}

static void outfile_free(struct outfile *o)
{
	if (o->f && !o->std)
		fclose(o->f);
	if (o->tmp[0])
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->path);
	free(o->base);
	free(o);
}

int outfile__check(const char *path)
{
	struct outfile *o;
	struct stat st;

	if (outfile__is_stdout(path))
		return 0;
	/* A directory there would only fail the rename, after all the tracing. */
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		pr_err("cannot write %s: %s", path, strerror(EISDIR));
		return -EISDIR;
	}
	o = outfile__open(path);
	if (!o)
		return -EIO;
	outfile__discard(o);
	return 0;
}

struct outfile *outfile__open(const char *path)
{
	struct outfile *o = calloc(1, sizeof(*o));
	int fd;

	if (!o) {
		pr_err("cannot write %s: %s", path, strerror(ENOMEM));
		return NULL;
	}
	o->dirfd = -1;
	o->path = strdup(path);
	if (outfile__is_stdout(path)) {
		o->std = true;
		o->f = stdout;
		return o;
	}
	fd = open_dir(path, &o->base);
	if (fd >= 0) {
		o->dirfd = fd;
		fd = create_tmp(o);
	}
	if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
		int err = -errno;

		close(fd);
		fd = err;
	}
	if (fd == -EPERM && o->dirfd < 0)
		pr_err("cannot write %s: a symlink on the way, in a sticky world-writable "
		       "directory such as /tmp, is another user's: not followed", path);
	else if (fd < 0)
		pr_err("cannot write %s: %s", path, strerror(-fd));
	if (fd < 0) {
		outfile_free(o);
		return NULL;
	}
	return o;
}

FILE *outfile__stream(struct outfile *o)
{
	return o->f;
}

/* Gives the unnamed file a hidden name beside the target, to rename from. */
static int name_tmp(struct outfile *o)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(o->f));
	for (int i = 0; i < 100; i++) {
		outfile__tmp_name(o->tmp, sizeof(o->tmp), o->base);
		if (!linkat(AT_FDCWD, proc, o->dirfd, o->tmp, AT_SYMLINK_FOLLOW))
			return 0;
		if (errno != EEXIST)
			break;
	}
	o->tmp[0] = '\0';
	return -errno;
}

int outfile__commit(struct outfile *o)
{
	mode_t mask = umask(0);
	int err = 0;

	umask(mask);
	if (o->std) {
		err = fflush(o->f) || ferror(o->f) ? -(errno ? errno : EIO) : 0;
	} else {
		if (fflush(o->f) || ferror(o->f))
			err = -(errno ? errno : EIO);
		if (!err && fchmod(fileno(o->f), 0666 & ~mask))
			err = -errno;
		if (!err && !o->tmp[0])
			err = name_tmp(o);
		if (!err && renameat(o->dirfd, o->tmp, o->dirfd, o->base))
			err = -errno;
		if (!err)
			o->tmp[0] = '\0';	/* it is the file now: not to be removed */
		if (fclose(o->f) && !err)
			err = -(errno ? errno : EIO);
		o->f = NULL;
	}
	if (err)
		pr_err("cannot write %s: %s", o->std ? "the standard output" : o->path,
		       strerror(-err));
	outfile_free(o);
	return err;
}

void outfile__discard(struct outfile *o)
{
	if (o)
		outfile_free(o);
}
