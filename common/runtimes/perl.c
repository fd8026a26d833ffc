// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Perl 5's interpreter in a binary (version, structures, loop, its thread's context), and Perl subs named from process memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elffile.h"
#include "runtimes/loop.h"
#include "runtimes/names.h"
#include "runtimes/remote.h"
#include "runtimes/runtime.h"
#include "runtimes/seam.h"
#include "tool.h"

/*
 * Where the versions keep what the walk and the names read, from their
 * headers (offsetof against Debian 12's 5.36 and Debian 13's 5.40, which
 * agree), for threaded builds (MULTIPLICITY), as every Debian perl is:
 * their interpreter's state is a struct, its address in a thread-local
 * variable of the executable (PL_current_context).
 */
static const struct perl_layout layout = {
	.interp_stackinfo = 224, .si_cxstack = 8, .si_prev = 16, .si_cxix = 32,
	.cx_size = 104, .cx_cv = 72, .cv_gv = 56, .cv_file = 64, .cv_start = 40,
};

/* What only the names read: XPVCV's stash and flags, XPVGV's, a HV's, a HEK's, an op's, a COP's. */
#define CV_STASH 32
#define CV_FLAGS 92
#define CVF_NAMED 0x8000
#define GV_NAME 32
#define GV_STASH 40
#define SV_FLAGS 12
#define HV_HAS_AUX 0x2000000	/* SVf_OOK, 5.40's SVphv_HasAUX: the same bit */
#define HV_AUX 32		/* in struct xpvhv_with_aux */
#define AUX_NAME_COUNT 28
#define HEK_LEN 4
#define HEK_KEY 8
#define OP_TYPE 32
#define COP_LINE 36

static const struct perl_version {
	unsigned int version;		/* of 5.x */
	uint16_t nextstate, dbstate;	/* the ops a statement starts with */
} versions[] = {
	{ 36, 195, 196 },
	{ 40, 198, 199 },
};

struct perl_binary {
	const struct perl_version *v;
	int64_t context;		/* PL_current_context from the thread pointer */
	uint64_t loop[PERL_LOOP_RANGES][2];
	int nloop;
};

/*
 * Where the executable's thread-local variable at @value (its offset in
 * the executable's block) is, from the thread pointer: the executable's
 * block is the first of the static ones, below the thread pointer on
 * x86-64, above its 16-byte control block on arm64. 0, or -ENOENT (no
 * block, or one whose start is not aligned, which glibc places otherwise).
 */
static int tls_offset(Elf *elf, uint64_t value, int64_t *out)
{
	GElf_Ehdr eh;
	GElf_Phdr ph, tls = {};
	bool interp = false;
	size_t n;

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n))
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			return -ENOENT;
		interp |= ph.p_type == PT_INTERP;
		if (ph.p_type == PT_TLS)
			tls = ph;
	}
	/* A library's block lies wherever the loader put it. */
	if (!interp || !tls.p_memsz || tls.p_align > 4096 || (tls.p_align & (tls.p_align - 1)))
		return -ENOENT;
	if (tls.p_align > 1 && (tls.p_vaddr & (tls.p_align - 1)))
		return -ENOENT;
	if (eh.e_machine == EM_X86_64) {
		uint64_t a = tls.p_align ? tls.p_align : 1;

		*out = (int64_t)value - (int64_t)((tls.p_memsz + a - 1) & ~(a - 1));
		return 0;
	}
	if (eh.e_machine == EM_AARCH64) {
		uint64_t a = tls.p_align > 16 ? tls.p_align : 16;

		*out = (int64_t)((16 + a - 1) & ~(a - 1)) + (int64_t)value;
		return 0;
	}
	return -ENOENT;
}

