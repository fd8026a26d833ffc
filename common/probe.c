// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Feature probes: tp_btf, fentry, kprobes and kprobe.multi, each tried once and cached. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ksyms.h"
#include "probe.h"
#include "tool.h"

/* Functions every kernel with BTF has, to try fentry and kprobe.multi on. */
static const char *const probe_funcs[] = { "vfs_read", "do_nanosleep", "schedule" };

/* "r0 = 0; exit": the smallest program the verifier accepts. */
static const struct bpf_insn return_zero[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

enum { UNKNOWN, YES, NO };

bool probe__disabled(const char *name)
{
	const char *p = getenv("BPFSCOPE_DISABLE");
	size_t len = strlen(name);

	while (p && *p) {
		size_t n = strcspn(p, ",");

		if (n == len && strncmp(p, name, len) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

static struct btf *btf;
static bool tried;

void probe__release(void)
{
	btf__free(btf);
	btf = NULL;
	tried = false;
}

const struct btf *probe__vmlinux_btf(void)
{
	if (!tried) {
		tried = true;
		btf = probe__disabled("btf") ? NULL : btf__load_vmlinux_btf();
		if (!btf) {
			btf = NULL;
			pr_debug("kernel has no BTF (/sys/kernel/btf/vmlinux)");
		}
	}
	return btf;
}

bool probe__has_btf(void)
{
	if (tried)
		return btf;
	/* Parsing its 5 MiB was 13 ms of a tool that then asks it nothing. */
	if (!probe__disabled("btf") && !access("/sys/kernel/btf/vmlinux", R_OK))
		return true;
	return probe__vmlinux_btf();
}

static int btf_func_id(const char *name)
{
	const struct btf *btf = probe__vmlinux_btf();

	return btf ? btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) : -ENOENT;
}

bool probe__btf_func(const char *name)
{
	return btf_func_id(name) > 0;
}

bool probe__tp_btf(const char *tracepoint)
{
	const struct btf *btf = probe__vmlinux_btf();
	char name[128];

	if (probe__disabled("tp_btf") || !btf)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tracepoint);
	return btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

int probe__tp_nargs(const char *tracepoint)
{
	const struct btf *btf = probe__vmlinux_btf();
	const struct btf_type *t;
	char name[128];
	int id;

	if (!btf)
		return -ENOENT;
	snprintf(name, sizeof(name), "btf_trace_%s", tracepoint);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return id;
	/* typedef -> pointer -> function prototype (void *ctx, args...) */
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return -EINVAL;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
		return -EINVAL;
	return btf_vlen(t) - 1;
}

const char *probe__tracefs(void)
{
	static const char *const paths[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char events[64];

	for (int i = 0; i < 2; i++) {
		snprintf(events, sizeof(events), "%s/events", paths[i]);
		if (access(events, F_OK) == 0)
			return paths[i];
	}
	if (mount("nodev", paths[0], "tracefs", 0, NULL) == 0) {
		pr_debug("mounted tracefs on %s", paths[0]);
		return paths[0];
	}
	pr_debug("no tracefs, and cannot mount it on %s: %s", paths[0], strerror(errno));
	return NULL;
}

bool probe__tracepoint(const char *category, const char *name)
{
	const char *dir;
	char path[256];

	if (probe__disabled("tracepoint"))
		return false;
	dir = probe__tracefs();
	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s/%s", dir, category, name);
	return access(path, F_OK) == 0;
}

bool probe__bpf_loop(void)
{
	static int state = -1;

	if (state < 0)
		state = !probe__disabled("bpf_loop") &&
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
	return state;
}

bool probe__task_storage(void)
{
	static int state = -1;

	if (state < 0)
		state = !probe__disabled("task_storage") &&
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_storage_get,
						NULL) == 1;
	return state;
}

bool probe__kallsyms(const char *name)
{
	struct ksym_line l;
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "re");

	while (f && !found && fgets(line, sizeof(line), f))
		found = !ksyms__parse_line(line, &l) && (l.type == 't' || l.type == 'T') &&
			!strcmp(l.name, name);
	if (f)
		fclose(f);
	return found;
}

static const char *first_btf_func(void)
{
	for (size_t i = 0; i < sizeof(probe_funcs) / sizeof(probe_funcs[0]); i++)
		if (probe__btf_func(probe_funcs[i]))
			return probe_funcs[i];
	return NULL;
}

/* Loading alone is not enough: some kernels load fentry programs but refuse the attach. */
static bool try_fentry(void)
{
	const char *func = first_btf_func();
	int prog_fd, link_fd;

	if (!func)
		return false;
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		.expected_attach_type = BPF_TRACE_FENTRY,
		.attach_btf_id = btf_func_id(func),
	);
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "bpfscope_probe", "GPL",
				return_zero, 2, &opts);
	if (prog_fd < 0) {
		pr_debug("fentry: cannot load a program for %s: %s", func, strerror(errno));
		return false;
	}
	link_fd = bpf_raw_tracepoint_open(NULL, prog_fd);
	if (link_fd < 0)
		pr_debug("fentry: cannot attach to %s: %s", func, strerror(errno));
	else
		close(link_fd);
	close(prog_fd);
	return link_fd >= 0;
}

bool probe__fentry(void)
{
	static int state;

	if (probe__disabled("fentry"))
		return false;
	if (state == UNKNOWN)
		state = try_fentry() ? YES : NO;
	return state == YES;
}

bool probe__kprobe(void)
{
	if (probe__disabled("kprobe"))
		return false;
	/* The kprobe PMU (4.17+), or the legacy tracefs interface. */
	return access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
	       access("/sys/kernel/tracing/kprobe_events", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/kprobe_events", F_OK) == 0;
}

static bool try_kprobe_multi(void)
{
	const char *func = first_btf_func();
	int prog_fd, link_fd;

	if (!func)
		func = "vfs_read";
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_KPROBE_MULTI);
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "bpfscope_probe", "GPL",
				return_zero, 2, &opts);
	if (prog_fd < 0) {
		pr_debug("kprobe.multi: cannot load a program: %s", strerror(errno));
		return false;
	}
	LIBBPF_OPTS(bpf_link_create_opts, lopts,
		.kprobe_multi.syms = &func,
		.kprobe_multi.cnt = 1,
	);
	link_fd = bpf_link_create(prog_fd, 0, BPF_TRACE_KPROBE_MULTI, &lopts);
	if (link_fd < 0)
		pr_debug("kprobe.multi: cannot attach to %s: %s", func, strerror(errno));
	else
		close(link_fd);
	close(prog_fd);
	return link_fd >= 0;
}

bool probe__kprobe_multi(void)
{
	static int state;

	if (probe__disabled("kprobe_multi") || !probe__kprobe())
		return false;
	if (state == UNKNOWN)
		state = try_kprobe_multi() ? YES : NO;
	return state == YES;
}
