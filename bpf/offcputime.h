/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* offcputime's map layout, shared by its BPF program and user space. */
#ifndef BPFSCOPE_OFFCPUTIME_H
#define BPFSCOPE_OFFCPUTIME_H

#include "offcpu.h"
#include "stack_key.h"

#endif
