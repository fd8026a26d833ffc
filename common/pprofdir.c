// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Continuous profiles: one pprof file per interval in a directory, a bounded number kept. */
#include <dirent.h>
#include <stdbool.h>
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
#include "stackset.h"
#include "tool.h"

#define SUFFIX ".pb.gz"
/* TOOL-YYYYmmddTHHMMSS.mmmZ.pb.gz: the tool's name, a dash, 20, the suffix. */
#define STAMP_LEN 20

/*
 * Counts that wait for a file that could be written (a full disk): merged,
 * so that they take the memory of their distinct stacks only, and at most
 * this many of those (about 20 MB); beyond, they are dropped.
 */
#define MAX_WAITING_STACKS 100000

#define MAX_ERRORS 8

/*
 * A file that cannot be written must end neither the run nor its counts:
 * they wait for the next file, which then covers both intervals. Each
 * distinct error is said once, and how often it came, at exit.
 */
static struct {
	int dirfd;			/* the directory, resolved once, before tracing */
	const char *dir;
	struct stackset *waiting;	/* counts not written yet, from opts->time_nanos */
	unsigned int waiting_files;	/* intervals they are */
	int err[MAX_ERRORS];		/* -errno, each said once... */
	unsigned int times[MAX_ERRORS];	/* ...and how many files it cost */
	int nerr;
	unsigned int failed, dropped;	/* files not written; intervals whose counts went */
	int64_t lost_since;		/* start of the counts lost at exit, if any */
	int64_t last_end;		/* of the last interval that waits */
	bool at_exit;
	/* Another instance writing here: said once. */
	unsigned int written;		/* files this run wrote */
	char first[NAME_MAX + 1];	/* the name of its first */
	bool said_other;
} pd = { .dirfd = -1 };

int pprofdir__check(const char *dir)
{
	char probe[PATH_MAX];
	struct stat st;
	int err;

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
	if (strlen(dir) + strlen(tool_name) + 2 + STAMP_LEN + strlen(SUFFIX) >= PATH_MAX) {
		pr_err("--pprof-dir %s: name too long", dir);
		return -ENAMETOOLONG;
	}
	/*
	 * The way there judged as for any output file (a link planted on it
	 * is not followed), then held: every file of the run goes where the
	 * path led now.
	 */
	snprintf(probe, sizeof(probe), "%s/%s-*" SUFFIX, dir, tool_name);
	err = outfile__check(probe);
	if (err)
		return err;
	if (pd.dirfd >= 0)
		close(pd.dirfd);
	/* Held open as outfile__check judged it: no second lookup to race. */
	pd.dirfd = outfile__open_dir(probe);
	if (pd.dirfd < 0) {
		pr_err("--pprof-dir %s: %s", dir, strerror(-pd.dirfd));
		err = pd.dirfd;
		pd.dirfd = -1;
		return err;
	}
	return 0;
}

/* One of ours: TOOL-YYYYmmddTHHMMSS.mmmZ.pb.gz. */
static int is_ours(const struct dirent *d)
{
	size_t len = strlen(tool_name), n = strlen(d->d_name);

	return n == len + 1 + STAMP_LEN + strlen(SUFFIX) && !strncmp(d->d_name, tool_name, len) &&
	       d->d_name[len] == '-' && !strcmp(d->d_name + n - strlen(SUFFIX), SUFFIX);
}

/*
 * Removes the oldest of our files beyond @keep; only regular files of this
 * user named as this tool names them (another tool's stay), never through
 * a link. Two instances of one tool in one directory cannot tell their
 * files apart, so each would remove the other's: said once, when more
 * files than this run wrote are named after its first.
 */
