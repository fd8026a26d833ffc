/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* System calls made inline, from the workload's own function: libc's wrappers have no frame pointer. */
#ifndef BPFSCOPE_RAWSYS_H
#define BPFSCOPE_RAWSYS_H

#include <sys/syscall.h>
#include <unistd.h>

/*
 * Made here, not in libc, so that a frame-pointer unwind sees the calling
 * function, which a wrapper without a frame would hide.
 */
static inline __attribute__((always_inline)) long sys3(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
#else
	return syscall(nr, a, b, c);
#endif
}

#endif
