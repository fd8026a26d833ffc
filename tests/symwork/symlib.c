// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A shared library for the symbolizer's tests: one distinctive function. */

__attribute__((noinline)) void symlib_gamma(void)
{
	__asm__ volatile("");
}
