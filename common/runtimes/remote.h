/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the runtimes read of a live process's memory, and how they spell what they read. */
#ifndef BPFSCOPE_REMOTE_H
#define BPFSCOPE_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads @len bytes at @addr of process @pid: 0, or -EFAULT (not all of them). */
int remote__read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Appends code point @c to @out as UTF-8, if it fits in @room: the length written, else 0. */
size_t utf8__put(char *out, size_t room, uint32_t c);

#endif
