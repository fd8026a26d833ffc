// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CRuby's VM in its library (version, structures, loop, its thread's execution context), and Ruby methods named from process memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "disasm.h"
#include "elffile.h"
#include "runtimes/loop.h"
#include "runtimes/names.h"
#include "runtimes/remote.h"
#include "runtimes/runtime.h"
#include "runtimes/seam.h"
#include "tool.h"

/*
 * Where the versions keep what the walk and the names read, from their
 * headers (offsetof against Debian 12's ruby3.1-dev; 3.3's public headers
 * and its library's code where its internal ones are not packaged).
 */
static const struct ruby_version {
	unsigned int major, minor;
	struct ruby_layout l;
	bool line_fixnum;		/* an iseq's first line: a Fixnum VALUE (3.1), or an int */
	uint8_t str_embed;		/* an embedded string's bytes */
	bool str_len_in_flags;		/* ... its length in its flags (3.1), or beside them */
	uint8_t ary_len_mask;		/* an embedded array's length, in its flags from bit 15 */
	/*
	 * A class's path: in its instance variables (3.1: under an id found
	 * as Ruby runs, its singleton's attached object under @attached), or
	 * in its rb_classext_t (3.3: right after its RClass) at @classpath
	 * and @attached from the class.
	 */
	bool path_in_ivars;
	uint16_t classpath;
	uint64_t attached;
} versions[] = {
	{ 3, 1, { .cfp_size = 64, .cfp_pc = 0, .cfp_iseq = 16, .cfp_ep = 32, .iseq_body = 16,
		  .body_location = 64 },
	  .line_fixnum = true, .str_embed = 16, .str_len_in_flags = true, .ary_len_mask = 0x3,
	  .path_in_ivars = true, .attached = 3089 /* id__attached__ */ },
	{ 3, 3, { .cfp_size = 56, .cfp_pc = 0, .cfp_iseq = 16, .cfp_ep = 32, .iseq_body = 16,
		  .body_location = 64 },
	  .str_embed = 24, .ary_len_mask = 0x7f, .classpath = 32 + 120, .attached = 32 + 96 },
};

/* What only the names read: a VALUE's flags, strings, arrays and classes. */
#define RB_TYPE_MASK 0x1f
#define RB_T_STRING 0x05
#define RB_T_ARRAY 0x07
#define RB_T_CLASS 0x02
#define RB_T_MODULE 0x03
#define RB_NOEMBED 0x2000		/* FL_USER1: a string's bytes elsewhere */
#define RB_ARY_EMBED 0x2000		/* ... but an array's elements within */
#define RB_SINGLETON 0x1000		/* FL_USER0: a singleton class */
#define RB_STR_LEN 16			/* a string's length, and its bytes elsewhere */
#define RB_STR_PTR 24
#define RB_ARY_EMBED_AT 16		/* an embedded array's elements */
#define RB_ARY_LEN 16			/* ... an array's length, and its elements elsewhere */
#define RB_ARY_PTR 32
#define RB_CLASS_EXT 24			/* 3.1's RClass: its rb_classext_t, whose instance variables... */
#define RB_EXT_IV_TBL 8			/* ... are an st_table */
#define ST_ENTRIES_START 32		/* st_table: its entries in use, from... */
#define ST_ENTRIES_BOUND 40		/* ... to */
#define ST_ENTRIES 48
#define ST_ENTRY_SIZE 24		/* st_table_entry: hash, key, record */
/* A class's instance variables looked through at most. */
#define RUBY_IVARS_MAX 64

/* A C function's code this big at least is the VM's instruction loop (vm_exec_core). */
#define RUBY_CORE_MIN 4096

struct ruby_binary {
	const struct ruby_version *v;
	char version[16];
	uint64_t ec;			/* ruby_current_ec in the library's TLS block */
	uint64_t modid_slot;		/* the GOT word of the library's TLS module id */
	uint64_t loop[RUBY_LOOP_RANGES][2], core[RUBY_LOOP_RANGES][2];
	uint64_t integer;		/* rb_cInteger, whose path names the id classes keep theirs by */
	int nloop, ncore;
};

/* Said once a process's binary for each version: what keeps its methods from being read. */
static void say_once(const char *path, const char *version, const char *why)
{
	static char said[8][16];

	for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		if (!strcmp(said[i], version))
			break;
		if (!said[i][0]) {
			snprintf(said[i], sizeof(said[i]), "%s", version);
			pr_warn("%s: Ruby %s, %s: its methods are not read, its VM shows as native "
				"code", path, version, why);
			return;
		}
	}
	pr_debug("%s: Ruby %s, %s: its methods are not read", path, version, why);
}

