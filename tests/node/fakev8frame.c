// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fakev8's frames as V8 lays out a JavaScript function's: frame pointers,
 * no call-frame information (built -fno-asynchronous-unwind-tables, as
 * V8's JIT code has none), fp - 16 the "function", fp - 8 the "context".
 */
#include <stdint.h>

void fakev8_leaf(void);

/* Built at -O0: its one local array is the 16 bytes under its frame pointer. */
void fakev8_frame(uint64_t function, uint64_t context, int depth)
{
	volatile uint64_t slots[2];

	slots[0] = function;
	slots[1] = context;
	if (depth > 0)
		fakev8_frame(function, context, depth - 1);
	else
		fakev8_leaf();
	slots[0] = slots[1];
}
