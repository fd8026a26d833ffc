/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the BPF unwinder needs to walk a Perl process's subroutine calls, shared with user space. */
#ifndef BPFSCOPE_PERL_H
#define BPFSCOPE_PERL_H

#include "unwind.h"

/* The code of Perl's loop, Perl_runops_standard, as the native walk keeps frames of a file. */
#define PERL_LOOP_RANGES 2

/* What the BPF walk reads of a stack info, a context and a CV's body: every field it needs lies within. */
#define PERL_SI_READ 48
#define PERL_CX_READ 80
#define PERL_CV_READ 72

/* A context's type (CXTYPEMASK of cx_type): a sub's call, a format's. */
#define PERL_CX_TYPE_MASK 0xf
#define PERL_CXT_SUB 9
#define PERL_CXT_FORMAT 10

/* Where a Perl version keeps what the walk reads: offsets in bytes, from its headers. */
struct perl_layout {
	__u16 interp_stackinfo;	/* struct interpreter: Icurstackinfo */
	__u16 si_cxstack;	/* PERL_SI: its contexts */
	__u16 si_prev;		/* ... the stack info further out */
	__u16 si_cxix;		/* ... its innermost context's index */
	__u16 cx_size;		/* sizeof(PERL_CONTEXT) */
	__u16 cx_cv;		/* PERL_CONTEXT: a sub's CV */
	__u16 cv_gv;		/* XPVCV: its GV (or its name's HEK, CVf_NAMED) */
	__u16 cv_file;		/* ... its file's name */
	__u16 cv_start;		/* ... its first op */
	__u16 pad[3];
};

/* One process's interpreter (struct runtime_proc's): what the walk starts from. */
struct perl_proc {
	__s64 context;		/* PL_current_context, from the thread pointer */
	__u64 loop[PERL_LOOP_RANGES][2];	/* [start, end) as file frames (unwind.h) */
	struct perl_layout l;
};

/*
 * A Perl frame in a stack: its sub's CV (8-aligned, 48 bits) and a 13-bit
 * check of what the CV's body names (its GV, file and first op), which lets
 * user space tell it from another CV allocated where a freed one was. 0
 * for a frame that could not be read.
 */
#define PERL_FRAME_CHECK_BITS 13
#define PERL_FRAME(cv, check)	RUNTIME_FRAME(RUNTIME_PERL,					\
				      ((cv) >> 3) << PERL_FRAME_CHECK_BITS |		\
				      ((check) & ((1 << PERL_FRAME_CHECK_BITS) - 1)))
#define PERL_FRAME_CV(v)	((RUNTIME_FRAME_PAYLOAD(v) >> PERL_FRAME_CHECK_BITS) << 3)
#define PERL_FRAME_CHECK(v)	((v) & ((1 << PERL_FRAME_CHECK_BITS) - 1))
#define PERL_CV_MAX		(1ULL << 48)

/* The check: a mix of the CV's GV, file and first op. */
static inline __u32 perl_frame_check(__u64 gv, __u64 file, __u64 start)
{
	__u64 h = (gv * 0x9e3779b97f4a7c15ULL) ^ (file + (start << 7));

	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 30;
	return (__u32)(h ^ (h >> 19)) & ((1 << PERL_FRAME_CHECK_BITS) - 1);
}

#endif
