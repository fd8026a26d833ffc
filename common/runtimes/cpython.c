// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CPython's interpreter in a binary (version, structures, interpreter loop), and Python frames named from process memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "cfi.h"
#include "disasm.h"
#include "elffile.h"
#include "runtimes/cpython.h"
#include "runtimes/loop.h"
#include "runtimes/names.h"
#include "runtimes/remote.h"
#include "runtimes/runtime.h"
#include "runtimes/seam.h"
#include "tool.h"

struct py_binary {
	unsigned int minor;		/* of 3.x */
	char version[16];		/* "3.11" */
	struct py_layout l;		/* what the BPF walk reads */
	uint16_t ascii_data;		/* where a compact ASCII string's characters start */
	uint16_t compact_data;		/* ... and those of any other compact string */
	uint64_t runtime, code_type;	/* link-time addresses of _PyRuntime, PyCode_Type */
	uint64_t eval[PY_EVAL_RANGES][2];	/* the interpreter loop's code, file offsets */
	size_t neval;
};

/*
 * Versions that do not describe themselves (before 3.13): where their
 * structures keep what the walk reads, from CPython's headers, the same on
 * x86-64 and arm64 and in every build of a version (Debian's, and from
 * source: shared or static, optimized or not). 3.9 and 3.11 are checked
 * against Debian's builds, 3.8 to 3.12 against builds from source
 * (tests/python.bats).
 */
static const struct py_table {
	unsigned int minor;
	struct py_layout l;
	uint16_t ascii_data, compact_data;
} tables[] = {
	{ 8, { .interp_head = 32, .interp_next = 0, .interp_threads = 8, .tstate_next = 8,
	       .tstate_native_tid = PY_NO_FIELD, .tstate_thread_id = 176, .tstate_frame = 24,
	       .cframe_frame = PY_NO_FIELD, .cframe_previous = PY_NO_FIELD, .frame_previous = 24, .frame_code = 32,
	       .frame_owner = PY_NO_FIELD, .frame_entry = PY_NO_FIELD, .code_firstlineno = 40,
	       .code_name = 112, .code_filename = 104, .frames = PY_FRAMES_OBJECT }, 48, 72 },
	{ 9, { .interp_head = 32, .interp_next = 0, .interp_threads = 8, .tstate_next = 8,
	       .tstate_native_tid = PY_NO_FIELD, .tstate_thread_id = 176, .tstate_frame = 24,
	       .cframe_frame = PY_NO_FIELD, .cframe_previous = PY_NO_FIELD, .frame_previous = 24, .frame_code = 32,
	       .frame_owner = PY_NO_FIELD, .frame_entry = PY_NO_FIELD, .code_firstlineno = 40,
	       .code_name = 112, .code_filename = 104, .frames = PY_FRAMES_OBJECT }, 48, 72 },
	{ 10, { .interp_head = 32, .interp_next = 0, .interp_threads = 8, .tstate_next = 8,
		.tstate_native_tid = PY_NO_FIELD, .tstate_thread_id = 176, .tstate_frame = 24,
		.cframe_frame = PY_NO_FIELD, .cframe_previous = PY_NO_FIELD, .frame_previous = 24, .frame_code = 32,
		.frame_owner = PY_NO_FIELD, .frame_entry = PY_NO_FIELD, .code_firstlineno = 40,
		.code_name = 112, .code_filename = 104, .frames = PY_FRAMES_OBJECT }, 48, 72 },
	{ 11, { .interp_head = 40, .interp_next = 0, .interp_threads = 16, .tstate_next = 8,
		.tstate_native_tid = 160, .tstate_thread_id = 152, .tstate_frame = 56,
		.cframe_frame = 8, .cframe_previous = 16, .frame_previous = 48, .frame_code = 32,
		.frame_owner = PY_NO_FIELD, .frame_entry = 68, .code_firstlineno = 72,
		.code_name = 128, .code_filename = 112, .frames = PY_FRAMES_INTERP }, 48, 72 },
	/* 3.12: one _PyCFrame a thread, its loop calls' frames ended by entry frames. */
	{ 12, { .interp_head = 40, .interp_next = 0, .interp_threads = 72, .tstate_next = 8,
		.tstate_native_tid = 144, .tstate_thread_id = 136, .tstate_frame = 56,
		.cframe_frame = 0, .cframe_previous = PY_NO_FIELD, .frame_previous = 8, .frame_code = 0,
		.frame_owner = 70, .frame_entry = PY_NO_FIELD, .code_firstlineno = 68,
		.code_name = 128, .code_filename = 112, .frames = PY_FRAMES_INTERP,
		.owner_entry = 3 }, 40, 56 },
};

