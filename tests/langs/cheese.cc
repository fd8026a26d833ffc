// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A C++ program whose names the demangler must read: a namespace, a
 * class's method, a template, an anonymous namespace and a clone. Built
 * -O2 -g without frame pointers, as a distribution builds (its debug
 * information, which names the inlined call, is in a package beside it).
 * usage: cheese-cxx SECONDS -- prints "pid PID", then spins in
 *        cheese::Affineur::ripen(int) and cheese::Affineur::turn(int),
 *        inlined into it, called from
 *        cheese::Cave<3>::age(std::vector<int> const&) (SECONDS 0:
 *        until stopped)
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>
#include <vector>

#include "../workloads/lifetime.h"

static volatile unsigned long sink;

static double now()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

namespace cheese {

struct Affineur {
	int days;
	__attribute__((noinline)) int ripen(int turns);
	__attribute__((always_inline)) inline void turn(int i);
};

/* Inlined into ripen: named from the DWARF, as C++ writes it. */
void Affineur::turn(int i)
{
	sink = sink + days + (i & 1);
}

int Affineur::ripen(int turns)
{
	for (int i = 0; i < turns; i++)
		turn(i);
	return (int)sink;
}

template <int Shelf>
struct Cave {
	__attribute__((noinline)) static int age(const std::vector<int> &wheels)
	{
		Affineur a{ Shelf };
		int r = 0;

		for (int w : wheels)
			r += a.ripen(w);
		asm volatile("" ::: "memory");	/* no tail call: age stays in the stack */
		return r;
	}
};

} // namespace cheese

namespace {
__attribute__((noinline)) void cellar(double until)
{
	std::vector<int> wheels(16, 20000);

	while (now() < until)
		cheese::Cave<3>::age(wheels);
	asm volatile("" ::: "memory");
}
} // namespace

int main(int argc, char **argv)
{
	double secs = argc > 1 ? lifetime(argv[1]) : 5;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	cellar(now() + secs);
	return 0;
}
