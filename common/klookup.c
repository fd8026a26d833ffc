// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel addresses named by the running kernel itself, one at a time, through a BPF program. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "klookup.h"
#include "ksym.h"
#include "ksym.skel.h"
#include "probe.h"

struct klookup {
	struct ksym_bpf *skel;
	int fd;
};

struct klookup *klookup__open(void)
{
	struct klookup *l;
	int err;

	if (probe__disabled("bpf_snprintf")) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->skel = ksym_bpf__open_and_load();
	if (!l->skel) {
		err = errno;
		free(l);
		errno = err;
		return NULL;
	}
	l->fd = bpf_program__fd(l->skel->progs.ksym_name);
	return l;
}

void klookup__close(struct klookup *l)
{
	if (!l)
		return;
	ksym_bpf__destroy(l->skel);
	free(l);
}

int klookup__text(struct klookup *l, uint64_t addr, char *buf, size_t size)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &addr, .ctx_size_in = sizeof(addr));
	long n;

	if (bpf_prog_test_run_opts(l->fd, &opts))
		return -errno;
	n = l->skel->bss->text_len;
	if (n <= 0)
		return n < 0 ? (int)n : -EINVAL;
	/* What the kernel wrote is terminated, and within KSYM_TEXT_MAX. */
	return snprintf(buf, size, "%.*s", KSYM_TEXT_MAX - 1, l->skel->bss->text);
}
