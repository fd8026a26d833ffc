// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading a function's code from its file, and where its jumps lead (capstone). */
#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disasm.h"
#include "lazylib.h"
#include "tool.h"

static struct capstone cs;

static const struct lazysym cs_syms[] = {
	LAZYSYM(struct capstone, open, cs_open),
	LAZYSYM(struct capstone, malloc, cs_malloc),
	LAZYSYM(struct capstone, disasm_iter, cs_disasm_iter),
	LAZYSYM(struct capstone, free, cs_free),
	LAZYSYM(struct capstone, close, cs_close),
};

#define STR(x) #x
#define SONAME(major) "libcapstone.so." STR(major)

static struct lazylib capstone = {
	.soname = SONAME(CS_API_MAJOR),
	.syms = cs_syms,
	.nsyms = sizeof(cs_syms) / sizeof(cs_syms[0]),
	.table = &cs,
};

const struct capstone *disasm__capstone(void)
{
	static bool said;

	if (!lazylib__load(&capstone))
		return &cs;
	if (!said)
		pr_warn("cannot load %s (%s): Go functions' returns and the parts of Python's "
			"loop are not found without it", capstone.soname, lazylib__why(&capstone));
	said = true;
	return NULL;
}

void disasm__unload(void)
{
	lazylib__unload(&capstone);
}

int disasm__read(int fd, uint64_t off, uint64_t size, uint8_t **out)
{
	uint8_t *buf;
	size_t done = 0;

	if (!size || size > DISASM_MAX_FUNC)
		return -EFBIG;
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	while (done < size) {
		ssize_t n = pread(fd, buf + done, size - done, off + done);

		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		done += n;
	}
	*out = buf;
	return 0;
}

/*
 * A direct jump's target, from capstone's text of its operands (its last
 * immediate: "0x4e6030", "w0, #0x1c, #0x4e6030"), without the cost of its
 * detail mode over a whole function.
 */
static bool jump_target(const cs_insn *insn, unsigned int machine, uint64_t *target)
{
	const char *imm;
	char *end;

	if (machine == EM_X86_64) {
		if (insn->mnemonic[0] != 'j' || strncmp(insn->op_str, "0x", 2))
			return false;
		imm = insn->op_str;
	} else {
		if (strcmp(insn->mnemonic, "b") && strncmp(insn->mnemonic, "b.", 2) &&
		    strcmp(insn->mnemonic, "cbz") && strcmp(insn->mnemonic, "cbnz") &&
		    strcmp(insn->mnemonic, "tbz") && strcmp(insn->mnemonic, "tbnz"))
			return false;
		imm = strrchr(insn->op_str, '#');
		if (!imm)
			return false;
		imm++;
	}
	*target = strtoull(imm, &end, 16);
	return end != imm && !*end;
}

/* A growing array of addresses. */
struct addrs {
	uint64_t *v;
	size_t n, cap;
	int err;
};

static void addrs_push(struct addrs *a, uint64_t addr)
{
	if (a->n == a->cap) {
		uint64_t *t = realloc(a->v, (a->cap = a->cap ? 2 * a->cap : 16) * sizeof(*t));

		if (!t) {
			a->err = -ENOMEM;
			return;
		}
		a->v = t;
	}
	a->v[a->n++] = addr;
}

/*
 * Calls @fn with each instruction of the code at file offset @off, @size
 * bytes, placed at @addr, for machine @machine (EM_X86_64, EM_AARCH64);
 * what does not decode (data, padding) is stepped over. 0 or negative errno.
 */
static int each_insn(int fd, unsigned int machine, uint64_t off, uint64_t size, uint64_t addr,
		     void (*fn)(const cs_insn *insn, void *ctx), void *ctx)
{
	cs_arch arch = machine == EM_X86_64 ? CS_ARCH_X86 : CS_ARCH_ARM64;
	cs_mode mode = machine == EM_X86_64 ? CS_MODE_64 : CS_MODE_ARM;
	size_t left = size, step = machine == EM_AARCH64 ? 4 : 1;
	uint64_t at = addr;
	const uint8_t *code;
	uint8_t *buf;
	cs_insn *insn;
	csh h;
	int err;

	if (machine != EM_X86_64 && machine != EM_AARCH64)
		return -ENOTSUP;
	if (!disasm__capstone())
		return -ENOTSUP;
	err = disasm__read(fd, off, size, &buf);
	if (err)
		return err;
	if (cs.open(arch, mode, &h) != CS_ERR_OK) {
		free(buf);
		return -ENOMEM;
	}
	insn = cs.malloc(h);
	code = buf;
	while (insn && left) {
		if (cs.disasm_iter(h, &code, &left, &at, insn)) {
			fn(insn, ctx);
			continue;
		}
		if (left < step)
			break;
		code += step;
		left -= step;
		at += step;
	}
	err = insn ? 0 : -ENOMEM;
	if (insn)
		cs.free(insn, 1);
	cs.close(&h);
	free(buf);
	return err;
}

