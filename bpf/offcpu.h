/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What offcputime and offwaketime share across the BPF boundary: the thread filter, the losses. */
#ifndef BPFSCOPE_OFFCPU_H
#define BPFSCOPE_OFFCPU_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

struct offcpu_filter {
	__s32 tgid;			/* -p */
	__s32 tid;			/* -t */
	__u8 user_threads_only;		/* -u */
	__u8 kernel_threads_only;	/* -k */
	__u8 user_stacks;		/* false with -K */
	__u8 kernel_stacks;		/* false with -U */
	__u8 filter_state;		/* --state given */
	__u8 pad[7];
	__s64 state_mask;		/* bcc's --state: 0 means TASK_RUNNING exactly */
	__u64 min_us;			/* -m */
	__u64 max_us;			/* -M */
};

/* Off-CPU periods the BPF side could not count, reported at exit. */
struct offcpu_losses {
	__u64 starts;	/* no room to note when a thread left the CPU */
	/*
	 * Periods whose start or end the kernel never traced: some kernels
	 * (the development VM's) now and then switch a thread out or in
	 * without firing sched_switch. Its switch count tells.
	 */
	__u64 untraced;
	__u64 keys;	/* the totals map was full */
};

#endif
