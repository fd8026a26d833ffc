// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* PHP's Zend engine in a binary (version, structures, VM loop), and PHP frames named from process memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "elffile.h"
#include "procmaps.h"
#include "runtimes/loop.h"
#include "runtimes/names.h"
#include "runtimes/remote.h"
#include "runtimes/runtime.h"
#include "runtimes/seam.h"
#include "tool.h"

struct php_binary {
	char version[16];		/* "8.2" */
	struct php_layout l;
	uint64_t current;		/* link-time &executor_globals.current_execute_data */
	uint64_t loop[PHP_LOOP_RANGES][2];	/* execute_ex's code, file offsets */
	int nloop;
	/* The loop's frame in its body, where opcache's JIT code runs too; .cfa_ra 0: not known. */
	struct unwind_row jit_row;
};

/*
 * Where each version's structures keep what the walk reads, from its Zend
 * headers (offsetof against php8.2-dev and trixie's php8.4-dev), the same
 * in every build of a version on x86-64 and arm64: no field before these
 * depends on the build's options. 8.3 is not here: no Debian release
 * builds it, so nothing here checked its headers.
 */
static const struct php_table {
	unsigned int major, minor;
	uint16_t current;	/* zend_executor_globals.current_execute_data */
	struct php_layout l;
} tables[] = {
	{ 8, 2, 488, { .call_func = 24, .call_info = 40, .call_prev = 48, .func_name = 8,
		       .func_scope = 16, .func_file = 152, .func_line = 160 } },
	{ 8, 4, 488, { .call_func = 24, .call_info = 40, .call_prev = 48, .func_name = 8,
		       .func_scope = 16, .func_file = 168, .func_line = 176 } },
};

/* zend_string: its length, and where its characters start. */
#define ZSTR_LEN 16
#define ZSTR_VAL 24
/* zend_class_entry: its name. */
#define CE_NAME 8

/*
 * The version in the binary's own "X-Powered-By: PHP/8.2.36" header, in
 * .rodata: the one string it sends with every response, from PHP_VERSION.
 */
static int version_from_rodata(Elf *elf, int fd, unsigned int *major, unsigned int *minor)
{
	static const char tag[] = "X-Powered-By: PHP/";
	uint64_t addr, size;
	char *buf, *at;
	int err = -ENOENT;

	if (elffile__section(elf, ".rodata", &addr, &size) || size > (64u << 20))
		return -ENOENT;
	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	if (!elffile__read(elf, fd, addr, buf, size)) {
		buf[size] = '\0';
		at = memmem(buf, size, tag, sizeof(tag) - 1);
		if (at && sscanf(at + sizeof(tag) - 1, "%u.%u", major, minor) == 2)
			err = 0;
	}
	free(buf);
	return err;
}

/* Says once for each version that its frames stay native; with -v, for each binary. */
static void say_unknown(const char *path, const char *version)
{
	static char said[8][16];

	for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		if (!strcmp(said[i], version))
			break;
		if (!said[i][0]) {
			snprintf(said[i], sizeof(said[i]), "%s", version);
			pr_warn("%s: PHP %s, whose structures are not known here: its PHP frames "
				"are not read, its VM loop shows as native code", path, version);
			return;
		}
	}
	pr_debug("%s: PHP %s, whose structures are not known: its PHP frames are not read",
		 path, version);
}

/*
 * opcache's JIT (PHP 8) runs its code in the loop's frame: the loop jumps
 * into it and it jumps back, without a call, its stack pointer the loop's
 * own in its body. That row, where the loop's body has one throughout (the
 * same a quarter, half and three quarters in), walks a frame of the JIT's.
 */
static void jit_row(Elf *elf, const GElf_Sym *loop, struct php_binary *pb)
{
	struct unwind_row r[3];

	for (int i = 0; i < 3; i++)
		if (cfi__row(elf, loop->st_value + loop->st_size * (i + 1) / 4, &r[i]))
			return;
	if (memcmp(&r[0], &r[1], sizeof(r[0])) || memcmp(&r[1], &r[2], sizeof(r[0])) ||
	    UNWIND_ROW_CFA(&r[0]) != UNWIND_CFA_SP)
		return;
	pb->jit_row = r[0];
}

/*
 * Process @pid's JIT buffer: opcache's shared memory (an anonymous shared
 * mapping, /dev/zero to /proc), its executable part. 0, or -ENOENT.
 */
static int jit_buffer(pid_t pid, uint64_t *start, uint64_t *end)
{
	char path[64], line[4096];
	struct maps_entry e;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (err && fgets(line, sizeof(line), f)) {
		if (procmaps__parse_line(line, &e) || !e.exec || !e.deleted ||
		    strcmp(e.path, "/dev/zero"))
			continue;
		*start = e.start;
		*end = e.end;
		err = 0;
	}
	fclose(f);
	return err;
}

static void *probe(int fd, Elf *elf, const char *path)
{
	static const char *const names[] = { "executor_globals", "execute_ex" };
	enum { GLOBALS, LOOP, NSYMS };
	const struct php_table *t = NULL;
	unsigned int major = 0, minor = 0;
	struct php_binary *pb;
	GElf_Sym syms[NSYMS];
	int n;

	if (elffile__lookup(elf, names, NSYMS, syms) < NSYMS || !syms[GLOBALS].st_value ||
	    !syms[LOOP].st_value)
		return NULL;
	pb = calloc(1, sizeof(*pb));
	if (!pb)
		return NULL;
	if (version_from_rodata(elf, fd, &major, &minor))
		snprintf(pb->version, sizeof(pb->version), "?");
	else
		snprintf(pb->version, sizeof(pb->version), "%u.%u", major % 100, minor % 100);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].major == major && tables[i].minor == minor)
			t = &tables[i];
	if (!t || syms[GLOBALS].st_size < t->current + 8u) {
		say_unknown(path, pb->version);
		free(pb);
		return NULL;
	}
	n = loop__ranges(elf, fd, &syms[LOOP], pb->loop, PHP_LOOP_RANGES);
	if (n < 0) {
		pr_debug("%s: PHP %s: its VM loop's code could not be found: its PHP frames "
			 "are not read", path, pb->version);
		free(pb);
		return NULL;
	}
	pb->nloop = n;
	pb->l = t->l;
	jit_row(elf, &syms[LOOP], pb);
	pb->current = syms[GLOBALS].st_value + t->current;
	pr_debug("%s: PHP %s: PHP frames in place of its VM loop (%d code range%s)", path,
		 pb->version, n, n == 1 ? "" : "s");
	return pb;
}

