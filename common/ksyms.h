/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel symbols from /proc/kallsyms, with the bounds of the text they belong to. */
#ifndef BPFSCOPE_KSYMS_H
#define BPFSCOPE_KSYMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ksyms;

/* One line of /proc/kallsyms: "ffffffff81000000 T name [module]". */
struct ksym_line {
	uint64_t addr;
	char type;		/* 't'/'T': text; 'w'/'W': weak */
	char name[256];
	char module[128];	/* "" for the core kernel */
};

/* The one kallsyms line parser every user shares. 0, or -EINVAL. */
int ksyms__parse_line(const char *line, struct ksym_line *out);

/* Is @type a function's (text, strong or weak)? */
static inline int ksyms__is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * The running kernel's: where it names addresses itself (5.13), as they
 * are asked; elsewhere all of /proc/kallsyms at once.
 */
struct ksyms *ksyms__load(void);
/* Parses kallsyms- and modules-formatted streams; for tests and the fuzzer. */
struct ksyms *ksyms__parse(FILE *kallsyms, FILE *modules);
void ksyms__free(struct ksyms *k);

/* How many functions the kernel named a run keeps: a busy host's report meets a few thousand. */
#define KSYMS_MAX_NAMED 65536

/*
 * Lets go of the functions the kernel named, once more than @max are kept:
 * BPF programs come and go, each a function of its own, and a run without
 * end would keep them all. The names given out before are invalid after.
 * Whether it did.
 */
bool ksyms__trim(struct ksyms *k, size_t max);

/* The symbol containing @addr: its name, start and module (NULL for the core kernel). */
const char *ksyms__find(struct ksyms *k, uint64_t addr, uint64_t *start, const char **module);

#endif
