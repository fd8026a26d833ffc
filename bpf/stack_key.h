/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The key of a stack count, shared by profile and offcputime and their user side. */
#ifndef BPFSCOPE_STACK_KEY_H
#define BPFSCOPE_STACK_KEY_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

struct stack_key {
	__u32 pid;		/* thread */
	__u32 tgid;		/* process */
	__s32 user_stack_id;	/* negative: none (-EFAULT) or lost */
	__s32 kernel_stack_id;
	char comm[TASK_COMM_LEN];
};

#endif
