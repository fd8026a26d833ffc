/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The container a process runs in: its cgroup, and the id its runtime wrote into that cgroup's path. */
#ifndef BPFSCOPE_CONTAINER_H
#define BPFSCOPE_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A container id as runtimes write it: 64 lowercase hex digits. */
#define CONTAINER_ID_LEN 64
/* ... and as docker ps and podman ps show it. */
#define CONTAINER_SHORT_LEN 12

/*
 * The id in cgroup path @path that docker ("docker-ID.scope", "/docker/ID"),
 * podman ("libpod-ID.scope", "libpod-ID"), containerd ("cri-containerd-ID.scope",
 * Kubernetes' ".../podUID/ID") or CRI-O ("crio-ID.scope") wrote there, the
 * innermost where containers nest; not a runtime's monitor's (conmon's).
 * Into @id (CONTAINER_ID_LEN + 1 bytes); false when there is none.
 */
bool container__id_of_path(const char *path, char *id);

/*
 * Process @pid's cgroup as the host sees it (/proc/PID/cgroup: the unified
 * hierarchy's line, or with none of its own, systemd's), into @path, at
 * most @size bytes with its NUL. 0, or negative errno (-ESRCH: gone).
 */
int container__cgroup_of(pid_t pid, char *path, size_t size);

/*
 * The cgroup v2 directory of the container whose id is, or starts with,
 * @id (12 hex digits at least), into @dir (@size bytes). 0; -ENOENT when
 * none is; -EEXIST when the id is too short to tell two apart; -ENOTDIR
 * without cgroup v2.
 */
int container__find_cgroup(const char *id, char *dir, size_t size);

struct cgroup_target;

/*
 * What -c/--cgroup @arg names: a cgroup v2 path as cgroup__resolve()
 * takes it, or a container's id (12 hex digits or more, as docker ps and
 * podman ps show it), its cgroup found by the id its runtime wrote into
 * the path. 0, or negative errno once said why.
 */
int container__resolve(const char *arg, struct cgroup_target *out);

/* Does @arg look like a container id (hex, 12 to 64 digits), not a path? */
bool container__is_id(const char *arg);

#endif
