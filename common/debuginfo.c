// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The debug-file search: build-id and debuglink paths inside a process's root, then debuginfod. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifndef BPFSCOPE_STATIC
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#endif

#include "debuginfo.h"
#include "elffile.h"
#include "procfile.h"
#include "tool.h"

#define MAX_DIRS 16
#define MAX_BUILD_ID 64

struct debuginfo {
	char *dirs[MAX_DIRS];		/* absolute, without a trailing '/' */
	int ndirs;
	int hostfd;			/* our own root */
	struct stat host;
	/* debuginfod, loaded at run time so that no build depends on it */
	void *lib;
	void *client;
	double budget;			/* seconds left for it */
	double deadline;		/* of the fetch under way */
};

struct debuginfo *debuginfo__new(void)
{
	struct debuginfo *d = calloc(1, sizeof(*d));
	const char *env = getenv("BPFSCOPE_DEBUGINFO_PATH");
	char *copy, *tok, *save = NULL;

	if (!d)
		return NULL;
	copy = strdup(env ? env : "/usr/lib/debug");
	for (tok = strtok_r(copy, ":", &save); copy && tok && d->ndirs < MAX_DIRS;
	     tok = strtok_r(NULL, ":", &save)) {
		size_t len = strlen(tok);

		/* Only absolute directories: a relative one would mean wherever we run. */
		if (tok[0] != '/')
			continue;
		while (len > 1 && tok[len - 1] == '/')
			tok[--len] = '\0';
		d->dirs[d->ndirs] = strdup(tok);
		if (d->dirs[d->ndirs])
			d->ndirs++;
	}
	free(copy);
	d->hostfd = procfile__open_root(0);
	if (d->hostfd >= 0)
		fstat(d->hostfd, &d->host);
	return d;
}

void debuginfo__free(struct debuginfo *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->ndirs; i++)
		free(d->dirs[i]);
	if (d->hostfd >= 0)
		close(d->hostfd);
#ifndef BPFSCOPE_STATIC
	if (d->client) {
		void (*end)(debuginfod_client *) = dlsym(d->lib, "debuginfod_end");

		if (end)
			end(d->client);
	}
	/* Not dlclose()d: libcurl under it keeps global state and exit handlers. */
#endif
	free(d);
}

int debuginfo__crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0, NULL, 0);
	struct stat st;
	off_t off = 0;
	ssize_t n;

	/* Another user's file of any size, sparse or not: read only so far. */
	if (fstat(fd, &st))
		return -errno;
	if (st.st_size > DEBUGINFO_MAX_CRC)
		return -EFBIG;
	while (off < st.st_size && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, n);
		off += n;
	}
	if (off < st.st_size)
		return n < 0 ? -errno : -EIO;
	*crc = c;
	return 0;
}

/* Is the file on @fd the debug file of @q? */
static bool verify(int fd, const struct debuginfo_query *q)
{
	unsigned char id[MAX_BUILD_ID];
	uint32_t crc;
	Elf *elf;
	int len;

	if (elffile__begin(fd, &elf))
		return false;
	len = elffile__build_id(elf, id, sizeof(id));
	elf_end(elf);
	/* A binary with a build-id has its debug file by it, or not at all. */
	if (q->build_id)
		return len > 0 && (size_t)len == q->build_id_len && !memcmp(id, q->build_id, len);
	/* Without one, only the debuglink's CRC can tell. */
	return q->debuglink && !debuginfo__crc(fd, &crc) && crc == q->crc;
}

static int try_path(const struct debuginfo_query *q, int rootfd, const char *path,
		    enum procfile_follow follow, char *found, size_t size)
{
	int fd = procfile__openat(rootfd, path, follow, NULL);

	if (fd < 0)
		return fd;
	if (!verify(fd, q)) {
		pr_debug("%s: not the debug file of %s (build-id or CRC differ)", path, q->path);
		close(fd);
		return -ENOENT;
	}
	snprintf(found, size, "%s", path);
	return fd;
}

/* Is @fd our own root? Then a second search there would repeat the first. */
static bool is_host(const struct debuginfo *d, int fd)
{
	struct stat st;

	return fd == d->hostfd || (!fstat(fd, &st) && st.st_dev == d->host.st_dev &&
				   st.st_ino == d->host.st_ino);
}

static int by_build_id(struct debuginfo *d, const struct debuginfo_query *q, char *found,
		       size_t size)
{
	char hex[2 * MAX_BUILD_ID + 1], path[PATH_MAX];
	int roots[2] = { q->rootfd, is_host(d, q->rootfd) ? -1 : d->hostfd };

	if (!q->build_id || q->build_id_len < 2 || q->build_id_len > MAX_BUILD_ID)
		return -ENOENT;
	for (size_t i = 0; i < q->build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", q->build_id[i]);
	for (int r = 0; r < 2; r++) {
		if (roots[r] < 0)
			continue;
		for (int i = 0; i < d->ndirs; i++) {
			int fd;

			snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", d->dirs[i], hex,
				 hex + 2);
			/* Distributions link these to the real files: follow, inside the root. */
			fd = try_path(q, roots[r], path, PROCFILE_FOLLOW, found, size);
			if (fd >= 0)
				return fd;
		}
	}
	return -ENOENT;
}

