// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The runtimes known here, in one table, each behind the same few calls (seam.h): what the rest of the tools see of them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "disasm.h"
#include "probe.h"
#include "runtimes/runtime.h"
#include "runtimes/seam.h"

static const struct runtime_ops *const runtimes[] = {
	&python_runtime,
	&v8_runtime,
	&hotspot_runtime,
	&php_runtime,
	&perl_runtime,
	&ruby_runtime,
};

#define NRUNTIMES (sizeof(runtimes) / sizeof(runtimes[0]))

struct runtime_binary {
	const struct runtime_ops *ops;
	void *binary;		/* the runtime's own */
};

/* Each runtime's names, in the table's order. */
struct runtime_names {
	struct frame_names *names[NRUNTIMES];
};

static struct runtime_binary *probe(int fd, Elf *elf, const char *path)
{
	struct runtime_binary *rb;

	for (size_t i = 0; i < NRUNTIMES; i++) {
		const struct runtime_ops *o = runtimes[i];
		void *b;

		/* BPFSCOPE_DISABLE=python: its interpreters walked as the native code they are. */
		if (probe__disabled(o->name) || !(b = o->probe(fd, elf, path)))
			continue;
		rb = malloc(sizeof(*rb));
		if (!rb) {
			o->binary_free(b);
			return NULL;
		}
		*rb = (struct runtime_binary){ o, b };
		return rb;
	}
	return NULL;
}

struct runtime_binary *runtime__probe(int fd, Elf *elf, const char *path)
{
	struct runtime_binary *rb = probe(fd, elf, path);

	/* What some probes disassembled with is done with: a runtime's binary is probed once. */
	disasm__unload();
	return rb;
}

void runtime__binary_free(struct runtime_binary *rb)
{
	if (!rb)
		return;
	rb->ops->binary_free(rb->binary);
	free(rb);
}

int runtime__process(const struct runtime_bpf *b, __u32 tgid, const struct runtime_binary *rb,
		     uint64_t bias, uint32_t id)
{
	struct runtime_proc proc;
	int err;

	if (b->procs_fd < 0)
		return 0;
	if (!rb) {
		bpf_map_delete_elem(b->procs_fd, &tgid);
		return 0;
	}
	memset(&proc, 0, sizeof(proc));
	proc.runtime = rb->ops->id;
	proc.exec_id = UNWIND_EXEC_ANY;
	/* Not ready yet (-EAGAIN): its entry says so, and the walk asks for it again. */
	err = rb->ops->bpf_proc(rb->binary, tgid, bias, id, &proc);
	if (err && err != -EAGAIN)
		return err;
	return bpf_map_update_elem(b->procs_fd, &tgid, &proc, BPF_ANY) ? -errno : err;
}

bool runtime__trampolines(const struct runtime_binary *rb, pid_t pid, uint64_t start,
			  uint64_t end, struct unwind_row *row)
{
	return rb->ops->trampolines && rb->ops->trampolines(rb->binary, pid, start, end, row);
}

bool runtime__trampoline_name(const char *name)
{
	for (size_t i = 0; i < NRUNTIMES; i++)
		if (runtimes[i]->trampoline_name && runtimes[i]->trampoline_name(name))
			return true;
	return false;
}

struct runtime_names *runtime_names__new(void)
{
	struct runtime_names *n = calloc(1, sizeof(*n));

	for (size_t i = 0; n && i < NRUNTIMES; i++) {
		n->names[i] = frame_names__new(runtimes[i]->words);
		if (!n->names[i]) {
			runtime_names__free(n);
			return NULL;
		}
	}
	return n;
}

void runtime_names__free(struct runtime_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < NRUNTIMES; i++)
		if (n->names[i])
			frame_names__free(n->names[i]);
	free(n);
}

void runtime_names__set_limit(struct runtime_names *n, size_t bytes)
{
	/*
	 * Each may take it all: a host runs one runtime's services more than
	 * another's, and the budget counts them together (runtime_names__bytes).
	 */
	for (size_t i = 0; n && i < NRUNTIMES; i++)
		frame_names__set_limit(n->names[i], bytes);
}

size_t runtime_names__bytes(const struct runtime_names *n)
{
	size_t bytes = 0;

	for (size_t i = 0; n && i < NRUNTIMES; i++)
		bytes += frame_names__bytes(n->names[i]);
	return bytes;
}

int runtime_names__get(struct runtime_names *n, const struct proc_key *p,
		       const struct runtime_binary *rb, uint64_t bias, uint64_t v, uint64_t data,
		       struct runtime_frame *out)
{
	struct runtime_read r = { p, NULL, bias, v, data };
	const struct runtime_ops *ops;
	const struct frame_name *fn;

	/* A frame is its own runtime's to name, whatever binary the process runs now. */
	for (size_t i = 0; i < NRUNTIMES; i++) {
		ops = runtimes[i];
		if (ops->id != RUNTIME_FRAME_ID(v))
			continue;
		r.binary = rb && rb->ops == ops ? rb->binary : NULL;
		out->kind = ops->frame_kind;
		fn = frame_names__get(n->names[i], p, v, ops->named_by_frame ? 0 : data,
				      r.binary ? ops->read_name : NULL, &r);
		if (!fn)
			return -ENOENT;
		*out = (struct runtime_frame){ fn->name, fn->func, fn->file, fn->line, ops->frame_kind,
					       fn->inlined, fn->ninlined };
		return 0;
	}
	return -ENOENT;
}

const char *runtime__unknown_name(uint64_t v)
{
	for (size_t i = 0; i < NRUNTIMES; i++)
		if (runtimes[i]->id == RUNTIME_FRAME_ID(v))
			return runtimes[i]->words->unknown;
	return "[unknown]";
}

bool runtime__is_unknown_name(const char *name)
{
	for (size_t i = 0; i < NRUNTIMES; i++)
		if (name == runtimes[i]->words->unknown)
			return true;
	return false;
}

void runtime_names__forget(struct runtime_names *n,
			   bool (*gone)(void *ctx, const struct proc_key *p), void *ctx)
{
	for (size_t i = 0; i < NRUNTIMES; i++)
		frame_names__forget(n->names[i], gone, ctx);
}

void runtime_names__warn_losses(const struct runtime_names *n)
{
	for (size_t i = 0; n && i < NRUNTIMES; i++)
		frame_names__warn_losses(n->names[i]);
}
