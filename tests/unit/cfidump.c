// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The unwind rows common/cfi.c builds for a binary, for tests and the
 * benchmark: how many, of which kinds, how long it took; with addresses,
 * the row in force at each (its pc and rules); with -a, every row. A Go
 * binary's come from its pclntab, a cgo binary's from both.
 * usage: cfidump FILE [ADDR...] | cfidump -a FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi.h"
#include "elffile.h"

static const char *const kinds[] = {
	"none", "cfa-sp", "cfa-fp", "plt", "signal", "end", "unsupported", "cfa-sp-ra-low",
	"trampoline", "go-cgocall", "go-mcall", "go-systemstack", "cfa-sp-deref", "cfa-fp-deref",
	"cfa-reg",
};

/* x86-64's registers by DWARF number, as readelf names them. */
static const char *const x86_regs[] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/* Row @r in force from @addr: its kind, CFA offset, and where fp and the return address are. */
static void print_row(uint64_t addr, const struct unwind_row *r)
{
	bool deref = UNWIND_ROW_CFA(r) == UNWIND_CFA_SP_DEREF || UNWIND_ROW_CFA(r) == UNWIND_CFA_FP_DEREF;

	/* A deref row's: the saved CFA's offset, and what is added to it after "+". */
	if (UNWIND_ROW_CFA(r) == UNWIND_CFA_REG)
		printf("%llx: %s cfa_off %s+%lld", (unsigned long long)addr, kinds[UNWIND_ROW_CFA(r)],
		       x86_regs[UNWIND_REG_NUM(r)], (long long)UNWIND_REG_OFF(r));
	else if (deref)
		printf("%llx: %s cfa_off %lld+%llu", (unsigned long long)addr, kinds[UNWIND_ROW_CFA(r)],
		       (long long)UNWIND_DEREF_OFF(r), (unsigned long long)UNWIND_DEREF_ADD(r));
	else
		printf("%llx: %s cfa_off %d", (unsigned long long)addr, kinds[UNWIND_ROW_CFA(r)],
		       r->cfa_off);
	printf(" fp_off %lld ra_off %lld\n", (long long)UNWIND_ROW_FP_OFF(r),
	       (long long)UNWIND_ROW_RA_OFF(r));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t count[sizeof(kinds) / sizeof(kinds[0])] = {};
	struct cfi_table t;
	double t0 = now();
	bool all = argc > 1 && !strcmp(argv[1], "-a");
	int fd, err;
	Elf *elf;

	argv += all;
	argc -= all;
	if (argc < 2)
		return 2;
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || elffile__begin(fd, &elf)) {
		fprintf(stderr, "cfidump: cannot read %s\n", argv[1]);
		return 1;
	}
	err = cfi__build(elf, NULL, 1 << 24, &t);
	if (!err)
		cfi__add_go(fd, elf, 1 << 24, &t);
	else if (err == -ENOENT)
		err = cfi__build_go(fd, elf, 1 << 24, &t);
	if (err) {
		fprintf(stderr, "cfidump: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	for (size_t i = 0; i < t.n; i++)
		count[UNWIND_ROW_CFA(&t.rows[i])]++;
	printf("%zu rows, %zu functions, %.1f ms:", t.n, t.fdes, (now() - t0) * 1000);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		printf(" %s %zu", kinds[k], count[k]);
	printf("\n");
	for (int a = 2; a < argc; a++) {
		uint64_t addr = strtoull(argv[a], NULL, 16), pc = addr - t.base;
		const struct unwind_row *r = NULL;

		for (size_t i = 0; i < t.n && t.rows[i].pc <= pc; i++)
			r = &t.rows[i];
		if (!r || addr < t.base) {
			printf("%llx: no row\n", (unsigned long long)addr);
			continue;
		}
		print_row(addr, r);
	}
	for (size_t i = 0; all && i < t.n; i++)
		print_row(t.base + t.rows[i].pc, &t.rows[i]);
	cfi__free(&t);
	elf_end(elf);
	close(fd);
	return 0;
}
