// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Names one kernel address the way the kernel's own %pS does, run on demand by common/klookup.c. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ksym.h"

char text[KSYM_TEXT_MAX];
long text_len;

/*
 * Run by BPF_PROG_TEST_RUN, never attached: the address comes as the
 * first argument, and the answer goes to .bss, which user space maps.
 */
SEC("raw_tp")
int ksym_name(__u64 *ctx)
{
	__u64 addr = ctx[0];

	text_len = bpf_snprintf(text, sizeof(text), "%pS", &addr, sizeof(addr));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