static void remove_old(const char *dir, unsigned int keep)
{
	struct dirent **names;
	int fd = openat(pd.dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int n = fd < 0 ? -1 : scandirat(fd, ".", &names, is_ours, alphasort);
	unsigned int mine = 0, since_first = 0;

	for (int i = n - 1; i >= 0; i--) {
		struct stat sb;

		if (fstatat(fd, names[i]->d_name, &sb, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
			continue;
		if (strcmp(names[i]->d_name, pd.first) >= 0)
			since_first++;
		/* Names sort as times do: newest first from the end. */
		if (++mine > keep && unlinkat(fd, names[i]->d_name, 0))
			pr_warn("cannot remove %s/%s: %s", dir, names[i]->d_name, strerror(errno));
	}
	/*
	 * Of this run's files, the newest min(written - 1, keep) were left
	 * last time, and one is new; fewer is fine (a pipeline takes them
	 * away), more are another's.
	 */
	if (!pd.said_other && since_first > (pd.written - 1 < keep ? pd.written - 1 : keep) + 1) {
		pr_warn("--pprof-dir %s: %s files this run did not write, named after its first: "
			"another %s writes there, and each removes the other's beyond --pprof-keep; "
			"give each its own directory", dir, tool_name, tool_name);
		pd.said_other = true;
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	if (n >= 0)
		free(names);
	if (fd >= 0)
		close(fd);
}

/*
 * @len bytes of @buf as @name in the directory, whole or not at all: an unnamed file
 * (O_TMPFILE), or where the file system has none a hidden one made with
 * O_EXCL, given a hidden name and renamed over @name, so that a link
 * planted there is replaced, never followed. As outfile.c does, but
 * quietly: a full disk is said once, not every interval. 0 or -errno.
 */
static int put_file(const char *name, const char *buf, size_t len)
{
	int dirfd = pd.dirfd, fd = -1, err = 0;
	char tmp[NAME_MAX + 1] = "", proc[64];
	mode_t mask = umask(0);
	bool named;

	umask(mask);
	fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666 & ~mask);
	for (int i = 0; fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL ||
				   (tmp[0] && errno == EEXIST)) && i < 100; i++) {
		outfile__tmp_name(tmp, sizeof(tmp), name);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0666 & ~mask);
	}
	if (fd < 0)
		return -errno;
	named = tmp[0];
	for (size_t off = 0; off < len && !err;) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n >= 0)
			off += n;
		else if (errno != EINTR)
			err = -errno;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (int i = 0; !err && !named && i < 100; i++) {
		outfile__tmp_name(tmp, sizeof(tmp), name);
		if (!linkat(AT_FDCWD, proc, dirfd, tmp, AT_SYMLINK_FOLLOW))
			named = true;
		else if (errno != EEXIST)
			err = -errno;
	}
	if (!err && !named)
		err = -EEXIST;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name))
		err = -errno;
	if (err && named)
		unlinkat(dirfd, tmp, 0);
	return err;
}

/* Adds every stack of @from to @to. 0 or -ENOMEM. */
static int merge(struct stackset *to, const struct stackset *from)
{
	struct frame *f = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < stackset__len(from) && !err; i++) {
		const struct stack *s = stackset__get(from, i);

		if (s->n > cap) {
			struct frame *t = realloc(f, s->n * sizeof(*f));

			if (!t) {
				err = -ENOMEM;
				break;
			}
			f = t;
			cap = s->n;
		}
		for (size_t k = 0; k < s->n; k++)
			f[k] = *stackset__frame(from, s->frames[k]);
		err = stackset__add(to, f, s->n, s->value);
	}
	free(f);
	return err;
}

