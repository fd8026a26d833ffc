/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The symbolizer's own types, shared by its files: syms.c, syms_binary.c, syms_proc.c, syms_budget.c. */
#ifndef BPFSCOPE_SYMS_PRIV_H
#define BPFSCOPE_SYMS_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "elffile.h"
#include "perfmap.h"
#include "symtab.h"
#include "syms.h"

#define BUCKETS 4096
#define MAX_BUILD_ID 64

/* What "/" is to a process: ours, or a container's. Shared by all who have it. */
struct root {
	struct root *next;
	dev_t dev;
	ino_t ino;
	int fd;		/* O_PATH */
};

/*
 * An ELF file, read once however many processes map it. Known by its
 * device and inode, and by its size and modification time, which tell it
 * from a file that got the inode of one deleted since (a package upgrade).
 */
struct binary {
	struct binary *next;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd;			/* held from the first mapping seen until it is read */
	char *path;		/* as the first process that mapped it sees it */
	char *name;		/* its base name, for "[module]" */
	struct root *root;	/* where that process's paths mean something */
	unsigned char id[MAX_BUILD_ID];
	int id_len;
	char *build_id;		/* hex */
	bool loaded, failed;
	struct elf_segment *segs;
	size_t nsegs;
	struct symtab syms;
	void *observed;		/* what the observer keeps of it */
	uint32_t num;		/* its index in syms' binaries by number */
	struct inlines *inlines;	/* from its DWARF or its debug file's; NULL if none */
	struct gopclntab *go;		/* a Go binary's own table; NULL if none */
	struct runtime_binary *runtime;	/* the interpreter it holds, if any */
	uint64_t used;			/* when it last named a frame, by syms' clock */
	uint64_t bytes;			/* its tables' size when last counted in syms' held */
	bool evicted;			/* its tables let go: read again when needed */
	bool unmapped;			/* ... as no process mapped it, not for the budget */
	uint64_t mapped;		/* the last syms__forget_exited() that found it mapped */
	long long checked_ms;		/* when a stat last found it the file mapped, monotonic */
};

struct vma {
	uint64_t start, end, pgoff;
	struct binary *bin;	/* NULL: anonymous (JIT code, maybe) */
};

/* One program image: a pid, until it execs or exits. */
struct proc {
	struct proc *next;
	struct proc_key key;
	bool gone;		/* not read: exited, or its pid names another now */
	uid_t uid;
	bool placed;		/* nspid and root found (proc__place()) */
	bool jit_placed;	/* ... while it lived, for its perf map (place_for_jit()) */
	pid_t nspid;		/* its pid where it lives, for perf-NSPID.map */
	struct root *root;
	struct vma *vmas;	/* sorted by start, as the maps file lists them */
	size_t nvmas;
	bool jit_tried;
	struct perfmap jit;
	uint64_t jit_used;	/* when its perf map last named a frame */
	long long read_ms;	/* when its maps were last read, monotonic */
	unsigned int rereads;	/* how often since */
	bool reread;		/* asked to read them again, too soon after the last time */
	bool prefetched;	/* read at its exec, not yet in a stack */
	bool unfiled_code;	/* code mapped from no file we read: a JIT's, named by its perf map */
	bool exited;		/* found exited by syms__forget_exited() */
	bool superseded;	/* its process has exec'd since: not read again */
	bool counted;		/* ... and its loss is in syms' losses */
	bool cgroup_read;	/* its cgroup was looked for (syms__want_cgroups()) */
	const struct syms_cgroup *cgroup;	/* ... and is this; NULL if not found */
	/*
	 * Which image the maps were read from, whatever exec_id asked: if a
	 * later image's maps read the same, the exec had happened before.
	 */
	struct image_sig {
		uint64_t vdso, stack_end;	/* placed anew by each exec, with ASLR */
		dev_t first_dev;		/* the lowest file mapped: the program, */
		uint64_t first_ino;		/* but for one ld.so was run on */
	} sig;
};

struct losses {
	unsigned long long unopened;	/* mapped files we could not open */
	unsigned long long no_fds;	/* ... for lack of descriptors */
	unsigned long long unreadable;	/* opened, but not read as ELF */
	unsigned long long jit_refused;	/* perf maps not trusted */
	unsigned long long jit_cut;	/* perf maps cut at PERFMAP_MAX_BYTES */
	unsigned long long reused;	/* pids reused before the process was read */
	unsigned long long execed;	/* images in stacks, exec'd away before they were read */
	unsigned long long go_unread;	/* Go binaries whose pclntab was not read */
	const char *go_why;		/* ... the first one's reason */
	unsigned long long evicted;	/* binaries' and perf maps' tables let go for the budget */
	unsigned long long reread;	/* ... read again when needed */
	unsigned long long gone;	/* ... whose file was gone by then */
	unsigned long long unmapped;	/* binaries' tables let go as no process mapped them */
	unsigned long long remapped;	/* ... read again when a process mapped them again */
	unsigned long long unmapped_gone;	/* ... whose file was gone by then */
	unsigned long long cgroups_full;	/* processes whose cgroup was not kept */
};

/* A cgroup processes run in, kept once for all of them (syms_proc.c). */
struct cgroup_label {
	struct cgroup_label *next;
	struct syms_cgroup c;
};

