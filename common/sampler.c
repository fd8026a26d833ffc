// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-CPU sampling perf events for a BPF program: opening, the cycles fallback, hotplug. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>

#include "sampler.h"
#include "tool.h"

struct cpu_event {
	int fd;			/* -1 when not sampling this CPU */
	struct bpf_link *link;
};

struct sampler {
	struct bpf_program *prog;
	struct sampler_opts o;
	int ncpus;		/* possible CPUs */
	struct cpu_event *ev;
};

static int parse_cpu_list(const char *list, bool *mask, int n)
{
	const char *p = list;

	memset(mask, 0, n * sizeof(*mask));
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p || a < 0)
			return -EINVAL;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return -EINVAL;
		}
		for (long c = a; c <= b && c < n; c++)
			mask[c] = true;
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

int sampler__online_cpus(bool *online, int n)
{
	const char *path = getenv("BPFSCOPE_CPUS_ONLINE");
	char buf[4096];
	FILE *f;
	int err = 0;

	f = fopen(path && *path ? path : "/sys/devices/system/cpu/online", "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		err = -EIO;
	fclose(f);
	return err ? err : parse_cpu_list(buf, online, n);
}

static int open_event(const struct sampler *s, int cpu, bool cycles)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = cycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = s->o.freq != 0,
	};
	int fd;

	if (s->o.freq)
		attr.sample_freq = s->o.freq;
	else
		attr.sample_period = s->o.period;
	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void detach(struct cpu_event *ev)
{
	/* The link owns the perf event: destroying it closes the descriptor too. */
	if (ev->link)
		bpf_link__destroy(ev->link);
	else if (ev->fd >= 0)
		close(ev->fd);
	ev->link = NULL;
	ev->fd = -1;
}

/* 0, -ENODEV when @cpu went offline meanwhile, or another negative errno. */
static int attach(struct sampler *s, int cpu)
{
	struct cpu_event *ev = &s->ev[cpu];
	int fd = open_event(s, cpu, s->o.cycles), err;

	if (fd < 0)
		return fd;
	ev->fd = fd;
	ev->link = bpf_program__attach_perf_event(s->prog, fd);
	if (!ev->link) {
		err = -errno;
		detach(ev);
		return err;
	}
	pr_debug("sampling CPU %d with %s", cpu, s->o.cycles ? "cycles" : "cpu-clock");
	return 0;
}

static long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	long rate = -1;

	if (f) {
		if (fscanf(f, "%ld", &rate) != 1)
			rate = -1;
		fclose(f);
	}
	return rate;
}

static void report_open_error(const struct sampler *s, int err)
{
	long max = max_sample_rate();

	if (err == -EINVAL && s->o.freq && max > 0 && (long)s->o.freq > max)
		pr_err("cannot sample at %llu Hz: the kernel allows at most %ld "
		       "(sysctl kernel.perf_event_max_sample_rate); lower -F",
		       (unsigned long long)s->o.freq, max);
	else if (err == -EACCES || err == -EPERM)
		pr_err("cannot open perf events: %s (run as root, or lower "
		       "kernel.perf_event_paranoid)", strerror(-err));
	else if (err == -EMFILE)
		pr_err("cannot open perf events: too many open files (raise ulimit -n)");
	else
		pr_err("cannot open a %s perf event: %s", s->o.cycles ? "cycles" : "cpu-clock",
		       strerror(-err));
}

/*
 * A period so short that the kernel would throttle it (-c 1: a sample every
 * nanosecond) only buries the machine in interrupts: refuse what exceeds
 * the kernel's own rate limit, as -F does.
 */
static int check_period(const struct sampler *s)
{
	long max = max_sample_rate();
	unsigned long long min;

	if (s->o.freq || max <= 0)
		return 0;
	/* Cycles: at 4 GHz, the fastest clock this could be. */
	min = (s->o.cycles ? 4000000000ULL : 1000000000ULL) / max;
	if (s->o.period >= min)
		return 0;
	pr_err("-c %llu is too short: the kernel samples at most %ld times a second "
	       "(sysctl kernel.perf_event_max_sample_rate), so -c must be at least %llu%s",
	       (unsigned long long)s->o.period, max, min, s->o.cycles ? " cycles" : " ns");
	return -EINVAL;
}

