/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* profile's shared layout: samples are counted by struct stack_key. */
#ifndef BPFSCOPE_PROFILE_H
#define BPFSCOPE_PROFILE_H

#include "stack_key.h"

/* profile --wall's losses, at exit. */
struct wall_losses {
	__u64 starts;	/* no task storage for a thread leaving the CPU: its period untimed */
	__u64 keys;	/* the counts map was full */
};

#endif