/* Distinct cgroups kept at most: a host's services, containers and sessions. */
#define CGROUP_LABELS_MAX 4096

/*
 * Processes read at their exec and not yet in a stack that are kept, the
 * latest: a burst of exec notes (EXEC_NOTE_BURST), or 10 s of them at
 * EXEC_NOTE_RATE. Such an entry serves a process that exits between its
 * first sample and the note of it, a few milliseconds; one that first
 * shows in a stack later is alive then, and read again. Kept until a
 * thousand were read and then let go all at once, they made the tool's
 * heap rise and fall by 700 KiB beside 470 execs a second.
 */
#define PREFETCH_MAX 256

struct syms {
	struct binary *binaries[BUCKETS];
	struct proc *procs[BUCKETS];
	struct root *roots;
	struct ksyms *kernel;
	bool kernel_tried;
	struct binary *vdso;
	bool vdso_tried;
	struct debuginfo *debuginfo;
	size_t open_fds, fd_budget;
	unsigned long fd_ceiling, fd_spare;	/* syms__can_hold() */
	long ticks_per_sec;
	struct losses lost;
	struct syms_observer observer;	/* .binary NULL: nobody */
	struct binary **by_id;		/* every binary, by its number */
	size_t nids, ids_cap;
	/* The last PREFETCH_MAX processes read at their exec; [prefetch_next] goes next. */
	struct proc_key prefetched[PREFETCH_MAX];
	size_t prefetch_next;
	/*
	 * Where a maps file is read: whole at a time, where stdio's 1 KiB
	 * (a /proc file's block size) took a system call per 7 lines.
	 */
	char maps_buf[64 << 10];
	struct runtime_names *runtime_names;	/* interpreted runtimes' frames, named */
	bool raw_names;			/* C++ and Rust names as the symbol tables have them */
	uint64_t budget;		/* bytes the binaries' tables and perf maps may hold */
	uint64_t held;			/* ... hold, as last counted */
	uint64_t clock;			/* a tick each lookup, for least-recently-used */
	uint64_t trimmed;		/* the clock at the last syms__trim() */
	uint64_t forgot;		/* ... at the last syms__forget_exited() */
	uint64_t forgets;		/* how many there were */
	struct binary **recent;		/* binaries named since, to count again */
	size_t nrecent, recent_cap;
	bool want_cgroups;		/* syms__want_cgroups() */
	struct cgroup_label *cgroups;	/* every one seen, ... */
	size_t ncgroups;		/* ... this many */
};

/* syms_binary.c: binaries, each read once. */

/*
 * May @s keep @fd, just opened, until the report? The limit counts the
 * tool's own descriptors too (BPF objects, perf events, outputs), which
 * the number of a new one tells, as the kernel hands out the lowest free:
 * fd_spare of them are left for what the tool opens later.
 */
static inline bool syms__can_hold(const struct syms *s, int fd)
{
	return s->open_fds < s->fd_budget && (unsigned long)fd < s->fd_ceiling;
}

/* The binary behind @fd (stat @st), shared by (device, inode); takes @fd. */
struct binary *binary__get(struct syms *s, int fd, const struct stat *st,
			   const char *path, struct root *root);
/* The binary read before whose file is @st's (device, inode, size, mtime); NULL if none. */
struct binary *binary__find(struct syms *s, const struct stat *st);
/*
 * The binary whose file a stat found mapped as (@dev, @ino) less than
 * BINARY_RECHECK_MS before @now_ms; NULL if none.
 */
struct binary *binary__checked(struct syms *s, dev_t dev, uint64_t ino, long long now_ms);
/* Whether the observer let go of what it made of @b, to be shown it again. */
bool binary__stale(struct syms *s, const struct binary *b);
/* This kernel's vdso is every process's: read ours once. */
struct binary *binary__vdso(struct syms *s);
/* Reads @b's symbols, debug file, inlined calls and Go table; b->failed if none. */
void binary__load(struct syms *s, struct binary *b);
/* Names run-time address @addr in @b, mapped by @v; whether it was named. */
bool binary__lookup(struct syms *s, struct binary *b, const struct vma *v, uint64_t addr,
		    struct sym_info *out);
void binary__free(struct binary *b);

/* syms_proc.c: processes, their maps read once per image. */

struct proc *proc__find(struct syms *s, const struct proc_key *k);
/* Is @p's image still alive (a pid reused since is counted)? */
bool proc__same(struct syms *s, struct proc *p);
/* The mapping of @p holding @addr, if any. */
const struct vma *proc__vma(const struct proc *p, uint64_t addr);
/* Its /tmp/perf-PID.map, read the first time an address needs it. */
void proc__load_jit(struct syms *s, struct proc *p);
void proc__free(struct syms *s, struct proc *p);
/* Frees the cgroups' labels, which processes point to. */
void syms__cgroups_free(struct syms *s);

/* syms_budget.c: the memory budget. */

/* @b names a frame: counted again at the next syms__trim(), if the first since the last. */
void budget__note(struct syms *s, struct binary *b);
/*
 * After a report: lets go of the tables of the binaries that no process
 * held maps and that named no frame since the last call.
 */
void budget__release_unmapped(struct syms *s);

#endif