/*
 * The VM's instruction loop, vm_exec_core, a static function without a
 * symbol: of the functions rb_vm_exec (@loop, file offsets @off) calls,
 * the one whose code (by its CFI) is largest. 0, or -ENOENT.
 */
static int find_core(Elf *elf, int fd, const GElf_Sym *loop, uint64_t off, GElf_Sym *core)
{
	uint64_t *targets, start, end, best = 0;
	GElf_Ehdr eh;
	ssize_t n;

	if (!gelf_getehdr(elf, &eh))
		return -ENOENT;
	n = disasm__calls(fd, eh.e_machine, off, loop->st_size, loop->st_value, &targets);
	if (n <= 0)
		return -ENOENT;
	for (ssize_t i = 0; i < n; i++) {
		if (cfi__function(elf, targets[i], &start, &end) || start != targets[i] ||
		    end - start < RUBY_CORE_MIN || end - start <= best)
			continue;
		best = end - start;
		*core = (GElf_Sym){ .st_value = start, .st_size = end - start };
	}
	free(targets);
	return best ? 0 : -ENOENT;
}

/*
 * ruby_current_ec's place where the library does not name it (Debian 13's
 * 3.3): rb_block_given_p, exported, reads it first, through __tls_get_addr
 * of a GOT entry: the word the loader puts the module id in, then the
 * variable's offset, written there by the linker. 0, or -ENOENT.
 */
static int ec_from_code(Elf *elf, int fd, uint64_t *slot, uint64_t *off)
{
	static const char *const name[] = { "rb_block_given_p" };
	uint64_t at, *addrs;
	GElf_Ehdr eh;
	GElf_Sym fn;
	ssize_t n;
	int err = -ENOENT;

	if (elffile__lookup(elf, name, 1, &fn) != 1 || !gelf_getehdr(elf, &eh) ||
	    elffile__offset(elf, fn.st_value, &at))
		return -ENOENT;
	n = disasm__addresses(fd, eh.e_machine, at, fn.st_size < 64 ? fn.st_size : 64,
			      fn.st_value, &addrs);
	for (ssize_t i = 0; i < n && err; i++) {
		*slot = addrs[i];
		if (!elffile__tls_module_slot(elf, NULL, slot) &&
		    !elffile__read(elf, fd, addrs[i] + 8, off, sizeof(*off)) && *off < 4096)
			err = 0;
	}
	if (n > 0)
		free(addrs);
	return err;
}

/*
 * rb_vm_exec where the library does not name it (3.3's): where the
 * exported rb_iseq_eval_main ends, jumping to it (a function that calls
 * one as large as vm_exec_core: not a part split from it). 0, or -ENOENT.
 */
static int loop_from_code(Elf *elf, int fd, GElf_Sym *loop)
{
	static const char *const name[] = { "rb_iseq_eval_main" };
	uint64_t at, *targets, start, end;
	GElf_Ehdr eh;
	GElf_Sym fn;
	ssize_t n;
	int err = -ENOENT;

	if (elffile__lookup(elf, name, 1, &fn) != 1 || !gelf_getehdr(elf, &eh) ||
	    elffile__offset(elf, fn.st_value, &at))
		return -ENOENT;
	n = disasm__jumps_out(fd, eh.e_machine, at, fn.st_size, fn.st_value, &targets);
	for (ssize_t i = 0; i < n && err; i++) {
		GElf_Sym core;
		uint64_t off;

		if (cfi__function(elf, targets[i], &start, &end) || start != targets[i] ||
		    elffile__offset(elf, start, &off))
			continue;
		*loop = (GElf_Sym){ .st_value = start, .st_size = end - start };
		err = find_core(elf, fd, loop, off, &core);
	}
	if (n > 0)
		free(targets);
	return err;
}

