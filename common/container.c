// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A process's cgroup read from /proc, a container's id read from a cgroup's path, and found back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"
#include "procfile.h"
#include "tool.h"

/* Is @s, @len bytes, a whole container id? */
static bool is_full_id(const char *s, size_t len)
{
	if (len != CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * The id of one path component @c (@len bytes), if a runtime named it
 * after its container: ID, or PREFIX-ID with a ".scope" after it or not.
 */
static const char *component_id(const char *c, size_t len)
{
	const char *dash;

	if (len > 6 && !memcmp(c + len - 6, ".scope", 6))
		len -= 6;
	if (len < CONTAINER_ID_LEN)
		return NULL;
	dash = c + len - CONTAINER_ID_LEN;
	if (dash != c && dash[-1] != '-')
		return NULL;
	/* The runtime's monitor of a container has a cgroup of its own: not the container. */
	if (dash != c && memmem(c, dash - c, "conmon", 6))
		return NULL;
	return is_full_id(dash, CONTAINER_ID_LEN) ? dash : NULL;
}

bool container__id_of_path(const char *path, char *id)
{
	const char *found = NULL, *c = path;

	while (*c) {
		const char *end = strchrnul(c, '/');
		const char *got = end > c ? component_id(c, end - c) : NULL;

		if (got)
			found = got;
		c = *end ? end + 1 : end;
	}
	if (!found)
		return false;
	memcpy(id, found, CONTAINER_ID_LEN);
	id[CONTAINER_ID_LEN] = '\0';
	return true;
}

/* A /proc/PID/cgroup line's path if it is of hierarchy @want ("0::" or a v1 name). */
static const char *line_path(const char *line, const char *want)
{
	const char *colon = strchr(line, ':');

	if (!colon || strncmp(colon + 1, want, strlen(want)) || colon[1 + strlen(want)] != ':')
		return NULL;
	return colon + 2 + strlen(want);
}

int container__cgroup_of(pid_t pid, char *path, size_t size)
{
	char file[64], *buf, *line, *save = NULL;
	const char *unified = NULL, *systemd = NULL;
	size_t len;
	int fd, err;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", pid);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	/* The kernel writes it; a line each of at most a path's length, a dozen hierarchies. */
	err = procfile__read(fd, 16 * (PATH_MAX + 32), &buf, &len);
	close(fd);
	if (err < 0)
		return err;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "0::", 3))
			unified = line + 3;
		else if (!systemd)
			systemd = line_path(line, "name=systemd");
	}
	/* A hybrid host's unified line says "/" where systemd's hierarchy says where it is. */
	if (unified && !strcmp(unified, "/") && systemd)
		unified = systemd;
	if (!unified)
		unified = systemd;
	err = unified ? 0 : -ENOENT;
	if (unified)
		snprintf(path, size, "%s", unified);
	free(buf);
	return err;
}

bool container__is_id(const char *arg)
{
	size_t len = strlen(arg);

	if (len < CONTAINER_SHORT_LEN || len > CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((arg[i] >= '0' && arg[i] <= '9') || (arg[i] >= 'a' && arg[i] <= 'f')))
			return false;
	return true;
}

/* How deep containers' cgroups are looked for: Kubernetes' are 4 or 5 levels down. */
#define FIND_DEPTH 8

struct find {
	const char *id;
	size_t len;
	char dir[PATH_MAX];
	int found;
};

static void find_in(struct find *f, char *path, size_t plen, int depth)
{
	struct dirent *e;
	DIR *d;

	if (depth > FIND_DEPTH || f->found > 1)
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) && f->found <= 1) {
		const char *id;
		size_t n = strlen(e->d_name);

		if (e->d_type != DT_DIR || e->d_name[0] == '.' || plen + 1 + n >= PATH_MAX)
			continue;
		path[plen] = '/';
		memcpy(path + plen + 1, e->d_name, n + 1);
		id = component_id(e->d_name, n);
		/* A container's cgroup: not looked into (its own may nest another, not its id). */
		if (id && !strncmp(id, f->id, f->len)) {
			if (!f->found++)
				snprintf(f->dir, sizeof(f->dir), "%s", path);
			continue;
		}
		find_in(f, path, plen + 1 + n, depth + 1);
	}
	path[plen] = '\0';
	closedir(d);
}

int container__find_cgroup(const char *id, char *dir, size_t size)
{
	const char *mnt = cgroup__mountpoint();
	struct find f = { .id = id, .len = strlen(id) };
	char path[PATH_MAX];

	if (!mnt)
		return -ENOTDIR;
	snprintf(path, sizeof(path), "%s", mnt);
	find_in(&f, path, strlen(path), 0);
	if (f.found > 1)
		return -EEXIST;
	if (!f.found)
		return -ENOENT;
	snprintf(dir, size, "%s", f.dir);
	return 0;
}

int container__resolve(const char *arg, struct cgroup_target *out)
{
	char dir[PATH_MAX];
	int err = cgroup__resolve(arg, out);

	if (err == -ENOENT && container__is_id(arg)) {
		err = container__find_cgroup(arg, dir, sizeof(dir));
		if (!err)
			return cgroup__resolve(dir, out);
		if (err == -EEXIST) {
			pr_err("container id '%s' is the start of more than one container's: give "
			       "more of it", arg);
			return err;
		}
		if (err == -ENOENT) {
			pr_err("no container's cgroup has id '%s' (and no cgroup is named so)", arg);
			return err;
		}
	}
	if (err == -ENOENT)
		pr_err("cgroup '%s' not found", arg);
	else if (err)
		pr_err("'%s' is not a cgroup v2 directory (cgroup2 is mounted at %s)", arg,
		       cgroup__mountpoint() ?: "nowhere");
	return err;
}
