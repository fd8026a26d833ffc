/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* biolatency's map layout, shared by its BPF program and user space. */
#ifndef BPFSCOPE_BIOLATENCY_H
#define BPFSCOPE_BIOLATENCY_H

#include "hist.h"

#define DISK_NAME_LEN 32

/* A histogram of a -D and/or -F run: per disk, per request flag set, or both. */
struct bio_key {
	__u32 dev;	/* MKDEV(major, first_minor) of the whole disk; 0 without -D */
	__u32 flags;	/* the request's cmd_flags; 0 without -F */
};

struct bio_hist {
	struct hist hist;
	char disk[DISK_NAME_LEN];	/* the gendisk's name, kept for disks gone by the report */
};

#endif