static void *probe(int fd, Elf *elf, const char *path)
{
	static const char *const names[] = {
		"ruby_version", "ruby_current_ec", "rb_vm_exec", "rb_cInteger",
	};
	enum { VERSION, EC, LOOP, INTEGER, NSYMS };
	const struct ruby_version *v = NULL;
	unsigned int major, minor, patch;
	struct ruby_binary *rb;
	GElf_Sym syms[NSYMS], core;
	char version[16] = "";
	uint64_t off;
	int n;

	if (elffile__lookup(elf, names, NSYMS, syms) <= 0 || syms[VERSION].st_shndx == SHN_UNDEF ||
	    elffile__read(elf, fd, syms[VERSION].st_value, version, sizeof(version) - 1) ||
	    sscanf(version, "%u.%u.%u", &major, &minor, &patch) != 3 || major < 2 || major > 9)
		return NULL;
	version[strnlen(version, sizeof(version) - 1)] = '\0';
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].major == major && versions[i].minor == minor)
			v = &versions[i];
	if (!v) {
		say_once(path, version, "whose structures are not known here");
		return NULL;
	}
	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return NULL;
	snprintf(rb->version, sizeof(rb->version), "%s", version);
	rb->v = v;
	rb->integer = syms[INTEGER].st_shndx != SHN_UNDEF ? syms[INTEGER].st_value : 0;
	/* Its thread's execution context: by its symbol, or by the code that reads it. */
	if (syms[EC].st_shndx != SHN_UNDEF && GELF_ST_TYPE(syms[EC].st_info) == STT_TLS) {
		rb->ec = syms[EC].st_value;
		if (elffile__tls_module_slot(elf, "ruby_current_ec", &rb->modid_slot)) {
			say_once(path, version, "whose library reaches its thread-local variables "
				 "other than by module id (TLS descriptors)");
			goto fail;
		}
	} else if (ec_from_code(elf, fd, &rb->modid_slot, &rb->ec)) {
		say_once(path, version, "whose library has no symbol ruby_current_ec, nor "
			 "reads it in rb_block_given_p by module id");
		goto fail;
	}
	if ((syms[LOOP].st_shndx == SHN_UNDEF || !syms[LOOP].st_value) &&
	    loop_from_code(elf, fd, &syms[LOOP])) {
		say_once(path, version, "whose library has no symbol rb_vm_exec, nor jumps to "
			 "it from rb_iseq_eval_main");
		goto fail;
	}
	n = loop__ranges(elf, fd, &syms[LOOP], rb->loop, RUBY_LOOP_RANGES);
	if (n < 0 || elffile__offset(elf, syms[LOOP].st_value, &off) ||
	    find_core(elf, fd, &syms[LOOP], off, &core)) {
		say_once(path, version, "whose VM loop's code could not be found");
		goto fail;
	}
	rb->nloop = n;
	n = loop__ranges(elf, fd, &core, rb->core, RUBY_LOOP_RANGES);
	if (n < 0) {
		say_once(path, version, "whose VM loop's code could not be found");
		goto fail;
	}
	rb->ncore = n;
	pr_debug("%s: Ruby %s: Ruby methods in place of its VM loop", path, version);
	return rb;
fail:
	free(rb);
	return NULL;
}

static void binary_free(void *b)
{
	free(b);
}

static int bpf_proc(const void *b, pid_t pid, uint64_t bias, uint32_t id,
		    struct runtime_proc *out)
{
	const struct ruby_binary *rb = b;
	__u64 file = UNWIND_FILE_FRAME | (__u64)id << UNWIND_FILE_OFF_BITS;
	uint64_t modid = 0;

	/* The loader writes it as it loads the library: not yet, the walk asks again. */
	if (remote__read(pid, rb->modid_slot + bias, &modid, sizeof(modid)) || !modid)
		return -EAGAIN;
	out->ruby.modid = modid;
	out->ruby.ec = rb->ec;
	/* The DTV in the thread's control block: after a pointer to itself on x86-64, first on arm64. */
#if defined(__x86_64__)
	out->ruby.dtv = 8;
#else
	out->ruby.dtv = 0;
#endif
	out->ruby.l = rb->v->l;
	for (int i = 0; i < rb->nloop; i++) {
		out->ruby.loop[i][0] = file | rb->loop[i][0];
		out->ruby.loop[i][1] = file | rb->loop[i][1];
	}
	for (int i = 0; i < rb->ncore; i++) {
		out->ruby.core[i][0] = file | rb->core[i][0];
		out->ruby.core[i][1] = file | rb->core[i][1];
	}
	return 0;
}

/* A name's bytes kept at most, and a file's. */
#define RUBY_NAME_MAX 256
#define RUBY_FILE_MAX 1024

