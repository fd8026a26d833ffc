/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Run-time detection of the kernel's tracing mechanisms, so tools pick how to attach. */
#ifndef BPFSCOPE_PROBE_H
#define BPFSCOPE_PROBE_H

#include <stdbool.h>

struct btf;

/*
 * Each probe answers for the running kernel, tries the mechanism for real
 * where a cheap check could lie, and caches its answer. The environment
 * variable BPFSCOPE_DISABLE (a comma-separated list of "tp_btf", "tracepoint",
 * "fentry", "kprobe", "kprobe_multi") makes a probe answer no, to test
 * fallbacks.
 */
bool probe__tp_btf(const char *tracepoint);	/* e.g. "sched_switch" */
bool probe__fentry(void);
bool probe__kprobe(void);
bool probe__kprobe_multi(void);

/*
 * How many arguments tracepoint @tracepoint passes (from its btf_trace_
 * typedef), for hooks whose arguments changed across kernels; negative
 * errno when the kernel has no BTF for it.
 */
int probe__tp_nargs(const char *tracepoint);

/* Has the kernel's BTF a function @name (fentry can attach only to those)? */
bool probe__btf_func(const char *name);

/*
 * Does the kernel have the classic tracepoint @category/@name? libbpf
 * attaches those through tracefs, which this mounts on
 * /sys/kernel/tracing first when no tracefs is mounted (as perf does).
 */
bool probe__tracepoint(const char *category, const char *name);

/*
 * Where tracefs is mounted (mounting it on /sys/kernel/tracing when it is
 * not, as perf does), or NULL.
 */
const char *probe__tracefs(void);

/*
 * Has the kernel bpf_loop (5.17), and with it callbacks from BPF programs?
 * BPFSCOPE_DISABLE=bpf_loop says no.
 */
bool probe__bpf_loop(void);

/*
 * May tracing programs keep state with a task (task storage, Linux 5.12)?
 * Where not, tools key it by thread id. BPFSCOPE_DISABLE=task_storage
 * says no.
 */
bool probe__task_storage(void);

/* Is @name a function symbol in /proc/kallsyms (a kprobe can attach there)? */
bool probe__kallsyms(const char *name);

/* Is @name disabled through BPFSCOPE_DISABLE? */
bool probe__disabled(const char *name);

/* Has the kernel BTF? Without loading it where its file is there to see. */
bool probe__has_btf(void);

/* The running kernel's BTF, loaded once; NULL if it has none (or BPFSCOPE_DISABLE=btf). */
const struct btf *probe__vmlinux_btf(void);

/*
 * Frees the BTF the probes loaded (several MiB). tool__load() calls it, so
 * that libbpf's own copy for CO-RE is not the second one in memory.
 */
void probe__release(void);

#endif
