/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* profile's shared layout: samples are counted by struct stack_key. */
#ifndef BPFSCOPE_PROFILE_H
#define BPFSCOPE_PROFILE_H

#include "stack_key.h"

#endif