static void say_time(char *buf, size_t len, int64_t nanos)
{
	time_t t = nanos / 1000000000;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* At exit: the files that could not be written, by error, and counts never written. */
static void say_failures(void)
{
	char when[32];

	if (pd.failed) {
		char *list = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&list, &len);

		for (int i = 0; f && i < pd.nerr; i++)
			fprintf(f, "%s%s: %u", i ? ", " : "", strerror(-pd.err[i]), pd.times[i]);
		if (f && !fclose(f))
			pr_warn("%u profile files could not be written in %s (%s)", pd.failed,
				pd.dir, list);
		free(list);
	}
	if (pd.waiting) {
		say_time(when, sizeof(when), pd.lost_since);
		pr_warn("the counts since %s (%u intervals) were never written: no file could be",
			when, pd.waiting_files);
	}
	if (pd.dropped)
		pr_warn("the counts of %u intervals were dropped, waiting too long for a file "
			"(more than %d stacks)", pd.dropped, MAX_WAITING_STACKS);
	stackset__free(pd.waiting);
	pd.waiting = NULL;
}

/* Says @err once, and counts it. */
static void note_failure(const char *dir, const char *name, int err)
{
	int i;

	pd.failed++;
	for (i = 0; i < pd.nerr && pd.err[i] != err; i++)
		;
	if (i == pd.nerr && i < MAX_ERRORS) {
		pd.err[pd.nerr++] = err;
		pr_warn("cannot write %s/%s: %s; its counts wait for the next file (each error "
			"is said once, and how often it came at exit)", dir, name, strerror(-err));
	}
	if (i < MAX_ERRORS)
		pd.times[i]++;
	if (!pd.at_exit) {
		pd.dir = dir;
		atexit(say_failures);
		pd.at_exit = true;
	}
}

int pprofdir__write(const char *dir, const struct stackset *set, struct pprof_opts *opts,
		    unsigned int keep)
{
	struct timespec now;
	time_t start = opts->time_nanos / 1000000000;
	int ms = opts->time_nanos / 1000000 % 1000;
	char name[NAME_MAX + 1], stamp[32];
	const struct stackset *out = set;
	char *buf = NULL;
	size_t len = 0;
	struct tm tm;
	FILE *f;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	opts->duration_nanos = now.tv_sec * 1000000000LL + now.tv_nsec - opts->time_nanos;
	gmtime_r(&start, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(name, sizeof(name), "%s-%s.%03dZ" SUFFIX, tool_name, stamp, ms);
	if (pd.waiting) {
		err = merge(pd.waiting, set);
		if (!err && stackset__len(pd.waiting) > MAX_WAITING_STACKS)
			err = -E2BIG;
		if (err) {
			/* This interval's counts alone, in a file that says it covers this interval alone. */
			pd.dropped += pd.waiting_files;
			stackset__free(pd.waiting);
			pd.waiting = NULL;
			pd.waiting_files = 0;
			opts->time_nanos = pd.last_end;
			return pprofdir__write(dir, set, opts, keep);
		}
		stackset__sort(pd.waiting);
		out = pd.waiting;
	}
	f = open_memstream(&buf, &len);
	err = f ? pprof__write(out, f, opts) : -errno;
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	if (!err)
		err = pd.dirfd >= 0 ? put_file(name, buf, len) : -EBADF;	/* never checked */
	free(buf);
	if (err) {
		note_failure(dir, name, err);
		if (!pd.waiting) {
			pd.waiting = stackset__new();
			if (!pd.waiting || merge(pd.waiting, set)) {
				stackset__free(pd.waiting);
				pd.waiting = NULL;
				pd.dropped++;
				opts->time_nanos += opts->duration_nanos;
				return 0;
			}
			pd.lost_since = opts->time_nanos;
		}
		pd.waiting_files++;
		pd.last_end = opts->time_nanos + opts->duration_nanos;
		return 0;
	}
	if (pd.waiting) {
		pr_warn("%s/%s written, with the counts of the %u intervals before it that could not be",
			dir, name, pd.waiting_files);
		stackset__free(pd.waiting);
		pd.waiting = NULL;
		pd.waiting_files = 0;
	} else {
		pr_debug("%s/%s written", dir, name);
	}
	if (!pd.written++)
		snprintf(pd.first, sizeof(pd.first), "%s", name);
	opts->time_nanos += opts->duration_nanos;
	remove_old(dir, keep);
	return 0;
}
