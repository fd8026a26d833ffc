// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* System call names, for the frame profile --wall puts above a stack that left the CPU in one. */
#include <asm/unistd.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>

#include "stack_key.h"
#include "syscalls.h"

/*
 * The build's <asm/unistd.h> lists the names (syscall_names.h is made from
 * it); the compiler gives their numbers, so each architecture has its own.
 * A kernel newer than the headers has numbers without a name.
 */
static const char *const names[] = {
#define SYSCALL(name) [__NR_##name] = #name,
#include "syscall_names.h"
#undef SYSCALL
};

const char *syscalls__name(unsigned int nr)
{
	return nr < sizeof(names) / sizeof(names[0]) ? names[nr] : NULL;
}

const char *syscalls__frame(unsigned int nr)
{
	static char *frames[SYSCALL_MAX];
	const char *name = syscalls__name(nr);
	int err;

	if (nr >= SYSCALL_MAX)
		return NULL;
	if (!frames[nr]) {
		err = name ? asprintf(&frames[nr], "[sys_%s]", name) :
			     asprintf(&frames[nr], "[sys_%u]", nr);
		if (err < 0) {
			frames[nr] = NULL;
			return "[sys_?]";
		}
	}
	return frames[nr];
}
