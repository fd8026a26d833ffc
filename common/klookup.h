/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel addresses named by the running kernel itself, one at a time, through a BPF program. */
#ifndef BPFSCOPE_KLOOKUP_H
#define BPFSCOPE_KLOOKUP_H

#include <stddef.h>
#include <stdint.h>

struct klookup;

/*
 * Loads the program (it needs bpf_snprintf(): Linux 5.13). NULL and errno
 * where the kernel cannot, or BPFSCOPE_DISABLE=bpf_snprintf.
 */
struct klookup *klookup__open(void);
void klookup__close(struct klookup *l);

/*
 * The kernel's %pS of @addr in @buf: "name+0xoff/0xsize [module]", or
 * the address itself in hex when no symbol holds it. Its length, or
 * -errno when the kernel would not run the program.
 */
int klookup__text(struct klookup *l, uint64_t addr, char *buf, size_t size);

#endif
