// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that says it is PHP 8.2 (the symbols and version string the
 * tools look for) whose engine's memory holds garbage: tests/php.bats's
 * planted case. By mode, its current call is
 *   random   a pointer into random words
 *   cycle    a call that is its own caller, of a function whose name says
 *            it is 2^62 bytes long
 *   unmapped an address nothing is mapped at
 * The tool must stay bounded, name nothing it did not read, and walk the
 * native frames.
 *
 * usage: fakephp random|cycle|unmapped   (prints "pid PID", then spins until killed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What PHP's binary says of itself, in .rodata. */
const char powered_by[] = "X-Powered-By: PHP/8.2.99";

/* zend_executor_globals: current_execute_data at 488 (8.2). */
uint64_t executor_globals[240];

static uint64_t junk[1 << 13];
static uint64_t call[8], func[32], name[4], file[4];

static volatile uint64_t sink;
static volatile int stop;

void fakephp_leaf(void)
{
	while (!stop)
		sink += sink * 7 + 1;
}

/* The VM's loop, as the tools find it: its frame is below the leaf's. */
void execute_ex(const void *data)
{
	sink = (uint64_t)data;
	fakephp_leaf();
	sink++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "random";

	srandom(getpid());
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		junk[i] = (uint64_t)random() << 32 ^ random() ^
			  (i % 3 ? (uint64_t)(uintptr_t)&junk[random() % 1024] : 0);
	if (!strcmp(mode, "random")) {
		executor_globals[488 / 8] = (uint64_t)(uintptr_t)&junk[64];
	} else if (!strcmp(mode, "cycle")) {
		name[2] = 1ULL << 62;			/* its length */
		memcpy(&name[3], "gouda", 6);
		func[0] = 2;				/* ZEND_USER_FUNCTION */
		func[1] = (uint64_t)(uintptr_t)name;	/* function_name */
		file[2] = 8;
		memcpy(&file[3], "cave.php", 8);
		func[152 / 8] = (uint64_t)(uintptr_t)file;	/* filename */
		func[160 / 8] = 7;			/* line_start */
		call[3] = (uint64_t)(uintptr_t)func;	/* func */
		call[6] = (uint64_t)(uintptr_t)call;	/* prev_execute_data: itself */
		executor_globals[488 / 8] = (uint64_t)(uintptr_t)call;
	} else {
		executor_globals[488 / 8] = 0xdead0000;
	}
	printf("pid %d\n", getpid());
	fflush(stdout);
	execute_ex(powered_by);
	return 0;
}
