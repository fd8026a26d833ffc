/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* offwaketime's map layout, shared by its BPF program and user space. */
#ifndef BPFSCOPE_OFFWAKETIME_H
#define BPFSCOPE_OFFWAKETIME_H

#include "offcpu.h"
#include "stack_key.h"

/* A blocked thread's stack joined with the stack of the thread that woke it. */
struct offwake_key {
	struct proc_key target_proc, waker_proc;
	__u32 target_tid, waker_tid;
	__u64 target_user_stack, target_kernel_stack;	/* stacks map keys, or STACK_NONE/LOST */
	__u64 waker_user_stack, waker_kernel_stack;
	char target[TASK_COMM_LEN];
	char waker[TASK_COMM_LEN];
};

#endif
