/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the BPF unwinder needs to name a V8 process's JavaScript frames (Node.js), shared with user space. */
#ifndef BPFSCOPE_V8_H
#define BPFSCOPE_V8_H

#include "unwind.h"

/*
 * A JavaScript frame's fixed part, below its frame pointer, as V8 lays it
 * out on x86-64 and arm64 alike (v8dbg_off_fp_context, _function; user
 * space checks them): fp - 16 its JSFunction, fp - 8 its Context, where a
 * typed frame (entry, exit, a stub's) keeps a marker, a small integer.
 */
#define V8_FRAME_LOW		16
#define V8_AT_FUNCTION		0
#define V8_AT_CONTEXT		8

/* Tagged values: a heap object's address + 1; a small integer's low bit is 0. */
#define V8_HEAP_TAG		1
#define V8_TAG_MASK		3
/* Heap objects lie below this (48-bit user addresses). */
#define V8_OBJECT_MAX		(1ULL << 48)

/* What the walk reads of a JSFunction or a SharedFunctionInfo: from the object's start. */
#define V8_OBJECT_READ		64
/* Maps whose instance types a walk keeps. */
#define V8_MAPS_KEPT		4

/* Where a V8 version keeps what the walk reads: offsets in bytes, instance types. */
struct v8_layout {
	__u16 map_instance_type;	/* Map: its instance type (u16) */
	__u16 type_function_first;	/* JSFunction and its kinds (class constructors...) */
	__u16 type_function_last;
	__u16 type_shared;		/* SharedFunctionInfo */
	__u16 function_shared;		/* JSFunction: its SharedFunctionInfo */
	__u16 shared_name;		/* SharedFunctionInfo: name_or_scope_info */
	__u16 shared_script;		/* ... script_or_debug_info */
	__u8 entry_type;		/* StackFrame::ENTRY, 0: not known */
	__u8 construct_entry_type;	/* ... CONSTRUCT_ENTRY */
};

/*
 * arm64: the frame JSEntry makes (C++ calling JavaScript) has its frame
 * record below the caller's callee-saved registers it keeps (x19-x30,
 * d8-d15: twenty words), the caller's stack pointer above them; a typed
 * frame's marker is its type, shifted left by one.
 */
#define V8_ENTRY_SAVED		(20 * 8)

/* One V8 process (struct runtime_proc's). */
struct v8_proc {
	struct v8_layout l;
};

/*
 * A JavaScript frame, with a check of its function's SharedFunctionInfo
 * for user space to tell it from another object the collector put where
 * it was, once it moved or freed it; then
 * - one running in a file (the interpreter, a builtin): that
 *   SharedFunctionInfo (8-aligned, below 2^48), a check of 10 bits;
 * - one running code V8 compiled (in no file): the address it was at (the
 *   call's, before its return address; 48 bits: arm64 maps code up to
 *   there), a check of 9 bits, for user space to find that code and the
 *   calls it inlined there; the SharedFunctionInfo is its data.
 */
#define V8_CHECK_BITS		10
#define V8_CODE_CHECK_BITS	9
#define V8_AT_CODE		(1ULL << 57)
#define V8_PC_MASK		((1ULL << 48) - 1)
#define V8_FRAME(shared, check)								\
	RUNTIME_FRAME(RUNTIME_V8, ((shared) >> 3) << V8_CHECK_BITS |			\
		      ((check) & ((1 << V8_CHECK_BITS) - 1)))
#define V8_CODE_FRAME(pc, check)							\
	RUNTIME_FRAME(RUNTIME_V8, V8_AT_CODE | ((pc) & V8_PC_MASK) << V8_CODE_CHECK_BITS |	\
		      ((check) & ((1 << V8_CODE_CHECK_BITS) - 1)))
#define V8_FRAME_AT_CODE(v)	(!!(RUNTIME_FRAME_PAYLOAD(v) & V8_AT_CODE))
#define V8_FRAME_SHARED(v)	((RUNTIME_FRAME_PAYLOAD(v) >> V8_CHECK_BITS) << 3)
#define V8_FRAME_PC(v)		((RUNTIME_FRAME_PAYLOAD(v) >> V8_CODE_CHECK_BITS) & V8_PC_MASK)
#define V8_FRAME_CHECK_BITS(v)	(V8_FRAME_AT_CODE(v) ? V8_CODE_CHECK_BITS : V8_CHECK_BITS)
#define V8_FRAME_CHECK(v)	((v) & ((1 << V8_FRAME_CHECK_BITS(v)) - 1))

/* The check: a mix of two words of the object that stay while it is the same function's. */
static inline __u32 v8_frame_check(__u64 name, __u64 script)
{
	__u64 h = (name * 0x9e3779b97f4a7c15ULL) ^ script;

	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	return (__u32)(h ^ (h >> 16)) & ((1 << V8_CHECK_BITS) - 1);
}

#endif
