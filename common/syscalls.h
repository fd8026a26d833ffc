/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* System call names, for the frame profile --wall puts above a stack that left the CPU in one. */
#ifndef BPFSCOPE_SYSCALLS_H
#define BPFSCOPE_SYSCALLS_H

/* The name of system call @nr of this architecture, "read"; NULL for one the build did not know. */
const char *syscalls__name(unsigned int nr);

/* Its frame, "[sys_read]" ("[sys_467]" for one without a name); NULL for @nr >= SYSCALL_MAX. */
const char *syscalls__frame(unsigned int nr);

#endif
