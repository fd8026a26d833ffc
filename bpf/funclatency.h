/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* funclatency's map layout, shared by its BPF program and user space. */
#ifndef BPFSCOPE_FUNCLATENCY_H
#define BPFSCOPE_FUNCLATENCY_H

#include "hist.h"

/* Calls nested deeper than this (recursion, or one traced function calling another) are not timed. */
#define FUNC_MAX_DEPTH 32

#endif
