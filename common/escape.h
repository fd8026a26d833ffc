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
	ESCAPE_XML,	/* SVG text and attributes: also <, >, & and " as entities */
	ESCAPE_PROM,	/* Prometheus label values: also \\ and " backslashed ("\\xHH") */
};

void escape__print(FILE *f, const char *s, enum escape_flavour flavour);

/*
 * The same into @buf (always terminated): cut, where it must be, between
 * two characters or escapes, never inside one. Returns the length it needed.
 */
size_t escape__format(char *buf, size_t size, const char *s, enum escape_flavour flavour);

/*
 * The length of the valid UTF-8 sequence at @s (1 to 4), or 0 when @s does
 * not start one: a stray continuation byte, an overlong form, a surrogate,
 * a code point past U+10FFFF, a sequence cut short, or a noncharacter
 * (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF: XML refuses them, and every writer
 * here spells them as bytes). @s must be terminated. The one validator of
 * the text, JSON, SVG and Prometheus writers.
 */
size_t escape__utf8_len(const unsigned char *s);

/* Does @s need escaping at all (so callers can skip a copy)? */
int escape__needed(const char *s, enum escape_flavour flavour);

#endif
