// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A library that says it is libruby 3.1 (the symbols the tools look for:
 * its version, its thread's execution context in a thread-local variable
 * reached by module id, rb_vm_exec and the large loop it calls) whose
 * execution context holds garbage, set by fakeruby (tests/ruby.bats's
 * planted case).
 */
#include <stdint.h>

const char ruby_version[] = "3.1.2";
__thread void *ruby_current_ec;
/* What the tools read a class's path from: a pointer to garbage too. */
uint64_t rb_cInteger;

static volatile uint64_t sink;
volatile int fakeruby_stop;

void fakeruby_leaf(void)
{
	while (!fakeruby_stop)
		sink += sink * 7 + 1;
}

/* A loop big enough to be taken for vm_exec_core: 256 arms of a switch, none inlined away. */
#define ARM(n) case (n): sink = sink * ((n) + 3) + (sink >> ((n) % 13)); fakeruby_leaf(); break;
#define ARMS16(b) ARM(b) ARM(b + 1) ARM(b + 2) ARM(b + 3) ARM(b + 4) ARM(b + 5) ARM(b + 6)	\
	ARM(b + 7) ARM(b + 8) ARM(b + 9) ARM(b + 10) ARM(b + 11) ARM(b + 12) ARM(b + 13)	\
	ARM(b + 14) ARM(b + 15)

__attribute__((noinline)) static uint64_t vm_exec_core(void *ec, int op)
{
	switch (op) {
	ARMS16(0) ARMS16(16) ARMS16(32) ARMS16(48) ARMS16(64) ARMS16(80) ARMS16(96) ARMS16(112)
	default:
		fakeruby_leaf();
	}
	return sink + (uint64_t)(uintptr_t)ec;
}

uint64_t rb_vm_exec(void *ec, int op)
{
	uint64_t r = vm_exec_core(ec, op);

	return r + 1;
}

/* Sets the thread's execution context, through the library's own module id (general dynamic). */
void fakeruby_set_ec(void *ec)
{
	ruby_current_ec = ec;
}