/*
 * From 3.13 on, _PyRuntime begins with _Py_DebugOffsets: the offsets of
 * the structures' fields, for debuggers. The struct itself changes with
 * each minor version; where it keeps the offsets the walk needs, by
 * version. Each is a 64-bit value.
 */
static const struct py_debug_offsets {
	unsigned int minor;
	uint16_t interp_head, interp_next, interp_threads;
	uint16_t tstate_next, tstate_frame, tstate_thread_id, tstate_native_tid;
	uint16_t frame_previous, frame_code, frame_owner;
	uint16_t code_filename, code_qualname, code_firstlineno;
	uint16_t ascii_size;
	uint8_t code_tag;	/* 3.14: the frame's code is a _PyStackRef, tagged in its low bits */
} debug_offsets[] = {
	{ 13, 40, 64, 72, 168, 184, 192, 200, 232, 240, 264, 280, 296, 312, 560, 0 },
	{ 14, 40, 64, 72, 192, 208, 216, 224, 256, 264, 288, 320, 336, 352, 640, 3 },
	{ 15, 40, 64, 72, 192, 208, 240, 248, 320, 328, 352, 384, 400, 416, 736, 3 },
};

#define PY_DEBUG_OFFSETS_SIZE 1024
/* Frame owners from this on are entry frames, no function's (3.13: CSTACK; 3.14: INTERPRETER). */
#define PY_OWNER_ENTRY 3

static bool read_u64(const uint8_t *buf, size_t at, uint16_t *out)
{
	uint64_t v;

	memcpy(&v, buf + at, sizeof(v));
	if (v >= PY_NO_FIELD)
		return false;
	*out = v;
	return true;
}

/* The layout from _Py_DebugOffsets at _PyRuntime: 0, or -ENOENT when it is not there or not known. */
static int layout_from_binary(Elf *elf, int fd, uint64_t runtime, unsigned int minor,
			      struct py_binary *pb)
{
	const struct py_debug_offsets *d = NULL;
	uint8_t buf[PY_DEBUG_OFFSETS_SIZE];
	uint64_t version;
	uint16_t ascii;
	bool ok;

	for (size_t i = 0; i < sizeof(debug_offsets) / sizeof(debug_offsets[0]); i++)
		if (debug_offsets[i].minor == minor)
			d = &debug_offsets[i];
	if (!d || elffile__read(elf, fd, runtime, buf, sizeof(buf)) || memcmp(buf, "xdebugpy", 8))
		return -ENOENT;
	memcpy(&version, buf + 8, sizeof(version));
	if ((version >> 24) != 3 || ((version >> 16) & 0xff) != minor)
		return -ENOENT;
	pb->l = (struct py_layout){
		.cframe_frame = PY_NO_FIELD, .cframe_previous = PY_NO_FIELD,
		.frame_entry = PY_NO_FIELD, .frames = PY_FRAMES_INTERP, .owner_entry = PY_OWNER_ENTRY, .code_tag = d->code_tag,
	};
	ok = read_u64(buf, d->interp_head, &pb->l.interp_head) &&
	     read_u64(buf, d->interp_next, &pb->l.interp_next) &&
	     read_u64(buf, d->interp_threads, &pb->l.interp_threads) &&
	     read_u64(buf, d->tstate_next, &pb->l.tstate_next) &&
	     read_u64(buf, d->tstate_frame, &pb->l.tstate_frame) &&
	     read_u64(buf, d->tstate_thread_id, &pb->l.tstate_thread_id) &&
	     read_u64(buf, d->tstate_native_tid, &pb->l.tstate_native_tid) &&
	     read_u64(buf, d->frame_previous, &pb->l.frame_previous) &&
	     read_u64(buf, d->frame_code, &pb->l.frame_code) &&
	     read_u64(buf, d->frame_owner, &pb->l.frame_owner) &&
	     read_u64(buf, d->code_filename, &pb->l.code_filename) &&
	     read_u64(buf, d->code_qualname, &pb->l.code_name) &&
	     read_u64(buf, d->code_firstlineno, &pb->l.code_firstlineno) &&
	     read_u64(buf, d->ascii_size, &ascii);
	if (!ok)
		return -ENOENT;
	pb->ascii_data = ascii;
	/* PyCompactUnicodeObject: PyASCIIObject, then utf8_length and utf8. */
	pb->compact_data = ascii + 16;
	return 0;
}

