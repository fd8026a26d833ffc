/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A tool's identity and diagnostics: its name on every message, -v, privileges. */
#ifndef BPFSCOPE_TOOL_H
#define BPFSCOPE_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit codes every tool shares (CONVENTIONS.md). */
enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,	/* cannot load, attach, open; target died */
	EXIT_USAGE = 2,
};

extern const char *tool_name;
extern bool tool_verbose;

/* Names the tool on diagnostics and routes libbpf's log (debug only with -v). */
void tool__init(const char *name);
void tool__set_verbose(bool verbose);

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Options that do nothing beside another are said, never dropped silently:
 * tool__warn_ignored("-S prints a table", msecs ? "-m" : NULL, ...) prints
 * "readdirlat: -S prints a table; -m is ignored", naming the options that
 * are not NULL, and nothing when all are.
 */
#define tool__warn_ignored(why, ...)						\
	tool__warn_ignored_n(why, (const char *const[]){ __VA_ARGS__ },		\
			     sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))
void tool__warn_ignored_n(const char *why, const char *const opts[], size_t n);

/*
 * 0 when the process may load and attach tracing programs (root, or
 * CAP_BPF and CAP_PERFMON) and the kernel has what every tool needs (BTF,
 * ring buffers; BPFSCOPE_DISABLE=btf or ringbuf says it has not); else
 * -EPERM or -EOPNOTSUPP after printing what to do.
 */
int tool__check_host(void);

/*
 * Reports a failed libbpf call @what (e.g. "load BPF programs") with the
 * errno it returned and, where one is known, what the user can do about it.
 */
void tool__report_bpf_error(const char *what, int err);

/*
 * The process (@thread: thread) a tool traces with -p or -t, 0 for none:
 * 0 when it exists, else -ESRCH after saying so. Remembered for
 * tool__target_gone().
 */
int tool__target(pid_t id, bool thread);

/*
 * -ESRCH, said, when the target exited while the tool loaded and attached
 * (seconds, on a slow machine): nothing of it is left to trace, and its pid
 * may name another process before long.
 */
int tool__target_gone(void);

/*
 * Says at exit how many events the kernel did not give a program of the
 * skeleton tool__load() loaded because it was already running on that CPU
 * (bpf_prog_info's recursion_misses, Linux 5.12): lost data, never silent.
 */
void tool__report_missed(void);

/* The count tool__report_missed() says, of all programs: 0 before tool__load(). */
uint64_t tool__missed(void);

/*
 * Can the kernel give what @option @value asks for (@value entries of
 * @entry_bytes each, preallocated) without starving this machine? At most
 * a quarter of its available memory; else says what is possible. 0 or
 * -ENOMEM.
 */
int tool__check_map_memory(const char *option, unsigned long value,
			   unsigned long long entry_bytes);

struct bpf_object_skeleton;
struct bpf_map;

/*
 * Does this kernel need a tool's legacy BPF side (Makefile, LEGACY_TOOLS)?
 * True before Linux 5.17, which brought bpf_loop: such kernels have no
 * callbacks, and those before 5.11 no task storage nor BTF task pointers in
 * tracing programs. -v says so; BPFSCOPE_DISABLE=bpf_loop asks for it.
 */
bool tool__legacy_bpf(void);

/*
 * Opens the skeleton of tool NAME (a struct NAME_bpf), built from its
 * legacy BPF object where tool__legacy_bpf() says so; its skeleton header
 * and NAME.legacy.skel.h must both be included. NULL and errno on failure.
 */
#define tool__open_skeleton(name)						\
	({									\
		struct name##_bpf *obj_ = calloc(1, sizeof(*obj_));		\
		int err_ = obj_ ? name##_bpf__create_skeleton(obj_) : -ENOMEM;	\
										\
		if (!err_ && tool__legacy_bpf())				\
			obj_->skeleton->data = (void *)name##_legacy_bpf__elf_bytes(	\
				&obj_->skeleton->data_sz);			\
		if (!err_)							\
			err_ = bpf_object__open_skeleton(obj_->skeleton, NULL);	\
		if (err_) {							\
			name##_bpf__destroy(obj_);				\
			obj_ = NULL;						\
			errno = -err_;						\
		}								\
		obj_;								\
	})

/*
 * Per-thread state kept in @task_storage, or where the kernel has no task
 * storage for tracing programs (the legacy BPF side) in @by_tid, a hash
 * of @threads entries: the map not used is not created, or made small.
 */
void tool__thread_maps(struct bpf_map *task_storage, struct bpf_map *by_tid, unsigned int threads);

/*
 * Loads (verifies) and attaches a skeleton's programs, reporting a failure
 * once, with what the user can do about it. Return 0 or negative errno.
 */
int tool__load(struct bpf_object_skeleton *s);
int tool__attach(struct bpf_object_skeleton *s);

#endif
