// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that says it is Perl 5.36 (the symbols the tools look for, its
 * interpreter in a thread-local variable) whose interpreter holds garbage:
 * tests/perl.bats's planted case. By mode, its interpreter's stack info is
 *   random   a pointer into random words
 *   cycle    one that is its own outer one, its four contexts calls of subs
 *            whose CVs are random words
 *   unmapped an address nothing is mapped at
 * The tool must stay bounded, name nothing it did not read, and walk the
 * native frames.
 *
 * usage: fakeperl random|cycle|unmapped   (prints "pid PID", then spins until killed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What Perl's binary says of itself. */
const unsigned char PL_revision = 5, PL_version = 36, PL_subversion = 0;
__thread void *PL_current_context;

static uint64_t junk[1 << 13];
static uint64_t interp[64], si[8], cx[13 * 4];

static volatile uint64_t sink;
static volatile int stop;

void fakeperl_leaf(void)
{
	while (!stop)
		sink += sink * 7 + 1;
}

/* Perl's loop, as the tools find it: its frame is below the leaf's. */
int Perl_runops_standard(void *my_perl)
{
	sink = (uint64_t)(uintptr_t)my_perl;
	fakeperl_leaf();
	return (int)sink;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "random";

	srandom(getpid());
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		junk[i] = (uint64_t)random() << 32 ^ random() ^
			  (i % 3 ? (uint64_t)(uintptr_t)&junk[random() % 1024] : 0);
	if (!strcmp(mode, "random")) {
		interp[224 / 8] = (uint64_t)(uintptr_t)&junk[64];
	} else if (!strcmp(mode, "cycle")) {
		si[1] = (uint64_t)(uintptr_t)cx;	/* si_cxstack */
		si[2] = (uint64_t)(uintptr_t)si;	/* si_prev: itself */
		si[4] = 3;				/* si_cxix: its fourth context */
		for (int i = 0; i < 4; i++) {
			cx[i * 13] = 9;						/* CXt_SUB */
			cx[i * 13 + 9] = (uint64_t)(uintptr_t)&junk[i * 8];	/* its CV */
		}
		interp[224 / 8] = (uint64_t)(uintptr_t)si;
	} else {
		interp[224 / 8] = 0xdead0000;
	}
	PL_current_context = interp;
	printf("pid %d\n", getpid());
	fflush(stdout);
	return Perl_runops_standard(interp);
}