/* Offsets the BPF side reads within what it reads of a frame and of a code object. */
static bool layout_fits(const struct py_layout *l)
{
	return l->frame_previous <= PY_FRAME_READ - 8 && l->frame_code <= PY_FRAME_READ - 8 &&
	       (l->frame_owner == PY_NO_FIELD || l->frame_owner < PY_FRAME_READ) &&
	       (l->frame_entry == PY_NO_FIELD || l->frame_entry < PY_FRAME_READ) &&
	       l->code_name <= PY_CODE_READ - 8 && l->code_filename <= PY_CODE_READ - 8 &&
	       l->code_firstlineno <= PY_CODE_READ - 4;
}

/*
 * Is @s a CPython's PY_VERSION ("3.9.18", "3.10.0rc2", "3.9.18+"), whole up
 * to its NUL? Its minor into *@minor.
 */
static bool version_string(const char *s, unsigned int *minor)
{
	const char *p = s + 2;
	unsigned long m;
	char *end;

	if (s[0] != '3' || s[1] != '.' || *p < '0' || *p > '9')
		return false;
	m = strtoul(p, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	for (p = end + 1; *p >= '0' && *p <= '9'; p++)
		;
	if (*p == 'a' || *p == 'b' || (p[0] == 'r' && p[1] == 'c')) {
		p += *p == 'r' ? 2 : 1;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == '+')
		p++;
	if (*p || m > 255)
		return false;
	*minor = m;
	return true;
}

/*
 * Before 3.11 a CPython keeps no version number of its own, only its
 * PY_VERSION string, which Py_GetVersion() formats sys.version from: the
 * one version string among the addresses its code computes. Not a scan of
 * .rodata for it: the linker merges it into the end of a longer string
 * (an install prefix, "/root/.pyenv/versions/3.9.18"), and other "3.x.y"
 * strings are there too (unicodedata's "3.2.0", a bundled OpenSSL's).
 */
static int version_from_code(Elf *elf, int fd, const GElf_Sym *fn, unsigned int *minor)
{
	uint64_t off, *addrs;
	unsigned int found = 0, m;
	GElf_Ehdr eh;
	ssize_t n;

	if (!fn->st_value || !fn->st_size || fn->st_size > 4096 || !gelf_getehdr(elf, &eh) ||
	    elffile__offset(elf, fn->st_value, &off))
		return -ENOENT;
	n = disasm__addresses(fd, eh.e_machine, off, fn->st_size, fn->st_value, &addrs);
	if (n < 0)
		return n;
	for (ssize_t i = 0; i < n; i++) {
		char buf[24] = {};

		if (elffile__read(elf, fd, addrs[i], buf, sizeof(buf) - 1) ||
		    !memchr(buf, '\0', sizeof(buf) - 1) || !version_string(buf, &m))
			continue;
		if (found && found != m) {
			found = 0;
			break;
		}
		found = m;
	}
	free(addrs);
	if (!found)
		return -ENOENT;
	*minor = found;
	return 0;
}

/*
 * Without the disassembler: the version string found in .rodata where a
 * string ends, after a NUL or the '/' of a prefix it was merged into, of
 * the versions that need it (3.8 to 3.10), all there of one minor.
 */
static int version_from_rodata(Elf *elf, int fd, unsigned int *minor)
{
	uint64_t addr, size, off;
	unsigned int found = 0, m;
	char *buf;

	if (elffile__section(elf, ".rodata", &addr, &size) || size > (64u << 20) ||
	    elffile__offset(elf, addr, &off))
		return -ENOENT;
	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	if (elffile__read(elf, fd, addr, buf, size)) {
		free(buf);
		return -ENOENT;
	}
	buf[size] = '\0';
	for (uint64_t i = 1; i + 5 < size; i++) {
		if ((buf[i - 1] && buf[i - 1] != '/') || buf[i] != '3' || buf[i + 1] != '.' ||
		    !version_string(buf + i, &m) || m < 8 || m > 10)
			continue;
		if (found && found != m) {
			free(buf);
			return -ENOENT;
		}
		found = m;
	}
	free(buf);
	if (!found)
		return -ENOENT;
	*minor = found;
	return 0;
}

/*
 * Says once for each version (3.? for one not found) that its frames stay
 * native; with -v, for each binary.
 */
static void say_unknown(const char *path, unsigned int minor, const char *version)
{
	static uint64_t said[4];

	if (minor < 256 && !(said[minor / 64] >> (minor % 64) & 1)) {
		said[minor / 64] |= 1ULL << (minor % 64);
		pr_warn("%s: CPython %s, whose structures are not known here: its Python frames "
			"are not read, its interpreter loop shows as native code", path, version);
		return;
	}
	pr_debug("%s: CPython %s, whose structures are not known: its Python frames are "
		 "not read, its interpreter loop shows as native code", path, version);
}

struct py_binary *python__probe(int fd, Elf *elf, const char *path)
{
	static const char *const names[] = {
		"_PyRuntime", "_PyEval_EvalFrameDefault", "PyCode_Type", "Py_Version", "Py_GetVersion",
	};
	enum { RUNTIME, EVAL, CODE_TYPE, VERSION, GET_VERSION, NSYMS };
	GElf_Sym syms[NSYMS];
	struct py_binary *pb;
	unsigned int minor = 0;
	int err = -ENOENT, n;

	if (elffile__lookup(elf, names, NSYMS, syms) < 3 || !syms[RUNTIME].st_value ||
	    !syms[EVAL].st_value || !syms[CODE_TYPE].st_value)
		return NULL;
	pb = calloc(1, sizeof(*pb));
	if (!pb)
		return NULL;
	/* From the binary itself, never from its name: Py_Version from 3.11, before its code. */
	if (syms[VERSION].st_value) {
		uint32_t hex;

		if (!elffile__read(elf, fd, syms[VERSION].st_value, &hex, sizeof(hex)) &&
		    hex >> 24 == 3)
			minor = (hex >> 16) & 0xff;
	} else if (version_from_code(elf, fd, &syms[GET_VERSION], &minor)) {
		version_from_rodata(elf, fd, &minor);
	}
	pb->minor = minor;
	if (minor)
		snprintf(pb->version, sizeof(pb->version), "3.%u", minor);
	else
		snprintf(pb->version, sizeof(pb->version), "3.?");
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (tables[i].minor == minor) {
			pb->l = tables[i].l;
			pb->ascii_data = tables[i].ascii_data;
			pb->compact_data = tables[i].compact_data;
			err = 0;
		}
	}
	if (err)
		err = layout_from_binary(elf, fd, syms[RUNTIME].st_value, minor, pb);
	if (!err && !layout_fits(&pb->l))
		err = -ERANGE;
	if (err) {
		say_unknown(path, minor, pb->version);
		free(pb);
		return NULL;
	}
	n = loop__ranges(elf, fd, &syms[EVAL], pb->eval, PY_EVAL_RANGES);
	if (n < 0) {
		pr_debug("%s: CPython %s: its interpreter loop's code could not be found: its "
			 "Python frames are not read", path, pb->version);
		free(pb);
		return NULL;
	}
	pb->neval = n;
	pb->runtime = syms[RUNTIME].st_value;
	pb->code_type = syms[CODE_TYPE].st_value;
	pr_debug("%s: CPython %s: Python frames in place of its interpreter loop (%zu code "
		 "range%s)", path, pb->version, pb->neval, pb->neval == 1 ? "" : "s");
	return pb;
}

