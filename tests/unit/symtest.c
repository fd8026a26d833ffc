// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Symbolizer driver for tests/syms.bats and the benchmark: resolves
 * addresses through common/syms.c and prints one line per address.
 * usage: symtest PID ADDR...     user addresses of process PID
 *        symtest -k ADDR...      kernel addresses
 *        symtest -i PID ADDR...  user addresses, with the calls inlined there
 *        symtest -b PID FILE     every address in FILE (one hex per line),
 *                                printing only the count and the time taken,
 *                                with the calls inlined there
 *        symtest -f BIN FILE     the same for file offsets in binary BIN
 *        symtest -k - [MAX]      kernel addresses, one hex per line on stdin,
 *                                as "name start module" (- for none); how
 *                                they were named on stderr, and with MAX, how
 *                                often more than MAX named were let go
 *        symtest -K KALLSYMS ADDR...  kernel addresses by a kallsyms-formatted
 *                                file (no modules)
 *        symtest -m BYTES ...    any of the above within a memory budget of
 *                                BYTES, trimmed to it before each address, as
 *                                between stacks; what was let go said (-v's)
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ksyms.h"
#include "syms.h"
#include "tool.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct syms *s = syms__new();
	struct sym_info si;
	bool inline_too, budget = false;
	char buf[512];

	if (!s || argc < 3)
		return 2;
	if (!strcmp(argv[1], "-m") && argc > 3) {
		syms__set_budget(s, strtoull(argv[2], NULL, 0));
		tool__set_verbose(true);
		argv += 2;
		argc -= 2;
		budget = true;
	}
	if (!strcmp(argv[1], "-f") && argc == 4) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		unsigned long long off;
		size_t n = 0, named = 0, inlined = 0;
		FILE *f = fopen(argv[3], "r");
		double t0 = now();

		while (fd >= 0 && f && fscanf(f, "%llx", &off) == 1) {
			struct sym_source calls[17];

			named += !syms__file(s, fd, off, &si);
			inlined += syms__source(&si, true, calls, 17) > 1;
			n++;
		}
		printf("%zu addresses, %zu named, %zu in inlined calls, %.3f s\n", n, named, inlined,
		       now() - t0);
		if (f)
			fclose(f);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (!strcmp(argv[1], "-b")) {
		pid_t pid = atoi(argv[2]);
		unsigned long long addr;
		size_t n = 0, named = 0, inlined = 0;
		FILE *f = fopen(argv[3], "r");
		double t0 = now();

		while (f && fscanf(f, "%llx", &addr) == 1) {
			struct proc_key k = { .tgid = pid };
			struct sym_source calls[17];
			int err;

			if (budget)
				syms__trim(s);
			err = pid ? syms__user(s, &k, addr, &si) : syms__kernel(s, addr, &si);
			named += !err;
			inlined += pid && syms__source(&si, true, calls, 17) > 1;
			n++;
		}
		printf("%zu addresses, %zu named, %zu in inlined calls, %.3f s\n", n, named, inlined,
		       now() - t0);
		if (f)
			fclose(f);
		goto out;
	}
	if (!strcmp(argv[1], "-k") && argc >= 3 && !strcmp(argv[2], "-")) {
		long max = argc > 3 ? atol(argv[3]) : -1, trims = 0;
		struct ksyms *k;
		char line[64];

		tool__set_verbose(true);	/* which way it went, on stderr */
		k = ksyms__load();
		while (k && fgets(line, sizeof(line), stdin)) {
			const char *module = NULL, *name;
			uint64_t start = 0;

			name = ksyms__find(k, strtoull(line, NULL, 16), &start, &module);
			if (name)
				printf("%s %llx %s\n", name, (unsigned long long)start, module ?: "-");
			else
				printf("%s\n", SYM_UNKNOWN_NAME);
			trims += max >= 0 && ksyms__trim(k, max);
		}
		if (max >= 0)
			fprintf(stderr, "let go %ld times\n", trims);
		ksyms__free(k);
		syms__free(s);
		return k ? 0 : 1;
	}
	if (!strcmp(argv[1], "-K")) {
		FILE *f = fopen(argv[2], "r");
		struct ksyms *k = f ? ksyms__parse(f, NULL) : NULL;

		for (int i = 3; k && i < argc; i++) {
			const char *module, *name;
			uint64_t start;

			name = ksyms__find(k, strtoull(argv[i], NULL, 16), &start, &module);
			printf("%s\n", name ?: SYM_UNKNOWN_NAME);
		}
		ksyms__free(k);
		if (f)
			fclose(f);
		syms__free(s);
		return k ? 0 : 1;
	}
	inline_too = !strcmp(argv[1], "-i");
	for (int i = 2 + inline_too; i < argc; i++) {
		unsigned long long addr = strtoull(argv[i], NULL, 16);
		struct proc_key k = { .tgid = atoi(argv[1 + inline_too]) };

		if (budget)
			syms__trim(s);
		if (!strcmp(argv[1], "-k"))
			syms__kernel(s, addr, &si);
		else
			syms__user(s, &k, addr, &si);
		sym_info__format(&si, buf, sizeof(buf), SYM_FMT_OFFSET | SYM_FMT_MODULE);
		fputs(buf, stdout);
		if (inline_too) {
			struct sym_source calls[17];
			int n = syms__source(&si, true, calls, 17) - 1;

			for (int j = 0; j < n; j++)
				printf("%s%s", j ? ", " : " (inlined: ", calls[j].name);
			fputs(n > 0 ? ")" : "", stdout);
		}
		putchar('\n');
	}
out:
	fflush(stdout);
	syms__warn_losses(s);
	syms__free(s);
	return 0;
}
