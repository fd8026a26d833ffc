// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A shared library built without frame pointers: a chain of calls for the unwinder's tests. */
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Each calls the next and then works, so that no call becomes a jump. */
__attribute__((noinline, noclone)) void nofplib_leaf(double until)
{
	while (now() < until)
		sink++;
}

__attribute__((noinline, noclone)) void nofplib_inner(double until)
{
	nofplib_leaf(until);
	sink++;
}

__attribute__((noinline, noclone)) void nofplib_outer(double until)
{
	nofplib_inner(until);
	sink++;
}

/* Almost nothing, called in a loop through the caller's PLT: samples land in the PLT stub. */
__attribute__((noinline, noclone)) unsigned long nofplib_tick(void)
{
	return ++sink;
}
