/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* offwaketime's map layout, shared by its BPF program and user space. */
#ifndef BPFSCOPE_OFFWAKETIME_H
#define BPFSCOPE_OFFWAKETIME_H

#include "offcpu.h"

/* A blocked thread's stack joined with the stack of the thread that woke it. */
struct offwake_key {
	__u32 target_pid, target_tgid;
	__s32 target_user_stack, target_kernel_stack;
	__u32 waker_pid, waker_tgid;
	__s32 waker_user_stack, waker_kernel_stack;
	char target[TASK_COMM_LEN];
	char waker[TASK_COMM_LEN];
};

#endif
