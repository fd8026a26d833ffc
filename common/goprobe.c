// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Go functions' return instructions, for uprobes in place of uretprobes, which Go's moving stacks break. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "disasm.h"
#include "goprobe.h"

ssize_t goprobe__returns(int fd, unsigned int machine, uint64_t off, uint64_t size,
			 uint64_t **rets)
{
	cs_arch arch = machine == EM_X86_64 ? CS_ARCH_X86 : CS_ARCH_ARM64;
	cs_mode mode = machine == EM_X86_64 ? CS_MODE_64 : CS_MODE_ARM;
	unsigned int ret_id = machine == EM_X86_64 ? X86_INS_RET : ARM64_INS_RET;
	const uint8_t *code;
	uint64_t *v = NULL, at;
	size_t n = 0, left;
	uint8_t *buf = NULL;
	const struct capstone *cs;
	cs_insn *insn;
	csh h;
	int err;

	if (machine != EM_X86_64 && machine != EM_AARCH64)
		return -ENOTSUP;
	cs = disasm__capstone();
	if (!cs)
		return -ENOTSUP;
	if (size > GOPROBE_MAX_FUNC)
		return -EFBIG;
	err = disasm__read(fd, off, size, &buf);
	if (err)
		return err;
	if (cs->open(arch, mode, &h) != CS_ERR_OK) {
		free(buf);
		return -ENOMEM;
	}
	insn = cs->malloc(h);
	code = buf;
	left = size;
	at = off;
	/*
	 * Instruction by instruction from the entry. x86-64: Go puts no data
	 * in its code, and what is left after the last instruction is
	 * padding. arm64: instructions are words, so a word that does not
	 * decode (a constant of the literal pool Go puts after a function's
	 * code, padding) is stepped over without losing the next one.
	 */
	for (;;) {
		uint64_t *t;

		if (!insn)
			break;
		if (!cs->disasm_iter(h, &code, &left, &at, insn)) {
			if (machine != EM_AARCH64 || left < 4)
				break;
			code += 4;
			left -= 4;
			at += 4;
			continue;
		}
		if (insn->id != ret_id)
			continue;
		t = realloc(v, (n + 1) * sizeof(*v));
		if (!t) {
			err = -ENOMEM;
			break;
		}
		v = t;
		v[n++] = insn->address;
	}
	if (insn)
		cs->free(insn, 1);
	else
		err = -ENOMEM;
	/* Stopped short of the padding: a return might be in what was not decoded. */
	for (; !err && left; left--, code++)
		if (*code != (machine == EM_X86_64 ? 0xcc : 0))
			err = -EILSEQ;
	cs->close(&h);
	free(buf);
	if (err) {
		free(v);
		return err;
	}
	*rets = v;
	return n;
}
