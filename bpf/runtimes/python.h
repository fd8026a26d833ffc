/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the BPF unwinder needs to walk a CPython process's interpreter frames, shared with user space. */
#ifndef BPFSCOPE_PYTHON_H
#define BPFSCOPE_PYTHON_H

#include "unwind.h"

/*
 * The code ranges of the interpreter loop, _PyEval_EvalFrameDefault: its
 * symbol's, and the cold parts the compiler split from it, which have no
 * symbol (3.14's dispatch loop is almost all there). As the native walk
 * keeps frames of a file: UNWIND_FILE_FRAME, the binary's number, the
 * file offset.
 */
#define PY_EVAL_RANGES 4

/* How a version chains its frames. */
enum py_frames {
	PY_FRAMES_OBJECT = 1,	/* 3.9, 3.10: a PyFrameObject per interpreter loop call */
	PY_FRAMES_INTERP,	/* 3.11 on: _PyInterpreterFrames, many per loop call */
};

/* What the BPF walk reads of a frame and of a code object: every field it needs lies within. */
#define PY_FRAME_READ 80
#define PY_CODE_READ 144

/* A field the version lacks. */
#define PY_NO_FIELD 0xffff

/*
 * Where a CPython version keeps what the walk reads: offsets in bytes.
 * From the binary's own _Py_DebugOffsets (3.13 on), else a table per
 * minor version (common/python.c).
 */
struct py_layout {
	__u16 interp_head;	/* _PyRuntime: the newest interpreter */
	__u16 interp_next;	/* PyInterpreterState: the next */
	__u16 interp_threads;	/* ... its newest thread state */
	__u16 tstate_next;	/* PyThreadState: the next */
	__u16 tstate_native_tid; /* ... its thread's id, PY_NO_FIELD before 3.11 */
	__u16 tstate_thread_id;	/* ... its pthread_t */
	__u16 tstate_frame;	/* ... its frame, cframe (3.11, 3.12) or current_frame */
	__u16 cframe_frame;	/* _PyCFrame: current_frame; PY_NO_FIELD: tstate_frame is it */
	__u16 cframe_previous;	/* ... the outer loop call's (3.11), PY_NO_FIELD else */
	__u16 frame_previous;	/* a frame: its caller's */
	__u16 frame_code;	/* ... its code object */
	__u16 frame_owner;	/* ... who owns it (3.12 on), PY_NO_FIELD before */
	__u16 frame_entry;	/* ... is it the first of a loop call (3.11), PY_NO_FIELD else */
	__u16 code_firstlineno;	/* PyCodeObject: its first line */
	__u16 code_name;	/* ... its qualified name where it has one, else its name */
	__u16 code_filename;	/* ... its file */
	__u8 frames;		/* enum py_frames */
	/*
	 * Owners from this on are not functions but the entry frame that
	 * ends one loop call's frames (FRAME_OWNED_BY_CSTACK, and from 3.14
	 * FRAME_OWNED_BY_INTERPRETER).
	 */
	__u8 owner_entry;
	/* Low bits that tag the code pointer (3.14's _PyStackRef), not part of it. */
	__u8 code_tag;
	__u8 pad[1];
};

/* One process's interpreter (struct runtime_proc's): what the walk starts from. */
struct py_proc {
	__u64 runtime;		/* &_PyRuntime */
	__u64 code_type;	/* &PyCode_Type: what every code object's type is */
	__u64 eval[PY_EVAL_RANGES][2];	/* [start, end) as file frames (unwind.h) */
	struct py_layout l;
};

/*
 * A Python frame in a stack: its code object's address (8-aligned, 48
 * bits) and a 13-bit check of what that code object names (its name,
 * file and first line), in the payload of a runtime frame (unwind.h).
 * The check lets user space tell a code object from another allocated
 * where a freed one was.
 */
#define PY_FRAME_CHECK_BITS 13
#define PY_FRAME(code, check)	RUNTIME_FRAME(RUNTIME_PYTHON,				\
				      ((code) >> 3) << PY_FRAME_CHECK_BITS |		\
				      ((check) & ((1 << PY_FRAME_CHECK_BITS) - 1)))
#define PY_FRAME_CODE(v)	((RUNTIME_FRAME_PAYLOAD(v) >> PY_FRAME_CHECK_BITS) << 3)
#define PY_FRAME_CHECK(v)	((v) & ((1 << PY_FRAME_CHECK_BITS) - 1))
/* Code objects above this are not encodable (a 57-bit address space's upper part). */
#define PY_CODE_MAX		(1ULL << 48)

/* The check: a mix of the code object's name and file objects and first line. */
static inline __u32 py_frame_check(__u64 name, __u64 filename, __u32 firstlineno)
{
	__u64 h = (name * 0x9e3779b97f4a7c15ULL) ^ (filename + firstlineno);

	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	return (__u32)(h ^ (h >> 16)) & ((1 << PY_FRAME_CHECK_BITS) - 1);
}

#endif
