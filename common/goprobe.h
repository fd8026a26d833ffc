/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Where a Go function returns: its return instructions, found by disassembling it (capstone). */
#ifndef BPFSCOPE_GOPROBE_H
#define BPFSCOPE_GOPROBE_H

#include <stddef.h>
#include <stdint.h>

/* The largest function disassembled. */
#define GOPROBE_MAX_FUNC (1u << 20)

/*
 * The file offsets of the return instructions of the function whose code
 * is at file offset @off, @size bytes, in the file on @fd, for machine
 * @machine (EM_X86_64 or EM_AARCH64), into a new array. Their number (0:
 * it never returns), -ENOTSUP for another machine, -EILSEQ when part of
 * it could not be decoded (a return might hide there), or negative errno.
 */
ssize_t goprobe__returns(int fd, unsigned int machine, uint64_t off, uint64_t size,
			 uint64_t **rets);

#endif
