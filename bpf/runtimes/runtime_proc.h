/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the runtimes' BPF side and user space share of a process that runs an interpreter. */
#ifndef BPFSCOPE_RUNTIME_PROC_H
#define BPFSCOPE_RUNTIME_PROC_H

#include "unwind.h"
#include "runtimes/python.h"
#include "runtimes/v8.h"
#include "runtimes/hotspot.h"
#include "runtimes/php.h"
#include "runtimes/perl.h"
#include "runtimes/ruby.h"

/*
 * A process running a runtime's interpreter, by its tgid: the image it
 * describes (as struct unwind_proc: an exec_id of UNWIND_EXEC_ANY is bound
 * to the image of the first walk), and what that runtime's walk starts from.
 */
struct runtime_proc {
	__u32 runtime;		/* enum runtime_id */
	__u32 exec_id;
	__u64 start_ns;
	union {
		struct py_proc py;
		struct v8_proc v8;
		struct hotspot_proc hotspot;
		struct php_proc php;
		struct perl_proc perl;
		struct ruby_proc ruby;
	};
};

#endif
