/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The tables the BPF unwinder walks user stacks with, shared by its programs and user space. */
#ifndef BPFSCOPE_UNWIND_H
#define BPFSCOPE_UNWIND_H

/* Executable mappings of one process the unwinder knows; more are unwound by frame pointers. */
#define UNWIND_MAX_MAPPINGS 256

/* One binary's rows, at most: the BPF side finds a row in so many halvings. */
#define UNWIND_ROW_SEARCH_STEPS 24
#define UNWIND_MAX_BINARY_ROWS (1u << UNWIND_ROW_SEARCH_STEPS)

/*
 * Rows to a chunk of the rows' memory (512 KiB): made as rows are written,
 * so a run holds what its binaries need; a binary with more spans several.
 */
#define UNWIND_CHUNK_ROWS (1u << 16)

/* How a row finds the canonical frame address (CFA), the caller's stack pointer. */
enum unwind_cfa {
	UNWIND_NONE = 0,	/* no call-frame information here: frame pointers */
	UNWIND_CFA_SP,		/* CFA = sp + cfa_off */
	UNWIND_CFA_FP,		/* CFA = fp + cfa_off */
	UNWIND_CFA_PLT,		/* x86-64 PLT stubs: sp + 8, + 8 more when (ip & 15) >= cfa_off */
	UNWIND_SIGNAL,		/* a signal trampoline: the interrupted registers are in its ucontext */
	UNWIND_END,		/* the outermost frame: the return address is undefined */
	UNWIND_UNSUPPORTED,	/* rules the unwinder cannot follow: stop, marked */
	/*
	 * arm64 Go frames: CFA = sp + cfa_off, the return address in the
	 * frame's lowest word (at sp) and the caller's frame pointer just
	 * below it; cfa_off 0: no frame yet, the return address still in x30.
	 */
	UNWIND_CFA_SP_RA_LOW,
	/*
	 * x86-64 CPython -X perf trampolines: sp + 16, the caller's frame
	 * pointer at fp_slot once theirs is set up, but where the first frame
	 * of a walk is stopped before the call or at the ret, sp + 8
	 * (unwind.bpf.h).
	 */
	UNWIND_CFA_TRAMPOLINE,
	/*
	 * Go's runtime.asmcgocall, where a cgo call returns on the thread's
	 * stack: its caller is on the goroutine's stack, at g.stack.hi less
	 * the depth it saved cfa_off bytes up its frame (g at 8 * fp_slot).
	 * There, on x86-64, an RA slot of 1: the caller's frame pointer
	 * first, then the return address; on arm64, its own frame of 8 * RA
	 * slot bytes, as UNWIND_CFA_SP_RA_LOW has it.
	 */
	UNWIND_CFA_GO_CGOCALL,
	/*
	 * x86-64 Go's runtime.mcall, whose function runs on the thread's
	 * stack, the goroutine (g) at its frame's bottom: its caller's stack
	 * pointer, return address and frame pointer are in g.sched, cfa_off
	 * bytes into g (the frame pointer fp_slot words further).
	 */
	UNWIND_CFA_GO_MCALL,
	/*
	 * Go's runtime.systemstack, whose function runs on the thread's
	 * stack: its caller's stack pointer is in the goroutine's g.sched
	 * (8 * fp_slot bytes into g), the goroutine the thread's m's current
	 * one (m.curg, cfa_off bytes into m); there, the RA slot as for
	 * asmcgocall's.
	 */
	UNWIND_CFA_GO_SYSTEMSTACK,
	/*
	 * The CFA saved in the frame, where a function that realigns its
	 * stack keeps it: CFA = *(sp + off) + add (OpenSSL's assembly saves
	 * its entry stack pointer so), or *(fp + off) (GCC's dynamic
	 * realignment, whose caller's frame pointer is then at fp itself,
	 * not at the CFA); off and add from cfa_off (UNWIND_DEREF_OFF, _ADD).
	 */
	UNWIND_CFA_SP_DEREF,
	UNWIND_CFA_FP_DEREF,
	/*
	 * x86-64: CFA = another register + off, as a prologue or epilogue
	 * that realigns the stack has it for a few instructions (the entry
	 * stack pointer kept in rax, r10 or rsi). Followed in the first frame
	 * only, whose registers are the interrupted ones; the register's
	 * DWARF number and off from cfa_off (UNWIND_REG_NUM, _OFF).
	 */
	UNWIND_CFA_REG,
};

