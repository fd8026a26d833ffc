/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What a function's machine code says of itself: read from its file, disassembled with capstone. */
#ifndef BPFSCOPE_DISASM_H
#define BPFSCOPE_DISASM_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* capstone's functions, called through this table: the library is loaded when first needed. */
struct capstone {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_insn *(*malloc)(csh handle);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
			    cs_insn *insn);
	void (*free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
};

/* The table, capstone loaded the first time; NULL (said once) if it cannot be. */
const struct capstone *disasm__capstone(void);

/*
 * Unmaps capstone until it is next needed: relocated, its tables are 5 MiB
 * resident, which a tool that has found what it looked for (a runtime's
 * loop) would otherwise keep to its end, through its report's peak.
 */
void disasm__unload(void);

/* The largest function read. */
#define DISASM_MAX_FUNC (1u << 20)

/* Reads @size bytes (at most DISASM_MAX_FUNC) at file offset @off into a new buffer. 0 or negative errno. */
int disasm__read(int fd, uint64_t off, uint64_t size, uint8_t **out);

/*
 * Where the direct jumps (not calls) of the code at file offset @off,
 * @size bytes, lead, as addresses of the code placed at @addr, for machine
 * @machine (EM_X86_64 or EM_AARCH64): into a new array, those outside
 * [@addr, @addr + @size) only. Their number, -ENOTSUP for another machine,
 * or negative errno.
 */
ssize_t disasm__jumps_out(int fd, unsigned int machine, uint64_t off, uint64_t size,
			  uint64_t addr, uint64_t **targets);

/* The same for the targets of its direct calls, wherever they lead. */
ssize_t disasm__calls(int fd, unsigned int machine, uint64_t off, uint64_t size, uint64_t addr,
		      uint64_t **targets);

/*
 * The addresses the code at file offset @off, @size bytes, placed at
 * @addr, computes into registers (x86-64: lea of rip-relative memory, a
 * mov of an immediate; arm64: adr, adrp then add), into a new array: what
 * a function passes on as pointers to its data. Their number, -ENOTSUP
 * for another machine, or negative errno.
 */
ssize_t disasm__addresses(int fd, unsigned int machine, uint64_t off, uint64_t size,
			  uint64_t addr, uint64_t **out);

#endif
