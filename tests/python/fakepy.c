// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that only looks like CPython 3.11 (or the version PY_VERSION
 * says) to a profiler: its symbols are CPython's, its thread state is
 * found, but its only frame is its own caller (a loop with no entry frame
 * to end it), and the code object it names has a name a gigabyte long,
 * full of terminal escapes. For tests/python.bats: the tool must finish,
 * bounded, and escape what it prints.
 *
 * usage: fakepy SECONDS   (prints "pid PID", then spins in the "interpreter loop";
 *                          SECONDS 0: until the test stops it)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../workloads/lifetime.h"

#ifndef PY_VERSION
#define PY_VERSION 0x030b02f0UL
#endif

/* What profilers look for; 3.11's offsets (common/cpython.c). */
const unsigned long Py_Version = PY_VERSION;
char PyCode_Type[416];
_Alignas(64) unsigned char _PyRuntime[4096];

static unsigned char interp[256], tstate[512], cframe[64], frame[128], code[256];
static unsigned char name[64], file[64];

static void put(void *at, uint64_t v)
{
	memcpy(at, &v, sizeof(v));
}

/* A compact ASCII str of @len characters (claimed) at @obj, its text @text. */
static void str(unsigned char *obj, int64_t len, const char *text)
{
	uint32_t state = 1 << 2 | 1 << 5 | 1 << 6;	/* kind 1, compact, ascii */

	memcpy(obj + 16, &len, sizeof(len));
	memcpy(obj + 32, &state, sizeof(state));
	memcpy(obj + 48, text, strlen(text) < 16 ? strlen(text) : 16);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The "interpreter loop": where every sample of this process is. */
__attribute__((noinline)) void _PyEval_EvalFrameDefault(double end)
{
	volatile unsigned long x = 0;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += i;
}

int main(int argc, char **argv)
{
	double end = now() + lifetime(argc > 1 ? argv[1] : "5");

	put(_PyRuntime + 40, (uintptr_t)interp);		/* interpreters.head */
	put(interp + 16, (uintptr_t)tstate);			/* threads.head */
	put(tstate + 8, (uintptr_t)tstate);			/* next: itself */
	put(tstate + 160, gettid());				/* native_thread_id */
	put(tstate + 56, (uintptr_t)cframe);			/* cframe */
	put(cframe + 8, (uintptr_t)frame);			/* current_frame */
	put(frame + 32, (uintptr_t)code);			/* f_code */
	put(frame + 48, (uintptr_t)frame);			/* previous: itself */
	put(code + 8, (uintptr_t)PyCode_Type);			/* ob_type */
	put(code + 128, (uintptr_t)name);			/* co_qualname */
	put(code + 112, (uintptr_t)file);			/* co_filename */
	put(code + 72, 7);					/* co_firstlineno */
	/* A billion characters claimed, of which the first read are escapes. */
	str(name, 1L << 30, "\033[2J\033]0;x\a;ev");
	str(file, 9, "/tmp/a b");
	printf("pid %d\n", getpid());
	fflush(stdout);
	_PyEval_EvalFrameDefault(end);
	return 0;
}
