// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kallsyms loaded once, sorted, searched by bisection, with no "last symbol" fallthrough. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

/*
 * 120,000 of them on a distribution kernel: each name a strdup() and each
 * entry three words took 7.3 MiB of every stack tool's heap. Names now
 * lie end to end in one block, and an entry is 16 bytes.
 */
struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset in ksyms.names */
	uint32_t module;	/* offset in ksyms.names, + 1; 0: core kernel */
};

struct module_range {
	uint32_t name;		/* offset in ksyms.names */
	uint64_t start, end;
};

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	struct module_range *mods;
	size_t nmods;
	uint64_t etext;		/* end of the core kernel's text; 0 if unknown */
	uint64_t einittext;	/* end of its init text, which lies above; 0 if unknown */
	char *names;
	size_t names_len, names_cap;
	uint32_t last_module;	/* as ksym.module: 0 none yet */
};

/* @s appended to the names: its offset, or -ENOMEM. */
static int64_t keep(struct ksyms *k, const char *s)
{
	size_t len = strlen(s) + 1;
	size_t off = k->names_len;

	if (len > UINT32_MAX - 1 - off)
		return -ENOMEM;
	if (off + len > k->names_cap) {
		size_t cap = k->names_cap ? k->names_cap * 2 : 1 << 20;
		char *t;

		while (cap < off + len)
			cap *= 2;
		t = realloc(k->names, cap);
		if (!t)
			return -ENOMEM;
		k->names = t;
		k->names_cap = cap;
	}
	memcpy(k->names + off, s, len);
	k->names_len += len;
	return off;
}

/* Module names repeat thousands of times: share the last one. As ksym.module, or -ENOMEM. */
static int64_t module_name(struct ksyms *k, const char *m)
{
	int64_t off;

	if (k->last_module && !strcmp(k->names + k->last_module - 1, m))
		return k->last_module;
	for (size_t i = 0; i < k->nmods; i++)
		if (!strcmp(k->names + k->mods[i].name, m))
			return k->last_module = k->mods[i].name + 1;
	off = keep(k, m);
	return off < 0 ? off : (k->last_module = off + 1);
}

/* @p cut to @size, or @p as it was if it cannot be. */
static void *shrunk(void *p, size_t size)
{
	void *t = size ? realloc(p, size) : NULL;

	return t ? t : p;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int ksyms__parse_line(const char *line, struct ksym_line *out)
{
	unsigned long long addr;
	int n;

	out->module[0] = '\0';
	n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &out->type, out->name, out->module);
	if (n < 3)
		return -EINVAL;
	out->addr = addr;
	return 0;
}

struct ksyms *ksyms__parse(FILE *kallsyms, FILE *modules)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	char line[512], mod[128];
	unsigned long long addr, size;
	struct ksym_line l;
	int64_t off, module;

	if (!k)
		return NULL;
	while (modules && fgets(line, sizeof(line), modules)) {
		struct module_range *t;

		/* "ext4 1019904 1 - Live 0xffffffffc0a00000" */
		if (sscanf(line, "%127s %llu %*s %*s %*s %llx", mod, &size, &addr) != 3)
			continue;
		t = realloc(k->mods, (k->nmods + 1) * sizeof(*t));
		if (!t)
			goto err;
		k->mods = t;
		off = keep(k, mod);
		if (off < 0)
			goto err;
		k->mods[k->nmods++] = (struct module_range){ off, addr, addr + size };
	}
	while (kallsyms && fgets(line, sizeof(line), kallsyms)) {
		if (ksyms__parse_line(line, &l))
			continue;
		/* Markers, not code: they bound the core kernel's text and its init text. */
		if (!strcmp(l.name, "_etext")) {
			k->etext = l.addr;
			continue;
		}
		if (!strcmp(l.name, "_einittext")) {
			k->einittext = l.addr;
			continue;
		}
		if (!ksyms__is_text(l.type))
			continue;
		if (k->n == k->cap) {
			size_t cap = k->cap ? k->cap * 2 : 65536;
			struct ksym *t = realloc(k->syms, cap * sizeof(*t));

			if (!t)
				goto err;
			k->syms = t;
			k->cap = cap;
		}
		off = keep(k, l.name);
		module = l.module[0] ? module_name(k, l.module) : 0;
		if (off < 0 || module < 0)
			goto err;
		k->syms[k->n++] = (struct ksym){ l.addr, off, module };
	}
	if (k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	/* Kept for the run: what doubling left over goes back. */
	k->syms = shrunk(k->syms, k->n * sizeof(*k->syms));
	k->names = shrunk(k->names, k->names_len);
	return k;
err:
	ksyms__free(k);
	return NULL;
}

struct ksyms *ksyms__load(void)
{
	FILE *ks = fopen("/proc/kallsyms", "r"), *mods = fopen("/proc/modules", "r");
	struct ksyms *k = NULL;

	if (ks)
		k = ksyms__parse(ks, mods);
	else
		errno = ENOENT;
	if (ks)
		fclose(ks);
	if (mods)
		fclose(mods);
	return k;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->names);
	free(k->syms);
	free(k->mods);
	free(k);
}

/* How far past the highest symbol of a module without sizes an address is still its. */
#define KSYMS_LAST_SIZE (1 << 20)

/* Is @addr inside the text that symbol @i belongs to? */
static bool in_region(const struct ksyms *k, size_t i, uint64_t addr)
{
	const struct ksym *s = &k->syms[i];

	if (i + 1 < k->n && addr >= k->syms[i + 1].addr)
		return false;
	/*
	 * The core kernel: its text, then (above _etext) its init text, which
	 * the highest symbol of all may end when no module or BPF program is
	 * loaded above it.
	 */
	if (!s->module)
		return !k->etext || addr < k->etext ||
		       (s->addr >= k->etext && (!k->einittext || addr < k->einittext));
	/* Its name was kept once, with its range if it has one. */
	for (size_t m = 0; m < k->nmods; m++)
		if (k->mods[m].name + 1 == s->module)
			return addr >= k->mods[m].start && addr < k->mods[m].end;
	/*
	 * [bpf], [kprobes]: no sizes anywhere, so only the next symbol bounds
	 * them; the highest of all (the BPF program allocated last, often the
	 * tool's own, whose frames lead every stack it takes) as far as a
	 * program's image reasonably goes.
	 */
	return i + 1 < k->n || addr - s->addr < KSYMS_LAST_SIZE;
}

const char *ksyms__find(const struct ksyms *k, uint64_t addr, uint64_t *start,
			const char **module)
{
	size_t lo = 0, hi = k->n;

	if (!k->n || addr < k->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* Symbols can share an address (aliases); any of them names it. */
	if (!in_region(k, lo, addr))
		return NULL;
	*start = k->syms[lo].addr;
	*module = k->syms[lo].module ? k->names + k->syms[lo].module - 1 : NULL;
	return k->names + k->syms[lo].name;
}