/* String @str (a VALUE) of process @pid into @out, at most @max bytes: 0 or -EFAULT. */
static int read_string(const struct ruby_version *v, pid_t pid, uint64_t str, char *out,
		       size_t max)
{
	uint64_t flags, len, at = str + v->str_embed;

	if (!str || (str & 7) || remote__read(pid, str, &flags, sizeof(flags)) ||
	    (flags & RB_TYPE_MASK) != RB_T_STRING)
		return -EFAULT;
	if (v->str_len_in_flags && !(flags & RB_NOEMBED))
		len = (flags >> 14) & 0x1f;
	else if (remote__read(pid, str + RB_STR_LEN, &len, sizeof(len)))
		return -EFAULT;
	if ((flags & RB_NOEMBED) && remote__read(pid, str + RB_STR_PTR, &at, sizeof(at)))
		return -EFAULT;
	if (len && remote__read(pid, at, out, len < max ? len : max))
		return -EFAULT;
	out[len < max ? len : max] = '\0';
	if (len > max)
		memcpy(out + strlen(out), "...", 4);
	return 0;
}

/* An iseq's path: its pathobj, a string or an array of its path and real path. */
static int read_path(const struct ruby_version *v, pid_t pid, uint64_t pathobj, char *out,
		     size_t max)
{
	uint64_t flags, len, first;

	if (!pathobj || (pathobj & 7) || remote__read(pid, pathobj, &flags, sizeof(flags)))
		return -EFAULT;
	if ((flags & RB_TYPE_MASK) == RB_T_STRING)
		return read_string(v, pid, pathobj, out, max);
	if ((flags & RB_TYPE_MASK) != RB_T_ARRAY)
		return -EFAULT;
	if (!(flags & RB_ARY_EMBED)) {
		if (remote__read(pid, pathobj + RB_ARY_LEN, &len, sizeof(len)) || !len ||
		    remote__read(pid, pathobj + RB_ARY_PTR, &first, sizeof(first)) ||
		    remote__read(pid, first, &first, sizeof(first)))
			return -EFAULT;
	} else if (!((flags >> 15) & v->ary_len_mask) ||
		   remote__read(pid, pathobj + RB_ARY_EMBED_AT, &first, sizeof(first))) {
		return -EFAULT;
	}
	return read_string(v, pid, first, out, max);
}

/* 3.1's class @cls's instance variables (id, value) into @out: how many, or -ENOENT. */
static int class_ivars(pid_t pid, uint64_t cls, uint64_t (*out)[2])
{
	uint64_t ext, tbl, t[3], e[3];
	int n = 0;

	if (!cls || (cls & 7) || remote__read(pid, cls + RB_CLASS_EXT, &ext, sizeof(ext)) ||
	    remote__read(pid, ext + RB_EXT_IV_TBL, &tbl, sizeof(tbl)) || !tbl ||
	    remote__read(pid, tbl + ST_ENTRIES_START, t, sizeof(t)))
		return -ENOENT;
	for (uint64_t i = t[0]; i < t[1] && n < RUBY_IVARS_MAX; i++, n++) {
		if (remote__read(pid, t[2] + i * ST_ENTRY_SIZE, e, sizeof(e)))
			return -ENOENT;
		out[n][0] = e[1];
		out[n][1] = e[2];
	}
	return n;
}

