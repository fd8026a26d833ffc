// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A C++ program that spends its time in libstdc++ (a stream's number
 * formatting), built -O2 without frame pointers: its stacks reach main
 * only through libstdc++'s CFI, a big library whose rows a system-wide
 * profile makes once a stack reaches it (tests/unwind.bats).
 * usage: sstream-cxx SECONDS -- prints "pid PID", then formats numbers
 *        in churn(int), called from main (SECONDS 0: until stopped)
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <unistd.h>

#include "../workloads/lifetime.h"

static volatile unsigned long sink;

static double now()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void churn(int i)
{
	std::ostringstream o;

	o << i << ' ' << i * 3.5 << ' ' << std::hex << i;
	sink = sink + o.str().size();
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? lifetime(argv[1]) : 5);

	printf("pid %d\n", getpid());
	fflush(stdout);
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			churn(i);
	return 0;
}
