/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The names of a runtime's frames, read from processes while they live, kept bounded: one store for each runtime. */
#ifndef BPFSCOPE_FRAME_NAMES_H
#define BPFSCOPE_FRAME_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "stack_key.h"

/* A runtime frame as the reports print it. */
struct frame_name {
	const char *name;	/* "stilton (cheeses.py:7)" */
	const char *func;	/* "stilton" */
	const char *file;	/* the function's file, as the runtime has it */
	uint32_t line;		/* its first line; 0 if unknown */
	/* Calls a compiler inlined into this frame's function, innermost first (the JVM's). */
	struct frame_name *inlined;
	uint32_t ninlined;
};

/* What a runtime says of its frames in the losses said at exit. */
struct frame_names_words {
	const char *runtime;	/* "Python" */
	const char *unknown;	/* "[unknown python]" */
	const char *changed;	/* "their code object was freed and its memory reused" */
};

struct frame_names;

struct frame_names *frame_names__new(const struct frame_names_words *words);
void frame_names__free(struct frame_names *n);
/* Keeps at most @bytes of names (0: no bound); what they take now. */
void frame_names__set_limit(struct frame_names *n, size_t bytes);
size_t frame_names__bytes(const struct frame_names *n);

/*
 * Reads a frame's name into *@out: 0, FRAME_NAME_PARTIAL (named, without
 * the calls inlined there: frame_name__drop_inlined), -EFAULT (its memory
 * could not be read), -ESTALE (its object is not the frame's any more), or
 * another negative errno.
 */
typedef int (*frame_name_read_fn)(void *ctx, struct frame_name *out);
#define FRAME_NAME_PARTIAL 1

/*
 * Frame @v (and @data) of process @p: named before, or now by @read (NULL:
 * the process cannot be read now); NULL if it cannot be named. What could
 * not be read is not tried again: the process is gone, or moved on.
 */
const struct frame_name *frame_names__get(struct frame_names *n, const struct proc_key *p,
					  uint64_t v, uint64_t data, frame_name_read_fn read,
					  void *ctx);

/* Fills *@out from @func, @file (its base name shown) and @line: 0 or -ENOMEM. */
int frame_name__make(struct frame_name *out, const char *func, const char *file, uint32_t line);
/*
 * Takes away all the calls inlined into *@n, where one of them could not
 * be read: a chain missing a call would say a function called another it
 * did not. FRAME_NAME_PARTIAL, for the read to return (counted, said at exit).
 */
int frame_name__drop_inlined(struct frame_name *n);

/* Forgets what it holds of processes for which @gone says yes: runs without end stay bounded. */
void frame_names__forget(struct frame_names *n, bool (*gone)(void *ctx, const struct proc_key *p),
			 void *ctx);

/* Says, at exit, what could not be named. */
void frame_names__warn_losses(const struct frame_names *n);

#endif