static void *probe(int fd, Elf *elf, const char *path)
{
	static const char *const names[] = {
		"PL_current_context", "Perl_runops_standard", "PL_revision", "PL_version",
	};
	enum { CONTEXT, LOOP, REVISION, VERSION, NSYMS };
	const struct perl_version *v = NULL;
	uint8_t revision = 0, version = 0;
	struct perl_binary *pb;
	GElf_Sym syms[NSYMS];
	int64_t context;
	int n;

	if (elffile__lookup(elf, names, NSYMS, syms) <= 0 || !syms[LOOP].st_value ||
	    !syms[REVISION].st_value || !syms[VERSION].st_value)
		return NULL;
	if (elffile__read(elf, fd, syms[REVISION].st_value, &revision, 1) ||
	    elffile__read(elf, fd, syms[VERSION].st_value, &version, 1) || revision != 5)
		return NULL;
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].version == version)
			v = &versions[i];
	if (!v) {
		static uint64_t said;

		/* Said once for each version. */
		if (!(said >> (version % 64) & 1)) {
			said |= 1ULL << (version % 64);
			pr_warn("%s: Perl 5.%u, whose structures are not known here: its subs are "
				"not read, its loop shows as native code", path, version);
		}
		return NULL;
	}
	/* libperl.so (an embedder's) or a build without threads: no variable to start from. */
	if (syms[CONTEXT].st_shndx == SHN_UNDEF || GELF_ST_TYPE(syms[CONTEXT].st_info) != STT_TLS ||
	    tls_offset(elf, syms[CONTEXT].st_value, &context)) {
		pr_debug("%s: Perl 5.%u whose interpreter is not in a thread-local variable of the "
			 "executable: its subs are not read", path, version);
		return NULL;
	}
	pb = calloc(1, sizeof(*pb));
	if (!pb)
		return NULL;
	n = loop__ranges(elf, fd, &syms[LOOP], pb->loop, PERL_LOOP_RANGES);
	if (n < 0) {
		pr_debug("%s: Perl 5.%u: its loop's code could not be found: its subs are not "
			 "read", path, version);
		free(pb);
		return NULL;
	}
	pb->v = v;
	pb->nloop = n;
	pb->context = context;
	pr_debug("%s: Perl 5.%u: Perl subs in place of its loop", path, version);
	return pb;
}

static void binary_free(void *b)
{
	free(b);
}

static int bpf_proc(const void *b, pid_t pid, uint64_t bias, uint32_t id,
		    struct runtime_proc *out)
{
	const struct perl_binary *pb = b;
	__u64 file = UNWIND_FILE_FRAME | (__u64)id << UNWIND_FILE_OFF_BITS;

	out->perl.context = pb->context;
	out->perl.l = layout;
	for (int i = 0; i < pb->nloop; i++) {
		out->perl.loop[i][0] = file | pb->loop[i][0];
		out->perl.loop[i][1] = file | pb->loop[i][1];
	}
	return 0;
}

/* A name's bytes kept at most, and a file's. */
#define PERL_NAME_MAX 256
#define PERL_FILE_MAX 1024

/* A HEK's bytes (a name as Perl shares it) at @addr of process @pid into @out, at most @max. */
static int read_hek(pid_t pid, uint64_t addr, char *out, size_t max)
{
	int32_t len;
	size_t n;

	if (!addr || remote__read(pid, addr + HEK_LEN, &len, sizeof(len)) || len < 0)
		return -EFAULT;
	n = (size_t)len < max ? (size_t)len : max;
	if (n && remote__read(pid, addr + HEK_KEY, out, n))
		return -EFAULT;
	out[n] = '\0';
	n = strlen(out);
	if ((size_t)len > max)
		memcpy(out + n, "...", 4);
	return 0;
}

