/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A BPF program run by a sampling perf event on each online CPU, following CPU hotplug. */
#ifndef BPFSCOPE_SAMPLER_H
#define BPFSCOPE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_program;

struct sampler_opts {
	bool cycles;		/* hardware CPU cycles instead of the cpu-clock timer */
	uint64_t freq;		/* samples per second per CPU, or ... */
	uint64_t period;	/* ... one sample every @period ns (cpu-clock) or cycles */
	int cpu;		/* only this CPU; -1 for every online CPU */
};

struct sampler;

/*
 * Opens the event on every online CPU (or @o->cpu) and attaches @prog to
 * each. When cycles are asked for and the machine has no hardware counter
 * (no PMU, as in most VMs), falls back to cpu-clock with a note on stderr.
 * NULL with errno set, the failure reported once on stderr.
 */
struct sampler *sampler__new(struct bpf_program *prog, const struct sampler_opts *o);

/*
 * Follows CPU hotplug: samples CPUs that came online since the last call
 * and lets go of those that went away. Tools call it about once a second.
 */
void sampler__refresh(struct sampler *s);

/* Detaches and closes everything. */
void sampler__free(struct sampler *s);

/* Whether the hardware cycles event is in use (false after the fallback). */
bool sampler__cycles(const struct sampler *s);

/* How many CPUs are sampled now. */
unsigned int sampler__ncpus(const struct sampler *s);

/*
 * The online CPUs from /sys/devices/system/cpu/online (or from the file
 * named by BPFSCOPE_CPUS_ONLINE, a test hook) into @online[0..@n): 0 or
 * negative errno.
 */
int sampler__online_cpus(bool *online, int n);

#endif
