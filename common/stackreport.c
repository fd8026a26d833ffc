// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Turning stack counts into bcc's layouts and flame graph and pprof files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/types.h>

#include "cli.h"
#include "json.h"
#include "stack_key.h"
#include "stackreport.h"
#include "stacks.h"
#include "stackset.h"
#include "syms.h"
#include "tool.h"

struct record {
	struct stack_key key;
	__u64 value;
};

static int cmp_record(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	return (x->value > y->value) - (x->value < y->value);
}

int stackreport__track(struct stackreport *r)
{
	struct stack_key key, *prev = NULL;

	while (!bpf_map_get_next_key(r->counts_fd, prev, &key)) {
		if (!r->kernel_only)
			syms__track_pid(r->syms, key.tgid);
		prev = &key;
	}
	return 0;
}

/* "vfs_read_[k]": bcc's -a, so kernel frames stand out in any flame graph tool. */
static const char *annotated(struct stackreport *r, const char *name, char *buf, size_t size)
{
	if (!r->annotate_kernel)
		return name;
	snprintf(buf, size, "%s_[k]", name);
	return buf;
}

/* Root first, as folded lines and flame graphs want: comm; user; [-]; kernel. */
static size_t root_first(struct stackreport *r, const struct record *rec, struct frame *out,
			 char (*names)[256])
{
	struct frame user[STACKS_MAX_DEPTH], kernel[STACKS_MAX_DEPTH];
	int nu = 0, nk = 0;
	size_t n = 0;

	out[n++] = (struct frame){ .name = rec->key.comm, .kind = FRAME_ROOT };
	if (!r->kernel_only)
		nu = stacks__user(r->stacks, rec->key.tgid, rec->key.user_stack_id, user);
	if (!r->user_only)
		nk = stacks__kernel(r->stacks, rec->key.kernel_stack_id, kernel);
	for (int i = nu - 1; i >= 0; i--)
		out[n++] = user[i];
	if (r->delimit && nu && nk)
		out[n++] = (struct frame){ .name = "-", .kind = FRAME_SEPARATOR };
	for (int i = nk - 1; i >= 0; i--) {
		out[n] = kernel[i];
		if (kernel[i].kind == FRAME_KERNEL)
			out[n].name = annotated(r, kernel[i].name, names[i], sizeof(names[i]));
		n++;
	}
	return n;
}

static void print_multiline(struct stackreport *r, const struct record *rec)
{
	struct frame user[STACKS_MAX_DEPTH], kernel[STACKS_MAX_DEPTH];
	char buf[256];
	int nu = 0, nk = 0;

	if (!r->user_only) {
		nk = stacks__kernel(r->stacks, rec->key.kernel_stack_id, kernel);
		for (int i = 0; i < nk; i++)
			printf("    %s\n", kernel[i].kind == FRAME_KERNEL ?
			       annotated(r, kernel[i].name, buf, sizeof(buf)) : kernel[i].name);
	}
	if (!r->kernel_only) {
		nu = stacks__user(r->stacks, rec->key.tgid, rec->key.user_stack_id, user);
		if (r->delimit && nu && nk)
			printf("    --\n");
		for (int i = 0; i < nu; i++)
			printf("    %s\n", user[i].name);
	}
	printf("    %-16s %s (%u)\n", "-", rec->key.comm, rec->key.pid);
	printf("        %llu\n\n", (unsigned long long)rec->value);
}

int stackreport__write_files(const struct stackset *set, const char *svg, const char *pprof,
			     const struct flamegraph_opts *fg, const struct pprof_opts *pp)
{
	int err = 0, e;

	if (svg) {
		e = flamegraph__write(set, svg, fg);
		if (e)
			pr_err("cannot write %s: %s", svg, strerror(-e));
		else
			fprintf(stderr, "%s: flame graph written to %s\n", tool_name, svg);
		err = err ?: e;
	}
	if (pprof) {
		e = pprof__write(set, pprof, pp);
		if (e)
			pr_err("cannot write %s: %s", pprof, strerror(-e));
		else
			fprintf(stderr, "%s: pprof profile written to %s\n", tool_name, pprof);
		err = err ?: e;
	}
	return err;
}

int stackreport__print(struct stackreport *r)
{
	static struct frame f[2 * STACKS_MAX_DEPTH + 2];
	static char names[STACKS_MAX_DEPTH][256];
	struct stack_key key, *prev = NULL;
	struct stackset *set = NULL;
	struct record *all = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	while (!bpf_map_get_next_key(r->counts_fd, prev, &key)) {
		if (n == cap) {
			struct record *t;

			cap = cap ? cap * 2 : 1024;
			t = realloc(all, cap * sizeof(*t));
			if (!t) {
				free(all);
				return -ENOMEM;
			}
			all = t;
		}
		all[n].key = key;
		if (!bpf_map_lookup_elem(r->counts_fd, &key, &all[n].value))
			n++;
		prev = &key;
	}
	if (n)
		qsort(all, n, sizeof(*all), cmp_record);

	if (r->folded || r->svg || r->pprof) {
		set = stackset__new();
		if (!set) {
			free(all);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			stackset__add(set, f, root_first(r, &all[i], f, names), all[i].value);
		stackset__sort(set);
	}
	if (r->folded) {
		stackset__write_folded(set, stdout);
	} else {
		for (size_t i = 0; i < n; i++) {
			struct json j;
			size_t nf;

			if (!r->cli->json) {
				print_multiline(r, &all[i]);
				continue;
			}
			nf = root_first(r, &all[i], f, names);
			json__begin_line(&j, stdout);
			json__str(&j, "comm", all[i].key.comm);
			json__u64(&j, "pid", all[i].key.pid);
			json__u64(&j, "tgid", all[i].key.tgid);
			json__u64(&j, r->json_value ? r->json_value : "value", all[i].value);
			json__begin_array(&j, "frames");	/* root first, as in folded output */
			for (size_t k = 1; k < nf; k++)
				json__str(&j, NULL, f[k].name);
			json__end_array(&j);
			json__end_line(&j);
		}
	}
	fflush(stdout);
	if (set)
		err = stackreport__write_files(set, r->svg, r->pprof, &r->flamegraph, &r->profile);
	stackset__free(set);
	free(all);
	return err;
}
