// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The stack set at a busy server's scale: adds N distinct stacks (default
 * 100,000) and some again, sorts, keeps adding after the sort, and writes
 * every output, checking each count. Prints how long each step took.
 * usage: stackscale [N] [DIR]   -- DIR receives out.folded, out.svg, out.pb.gz
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flamegraph.h"
#include "outfile.h"
#include "pprof.h"
#include "stackset.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define FAIL(...) do { fprintf(stderr, "stackscale: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* Stack @i: a process of 200, main, one of 1,000 callers, a distinct leaf. */
static size_t make_stack(size_t i, struct frame *f, char (*names)[32])
{
	snprintf(names[0], 32, "proc%zu", i % 200);
	snprintf(names[1], 32, "main");
	snprintf(names[2], 32, "mid_%zu", (i / 7) % 1000);
	snprintf(names[3], 32, "leaf_%zu", i);
	snprintf(names[4], 32, "do_sys_%zu_[k]", i % 13);
	for (size_t k = 0; k < 5; k++)
		f[k] = (struct frame){ .name = names[k], .addr = 0x400000 + k,
				       .kind = k == 0 ? FRAME_ROOT : k == 4 ? FRAME_KERNEL : FRAME_USER,
				       .module = k && k < 4 ? "/usr/bin/app" : NULL };
	return 5;
}

static size_t count_lines(const char *path, unsigned long long *total)
{
	char line[512];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	*total = 0;
	while (f && fgets(line, sizeof(line), f)) {
		*total += strtoull(strrchr(line, ' ') + 1, NULL, 10);
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

static void write_file(const struct stackset *s, const char *dir, const char *name, int kind)
{
	char path[4096];
	struct outfile *o;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	o = outfile__open(path);
	if (!o)
		FAIL("cannot open %s", path);
	if (kind == 0) {
		err = stackset__write_folded(s, outfile__stream(o));
	} else if (kind == 1) {
		struct flamegraph_opts fo = { "scale", "stackscale", "samples" };

		err = flamegraph__write(s, outfile__stream(o), &fo);
	} else {
		struct pprof_opts po = { .type = "samples", .unit = "count" };

		err = pprof__write(s, outfile__stream(o), &po);
	}
	if (err || outfile__commit(o))
		FAIL("cannot write %s", path);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, again = n / 10;
	const char *dir = argc > 2 ? argv[2] : NULL;
	struct stackset *s = stackset__new();
	unsigned long long total = 0, folded_total;
	char names[5][32];
	struct frame f[5];
	double t0, t1, t2, t3, t4, t5;

	if (!s || !n)
		return 2;
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		if (stackset__add(s, f, make_stack(i, f, names), i % 7 + 1))
			FAIL("add %zu failed", i);
		total += i % 7 + 1;
	}
	/* The same stacks again merge: the index holds them all. */
	for (size_t i = 0; i < again; i++, total++)
		stackset__add(s, f, make_stack(i * 3 % n, f, names), 1);
	if (stackset__len(s) != n || stackset__total(s) != total)
		FAIL("%zu stacks, total %llu; expected %zu, %llu", stackset__len(s),
		     (unsigned long long)stackset__total(s), n, total);
	t1 = now();
	stackset__sort(s);
	t2 = now();
	for (size_t i = 1; i < n; i++)
		if (stackset__get(s, i)->value > stackset__get(s, i - 1)->value)
			FAIL("not sorted at %zu", i);
	/* A sorted set still merges what is added to it, and grows past its size. */
	for (size_t i = 0; i < again; i++, total++)
		stackset__add(s, f, make_stack(i, f, names), 1);
	for (size_t i = n; i < n + again; i++, total++)
		stackset__add(s, f, make_stack(i, f, names), 1);
	if (stackset__len(s) != n + again || stackset__total(s) != total)
		FAIL("after the sort: %zu stacks, total %llu; expected %zu, %llu",
		     stackset__len(s), (unsigned long long)stackset__total(s), n + again, total);
	stackset__sort(s);
	t3 = now();
	if (dir) {
		char path[4096];

		write_file(s, dir, "out.folded", 0);
		t4 = now();
		write_file(s, dir, "out.svg", 1);
		t5 = now();
		write_file(s, dir, "out.pb.gz", 2);
		snprintf(path, sizeof(path), "%s/out.folded", dir);
		if (count_lines(path, &folded_total) != n + again || folded_total != total)
			FAIL("folded output: wrong line count or total");
		printf("%zu stacks: add %.3f s, sort %.3f s, folded %.3f s, svg %.3f s, "
		       "pprof %.3f s\n", n + again, t1 - t0, t2 - t1, t4 - t3, t5 - t4, now() - t5);
	} else {
		printf("%zu stacks: add %.3f s, sort %.3f s\n", n + again, t1 - t0, t2 - t1);
	}
	stackset__free(s);
	return 0;
}
