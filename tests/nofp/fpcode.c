// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Code built with frame pointers and without CFI (-fno-omit-frame-pointer
 * -fno-asynchronous-unwind-tables -fno-unwind-tables), called from and
 * calling code that has CFI and no frame pointers: one stack of both kinds.
 */
void nofp_leaf(double until);

static volatile unsigned long sink;

__attribute__((noinline, noclone)) void nofp_fp_inner(double until)
{
	nofp_leaf(until);
	sink++;
}

__attribute__((noinline, noclone)) void nofp_fp_outer(double until)
{
	nofp_fp_inner(until);
	sink++;
}
