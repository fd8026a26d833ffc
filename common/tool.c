// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Diagnostics on stderr with the tool's name, libbpf log routing and the privilege check. */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "escape.h"
#include "probe.h"
#include "proc.h"
#include "tool.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

const char *tool_name = "bpfscope";
bool tool_verbose;

/*
 * One line on stderr, prefixed with the tool's name. Messages name what
 * other users chose (functions and paths from their binaries, process
 * names): escaped as the text reports are, so none can forge a line or
 * drive the terminal.
 */
static void vpr(const char *fmt, va_list ap)
{
	char buf[2048], *s = buf;
	va_list copy;
	int n;

	va_copy(copy, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n >= (int)sizeof(buf) && !(s = malloc(n + 1)))
		s = buf;
	else if (s != buf)
		vsnprintf(s, n + 1, fmt, copy);
	va_end(copy);
	fprintf(stderr, "%s: ", tool_name);
	escape__print(stderr, s, ESCAPE_TEXT);
	fputc('\n', stderr);
	if (s != buf)
		free(s);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr(fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr(fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (!tool_verbose)
		return;
	va_start(ap, fmt);
	vpr(fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/*
	 * Without -v libbpf stays quiet: its warnings repeat, in libbpf's
	 * words, a failure the tool reports once in its own.
	 */
	if (!tool_verbose)
		return 0;
	fprintf(stderr, "%s: ", tool_name);
	return vfprintf(stderr, fmt, ap);
}

void tool__init(const char *name)
{
	tool_name = name;
	libbpf_set_print(libbpf_print);
	/*
	 * libbpf 1.x raises RLIMIT_MEMLOCK by itself only on kernels that
	 * still charge BPF memory to it (before 5.11); nothing to do here.
	 */
}

void tool__set_verbose(bool verbose)
{
	tool_verbose = verbose;
}

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (geteuid() == 0)
		return 0;
	if (!syscall(SYS_capget, &hdr, data) &&
	    (has_cap(data, CAP_SYS_ADMIN) ||
	     (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON))))
		return 0;
	pr_err("need root (or CAP_BPF and CAP_PERFMON); try sudo");
	return -EPERM;
}

/*
 * What no tool can do without, said before libbpf fails on it with an errno
 * that names neither: the kernel's BTF (every program is CO-RE) and BPF ring
 * buffers. Linux 5.10, the oldest kernel checked (make check-vm), has both.
 */
static int check_kernel(void)
{
	if (!probe__has_btf()) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF): "
		       "bpfscope needs Linux 5.10 or later built with it");
		return -EOPNOTSUPP;
	}
	if (probe__disabled("ringbuf") || libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) <= 0) {
		pr_err("this kernel has no BPF ring buffer (Linux 5.8): bpfscope needs Linux 5.10 "
		       "or later");
		return -EOPNOTSUPP;
	}
	return 0;
}

int tool__check_host(void)
{
	int err = check_privileges();

	return err ?: check_kernel();
}

void tool__warn_ignored_n(const char *why, const char *const opts[], size_t n)
{
	size_t given = 0, seen = 0, len = 0;
	char list[256] = "";

	for (size_t i = 0; i < n; i++)
		given += opts[i] != NULL;
	for (size_t i = 0; i < n && len < sizeof(list); i++) {
		if (!opts[i])
			continue;
		seen++;
		len += snprintf(list + len, sizeof(list) - len, "%s%s",
				seen == 1 ? "" : seen == given ? " and " : ", ", opts[i]);
	}
	if (given)
		pr_warn("%s; %s %s ignored", why, list, given == 1 ? "is" : "are");
}

/* MemAvailable, in bytes; 0 when unknown. */
static unsigned long long mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

int tool__check_map_memory(const char *option, unsigned long value,
			   unsigned long long entry_bytes)
{
	unsigned long long avail = mem_available(), want = value * entry_bytes;

	if (!avail || want <= avail / 4)
		return 0;
	pr_err("%s %lu would take %.1f GB of kernel memory, and this machine has %.1f GB "
	       "available: at most %llu (a quarter of it)", option, value, want / 1e9,
	       avail / 1e9, avail / 4 / entry_bytes);
	return -ENOMEM;
}

void tool__report_bpf_error(const char *what, int err)
{
	const char *hint = "";

	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM:
		hint = " (run as root; a lockdown=confidentiality kernel refuses tracing)";
		break;
	case EACCES:
		/* Privileges were checked first: this is the verifier saying no. */
		hint = " (the kernel's verifier rejected a program; -v shows its log)";
		break;
	case ENOENT:
		hint = " (the kernel lacks a hook or BTF this tool needs; -v shows libbpf's log)";
		break;
	case ENOSPC:
	case E2BIG:
	case EINVAL:
		hint = " (-v shows the verifier's log)";
		break;
	}
	pr_err("cannot %s: %s%s", what, strerror(err), hint);
}

