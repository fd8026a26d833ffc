// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for profile: spends three quarters of its CPU time in
 * spin_heavy() and one quarter in spin_light(), which also makes system
 * calls so that some samples have kernel stacks.
 * usage: spin SECONDS   -- prints "pid PID", then spins (0: until stopped)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lifetime.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin_heavy(double until)
{
	while (now() < until)
		;
}

/* The system call is made here, not in libc's wrapper, which has no frame pointer. */
static inline __attribute__((always_inline)) void getppid_inline(void)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(SYS_getppid) : "rcx", "r11", "memory");
#else
	syscall(SYS_getppid);
#endif
}

__attribute__((noinline)) void spin_light(double until)
{
	while (now() < until)
		getppid_inline();
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? lifetime(argv[1]) : 3);

	printf("pid %d\n", getpid());
	fflush(stdout);
	while (now() < end) {
		spin_heavy(now() + 0.003);
		spin_light(now() + 0.001);
	}
	return 0;
}
