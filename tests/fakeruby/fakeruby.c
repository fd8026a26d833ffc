// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that says it is Ruby 3.1 (libfakeruby.so) whose execution
 * context holds garbage: tests/ruby.bats's planted case. By mode, its
 * context is
 *   random   a VM stack and control frames of random words
 *   cycle    control frames whose environments are each other's, their
 *            method entries random words, each frame of a Ruby method
 *   unmapped an address nothing is mapped at
 * The tool must stay bounded, name nothing it did not read, and walk the
 * native frames.
 *
 * usage: fakeruby random|cycle|unmapped   (prints "pid PID", then spins until killed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fakeruby_set_ec(void *ec);
uint64_t rb_vm_exec(void *ec, int op);

static uint64_t junk[1 << 13];
/* A VM stack of 4,096 words, its control frames (64 bytes each) at its top. */
static uint64_t stack[4096], ec[8];

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "random";

	srandom(getpid());
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		junk[i] = (uint64_t)random() << 32 ^ random() ^
			  (i % 3 ? (uint64_t)(uintptr_t)&junk[random() % 1024] : 0);
	if (!strcmp(mode, "random")) {
		memcpy(stack, junk, sizeof(stack));
		ec[0] = (uint64_t)(uintptr_t)stack;
		ec[1] = sizeof(stack) / 8;
		ec[2] = (uint64_t)(uintptr_t)&stack[64];
	} else if (!strcmp(mode, "cycle")) {
		/* 56 frames from stack[3584] up: pc, iseq and ep set, ep[-1] the next's, never LOCAL. */
		for (int f = 0; f < 56; f++) {
			uint64_t *cfp = &stack[3584 + f * 8], *ep = &stack[64 + f * 4 + 2];

			cfp[0] = (uint64_t)(uintptr_t)&junk[f * 16];		/* pc */
			cfp[2] = (uint64_t)(uintptr_t)&junk[f * 16 + 8];	/* iseq */
			cfp[4] = (uint64_t)(uintptr_t)ep;			/* ep */
			ep[0] = 0x22220001;					/* a block's, not LOCAL */
			ep[-1] = (uint64_t)(uintptr_t)&stack[64 + ((f + 1) % 56) * 4 + 2] | 1;
			ep[-2] = (uint64_t)(uintptr_t)&junk[f * 16 + 4];
		}
		ec[0] = (uint64_t)(uintptr_t)stack;
		ec[1] = sizeof(stack) / 8;
		ec[2] = (uint64_t)(uintptr_t)&stack[3584];
	} else {
		ec[0] = 0xdead0000;
		ec[1] = 1 << 20;
		ec[2] = 0xdead0000 + 4096;
	}
	fakeruby_set_ec(ec);
	printf("pid %d\n", getpid());
	fflush(stdout);
	return (int)rb_vm_exec(ec, (int)(random() % 128));
}