struct jumps {
	struct addrs out;
	unsigned int machine;
	uint64_t addr, size;
};

static void on_jump(const cs_insn *insn, void *ctx)
{
	struct jumps *j = ctx;
	uint64_t target;

	if (jump_target(insn, j->machine, &target) && (target < j->addr || target - j->addr >= j->size))
		addrs_push(&j->out, target);
}

ssize_t disasm__jumps_out(int fd, unsigned int machine, uint64_t off, uint64_t size,
			  uint64_t addr, uint64_t **targets)
{
	struct jumps j = { .machine = machine, .addr = addr, .size = size };
	int err = each_insn(fd, machine, off, size, addr, on_jump, &j);

	err = err ?: j.out.err;
	if (err) {
		free(j.out.v);
		return err;
	}
	*targets = j.out.v;
	return j.out.n;
}

static void on_call(const cs_insn *insn, void *ctx)
{
	struct jumps *j = ctx;
	const char *imm = insn->op_str;
	uint64_t target;
	char *end;

	if (j->machine == EM_X86_64 ? strcmp(insn->mnemonic, "call") : strcmp(insn->mnemonic, "bl"))
		return;
	if (*imm == '#')
		imm++;
	if (strncmp(imm, "0x", 2))
		return;
	target = strtoull(imm, &end, 16);
	if (!*end)
		addrs_push(&j->out, target);
}

ssize_t disasm__calls(int fd, unsigned int machine, uint64_t off, uint64_t size, uint64_t addr,
		      uint64_t **targets)
{
	struct jumps j = { .machine = machine, .addr = addr, .size = size };
	int err = each_insn(fd, machine, off, size, addr, on_call, &j);

	err = err ?: j.out.err;
	if (err) {
		free(j.out.v);
		return err;
	}
	*targets = j.out.v;
	return j.out.n;
}

/* The addresses code computes, and arm64's pages by register (adrp) on the way. */
struct computed {
	struct addrs out;
	unsigned int machine;
	uint64_t page[32];
	uint32_t paged;		/* which of page[] hold one */
};

/* The number of arm64 register "xN" or "wN" at @s, or -1. */
static int reg_number(const char *s)
{
	char *end;
	unsigned long n;

	if (*s != 'x' && *s != 'w')
		return -1;
	n = strtoul(s + 1, &end, 10);
	return end != s + 1 && n < 31 ? (int)n : -1;
}

static void on_computed(const cs_insn *insn, void *ctx)
{
	struct computed *c = ctx;
	const char *op = insn->op_str, *p;
	uint64_t v;
	char *end;
	int rd, rn;

	if (c->machine == EM_X86_64) {
		/* lea REG, [rip +/- DISP]: the address after the instruction, and DISP. */
		if (!strcmp(insn->mnemonic, "lea") && (p = strstr(op, "[rip "))) {
			v = strtoull(p + 7, &end, 16);
			if (end != p + 7 && *end == ']')
				addrs_push(&c->out, insn->address + insn->size + (p[5] == '-' ? -v : v));
		} else if (!strcmp(insn->mnemonic, "mov") && (p = strstr(op, ", 0x"))) {
			/* An address a non-PIE binary moves into a register whole. */
			v = strtoull(p + 2, &end, 16);
			if (!*end)
				addrs_push(&c->out, v);
		}
		return;
	}
	rd = reg_number(op);
	p = strrchr(op, '#');
	if (rd < 0 || !p)
		return;
	v = strtoull(p + 1, &end, 16);
	if (end == p + 1 || *end)
		return;
	if (!strcmp(insn->mnemonic, "adrp")) {
		c->page[rd] = v;
		c->paged |= 1u << rd;
	} else if (!strcmp(insn->mnemonic, "adr")) {
		addrs_push(&c->out, v);
	} else if (!strcmp(insn->mnemonic, "add") && (p = strchr(op, ' ')) &&
		   (rn = reg_number(p + 1)) >= 0 && (c->paged & 1u << rn)) {
		addrs_push(&c->out, c->page[rn] + v);
	}
}

ssize_t disasm__addresses(int fd, unsigned int machine, uint64_t off, uint64_t size,
			  uint64_t addr, uint64_t **out)
{
	struct computed c = { .machine = machine };
	int err = each_insn(fd, machine, off, size, addr, on_computed, &c);

	err = err ?: c.out.err;
	if (err) {
		free(c.out.v);
		return err;
	}
	*out = c.out.v;
	return c.out.n;
}
