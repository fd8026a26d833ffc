/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Printing names other users chose (process names, symbols, paths) so they cannot forge output. */
#ifndef BPFSCOPE_ESCAPE_H
#define BPFSCOPE_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/*
 * How a name is written: every flavour spells control characters (C0, DEL,
 * C1) and bytes that are not UTF-8 as "\xHH", so no name can start a line
 * or move a terminal's cursor.
 */
enum escape_flavour {
	ESCAPE_TEXT,	/* text reports: the rest as it is */
	ESCAPE_FOLDED,	/* folded stacks: also ';' as ':' and ' ' as '_' */
	ESCAPE_FOLDED_SPACED,	/* folded stacks, spaces kept: ';' as ':' */
};

void escape__print(FILE *f, const char *s, enum escape_flavour flavour);

/* The same into @buf (always terminated); returns the length it needed. */
size_t escape__format(char *buf, size_t size, const char *s, enum escape_flavour flavour);

/*
 * The length of the valid UTF-8 sequence at @s (1 to 4), or 0 when @s does
 * not start one (a stray continuation byte, an overlong form, a surrogate,
 * a sequence cut short). @s must be terminated.
 */
size_t escape__utf8_len(const unsigned char *s);

/* Does @s need escaping at all (so callers can skip a copy)? */
int escape__needed(const char *s, enum escape_flavour flavour);

#endif
