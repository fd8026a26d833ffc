// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Code the unwinder has neither CFI nor frame pointers for: built with
 * -fno-asynchronous-unwind-tables -fno-unwind-tables -fomit-frame-pointer,
 * so that no .eh_frame entry covers it, as a stripped .eh_frame or JIT code.
 */
#if defined(__x86_64__)
#define FP_REG "rbp"
#elif defined(__aarch64__)
#define FP_REG "x29"
#endif

void nofp_nocfi_leaf(double until);

static volatile unsigned long sink;

/*
 * Calls @leaf with @junk in the frame-pointer register, as code built
 * without frame pointers may hold anything there: zero, or an address on
 * the stack that looks like a frame record but is none.
 */
__attribute__((noinline, noclone)) void nofp_nocfi_mid(double until, unsigned long junk)
{
	register unsigned long fp __asm__(FP_REG) = junk;

	__asm__ volatile("" : "+r"(fp));
	nofp_nocfi_leaf(until);
	__asm__ volatile("" : : "r"(fp));
	sink++;
}
