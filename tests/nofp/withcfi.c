// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A function with unwind tables, linked into libdmixed.so beside nofplib.c's without: its .eh_frame describes this one alone. */

__attribute__((noinline)) int nofp_with_cfi(int x)
{
	return x * 3 + 1;
}
