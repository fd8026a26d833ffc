// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test driver for the stack writers: reads folded stacks on stdin and writes
 * them back through common/ as folded text, SVG or pprof, so that tests can
 * check the writers on input whose every count is known.
 *
 * usage: stackconv folded|svg|pprof [FILE]
 * Frame kinds come from the names: the first frame is the root, "_[k]"
 * marks kernel frames, "_[j]" JIT frames, "_[i]" inlined calls (the mark
 * dropped: the writers add their own), "-" and "--" are separators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "outfile.h"
#include "pprof.h"
#include "stackset.h"

static enum frame_kind kind_of(const char *name, size_t i)
{
	size_t len = strlen(name);

	if (i == 0)
		return FRAME_ROOT;
	if (!strcmp(name, "-") || !strcmp(name, "--"))
		return FRAME_SEPARATOR;
	if (name[0] == '[')
		return FRAME_UNKNOWN;
	if (len > 4 && !strcmp(name + len - 4, "_[k]"))
		return FRAME_KERNEL;
	if (len > 4 && !strcmp(name + len - 4, "_[j]"))
		return FRAME_JIT;
	if (len > 4 && !strcmp(name + len - 4, "_[i]"))
		return FRAME_INLINE;
	return FRAME_USER;
}

static int read_folded(struct stackset *s, FILE *in)
{
	struct frame frames[512];
	char line[65536];

	while (fgets(line, sizeof(line), in)) {
		char *sp = strrchr(line, ' '), *tok, *save;
		size_t n = 0;

		if (!sp)
			continue;
		*sp = '\0';
		for (tok = strtok_r(line, ";", &save); tok && n < 512; tok = strtok_r(NULL, ";", &save)) {
			frames[n] = (struct frame){ .name = tok, .kind = kind_of(tok, n),
						    .addr = 0x1000 + n };
			if (frames[n].kind == FRAME_INLINE)
				tok[strlen(tok) - 4] = '\0';
			if (frames[n].kind == FRAME_USER)
				frames[n].module = "/usr/bin/test", frames[n].build_id = "abcdef0123";
			n++;
		}
		if (stackset__add(s, frames, n, strtoull(sp + 1, NULL, 10)))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct stackset *s = stackset__new();
	struct outfile *o = NULL;
	int err;

	if (argc < 2 || !s || read_folded(s, stdin)) {
		fprintf(stderr, "usage: stackconv folded|svg|pprof [FILE] < folded\n");
		stackset__free(s);
		return 2;
	}
	stackset__sort(s);
	if (strcmp(argv[1], "folded") && !(o = outfile__open(argc > 2 ? argv[2] : "-"))) {
		stackset__free(s);
		return 1;
	}
	if (!strcmp(argv[1], "folded")) {
		err = stackset__write_folded(s, stdout);
	} else if (!strcmp(argv[1], "svg")) {
		struct flamegraph_opts fo = { "Test Flame Graph", "stackconv <test & \"input\">",
					     "samples" };

		err = flamegraph__write(s, outfile__stream(o), &fo);
	} else if (!strcmp(argv[1], "pprof")) {
		struct pprof_opts po = {
			.type = "samples", .unit = "count", .type2 = "cpu", .unit2 = "nanoseconds",
			.scale = 10000000, .period_type = "cpu", .period_unit = "nanoseconds",
			.period = 10000000, .time_nanos = 1700000000000000000LL,
			.duration_nanos = 2000000000,
		};

		err = pprof__write(s, outfile__stream(o), &po);
	} else {
		fprintf(stderr, "stackconv: unknown format '%s'\n", argv[1]);
		outfile__discard(o);
		stackset__free(s);
		return 2;
	}
	if (o && !err)
		err = outfile__commit(o);
	else if (o)
		outfile__discard(o);
	stackset__free(s);
	if (err) {
		fprintf(stderr, "stackconv: cannot write: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
