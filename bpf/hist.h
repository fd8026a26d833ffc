/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The histogram layout shared by the BPF programs and user space. */
#ifndef BPFSCOPE_HIST_H
#define BPFSCOPE_HIST_H

/*
 * Slot i counts values in [2^i, 2^(i+1) - 1], slot 0 also counts 0: 64 slots
 * cover the whole u64 range, so nothing is ever folded into a last row.
 */
#define HIST_SLOTS 64

struct hist {
	__u64 slots[HIST_SLOTS];
	__u64 sum;	/* of all values recorded, for averages and JSON "sum" */
};

#endif