void python__binary_free(struct py_binary *pb)
{
	free(pb);
}

const char *python__version(const struct py_binary *pb)
{
	return pb->version;
}

void python__bpf_proc(const struct py_binary *pb, uint64_t bias, uint32_t id,
		      struct py_proc *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime = pb->runtime + bias;
	out->code_type = pb->code_type + bias;
	out->l = pb->l;
	for (size_t i = 0; i < pb->neval; i++) {
		__u64 file = UNWIND_FILE_FRAME | (__u64)id << UNWIND_FILE_OFF_BITS;

		out->eval[i][0] = file | pb->eval[i][0];
		out->eval[i][1] = file | pb->eval[i][1];
	}
}

bool python__trampolines(const struct py_binary *pb, pid_t pid, uint64_t start, uint64_t end,
			 struct unwind_row *row)
{
	/*
	 * Python/asm_trampoline.S, copied over the region one after another,
	 * each maybe after an endbr64: before 3.14, sub $8, %rsp; call *%rcx;
	 * add $8, %rsp; ret; since, push %rbp; mov %rsp, %rbp; call *%rcx;
	 * pop %rbp; ret. The caller's frame is 16 bytes up from the call on,
	 * the return address the 8 below that, 3.14's frame pointer the 8
	 * below that; the row's rule knows the instructions around the call.
	 */
#if defined(__x86_64__)
	static const uint8_t sub[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1 };
	static const uint8_t push[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1 };
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint8_t code[sizeof(endbr) + sizeof(sub)];
	const uint8_t *c = code;

