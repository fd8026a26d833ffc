// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel symbols: asked of the kernel as they are needed, or kallsyms loaded once and bisected. */
#include <ctype.h>
#include <errno.h>
#include <search.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "klookup.h"
#include "ksym.h"
#include "ksyms.h"
#include "tool.h"

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

/*
 * A function the kernel named: [start, end), its name, then its module's,
 * if any; or an address no symbol holds, a byte wide, its name empty.
 */
struct kfunc {
	uint64_t start, end;
	uint32_t module;	/* offset in text, + 1; 0: core kernel */
	char text[];
};

struct ksyms {
	/*
	 * Where the kernel names addresses itself (5.13), it does, once for
	 * each function: a report names a few hundred, and reading all of
	 * /proc/kallsyms was a third of a short profile's CPU and 4.5 MiB
	 * kept. Elsewhere, or once it would not, @fallback is that table.
	 */
	struct klookup *lookup;
	void *named;		/* tsearch() tree of struct kfunc, by range */
	size_t nnamed;
	unsigned long long asked;	/* of the kernel, in all */
	struct ksyms *fallback;

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

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Copies the word at @p, cut to @size - 1 bytes, up to @stop or a blank; its end. */
static const char *word(const char *p, char *out, size_t size, char stop)
{
	size_t n = 0;

	for (; *p && *p != stop && !isspace((unsigned char)*p); p++)
		if (n + 1 < size)
			out[n++] = *p;
	out[n] = '\0';
	return p;
}

/*
 * By hand, not sscanf(): where the table is read, all 120,000 lines are,
 * and sscanf's format machinery was a third of the time that took.
 */
int ksyms__parse_line(const char *line, struct ksym_line *out)
{
	const char *p = skip_blanks(line);
	uint64_t addr = 0;
	int digits = 0;

	out->module[0] = '\0';
	for (;; p++, digits++) {
		int v = *p >= '0' && *p <= '9' ? *p - '0' :
			(*p | 0x20) >= 'a' && (*p | 0x20) <= 'f' ? (*p | 0x20) - 'a' + 10 : -1;

		if (v < 0)
			break;
		addr = addr << 4 | v;
	}
	if (!digits || digits > 16)
		return -EINVAL;
	p = skip_blanks(p);
	if (!*p || isspace((unsigned char)*p))
		return -EINVAL;
	out->type = *p++;
	p = skip_blanks(p);
	if (!*p || isspace((unsigned char)*p))
		return -EINVAL;
	p = word(p, out->name, sizeof(out->name), '\0');
	p = skip_blanks(p);
	if (*p == '[')
		word(p + 1, out->module, sizeof(out->module), ']');
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
	bool sorted = true;

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
		/*
		 * Zero where kernel.kptr_restrict hides addresses: were they kept,
		 * every kernel frame would take one symbol's name.
		 */
		if (!ksyms__is_text(l.type) || !l.addr)
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
		sorted = sorted && (!k->n || k->syms[k->n - 1].addr <= l.addr);
		k->syms[k->n++] = (struct ksym){ l.addr, off, module };
	}
	/* The core kernel comes in order; modules and BPF programs may not. */
	if (!sorted)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	/* Kept for the run: what doubling left over goes back. */
	k->syms = shrunk(k->syms, k->n * sizeof(*k->syms));
	k->names = shrunk(k->names, k->names_len);
	return k;
err:
	ksyms__free(k);
	return NULL;
}

/* The table of /proc/kallsyms and /proc/modules. */
static struct ksyms *load_table(void)
{
	FILE *ks = fopen("/proc/kallsyms", "r"), *mods = fopen("/proc/modules", "r");
	struct ksyms *k = NULL;

	if (ks) {
		/* 5 MiB of it: 4 KiB reads were a thousand more system calls. */
		setvbuf(ks, NULL, _IOFBF, 1 << 16);
		k = ksyms__parse(ks, mods);
	} else {
		errno = ENOENT;
	}
	if (ks)
		fclose(ks);
	if (mods)
		fclose(mods);
	if (!k)
		pr_warn("kernel frames are not named: cannot read /proc/kallsyms: %s",
			strerror(errno));
	else if (!k->n)
		pr_warn("kernel frames are not named: /proc/kallsyms shows no addresses "
			"(kernel.kptr_restrict hides them)");
	return k;
}

struct ksyms *ksyms__load(void)
{
	struct klookup *l = klookup__open();
	struct ksyms *k;

	if (!l) {
		pr_debug("kernel symbols: all of /proc/kallsyms (the kernel names no address itself: %s)",
			 strerror(errno));
		return load_table();
	}
	pr_debug("kernel symbols: named by the kernel, each function once");
	k = calloc(1, sizeof(*k));
	if (!k) {
		klookup__close(l);
		return NULL;
	}
	k->lookup = l;
	return k;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	if (k->asked)
		pr_debug("kernel symbols: %llu addresses asked of the kernel", k->asked);
	tdestroy(k->named, free);
	klookup__close(k->lookup);
	ksyms__free(k->fallback);
	free(k->names);
	free(k->syms);
	free(k->mods);
	free(k);
}