/* Does the PMU count cycles? Probing on the first CPU we will sample answers for all. */
static void choose_event(struct sampler *s, int cpu)
{
	int fd;

	if (!s->o.cycles)
		return;
	fd = open_event(s, cpu, true);
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV) {
		pr_warn("no hardware cycles event on this machine (no PMU, as in most VMs); "
			"sampling with the cpu-clock software timer instead");
		s->o.cycles = false;
		if (!s->o.freq)
			pr_warn("the sample period is now %llu ns of CPU time, not cycles",
				(unsigned long long)s->o.period);
	}
}

struct sampler *sampler__new(struct bpf_program *prog, const struct sampler_opts *o)
{
	struct sampler *s = calloc(1, sizeof(*s));
	bool *online = NULL;
	int err = 0, first = -1, attached = 0;

	if (!s)
		return NULL;
	s->prog = prog;
	s->o = *o;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		err = s->ncpus ? s->ncpus : -EINVAL;
		pr_err("cannot count CPUs: %s", strerror(-err));
		goto fail;
	}
	s->ev = calloc(s->ncpus, sizeof(*s->ev));
	online = calloc(s->ncpus, sizeof(*online));
	if (!s->ev || !online) {
		err = -ENOMEM;
		goto fail;
	}
	for (int c = 0; c < s->ncpus; c++)
		s->ev[c].fd = -1;
	err = sampler__online_cpus(online, s->ncpus);
	if (err) {
		pr_err("cannot read the online CPUs: %s", strerror(-err));
		goto fail;
	}
	if (o->cpu >= 0) {
		if (o->cpu >= s->ncpus || !online[o->cpu]) {
			pr_err("CPU %d is not online (this machine has CPUs 0-%d; see "
			       "/sys/devices/system/cpu/online)", o->cpu, s->ncpus - 1);
			err = -ENODEV;
			goto fail;
		}
		for (int c = 0; c < s->ncpus; c++)
			online[c] = c == o->cpu;
	}
	for (int c = 0; c < s->ncpus && first < 0; c++)
		if (online[c])
			first = c;
	if (first >= 0)
		choose_event(s, first);
	err = check_period(s);
	if (err)
		goto fail;
	for (int c = 0; c < s->ncpus; c++) {
		if (!online[c])
			continue;
		err = attach(s, c);
		if (err == -ENODEV)	/* went offline since we looked */
			continue;
		if (err) {
			report_open_error(s, err);
			goto fail;
		}
		attached++;
	}
	if (!attached) {
		pr_err("no online CPU could be sampled");
		err = -ENODEV;
		goto fail;
	}
	free(online);
	return s;
fail:
	free(online);
	sampler__free(s);
	errno = -err;
	return NULL;
}

void sampler__refresh(struct sampler *s)
{
	bool *online = calloc(s->ncpus, sizeof(*online));

	if (!online || sampler__online_cpus(online, s->ncpus)) {
		free(online);
		return;
	}
	for (int c = 0; c < s->ncpus; c++) {
		bool want = online[c] && (s->o.cpu < 0 || c == s->o.cpu);
		struct cpu_event *ev = &s->ev[c];
		int err;

		if (!want && ev->fd >= 0) {
			/* The kernel dropped its event with the CPU: a new one is needed on return. */
			pr_debug("CPU %d went offline", c);
			detach(ev);
		} else if (want && ev->fd < 0) {
			err = attach(s, c);
			if (err && err != -ENODEV)
				pr_warn("CPU %d came online but cannot be sampled: %s", c,
					strerror(-err));
		}
	}
	free(online);
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	for (int c = 0; s->ev && c < s->ncpus; c++)
		detach(&s->ev[c]);
	free(s->ev);
	free(s);
}

bool sampler__cycles(const struct sampler *s)
{
	return s->o.cycles;
}

unsigned int sampler__ncpus(const struct sampler *s)
{
	unsigned int n = 0;

	for (int c = 0; c < s->ncpus; c++)
		n += s->ev[c].fd >= 0;
	return n;
}