	if (pb->minor < 12 || end - start < sizeof(code) || remote__read(pid, start, code, sizeof(code)))
		return false;
	if (!memcmp(c, endbr, sizeof(endbr)))
		c += sizeof(endbr);
	if (!memcmp(c, sub, sizeof(sub)))
		*row = (struct unwind_row){ .cfa_ra = UNWIND_CFA_TRAMPOLINE | 1 << 4 };
	else if (!memcmp(c, push, sizeof(push)))
		*row = (struct unwind_row){ .fp_slot = -2, .cfa_ra = UNWIND_CFA_TRAMPOLINE | 1 << 4 };
	else
		return false;
	return true;
#else
	/* arm64's keep a frame record: the frame-pointer walk goes through them. */
	return false;
#endif
}

/* A name's characters kept at most, and a file's. */
#define PY_NAME_MAX 256
#define PY_FILE_MAX 1024

/*
 * A str object's text at @addr of process @pid, as UTF-8 into @out (at
 * most @max characters, "..." after those cut). Its characters are read
 * as its header says they are laid out; what they are is the escapers'
 * business at the output, like any other name another user chose.
 */
static int read_str(pid_t pid, const struct py_binary *pb, uint64_t addr, char *out, size_t size,
		    size_t max)
{
	uint8_t hdr[40], raw[4 * PY_FILE_MAX];
	unsigned int kind, compact, ascii;
	uint64_t data;
	uint32_t state;
	int64_t len;
	size_t chars, o = 0;

	if (!addr || remote__read(pid, addr, hdr, sizeof(hdr)))
		return -EFAULT;
	memcpy(&len, hdr + 16, sizeof(len));
	memcpy(&state, hdr + 32, sizeof(state));
	kind = state >> 2 & 7;
	compact = state >> 5 & 1;
	ascii = state >> 6 & 1;
	if (len < 0 || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return -EINVAL;
	if (compact)
		data = addr + (ascii ? pb->ascii_data : pb->compact_data);
	else if (remote__read(pid, addr + pb->compact_data, &data, sizeof(data)))
		return -EFAULT;
	if (max > PY_FILE_MAX)
		max = PY_FILE_MAX;
	chars = (uint64_t)len < max ? (size_t)len : max;
	if (chars && remote__read(pid, data, raw, chars * kind))
		return -EFAULT;
	for (size_t i = 0; i < chars && o + 4 < size; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] :
			     ((uint32_t *)raw)[i];
		/* A NUL would end the name here; spelled as the escapers spell bytes. */
		size_t w = c ? utf8__put(out + o, size - o - 1, c) :
			   o + 5 < size ? (memcpy(out + o, "\\x00", 4), 4) : 0;

		if (!w)
			break;
		o += w;
	}
	if ((uint64_t)len > chars && o + 3 < size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return 0;
}

/*
 * Reads frame @v's code object in process @p: its name, file and first
 * line, if it is still the code object the frame was taken from (its type
 * PyCode_Type, its check the same).
 */
static int read_name(void *ctx, struct frame_name *out)
{
	const struct runtime_read *r = ctx;
	const struct py_binary *pb = r->binary;
	char name[4 * PY_NAME_MAX + 4], file[4 * PY_FILE_MAX + 4];
	uint64_t code = PY_FRAME_CODE(r->v), type, name_obj, file_obj;
	uint8_t obj[PY_CODE_READ];
	uint32_t line;

	if (remote__read(r->p->tgid, code, obj, sizeof(obj)))
		return -EFAULT;
	memcpy(&type, obj + 8, sizeof(type));
	memcpy(&name_obj, obj + pb->l.code_name, sizeof(name_obj));
	memcpy(&file_obj, obj + pb->l.code_filename, sizeof(file_obj));
	memcpy(&line, obj + pb->l.code_firstlineno, sizeof(line));
	if (type != pb->code_type + r->bias ||
	    py_frame_check(name_obj, file_obj, line) != PY_FRAME_CHECK(r->v))
		return -ESTALE;
	if (read_str(r->p->tgid, pb, name_obj, name, sizeof(name), PY_NAME_MAX) ||
	    read_str(r->p->tgid, pb, file_obj, file, sizeof(file), PY_FILE_MAX))
		return -EFAULT;
	return frame_name__make(out, name, file, line);
}

/* The seam's calls (seam.h), over this room's own types. */

static void *probe(int fd, Elf *elf, const char *path)
{
	return python__probe(fd, elf, path);
}

static void binary_free(void *b)
{
	python__binary_free(b);
}

static int bpf_proc(const void *b, pid_t pid, uint64_t bias, uint32_t id,
		    struct runtime_proc *out)
{
	python__bpf_proc(b, bias, id, &out->py);
	return 0;
}

static bool trampolines(const void *b, pid_t pid, uint64_t start, uint64_t end,
			struct unwind_row *row)
{
	return python__trampolines(b, pid, start, end, row);
}

/* CPython -X perf's "py::function:file" in a perf map: repeats the Python frame beside it. */
static bool trampoline_name(const char *name)
{
	return !strncmp(name, "py::", 4);
}

static const struct frame_names_words words = {
	.runtime = "Python",
	.unknown = "[unknown python]",
	.changed = "their code object was freed and its memory reused",
};

const struct runtime_ops python_runtime = {
	.name = "python",
	.id = RUNTIME_PYTHON,
	.probe = probe,
	.binary_free = binary_free,
	.bpf_proc = bpf_proc,
	.trampolines = trampolines,
	.trampoline_name = trampoline_name,
	.frame_kind = FRAME_PYTHON,
	.words = &words,
	.read_name = read_name,
};
