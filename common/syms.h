/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel and user address to symbol resolution, with caches shared across processes. */
#ifndef BPFSCOPE_SYMS_H
#define BPFSCOPE_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <gelf.h>
#include <linux/types.h>

#include "stack_key.h"

enum sym_kind {
	SYM_UNKNOWN,
	SYM_KERNEL,
	SYM_USER,
	SYM_JIT,	/* from /tmp/perf-PID.map */
	SYM_VDSO,
};

struct binary;
struct runtime_binary;

struct sym_info {
	const char *name;	/* NULL when unknown */
	const char *raw;	/* as the symbol table spells it (C++'s mangled); NULL: @name */
	uint64_t offset;	/* from the symbol's start */
	const char *module;	/* "ext4", "libc.so.6", "[vdso]"; NULL for the core kernel */
	const char *path;	/* the binary's path, for user frames */
	const char *build_id;	/* hex, when the binary has one */
	enum sym_kind kind;
	struct binary *binary;	/* user frames: where, for syms__source() */
	uint64_t vaddr;
};

/* Unknown frames are spelled this way everywhere. */
#define SYM_UNKNOWN_NAME "[unknown]"

enum sym_format {
	SYM_FMT_OFFSET = 1 << 0,	/* "+0x1a" */
	SYM_FMT_MODULE = 1 << 1,	/* " [libc.so.6]" */
};

struct syms;

/* NULL and errno on failure. */
struct syms *syms__new(void);
void syms__free(struct syms *s);

/*
 * The memory the binaries' tables (symbols, inlined calls, Go's tables)
 * and processes' perf maps may hold, in bytes: past it, those named least
 * recently are let go, and read again if a frame needs them (from the
 * very file, which a process maps, or its path). Runs without end stay
 * bounded however many binaries come and go.
 */
#define SYMS_DEFAULT_MEMORY_MB 256
void syms__set_budget(struct syms *s, uint64_t bytes);

/*
 * C++ and Rust names as the binaries' symbol tables have them (mangled),
 * not as the language writes them, the default.
 */
void syms__set_raw_names(struct syms *s, bool raw);

/*
 * Keeps to the budget, letting go of what was named least recently (not
 * since the last trim). The names given out before are no longer valid:
 * call it between stacks, once their frames are printed or copied.
 */
void syms__trim(struct syms *s);

/* Also fetch missing debug files from debuginfod, for at most @seconds; 0 or -errno. */
int syms__use_debuginfod(struct syms *s, unsigned int seconds);

/*
 * Kernel addresses, from /proc/kallsyms read once. An address past the end
 * of the text its nearest symbol belongs to is unknown: 0 or -ENOENT.
 */
int syms__kernel(struct syms *s, uint64_t addr, struct sym_info *out);

/*
 * Reads the executable mappings of process @p now and opens their files,
 * so that its addresses still resolve after it exits. Tools call it as
 * soon as a process shows up in their maps. A process whose start time is
 * not @p's any more (it exited, and the pid was reused) is not read: 0, or
 * -ESRCH. @p->start_ns 0 takes whatever process has the pid now.
 */
int syms__track(struct syms *s, const struct proc_key *p);

/* Is process @p still running, its pid not reused? */
bool syms__alive(struct syms *s, const struct proc_key *p);

/*
 * Had @p exited when syms__forget_exited() looked, a moment ago? 1 or 0,
 * or -ENOENT if @p is not held: for its observer's forgot(), which would
 * otherwise read each process's stat file a second time.
 */
int syms__found_exited(struct syms *s, const struct proc_key *p);

/*
 * As syms__track(), for a process that has just exec'd and may never be in
 * a stack: when there are many such, they are forgotten.
 */
int syms__prefetch(struct syms *s, const struct proc_key *p);

/*
 * Reads the executable mappings of process @p again (it mapped code since:
 * its libraries after its loader, dlopen): soon after the last read a few
 * times, then at most once a second. Tracks it if not yet.
 */
int syms__refresh(struct syms *s, const struct proc_key *p);

/*
 * For runs without end: forgets the processes that had already exited at
 * the last call, and the tables of binaries that none of those left maps
 * and no frame named since, so that memory stays bounded however many
 * processes and binaries come and go. Call it after each report: anything
 * they did is in one already.
 */
void syms__forget_exited(struct syms *s);

/* Reads again, now, the maps syms__refresh() was asked to read too soon; once a second. */
void syms__tick(struct syms *s);

/*
 * User address @addr of process @p (tracked on first use if not yet).
 * 0, or -ENOENT with out->kind SYM_UNKNOWN when nothing names it.
 */
int syms__user(struct syms *s, const struct proc_key *p, uint64_t addr, struct sym_info *out);

/*
 * The symbol at file offset @offset of binary @id (struct syms_binary's):
 * a frame found by its file, whose process may be long gone.
 */
int syms__file_offset(struct syms *s, uint32_t id, uint64_t offset, struct sym_info *out);

/* A function of the source, inlined or not, and where it is. */
struct sym_source {
	const char *name;
	const char *raw;	/* as the symbol table spells it, where known; NULL: @name */
	const char *file;	/* NULL when unknown */
	uint32_t line;		/* the function's first line where known, else the address's; 0 unknown */
};

