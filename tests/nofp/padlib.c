// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Code that only adds rows, linked beside nofplib.c into libpadlib.so: 256
 * functions that keep something on the stack, each a few unwind rows, so
 * that a few hundred copies of the library fill the unwinder's tables.
 */
#define PAD(n)								\
	__attribute__((noinline)) int padlib_##n(int x)			\
	{								\
		volatile int a[8];					\
									\
		a[x & 7] = x;						\
		return a[(x + n) & 7] + padlib_next(x, n);		\
	}
#define PAD4(n) PAD(n##0) PAD(n##1) PAD(n##2) PAD(n##3)
#define PAD16(n) PAD4(n##0) PAD4(n##1) PAD4(n##2) PAD4(n##3)
#define PAD64(n) PAD16(n##0) PAD16(n##1) PAD16(n##2) PAD16(n##3)

__attribute__((noinline)) int padlib_next(int x, int n)
{
	return x > n ? padlib_next(x - n, n + 1) : x;
}

PAD64(1) PAD64(2) PAD64(3) PAD64(4)