/* 3.1's class @cls's instance variable @id into *@out: 0, or -ENOENT. */
static int class_ivar(pid_t pid, uint64_t cls, uint64_t id, uint64_t *out)
{
	uint64_t iv[RUBY_IVARS_MAX][2];
	int n = class_ivars(pid, cls, iv);

	for (int i = 0; i < n; i++) {
		if (iv[i][0] == id) {
			*out = iv[i][1];
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * Class @cls's path (a string VALUE) into *@out: 3.1's under the id
 * made for it as Ruby starts, which is the key of Integer's instance
 * variable that is "Integer"; 3.3's in its rb_classext_t.
 */
static int class_path(const struct runtime_read *r, uint64_t cls, uint64_t *out)
{
	const struct ruby_binary *rb = r->binary;
	const struct ruby_version *v = rb->v;
	uint64_t iv[RUBY_IVARS_MAX][2], integer;
	pid_t pid = r->p->tgid;
	char s[16];
	int n;

	if (!v->path_in_ivars)
		return remote__read(pid, cls + v->classpath, out, sizeof(*out)) ? -ENOENT : 0;
	if (!rb->integer || remote__read(pid, rb->integer + r->bias, &integer, sizeof(integer)))
		return -ENOENT;
	n = class_ivars(pid, integer, iv);
	for (int i = 0; i < n; i++)
		if (!read_string(v, pid, iv[i][1], s, sizeof(s) - 1) && !strcmp(s, "Integer"))
			return class_ivar(pid, cls, iv[i][0], out);
	return -ENOENT;
}

/*
 * The name of the class or module owning the frame's method (r->data), as
 * Ruby writes a method of it:
 * "Cave#" (its instances'), "Cave." (a singleton class's: the class's
 * own). -ENOENT for an anonymous one.
 */
static int owner_name(const struct runtime_read *r, char *out, size_t max)
{
	const struct ruby_binary *rb = r->binary;
	const struct ruby_version *v = rb->v;
	pid_t pid = r->p->tgid;
	uint64_t flags, path, cls = r->data;
	const char *sep = "#";
	size_t n;

	if ((cls & 7) || remote__read(pid, cls, &flags, sizeof(flags)) ||
	    ((flags & RB_TYPE_MASK) != RB_T_CLASS && (flags & RB_TYPE_MASK) != RB_T_MODULE))
		return -ENOENT;
	if (flags & RB_SINGLETON) {
		if (v->path_in_ivars ? class_ivar(pid, cls, v->attached, &cls) :
				       remote__read(pid, cls + v->attached, &cls, sizeof(cls)))
			return -ENOENT;
		sep = ".";
	}
	if (!cls || (cls & 7) || class_path(r, cls, &path) || read_string(v, pid, path, out, max))
		return -ENOENT;
	n = strlen(out);
	snprintf(out + n, max + 4 - n, "%s", sep);
	return 0;
}

/*
 * Reads frame @v's iseq body in process @p: its label, file and first
 * line, if its location still is what the frame's check says; its
 * method's class where its owner is known, as Ruby 3.4 names it
 * ("Cave#reblochon", "block in Cave#reblochon").
 */
static int read_name(void *ctx, struct frame_name *out)
{
	const struct runtime_read *r = ctx;
	const struct ruby_binary *rb = r->binary;
	char label[RUBY_NAME_MAX + 4], file[RUBY_FILE_MAX + 4], cls[RUBY_NAME_MAX + 8];
	char full[2 * RUBY_NAME_MAX + 32];
	const char *in;
	uint64_t loc[4];
	pid_t pid = r->p->tgid;
	uint32_t line;

	if (remote__read(pid, RUBY_FRAME_BODY(r->v) + rb->v->l.body_location, loc, sizeof(loc)))
		return -EFAULT;
	if (ruby_frame_check(loc[0], loc[2], loc[3]) != RUBY_FRAME_CHECK(r->v))
		return -ESTALE;
	if (read_string(rb->v, pid, loc[2], label, RUBY_NAME_MAX))
		return -EFAULT;
	if (read_path(rb->v, pid, loc[0], file, RUBY_FILE_MAX))
		snprintf(file, sizeof(file), "?");
	snprintf(full, sizeof(full), "%s", label);
	if (r->data && label[0] != '<' && !owner_name(r, cls, RUBY_NAME_MAX)) {
		in = strncmp(label, "block ", 6) ? NULL : strstr(label, " in ");
		if (in)
			snprintf(full, sizeof(full), "%.*s in %s%s", (int)(in - label), label, cls,
				 in + 4);
		else
			snprintf(full, sizeof(full), "%s%s", cls, label);
	}
	if (rb->v->line_fixnum)
		line = (loc[3] & 1) ? (uint32_t)(loc[3] >> 1) : 0;
	else
		line = (uint32_t)loc[3] < (1u << 30) ? (uint32_t)loc[3] : 0;
	return frame_name__make(out, full, file, line);
}

static const struct frame_names_words words = {
	.runtime = "Ruby",
	.unknown = "[unknown ruby]",
	.changed = "their iseq was freed and its memory reused",
};

const struct runtime_ops ruby_runtime = {
	.name = "ruby",
	.id = RUNTIME_RUBY,
	.probe = probe,
	.binary_free = binary_free,
	.bpf_proc = bpf_proc,
	.frame_kind = FRAME_RUBY,
	.words = &words,
	.read_name = read_name,
	/*
	 * Named by the frame alone: its owner comes with the walk's note of
	 * it, the first time, not in the stack, for a method's iseq is one
	 * class's.
	 */
	.named_by_frame = true,
};