static void binary_free(void *b)
{
	free(b);
}

static int bpf_proc(const void *b, pid_t pid, uint64_t bias, uint32_t id,
		    struct runtime_proc *out)
{
	const struct php_binary *pb = b;
	__u64 file = UNWIND_FILE_FRAME | (__u64)id << UNWIND_FILE_OFF_BITS;
	uint64_t start, end;

	out->php.current = pb->current + bias;
	if (pb->jit_row.cfa_ra && !jit_buffer(pid, &start, &end)) {
		out->php.jit[0] = start;
		out->php.jit[1] = end;
	}
	out->php.l = pb->l;
	for (int i = 0; i < pb->nloop; i++) {
		out->php.loop[i][0] = file | pb->loop[i][0];
		out->php.loop[i][1] = file | pb->loop[i][1];
	}
	return 0;
}

/* Is [@start, @end) of process @pid its JIT's code? Then *@row walks a frame there. */
static bool trampolines(const void *b, pid_t pid, uint64_t start, uint64_t end,
			struct unwind_row *row)
{
	const struct php_binary *pb = b;
	uint64_t s, e;

	if (!pb->jit_row.cfa_ra || jit_buffer(pid, &s, &e) || s != start || e != end)
		return false;
	*row = pb->jit_row;
	return true;
}

/* A name's bytes kept at most, and a file's. */
#define PHP_NAME_MAX 256
#define PHP_FILE_MAX 1024

/*
 * A zend_string's bytes at @addr of process @pid into @out (at most @max,
 * "..." after those cut). What they are is the escapers' business at the
 * output, like any other name another user chose.
 */
static int read_str(pid_t pid, uint64_t addr, char *out, size_t max)
{
	uint64_t len;
	size_t n;

	if (!addr || remote__read(pid, addr + ZSTR_LEN, &len, sizeof(len)))
		return -EFAULT;
	n = len < max ? len : max;
	if (n && remote__read(pid, addr + ZSTR_VAL, out, n))
		return -EFAULT;
	out[n] = '\0';
	/* A NUL would end the name here: cut there, as PHP's own traces print it. */
	n = strlen(out);
	if (len > max)
		memcpy(out + n, "...", 4);
	return 0;
}

/*
 * Reads frame @v's op array in process @p: its function's name (and its
 * class's), file and first line, if it is still the op array the frame was
 * taken from (a PHP function's or code's, its check the same).
 */
static int read_name(void *ctx, struct frame_name *out)
{
	const struct runtime_read *r = ctx;
	const struct php_binary *pb = r->binary;
	const struct php_layout *l = &pb->l;
	char name[PHP_NAME_MAX + 4], cls[PHP_NAME_MAX + 4], file[PHP_FILE_MAX + 4];
	char full[2 * PHP_NAME_MAX + 16];
	uint64_t func = PHP_FRAME_FUNC(r->v), name_str, scope, file_str, cls_str;
	uint8_t op[PHP_FUNC_READ];
	uint32_t line;
	pid_t pid = r->p->tgid;

	if (!func || remote__read(pid, func, op, sizeof(op)))
		return -EFAULT;
	memcpy(&name_str, op + l->func_name, sizeof(name_str));
	memcpy(&scope, op + l->func_scope, sizeof(scope));
	memcpy(&file_str, op + l->func_file, sizeof(file_str));
	memcpy(&line, op + l->func_line, sizeof(line));
	if ((op[0] != PHP_USER_FUNCTION && op[0] != PHP_EVAL_CODE) ||
	    php_frame_check(name_str, file_str, line) != PHP_FRAME_CHECK(r->v))
		return -ESTALE;
	if (read_str(pid, file_str, file, PHP_FILE_MAX))
		return -EFAULT;
	if (op[0] == PHP_EVAL_CODE)
		snprintf(name, sizeof(name), "{eval}");
	else if (!name_str)
		snprintf(name, sizeof(name), "{main}");
	else if (read_str(pid, name_str, name, PHP_NAME_MAX))
		return -EFAULT;
	if (scope && op[0] == PHP_USER_FUNCTION && name_str) {
		if (remote__read(pid, scope + CE_NAME, &cls_str, sizeof(cls_str)) ||
		    read_str(pid, cls_str, cls, PHP_NAME_MAX))
			return -EFAULT;
		snprintf(full, sizeof(full), "%s::%s", cls, name);
		return frame_name__make(out, full, file, line);
	}
	return frame_name__make(out, name, file, line);
}

static const struct frame_names_words words = {
	.runtime = "PHP",
	.unknown = "[unknown php]",
	.changed = "their function was freed and its memory reused",
};

const struct runtime_ops php_runtime = {
	.name = "php",
	.id = RUNTIME_PHP,
	.probe = probe,
	.binary_free = binary_free,
	.bpf_proc = bpf_proc,
	.trampolines = trampolines,
	.frame_kind = FRAME_PHP,
	.words = &words,
	.read_name = read_name,
};