static int by_debuglink(struct debuginfo *d, const struct debuginfo_query *q, char *found,
			size_t size)
{
	char *copy, path[PATH_MAX];
	const char *dir;
	int fd = -ENOENT;

	if (!q->debuglink || !q->path || q->path[0] != '/')
		return -ENOENT;
	copy = strdup(q->path);
	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	if (!strcmp(dir, "/"))
		dir = "";
	/* Beside the binary, and in .debug/ there: places its owner controls. */
	snprintf(path, sizeof(path), "%s/%s", dir, q->debuglink);
	fd = try_path(q, q->rootfd, path, PROCFILE_NOFOLLOW, found, size);
	if (fd < 0) {
		snprintf(path, sizeof(path), "%s/.debug/%s", dir, q->debuglink);
		fd = try_path(q, q->rootfd, path, PROCFILE_NOFOLLOW, found, size);
	}
	for (int i = 0; fd < 0 && i < d->ndirs; i++) {
		snprintf(path, sizeof(path), "%s%s/%s", d->dirs[i], dir, q->debuglink);
		fd = try_path(q, q->rootfd, path, PROCFILE_FOLLOW, found, size);
	}
	free(copy);
	return fd < 0 ? -ENOENT : fd;
}

int debuginfo__enable_debuginfod(struct debuginfo *d, unsigned int seconds)
{
#ifdef BPFSCOPE_STATIC
	pr_err("--debuginfod: not available in static builds (no libdebuginfod)");
	return -ENOTSUP;
#else
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *(*begin)(void);

	if (!urls || !*urls) {
		pr_err("--debuginfod: DEBUGINFOD_URLS is not set: no server to ask");
		return -EINVAL;
	}
	d->lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	begin = d->lib ? dlsym(d->lib, "debuginfod_begin") : NULL;
	if (!begin) {
		pr_err("--debuginfod: cannot load libdebuginfod.so.1 (%s): install libdebuginfod1",
		       dlerror());
		return -ENOTSUP;
	}
	d->budget = seconds;
	return 0;
#endif
}

#ifndef BPFSCOPE_STATIC
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct debuginfo *fetching;

/*
 * The library's progress callback: nonzero cancels a fetch past its time.
 * (Not on a first Ctrl-C: the report it ends the run with needs the files;
 * a second one ends the tool.)
 */
static int progress(debuginfod_client *c, long done, long total)
{
	return fetching && now() > fetching->deadline;
}

static int by_debuginfod(struct debuginfo *d, const struct debuginfo_query *q, char *found,
			 size_t size)
{
	int (*find)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progress)(debuginfod_client *, debuginfod_progressfn_t);
	char *path = NULL;
	double t0 = now();
	int fd;

	if (!d->lib || d->budget <= 0 || !q->build_id)
		return -ENOENT;
	find = dlsym(d->lib, "debuginfod_find_debuginfo");
	set_progress = dlsym(d->lib, "debuginfod_set_progressfn");
	if (!d->client) {
		debuginfod_client *(*begin)(void) = dlsym(d->lib, "debuginfod_begin");

		d->client = begin ? begin() : NULL;
		if (d->client && set_progress)
			set_progress(d->client, progress);
	}
	if (!d->client || !find)
		return -ENOENT;
	d->deadline = t0 + d->budget;
	fetching = d;
	fd = find(d->client, q->build_id, q->build_id_len, &path);
	fetching = NULL;
	d->budget -= now() - t0;
	if (fd < 0) {
		pr_debug("debuginfod: no debug file for %s: %s", q->path, strerror(-fd));
		free(path);
		return -ENOENT;
	}
	if (!verify(fd, q)) {
		pr_debug("debuginfod: %s is not the debug file of %s", path, q->path);
		close(fd);
		free(path);
		return -ENOENT;
	}
	snprintf(found, size, "%s", path ? path : "debuginfod");
	free(path);
	return fd;
}
#endif

int debuginfo__find(struct debuginfo *d, const struct debuginfo_query *q, char *found,
		    size_t size)
{
	struct debuginfo_query local = *q;
	int fd;

	if (local.rootfd < 0)
		local.rootfd = d->hostfd;
	if (local.rootfd < 0)
		return -ENOENT;
	fd = by_build_id(d, &local, found, size);
	if (fd < 0)
		fd = by_debuglink(d, &local, found, size);
#ifndef BPFSCOPE_STATIC
	if (fd < 0)
		fd = by_debuginfod(d, &local, found, size);
#endif
	return fd;
}