/* Ranges that overlap are equal: a one-byte key finds the function around it. */
static int cmp_kfunc(const void *a, const void *b)
{
	const struct kfunc *x = a, *y = b;

	return x->end <= y->start ? -1 : x->start >= y->end;
}

/*
 * The function holding @addr from the kernel's "name+0xoff/0xsize
 * [module]"; NULL when no symbol holds it (the kernel printed the address
 * alone), or out of memory.
 */
static struct kfunc *kfunc_parse(uint64_t addr, const char *text)
{
	const char *end = text + strlen(text), *mod = NULL, *plus = NULL;
	size_t name_len, mod_len = 0;
	unsigned long long off, size;
	struct kfunc *f;
	char *e;

	if (end > text && end[-1] == ']') {
		mod = strrchr(text, '[');
		if (!mod || mod == text || mod[-1] != ' ')
			return NULL;
		mod_len = end - 1 - (mod + 1);
		end = mod - 1;
		mod++;
	}
	for (const char *p = text; p + 3 <= end; p++)
		if (p[0] == '+' && p[1] == '0' && p[2] == 'x')
			plus = p;
	if (!plus || plus == text)
		return NULL;
	off = strtoull(plus + 1, &e, 16);
	if (*e != '/' || off > addr)
		return NULL;
	size = strtoull(e + 1, &e, 16);
	if (e != end)
		return NULL;
	/* BPF programs, "bpf_prog_TAG[_name]": in [bpf], as /proc/kallsyms lists them. */
	if (!mod && plus - text >= 25 && !strncmp(text, "bpf_prog_", 9) &&
	    strspn(text + 9, "0123456789abcdef") >= 16 && (text[25] == '_' || text[25] == '+'))
		mod = "bpf", mod_len = 3;
	name_len = plus - text;
	f = malloc(sizeof(*f) + name_len + 1 + mod_len + 1);
	if (!f)
		return NULL;
	f->start = addr - off;
	f->end = size > off ? f->start + size : addr + 1;
	memcpy(f->text, text, name_len);
	f->text[name_len] = '\0';
	f->module = 0;
	if (mod) {
		f->module = name_len + 2;
		memcpy(f->text + name_len + 1, mod, mod_len);
		f->text[name_len + 1 + mod_len] = '\0';
	}
	return f;
}

/* @addr's function, asked of the kernel the first time; NULL if none holds it, or on failure. */
static const struct kfunc *named(struct ksyms *k, uint64_t addr)
{
	struct kfunc key = { .start = addr, .end = addr + 1 }, *f, **found;
	char text[KSYM_TEXT_MAX];
	int err;

	if (addr == UINT64_MAX)
		return NULL;
	found = tfind(&key, &k->named, cmp_kfunc);
	if (found)
		return (*found)->text[0] ? *found : NULL;
	err = klookup__text(k->lookup, addr, text, sizeof(text));
	k->asked++;
	if (err < 0) {
		/* Refused (a lockdown, a policy): the table, for the rest of the run. */
		pr_debug("kernel symbols: all of /proc/kallsyms from now (the kernel names no more: %s)",
			 strerror(-err));
		klookup__close(k->lookup);
		k->lookup = NULL;
		k->fallback = load_table();
		return NULL;
	}
	f = kfunc_parse(addr, text);
	/*
	 * No symbol holds it (a BPF program since unloaded): kept as such, a
	 * byte wide, or each of its stacks would ask again.
	 */
	if (!f && (f = calloc(1, sizeof(*f) + 1))) {
		f->start = addr;
		f->end = addr + 1;
	}
	if (!f)
		return NULL;
	found = tsearch(f, &k->named, cmp_kfunc);
	if (!found || *found != f) {
		/* Out of memory, or a range that would overlap one named before: not kept. */
		free(f);
		return NULL;
	}
	k->nnamed++;
	return f->text[0] ? f : NULL;
}

bool ksyms__trim(struct ksyms *k, size_t max)
{
	if (!k || k->nnamed <= max)
		return false;
	tdestroy(k->named, free);
	k->named = NULL;
	k->nnamed = 0;
	return true;
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

const char *ksyms__find(struct ksyms *k, uint64_t addr, uint64_t *start, const char **module)
{
	size_t lo = 0, hi = k->n;

	if (k->lookup) {
		const struct kfunc *f = named(k, addr);

		if (f) {
			*start = f->start;
			*module = f->module ? f->text + f->module - 1 : NULL;
			return f->text;
		}
		if (k->lookup)
			return NULL;
	}
	if (k->fallback)
		return ksyms__find(k->fallback, addr, start, module);

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
