/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the BPF unwinder needs to walk a PHP process's frames, shared with user space. */
#ifndef BPFSCOPE_PHP_H
#define BPFSCOPE_PHP_H

#include "unwind.h"

/*
 * The code of the Zend VM's loop, execute_ex, as the native walk keeps
 * frames of a file: UNWIND_FILE_FRAME, the binary's number, the file
 * offset; its symbol's range, and parts the compiler split from it.
 */
#define PHP_LOOP_RANGES 4

/* What the BPF walk reads of a zend_execute_data and of a zend_function: every field it needs lies within. */
#define PHP_CALL_READ 56
#define PHP_FUNC_READ 192

/* zend_function.type: a PHP function, or a file's or eval()'s code; a C one is ZEND_INTERNAL_FUNCTION (1). */
#define PHP_USER_FUNCTION 2
#define PHP_EVAL_CODE 4

/*
 * ZEND_CALL_TOP in a call's This.u1.type_info: the call has a loop of its
 * own (execute_ex was called for it), and is the last of that loop's.
 */
#define PHP_CALL_TOP (1U << 17)

/* Where a PHP version keeps what the walk reads: offsets in bytes, from Zend's headers. */
struct php_layout {
	__u16 call_func;	/* zend_execute_data: its zend_function */
	__u16 call_info;	/* ... This.u1.type_info, the call's flags */
	__u16 call_prev;	/* ... its caller's zend_execute_data */
	__u16 func_name;	/* zend_op_array: its function_name, NULL for a file's code */
	__u16 func_scope;	/* ... its class, NULL for none */
	__u16 func_file;	/* ... its filename */
	__u16 func_line;	/* ... its line_start */
	__u16 pad;
};

/* One process's Zend engine (struct runtime_proc's): what the walk starts from. */
struct php_proc {
	__u64 current;		/* &executor_globals.current_execute_data */
	__u64 loop[PHP_LOOP_RANGES][2];	/* [start, end) as file frames (unwind.h) */
	/*
	 * opcache's JIT buffer, [start, end) by address (anonymous code):
	 * its code runs in the loop's own frame, as the loop does.
	 */
	__u64 jit[2];
	struct php_layout l;
};

/*
 * A PHP frame in a stack: its function's zend_op_array (8-aligned, 48
 * bits) and a 13-bit check of what that op array names (its name, file and
 * first line), which lets user space tell it from another allocated where
 * a freed one was (PHP-FPM frees a request's functions at its end). 0 for
 * a frame that could not be read.
 */
#define PHP_FRAME_CHECK_BITS 13
#define PHP_FRAME(func, check)	RUNTIME_FRAME(RUNTIME_PHP,					\
				      ((func) >> 3) << PHP_FRAME_CHECK_BITS |		\
				      ((check) & ((1 << PHP_FRAME_CHECK_BITS) - 1)))
#define PHP_FRAME_FUNC(v)	((RUNTIME_FRAME_PAYLOAD(v) >> PHP_FRAME_CHECK_BITS) << 3)
#define PHP_FRAME_CHECK(v)	((v) & ((1 << PHP_FRAME_CHECK_BITS) - 1))
#define PHP_FUNC_MAX		(1ULL << 48)

/* The check: a mix of the op array's name and file strings and first line. */
static inline __u32 php_frame_check(__u64 name, __u64 file, __u32 line)
{
	__u64 h = (file * 0x9e3779b97f4a7c15ULL) ^ (name + line);

	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (__u32)(h ^ (h >> 17)) & ((1 << PHP_FRAME_CHECK_BITS) - 1);
}

#endif
