/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What bpf/ksym.bpf.c and common/klookup.c share: the size of one answer. */
#ifndef BPFSCOPE_KSYM_H
#define BPFSCOPE_KSYM_H

/* "name+0xoff/0xsize [module]": KSYM_NAME_LEN (512 since 6.1), a module's name, the numbers. */
#define KSYM_TEXT_MAX 640

#endif