/*
 * A deref row's cfa_off: the offset of the saved CFA in 8-byte units
 * above 4 bits of what to add to it, also in 8-byte units.
 */
#define UNWIND_DEREF_MAX_ADD	15
#define UNWIND_DEREF_CFA_OFF(off, add)	((off) / 8 * 16 + (add) / 8)
#define UNWIND_DEREF_OFF(r)	(8 * (__s64)((r)->cfa_off >> 4))
#define UNWIND_DEREF_ADD(r)	(8 * (__u64)((r)->cfa_off & 15))

/* A register row's cfa_off: the offset above 4 bits of the register's DWARF number. */
#define UNWIND_REG_CFA_OFF(reg, off)	((off) * 16 + (reg))
#define UNWIND_REG_NUM(r)	((r)->cfa_off & 15)
#define UNWIND_REG_OFF(r)	((__s64)((r)->cfa_off >> 4))

/*
 * One row of a binary's table, 8 bytes: from @pc (an offset from the
 * table's base address) to the next row's, where the CFA is, where the
 * caller's frame pointer was saved and where the return address is.
 * Saved registers sit at multiples of 8 below (or above) the CFA, so their
 * offsets are kept in 8-byte units: @fp_slot (0: not saved, unchanged) and
 * the high nibble of @cfa_ra, the return address at CFA - 8 * that (0:
 * still in the link register, as on arm64 until a function saves it).
 */
struct unwind_row {
	__u32 pc;
	__s16 cfa_off;
	__s8 fp_slot;
	__u8 cfa_ra;		/* enum unwind_cfa in the low nibble, the RA slot in the high */
};

/*
 * Return addresses saved further than 13 slots below the CFA, as arm64
 * keeps them: RA slot 15, just above the saved frame pointer, however far
 * down (the frame record, x29 and x30, stored at the bottom of a frame by
 * stp x29, x30, [sp, #-N]!); RA slot 14, in the slot fp_slot names, the
 * frame pointer not saved (code built without frame pointers saves x30
 * alone, anywhere in its frame).
 */
#define UNWIND_RA_BESIDE_FP	15
#define UNWIND_RA_AT_FP_SLOT	14

/*
 * fp_slot's least value says "at the bottom of the frame" (CFA - cfa_off,
 * the stack pointer itself, as CFA_SP rows have it), where a big arm64
 * frame keeps its frame record, further down than 127 slots reach.
 */
#define UNWIND_FP_AT_BOTTOM	(-128)

#define UNWIND_ROW_CFA(r)	((r)->cfa_ra & 15)
#define UNWIND_ROW_RA_SLOT(r)	((r)->cfa_ra >> 4)
#define UNWIND_ROW_FP_SAVED(r)	((r)->fp_slot && UNWIND_ROW_RA_SLOT(r) != UNWIND_RA_AT_FP_SLOT)
#define UNWIND_ROW_FP_OFF(r)	((r)->fp_slot == UNWIND_FP_AT_BOTTOM ? -(__s64)(r)->cfa_off :	\
				 8 * (__s64)(r)->fp_slot)
#define UNWIND_ROW_RA_OFF(r)	(UNWIND_ROW_RA_SLOT(r) == UNWIND_RA_BESIDE_FP ?	\
				 UNWIND_ROW_FP_OFF(r) + 8 :			\
				 UNWIND_ROW_RA_SLOT(r) == UNWIND_RA_AT_FP_SLOT ?	\
				 UNWIND_ROW_FP_OFF(r) : -8 * (__s64)UNWIND_ROW_RA_SLOT(r))

