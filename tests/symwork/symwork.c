// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for the symbolizer: prints its pid and the run-time
 * addresses of functions in itself, in a shared library and in JIT-like
 * anonymous code, then waits to be symbolized.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void symlib_gamma(void);

__attribute__((noinline)) void symwork_alpha(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void symwork_beta(void)
{
	__asm__ volatile("");
}

int main(void)
{
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	memset(jit, 0xc3, 4096);
	printf("pid %d\n", getpid());
	printf("symwork_alpha %p\n", (void *)symwork_alpha);
	printf("symwork_beta %p\n", (void *)symwork_beta);
	printf("symlib_gamma %p\n", (void *)symlib_gamma);
	printf("jit %p\n", jit);
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