bool tool__legacy_bpf(void)
{
	static int legacy = -1;

	if (legacy < 0) {
		legacy = !probe__bpf_loop();
		if (legacy)
			pr_debug("BPF programs for kernels before 5.17 (no bpf_loop)%s",
				 probe__disabled("bpf_loop") ? ": BPFSCOPE_DISABLE=bpf_loop" : "");
	}
	return legacy;
}

void tool__thread_maps(struct bpf_map *task_storage, struct bpf_map *by_tid, unsigned int threads)
{
	if (tool__legacy_bpf()) {
		bpf_map__set_autocreate(task_storage, false);
		bpf_map__set_max_entries(by_tid, threads);
	} else {
		bpf_map__set_max_entries(by_tid, 1);
	}
}

static pid_t target;
static bool target_thread;

int tool__target(pid_t id, bool thread)
{
	if (!id)
		return 0;
	if (!proc__exists(id)) {
		pr_err("%s %d: no such %s", thread ? "tid" : "pid", id, thread ? "thread" : "process");
		return -ESRCH;
	}
	target = id;
	target_thread = thread;
	return 0;
}

int tool__target_gone(void)
{
	if (!target || proc__exists(target))
		return 0;
	pr_err("%s %d exited while %s loaded: nothing of it to trace", target_thread ? "tid" : "pid",
	       target, tool_name);
	return -ESRCH;
}

/* What tool__report_missed() asks the kernel about. */
static struct bpf_object *loaded;

/*
 * BPFSCOPE_VERIFIER_STATS=1: each program's verifier statistics on stderr
 * (instructions processed, states, time), for what a change to the BPF side
 * costs at load, where the slowest kernels' verifiers pay it many times over.
 */
#define STATS_LOG_SIZE 65536

static char **stats_logs(struct bpf_object *obj)
{
	struct bpf_program *prog;
	size_t n = 0, i = 0;
	char **logs;

	if (!getenv("BPFSCOPE_VERIFIER_STATS"))
		return NULL;
	bpf_object__for_each_program(prog, obj)
		n++;
	logs = calloc(n + 1, sizeof(*logs));
	bpf_object__for_each_program(prog, obj) {
		if (!logs || !bpf_program__autoload(prog))
			continue;
		/* A log that overflows fails the load (ENOSPC): each global call adds a line. */
		logs[i] = calloc(1, STATS_LOG_SIZE);
		if (logs[i] && !bpf_program__set_log_buf(prog, logs[i], STATS_LOG_SIZE))
			bpf_program__set_log_level(prog, 4);	/* BPF_LOG_STATS */
		i++;
	}
	return logs;
}

static void stats_print(struct bpf_object *obj, char **logs)
{
	struct bpf_program *prog;
	size_t i = 0;

	if (!logs)
		return;
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		for (char *l = logs[i] ? strtok(logs[i], "\n") : NULL; l; l = strtok(NULL, "\n"))
			if (strstr(l, "processed") || strstr(l, "verification time"))
				fprintf(stderr, "%s: verifier: %s: %s\n", tool_name,
					bpf_program__name(prog), l);
		free(logs[i++]);
	}
	free(logs);
}

int tool__load(struct bpf_object_skeleton *s)
{
	char **logs;
	int err;

	probe__release();
	logs = stats_logs(*s->obj);
	err = bpf_object__load_skeleton(s);
	stats_print(*s->obj, logs);
	if (!err)
		loaded = *s->obj;
	if (err)
		tool__report_bpf_error("load BPF programs", err);
	/*
	 * libbpf parsed the kernel's BTF (5+ MiB) for CO-RE and freed it;
	 * hand those pages back instead of carrying them for the whole run.
	 */
	malloc_trim(0);
	return err;
}

int tool__attach(struct bpf_object_skeleton *s)
{
	int err = bpf_object__attach_skeleton(s);

	if (err)
		tool__report_bpf_error("attach BPF programs", err);
	return err;
}

/* Events the kernel did not run @prog for, as it was running on the same CPU already. */
static __u64 prog_missed(const struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

uint64_t tool__missed(void)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	if (loaded)
		bpf_object__for_each_program(prog, loaded)
			n += prog_missed(prog);
	return n;
}

void tool__report_missed(void)
{
	struct bpf_program *prog;

	if (!loaded)
		return;
	bpf_object__for_each_program(prog, loaded) {
		__u64 n = prog_missed(prog);

		if (n)
			pr_warn("%llu events not traced by %s: the kernel does not run a BPF "
				"program that is already running on the same CPU",
				(unsigned long long)n, bpf_program__name(prog));
	}
}
