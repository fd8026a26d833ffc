/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small questions about processes, answered from /proc. */
#ifndef BPFSCOPE_PROC_H
#define BPFSCOPE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Does process (or thread) @pid exist? */
bool proc__exists(pid_t pid);

/* Reads /proc/PID/comm into @buf; "[unknown]" if the process is gone. */
void proc__comm(pid_t pid, char *buf, size_t size);

#endif
