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

ssize_t disasm__jumps_out(int fd, unsigned int machine, uint64_t off, uint64_t size,
			  uint64_t addr, uint64_t **targets)
{
	cs_arch arch = machine == EM_X86_64 ? CS_ARCH_X86 : CS_ARCH_ARM64;
	cs_mode mode = machine == EM_X86_64 ? CS_MODE_64 : CS_MODE_ARM;
	uint64_t *v = NULL, at = addr, target;
	const uint8_t *code;
	size_t n = 0, cap = 0, left = size;
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
		if (!cs.disasm_iter(h, &code, &left, &at, insn)) {
			/* Data or padding: on to the next word (arm64) or byte. */
			size_t step = machine == EM_AARCH64 ? 4 : 1;

			if (left < step)
				break;
			code += step;
			left -= step;
			at += step;
			continue;
		}
		if (!jump_target(insn, machine, &target) ||
		    (target >= addr && target - addr < size))
			continue;
		if (n == cap) {
			uint64_t *t = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!t) {
				err = -ENOMEM;
				break;
			}
			v = t;
		}
		v[n++] = target;
	}
	if (insn)
		cs.free(insn, 1);
	else
		err = -ENOMEM;
	cs.close(&h);
	free(buf);
	if (err) {
		free(v);
		return err;
	}
	*targets = v;
	return n;
}