/*
 * An executable mapping of a process: run-time [start, end); the rows of
 * its binary are rows[first, first + n) of the unwind_rows map, at pc
 * addr - bias. n == 0: the binary has no call-frame information (or none
 * fitted in the rows' memory): frame pointers. Its frames are kept as
 * binary @id and file offset (@off at start), not as addresses: what is
 * mapped at an address may change while the process is traced (dlclose,
 * then dlopen), and an address would be named by whatever is there when
 * the report is made. @id UNWIND_NO_FILE: no file (anonymous code), kept
 * as an address.
 */
struct unwind_mapping {
	__u64 start, end;
	__u64 bias;
	__u32 first, n;
	__u32 id;
	__u32 off;
};

/*
 * A binary by the file the kernel maps (its filesystem's device, as the
 * kernel encodes it, and inode), for code mapped since its process's maps
 * were read: its rows, and where its executable segment starts in the
 * file (seg_off, seg_size) to place them, a mapping's bias being
 * start - file offset + delta.
 */
struct unwind_file_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

struct unwind_file {
	__u64 seg_off, seg_size;
	__u64 delta;
	__u32 first, n;
	__u32 id;		/* the symbolizer's number for it, for file frames */
	__u32 pad;
};

/* An exec_id user space cannot know: the first walk of the process binds it. */
#define UNWIND_EXEC_ANY 0xffffffffU

/* What the unwinder knows of one process image, keyed by its tgid. */
struct unwind_proc {
	__u32 exec_id;		/* the image it describes: stale after an exec */
	__u32 nmaps;
	__u64 start_ns;
	__u32 asked;		/* the BPF side asked for its maps to be read again */
	__u32 gen;		/* which writing of the entry (0: changed since, by the BPF side) */
	struct unwind_mapping maps[UNWIND_MAX_MAPPINGS];	/* sorted by start */
};

/*
 * A binary by its GNU build-id (20 bytes, zero-padded), as the kernel reads
 * it for frames of processes the unwinder has no mappings of (one gone
 * before they could be read): the symbolizer's number for it.
 */
struct unwind_build_id {
	unsigned char id[20];
};

/*
 * A frame found that way is kept as its file and offset, so that it is
 * named however soon its process exits: UNWIND_FILE_FRAME | id << 40 |
 * offset; id UNWIND_FILE_ID_MASK: a build-id the symbolizer does not know.
 */
#define UNWIND_FILE_FRAME	(1ULL << 63)
#define UNWIND_FILE_OFF_BITS	40
#define UNWIND_FILE_ID_MASK	((1U << 21) - 1)
#define UNWIND_NO_FILE		0xffffffffU
/*
 * A mapping's first row when its binary's rows are made only once a walk
 * reaches it (a big library, system-wide: common/unwinder.c), n being 0:
 * the walk asks for them once (PROC_BINARY_WANTED) and marks it asked.
 */
#define UNWIND_LAZY		0xffffffffU
#define UNWIND_LAZY_ASKED	0xfffffffeU
#define UNWIND_IS_FILE_FRAME(ip)	(((ip) >> 61) == 4)

/*
 * A frame of an interpreted runtime (a Python function), its payload in
 * the low 61 bits: the runtime's number in the top 3 (enum runtime_id),
 * what that runtime makes of it in the other RUNTIME_FRAME_BITS
 * (bpf/runtimes/).
 */
#define UNWIND_RUNTIME_FRAME	(UNWIND_FILE_FRAME | 1ULL << 61)
#define UNWIND_RUNTIME_PAYLOAD	((1ULL << 61) - 1)
#define UNWIND_IS_RUNTIME_FRAME(ip)	(((ip) >> 61) == 5)

