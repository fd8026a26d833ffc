// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Code the unwinder has neither CFI nor frame pointers for: built with
 * -fno-asynchronous-unwind-tables -fno-unwind-tables -fomit-frame-pointer,
 * so that no .eh_frame entry covers it, as a stripped .eh_frame or JIT code.
 */
void nofp_nocfi_leaf(double until);

static volatile unsigned long sink;

/*
 * Calls nofp_nocfi_leaf with @junk in the frame-pointer register, as code
 * built without frame pointers may hold anything there: zero, or an
 * address on the stack that looks like a frame record but is none. The
 * caller's value comes back before the return.
 */
__attribute__((noinline, noclone)) void nofp_nocfi_mid(double until, unsigned long junk)
{
#if defined(__x86_64__)
	/* Clobbered: the compiler saves and restores it, as a callee-saved register. */
	__asm__ volatile("mov %0, %%rbp" : : "r"(junk) : "rbp");
	nofp_nocfi_leaf(until);
#elif defined(__aarch64__)
	unsigned long saved;

	/* GCC neither saves nor restores x29 when told it is clobbered: by hand. */
	__asm__ volatile("mov %0, x29\n\tmov x29, %1" : "=&r"(saved) : "r"(junk));
	nofp_nocfi_leaf(until);
	__asm__ volatile("mov x29, %0" : : "r"(saved));
#else
#error "x86-64 and arm64 only"
#endif
	sink++;
}
