// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A shared library for the symbolizer's tests: distinctive functions. */
#include <time.h>

__attribute__((noinline)) void symlib_gamma(void)
{
	__asm__ volatile("");
}

/* Burns CPU here, in the library, for @seconds: samples whose leaf is a library's. */
__attribute__((noinline)) void symlib_spin(double seconds)
{
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + seconds;
	do
		clock_gettime(CLOCK_MONOTONIC, &ts);
	while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
}