/* Stash (package) @hv's name into @out. */
static int read_stash(pid_t pid, uint64_t hv, char *out, size_t max)
{
	uint64_t body, hek;
	uint32_t flags;
	int32_t count;

	if (!hv || remote__read(pid, hv + SV_FLAGS, &flags, sizeof(flags)) ||
	    !(flags & HV_HAS_AUX) || remote__read(pid, hv, &body, sizeof(body)) ||
	    remote__read(pid, body + HV_AUX + AUX_NAME_COUNT, &count, sizeof(count)) ||
	    remote__read(pid, body + HV_AUX, &hek, sizeof(hek)))
		return -EFAULT;
	/* Several names (a stash known by more than one): the first is its own. */
	if (count && remote__read(pid, hek, &hek, sizeof(hek)))
		return -EFAULT;
	return read_hek(pid, hek, out, max);
}

/*
 * Reads frame @v's CV in process @p: its package and name, file and the
 * line of its first statement, if its body still names what the frame's
 * check does.
 */
static int read_name(void *ctx, struct frame_name *out)
{
	const struct runtime_read *r = ctx;
	const struct perl_binary *pb = r->binary;
	char pkg[PERL_NAME_MAX + 4], name[PERL_NAME_MAX + 4], file[PERL_FILE_MAX + 1];
	char full[2 * PERL_NAME_MAX + 16];
	uint64_t cv = PERL_FRAME_CV(r->v), body, gv, cvfile, start, stash, hek;
	uint8_t x[PERL_CV_READ + 32];
	uint32_t flags, line = 0;
	uint16_t type;
	pid_t pid = r->p->tgid;
	bool ok;

	if (!cv || remote__read(pid, cv, &body, sizeof(body)) || !body ||
	    remote__read(pid, body, x, sizeof(x)))
		return -EFAULT;
	memcpy(&gv, x + layout.cv_gv, sizeof(gv));
	memcpy(&cvfile, x + layout.cv_file, sizeof(cvfile));
	memcpy(&start, x + layout.cv_start, sizeof(start));
	memcpy(&stash, x + CV_STASH, sizeof(stash));
	memcpy(&flags, x + CV_FLAGS, sizeof(flags));
	if (perl_frame_check(gv, cvfile, start) != PERL_FRAME_CHECK(r->v))
		return -ESTALE;
	if (flags & CVF_NAMED) {
		hek = gv;
	} else if (!gv || remote__read(pid, gv, &body, sizeof(body)) ||
		   remote__read(pid, body + GV_NAME, &hek, sizeof(hek)) ||
		   remote__read(pid, body + GV_STASH, &stash, sizeof(stash))) {
		return -EFAULT;
	}
	if (read_hek(pid, hek, name, PERL_NAME_MAX))
		return -EFAULT;
	if (read_stash(pid, stash, pkg, PERL_NAME_MAX))
		snprintf(pkg, sizeof(pkg), "?");
	/* Its file's name, a C string: as much as can be read, a name near a mapping's end too. */
	ok = false;
	for (size_t k = 0, n = PERL_FILE_MAX; cvfile && k < 8 && !ok; k++, n /= 2) {
		ok = !remote__read(pid, cvfile, file, n);
		file[n] = '\0';
	}
	if (!ok)
		snprintf(file, sizeof(file), "?");
	/* Its first statement's line, where its first op is one (nextstate). */
	if (start && !remote__read(pid, start + OP_TYPE, &type, sizeof(type)) &&
	    ((type & 0x1ff) == pb->v->nextstate || (type & 0x1ff) == pb->v->dbstate) &&
	    remote__read(pid, start + COP_LINE, &line, sizeof(line)))
		line = 0;
	snprintf(full, sizeof(full), "%s::%s", pkg, name);
	return frame_name__make(out, full, file, line);
}

static const struct frame_names_words words = {
	.runtime = "Perl",
	.unknown = "[unknown perl]",
	.changed = "their sub was freed and its memory reused",
};

const struct runtime_ops perl_runtime = {
	.name = "perl",
	.id = RUNTIME_PERL,
	.probe = probe,
	.binary_free = binary_free,
	.bpf_proc = bpf_proc,
	.frame_kind = FRAME_PERL,
	.words = &words,
	.read_name = read_name,
};
