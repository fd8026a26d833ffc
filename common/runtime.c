// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The runtimes known here, each behind the same few calls: only CPython so far. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "cpython.h"
#include "probe.h"
#include "runtime.h"

struct runtime_binary {
	struct py_binary *py;
};

struct runtime_names {
	struct py_names *py;
};

struct runtime_binary *runtime__probe(int fd, Elf *elf, const char *path)
{
	struct runtime_binary *rb;
	struct py_binary *py;

	/* BPFSCOPE_DISABLE=python: interpreters walked as the native code they are. */
	if (probe__disabled("python"))
		return NULL;
	py = python__probe(fd, elf, path);
	if (!py)
		return NULL;
	rb = malloc(sizeof(*rb));
	if (!rb) {
		python__binary_free(py);
		return NULL;
	}
	rb->py = py;
	return rb;
}

void runtime__binary_free(struct runtime_binary *rb)
{
	if (!rb)
		return;
	python__binary_free(rb->py);
	free(rb);
}

int runtime__process(const struct runtime_bpf *b, __u32 tgid, const struct runtime_binary *rb,
		     uint64_t bias, uint32_t id)
{
	struct py_proc proc;

	if (b->py_procs_fd < 0)
		return 0;
	if (!rb) {
		bpf_map_delete_elem(b->py_procs_fd, &tgid);
		return 0;
	}
	python__bpf_proc(rb->py, bias, id, &proc);
	return bpf_map_update_elem(b->py_procs_fd, &tgid, &proc, BPF_ANY) ? -errno : 0;
}

bool runtime__trampolines(const struct runtime_binary *rb, pid_t pid, uint64_t start,
			  uint64_t end, struct unwind_row *row)
{
	return python__trampolines(rb->py, pid, start, end, row);
}

bool runtime__trampoline_name(const char *name)
{
	return !strncmp(name, "py::", 4);
}

struct runtime_names *runtime_names__new(void)
{
	struct runtime_names *n = malloc(sizeof(*n));

	if (n && !(n->py = py_names__new())) {
		free(n);
		n = NULL;
	}
	return n;
}

void runtime_names__set_limit(struct runtime_names *n, size_t bytes)
{
	if (n)
		py_names__set_limit(n->py, bytes);
}

size_t runtime_names__bytes(const struct runtime_names *n)
{
	return n ? py_names__bytes(n->py) : 0;
}

void runtime_names__free(struct runtime_names *n)
{
	if (!n)
		return;
	py_names__free(n->py);
	free(n);
}

int runtime_names__get(struct runtime_names *n, const struct proc_key *p,
		       const struct runtime_binary *rb, uint64_t bias, uint64_t v,
		       struct runtime_frame *out)
{
	const struct py_name *name = py_names__get(n->py, p, rb ? rb->py : NULL, bias, v);

	if (!name)
		return -ENOENT;
	*out = (struct runtime_frame){ name->name, name->func, name->file, name->line };
	return 0;
}

void runtime_names__forget(struct runtime_names *n,
			   bool (*gone)(void *ctx, const struct proc_key *p), void *ctx)
{
	py_names__forget(n->py, gone, ctx);
}

void runtime_names__warn_losses(const struct runtime_names *n)
{
	if (n)
		py_names__warn_losses(n->py);
}
