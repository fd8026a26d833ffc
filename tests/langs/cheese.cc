// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A C++ program whose names the demangler must read: a namespace, a
 * class's method, a template, an anonymous namespace and a clone. Built
 * -O2 without frame pointers, as a distribution builds.
 * usage: cheese-cxx SECONDS -- prints "pid PID", then spins in
 *        cheese::Affineur::ripen(int), called from
 *        cheese::Cave<3>::age(std::vector<int> const&)
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>
#include <vector>

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
};

int Affineur::ripen(int turns)
{
	for (int i = 0; i < turns; i++)
		sink = sink + days;
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
	double secs = argc > 1 ? atof(argv[1]) : 5;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	cellar(now() + secs);
	return 0;
}