/*
 * The source frames at user frame @si (as syms__user() or
 * syms__file_offset() named it): the calls inlined there, innermost first,
 * then the function they are in, into @out, at most @max (at least 1).
 * Their number, 0 when @si names nothing. From Go's pclntab (names, files
 * and lines) or the binary's DWARF (names). @exact: the address is the
 * instruction itself (a stack's first frame), not a return address.
 */
int syms__source(const struct sym_info *si, bool exact, struct sym_source *out, int max);

/*
 * The symbol at file offset @offset of the ELF file open on @fd (the
 * descriptor stays the caller's), as stack maps in build-id mode give it.
 */
int syms__file(struct syms *s, int fd, uint64_t offset, struct sym_info *out);

/*
 * Someone who wants more of each binary than its symbols, while it is open,
 * and of each process its executable mappings: the CFI unwinder.
 */
struct syms_mapping {
	uint64_t start, end, pgoff;
	void *binary;		/* what @binary returned for its file; NULL: none */
};

/* A binary as the observer sees it. */
struct syms_binary {
	const char *path;
	const unsigned char *build_id;	/* NULL when it has none */
	size_t build_id_len;
	uint32_t id;			/* for syms__file_offset() */
	dev_t dev;			/* its file; 0 for the vdso */
	ino_t ino;
	int fd;				/* open on it, while the observer is called */
	const struct runtime_binary *runtime;	/* the interpreter it holds, if any */
	void *observed;			/* what @binary returned for it before; NULL the first time */
};

struct syms_observer {
	/*
	 * A binary seen for the first time, or again after @stale said so:
	 * @elf is it, @debug its debug file where it lacks .eh_frame (else
	 * NULL). What it returns is kept with the binary and handed back with
	 * each mapping of it.
	 */
	void *(*binary)(void *ctx, const struct syms_binary *b, Elf *elf, Elf *debug);
	/* A process image's executable mappings, sorted, just read from /proc. */
	void (*process)(void *ctx, const struct proc_key *p, const struct syms_mapping *m,
			size_t n);
	/*
	 * Whether what @binary returned was let go since, so that the next
	 * process found mapping the binary shows it again (optional).
	 */
	bool (*stale)(void *ctx, void *observed);
	/* The processes that had exited are forgotten (syms__forget_exited; optional). */
	void (*forgot)(void *ctx);
	/* Once a second (syms__tick; optional): it may ask for processes to be read again. */
	void (*tick)(void *ctx);
	/* A stack reached the binary @observed is of: syms__want() (optional). */
	void (*want)(void *ctx, void *observed);
	/* Process @p has exited, as the kernel said: syms__exited() (optional). */
	void (*exited)(void *ctx, const struct proc_key *p);
	void *ctx;
};

void syms__observe(struct syms *s, const struct syms_observer *o);

/*
 * A stack of process @p reached binary @id (the file id of its frames),
 * which the observer left for such a moment: it is told, and @p's maps are
 * read again, which hands the binary to it as stale. 0, or -ENOENT.
 */
int syms__want(struct syms *s, const struct proc_key *p, uint64_t id);

/*
 * The kernel said process @p has exited: the observer may let go of what
 * it holds for it now. Its symbols stay, for the stacks still to print.
 */
void syms__exited(struct syms *s, const struct proc_key *p);

/*
 * Runtime frame @v (an interpreted function: unwind.h's
 * UNWIND_RUNTIME_FRAME), and its data slot @data (RUNTIME_DATA, where the
 * runtime takes two; else 0), of process @p: its name, file and line,
 * read from the process now if not known yet (syms__runtime_note). 0, or
 * -ENOENT.
 */
struct runtime_frame;
int syms__runtime_frame(struct syms *s, const struct proc_key *p, uint64_t v, uint64_t data,
			struct runtime_frame *out);

/* The BPF side saw runtime frame @v (with @data) of @p: named now, while the process lives. */
void syms__runtime_note(struct syms *s, const struct proc_key *p, uint64_t v, uint64_t data);

/* Where a process runs: its cgroup, and its container if a runtime made one. */
struct syms_cgroup {
	const char *path;	/* as the host sees it: "/system.slice/nginx.service" */
	const char *container;	/* the id its runtime wrote into the path; NULL if none */
	/* As a stack's root shows it: "[container 1a2b3c4d5e6f]", "[cgroup /user.slice]" */
	const char *frame;
};

/*
 * From now on, each process's cgroup is read with its maps, while it
 * lives (processes gone before their report keep it): for the reports
 * that label what they count by container.
 */
void syms__want_cgroups(struct syms *s);

/* Process @p's cgroup, read with its maps; NULL when not known. */
const struct syms_cgroup *syms__cgroup(struct syms *s, const struct proc_key *p);

/* Says on stderr, at exit, what could not be read: files, perf maps, processes. */
void syms__warn_losses(const struct syms *s);

/* "name", "name+0x1a", "name [module]"...; SYM_UNKNOWN_NAME when unknown. */
size_t sym_info__format(const struct sym_info *si, char *buf, size_t size, unsigned int flags);

#endif