enum runtime_id {
	RUNTIME_NONE,
	RUNTIME_PYTHON,		/* CPython: bpf/runtimes/python.h */
	RUNTIME_V8,		/* Node.js: bpf/runtimes/v8.h */
	RUNTIME_HOTSPOT,	/* the JVM: bpf/runtimes/hotspot.h */
	RUNTIME_PHP,		/* PHP's Zend engine: bpf/runtimes/php.h */
	RUNTIME_PERL,		/* Perl 5: bpf/runtimes/perl.h */
	RUNTIME_RUBY,		/* CRuby: bpf/runtimes/ruby.h */
	RUNTIMES,
	/* Not a frame: the data of the runtime frame before it, which needs more than one slot. */
	RUNTIME_DATA = 7,
};
/* The next runtime takes a wider id: the payloads give up a bit (RUNTIME_FRAME_BITS). */
_Static_assert(RUNTIMES <= RUNTIME_DATA, "runtime ids are 3 bits");

#define RUNTIME_FRAME_BITS	58
#define RUNTIME_FRAME(id, payload)							\
	(UNWIND_RUNTIME_FRAME | (__u64)(id) << RUNTIME_FRAME_BITS |			\
	 ((payload) & ((1ULL << RUNTIME_FRAME_BITS) - 1)))
#define RUNTIME_FRAME_ID(v)	(((v) & UNWIND_RUNTIME_PAYLOAD) >> RUNTIME_FRAME_BITS)
#define RUNTIME_FRAME_PAYLOAD(v)	((v) & ((1ULL << RUNTIME_FRAME_BITS) - 1))

/* How user stacks were walked, for -v and the report at exit. */
struct unwind_counts {
	__u64 cfi;		/* stacks walked with the tables (frame pointers where they had none) */
	__u64 fp;		/* by the kernel's frame-pointer walk: no table for the process (yet) */
	__u64 no_regs;		/* by the kernel's frame-pointer walk: the user registers not found */
	__u64 truncated;	/* ended by a mark: no CFI nor frame pointers, unsupported, unreadable */
	__u64 unmapped;		/* frames outside every mapping user space knew of */
	__u64 by_build_id;	/* stacks of processes without mappings (yet): by build-id */
	__u64 py_loops;		/* interpreter loop frames replaced by the Python frames they ran */
	__u64 py_unknown;	/* Python frames whose code object could not be read */
	__u64 py_no_thread;	/* stacks in the interpreter loop without a thread state found */
	__u64 lazy;		/* stacks through a big library before its rows were made */
	__u64 js_frames;	/* JavaScript frames named by their function */
	__u64 js_unknown;	/* ... whose function could not be read */
	__u64 java_frames;	/* Java frames walked by what the JVM says of its code */
	__u64 recalled;		/* of cfi: a blocked thread's, known from its last walk (walkmemo.bpf.h) */
};

/*
 * unwind_cfi: CFI at all, and, for tests (BPFSCOPE_DISABLE=user_regs), a
 * kernel whose user registers the legacy walk does not find.
 */
#define UNWIND_CFI_ON		1
#define UNWIND_CFI_NO_REGS	2

/* Pseudo return addresses that end a stack the unwinder could not finish. */
#define UNWIND_MARK_NO_CFI	0xfffffffffffffff1ULL	/* no CFI and no frame pointer chain */
#define UNWIND_MARK_UNSUPPORTED	0xfffffffffffffff2ULL	/* CFI it cannot follow */
#define UNWIND_MARK_READ	0xfffffffffffffff3ULL	/* stack memory it could not read */
/* Not an end: a Python frame whose code object could not be read. */
#define UNWIND_MARK_PY_UNKNOWN	0xfffffffffffffff4ULL
/* Not an end: a JavaScript frame whose function could not be read. */
#define UNWIND_MARK_JS_UNKNOWN	0xfffffffffffffff6ULL
/* A Java frame the walk could not leave: sampled in its prologue, or its caller not readable. */
#define UNWIND_MARK_JAVA	0xfffffffffffffff7ULL
/* A goroutine parked by mcall that another thread resumed since: nothing saved is left. */
#define UNWIND_MARK_GO_RESUMED	0xfffffffffffffff5ULL

/*
 * A stack deeper than STACK_MAX_DEPTH frames: all its slots hold frames,
 * the last with this bit set (user addresses and file frames leave it clear).
 */
#define UNWIND_DEEPER		(1ULL << 62)

#endif
