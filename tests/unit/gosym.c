// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Go pclntab driver for tests/go.bats and the benchmark.
 * usage: gosym FILE             every function: "entry end name"
 *        gosym FILE ADDR...     the source frames at each address, innermost first
 *        gosym -b FILE ADDRS    every address in file ADDRS, printing the count and time
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elffile.h"
#include "gopclntab.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	bool bench = argc > 1 && !strcmp(argv[1], "-b");
	const char *path = argv[1 + bench], *why;
	struct gopclntab *t;
	struct goframe fr[16];
	double t0 = now();
	int fd, err;
	Elf *elf;

	if (argc < 2 + bench)
		return 2;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || elffile__begin(fd, &elf)) {
		fprintf(stderr, "gosym: %s: not ELF\n", path);
		return 1;
	}
	err = gopclntab__open(fd, elf, &t, &why);
	if (err) {
		fprintf(stderr, "gosym: %s: %s\n", path, why ? why : strerror(-err));
		elf_end(elf);
		close(fd);
		return 1;
	}
	if (bench) {
		unsigned long long addr;
		size_t n = 0, named = 0, inlined = 0;
		FILE *f = fopen(argv[3], "r");

		while (f && fscanf(f, "%llx", &addr) == 1) {
			int k = gopclntab__frames(t, addr, fr, 16);

			named += k > 0;
			inlined += k > 1;
			n++;
		}
		printf("%zu addresses, %zu named, %zu in inlined calls, %.3f s (layout %s)\n", n,
		       named, inlined, now() - t0, gopclntab__layout(t));
		if (f)
			fclose(f);
		gopclntab__free(t);
		elf_end(elf);
		close(fd);
		return 0;
	}
	if (argc == 2) {
		for (size_t i = 0; i < gopclntab__count(t); i++) {
			struct gofunc f;

			if (!gopclntab__func(t, i, &f))
				printf("%llx %llx %s\n", (unsigned long long)f.entry,
				       (unsigned long long)f.end, f.name);
		}
	}
	for (int i = 2; i < argc; i++) {
		int n = gopclntab__frames(t, strtoull(argv[i], NULL, 16), fr, 16);

		printf("%s:", argv[i]);
		for (int k = 0; k < n; k++)
			printf(" %s%s (%s:%d, from %d)", fr[k].name, k < n - 1 ? " [inlined]" : "",
			       fr[k].file ? fr[k].file : "?", fr[k].line, fr[k].start_line);
		printf("\n");
	}
	gopclntab__free(t);
	elf_end(elf);
	close(fd);
	return 0;
}
