/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the BPF unwinder needs to walk a Ruby thread's method calls (CRuby's control frames), shared with user space. */
#ifndef BPFSCOPE_RUBY_H
#define BPFSCOPE_RUBY_H

#include "unwind.h"

/* rb_vm_exec's code, and vm_exec_core's it calls, as the native walk keeps frames of a file. */
#define RUBY_LOOP_RANGES 2

/* What the BPF walk reads of a control frame and of an iseq's location: every field it needs lies within. */
#define RUBY_CFP_READ 40
#define RUBY_LOC_READ 32

/*
 * A control frame's environment, the same in every 3.x: ep[0] its flags,
 * ep[-1] the environment it is within (a block's, tagged in its low
 * bits), ep[-2] in a method's own (LOCAL) environment its method entry.
 */
#define RUBY_ENV_READ 24
#define RUBY_ENV_FLAG_LOCAL 0x2
#define RUBY_FRAME_FLAG_FINISH 0x20	/* the first frame of an rb_vm_exec's run */
#define RUBY_FRAME_FLAG_CFRAME 0x80	/* a C function's */
/* Environments a block's frame is followed out through to its method's, at most. */
#define RUBY_ENV_HOPS 4

/* A method entry (an imemo of type ment), and its owner, the class or module that defines it. */
#define RUBY_T_IMEMO 0x1a
#define RUBY_IMEMO_MENT 6
#define RUBY_ME_READ 40
#define RUBY_ME_OWNER 32

/* How often the walk asks for a process read before its loader gave libruby its module id. */
#define RUBY_ASK_NS (100 * 1000 * 1000ULL)

/* rb_iseq_constant_body: its bytecode, in every 3.x. */
#define RUBY_BODY_ENCODED 8

/*
 * Where a Ruby version keeps what the walk reads: offsets in bytes, from
 * its headers. Every 3.x's execution context begins with its VM stack,
 * the stack's size in VALUEs and its innermost control frame.
 */
struct ruby_layout {
	__u16 cfp_size;		/* sizeof(rb_control_frame_t) */
	__u16 cfp_pc;		/* rb_control_frame_t: 0 for a C function's */
	__u16 cfp_iseq;		/* ... its iseq */
	__u16 cfp_ep;		/* ... its environment */
	__u16 iseq_body;	/* rb_iseq_t: its constant body */
	__u16 body_location;	/* rb_iseq_constant_body: pathobj, base_label, label, first_lineno */
	__u16 pad[2];
};

/* One process's Ruby (struct runtime_proc's): what the walk starts from. */
struct ruby_proc {
	__u64 modid;		/* libruby's TLS module id, as the loader gave it; 0: not yet */
	__u64 asked_ns;		/* when the walk last asked for it to be read again */
	__u32 dtv;		/* the DTV's place in the thread's control block */
	__u32 ec;		/* ruby_current_ec's in libruby's TLS block */
	__u64 loop[RUBY_LOOP_RANGES][2];	/* rb_vm_exec, [start, end) as file frames (unwind.h) */
	__u64 core[RUBY_LOOP_RANGES][2];	/* ... vm_exec_core, which it calls */
	struct ruby_layout l;
};

/*
 * A Ruby frame in a stack: its iseq's constant body (8-aligned, 48 bits)
 * and a 13-bit check of its location (file, label, first line), which
 * lets user space tell it from another body allocated where a freed one
 * was. 0 for a frame that could not be read. Announced to user space with
 * its method's owner as data, which names its class.
 */
#define RUBY_FRAME_CHECK_BITS 13
#define RUBY_FRAME(body, check)	RUNTIME_FRAME(RUNTIME_RUBY,					\
				      ((body) >> 3) << RUBY_FRAME_CHECK_BITS |		\
				      ((check) & ((1 << RUBY_FRAME_CHECK_BITS) - 1)))
#define RUBY_FRAME_BODY(v)	((RUNTIME_FRAME_PAYLOAD(v) >> RUBY_FRAME_CHECK_BITS) << 3)
#define RUBY_FRAME_CHECK(v)	((v) & ((1 << RUBY_FRAME_CHECK_BITS) - 1))
#define RUBY_BODY_MAX		(1ULL << 48)

/* The check: a mix of the location's path, label and first line (as VALUEs). */
static inline __u32 ruby_frame_check(__u64 path, __u64 label, __u64 line)
{
	__u64 h = (path * 0x9e3779b97f4a7c15ULL) ^ (label + (line << 9));

	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (__u32)(h ^ (h >> 21)) & ((1 << RUBY_FRAME_CHECK_BITS) - 1);
}

#endif
