// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Escaping control characters and broken UTF-8 in names before they reach an output. */
#include <stdbool.h>
#include <string.h>

#include "escape.h"

size_t escape__utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t len;
	unsigned int cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and beyond U+10FFFF are not UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* Noncharacters: valid UTF-8, but no character, and no XML. */
	if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
		return 0;
	return len;
}

/* C0, DEL, and C1 (U+0080..U+009F, which some terminals obey as CSI and the like). */
static bool control(const unsigned char *s, size_t len)
{
	return len == 1 ? s[0] < 0x20 || s[0] == 0x7f : len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* What a flavour writes in place of a printable ASCII character, if anything. */
static const char *replacement(enum escape_flavour fl, unsigned char c)
{
	switch (fl) {
	case ESCAPE_FOLDED:
		return c == ';' ? ":" : c == ' ' ? "_" : NULL;
	case ESCAPE_FOLDED_SPACED:
		return c == ';' ? ":" : NULL;
	case ESCAPE_XML:
		return c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" :
		       c == '"' ? "&quot;" : NULL;
	case ESCAPE_PROM:
		return c == '\\' ? "\\\\" : c == '"' ? "\\\"" : NULL;
	case ESCAPE_TEXT:
		break;
	}
	return NULL;
}

/*
 * Calls @put for each output piece, a character or an escape, until it
 * says no more fit; shared by the FILE and buffer writers.
 */
static size_t walk(const char *str, enum escape_flavour fl,
		   bool (*put)(void *ctx, const char *p, size_t n), void *ctx)
{
	const unsigned char *s = (const unsigned char *)str;
	static const char hex[] = "0123456789abcdef";
	size_t out = 0;

	while (*s) {
		size_t len = escape__utf8_len(s);
		const char *r;

		if (!len || control(s, len)) {
			/* The lead byte alone: what follows it gets its own look. */
			size_t n = len ? len : 1;

			for (size_t i = 0; i < n; i++) {
				/* A Prometheus label value's backslash is itself escaped. */
				char e[5] = { '\\', '\\', 'x', hex[s[i] >> 4], hex[s[i] & 15] };
				size_t el = fl == ESCAPE_PROM ? 5 : 4;

				if (!put(ctx, fl == ESCAPE_PROM ? e : e + 1, el))
					return out;
				out += el;
			}
			s += n;
			continue;
		}
		r = len == 1 ? replacement(fl, *s) : NULL;
		if (r) {
			if (!put(ctx, r, strlen(r)))
				return out;
			out += strlen(r);
			s++;
			continue;
		}
		if (!put(ctx, (const char *)s, len))
			return out;
		out += len;
		s += len;
	}
	return out;
}

static bool put_file(void *ctx, const char *p, size_t n)
{
	fwrite(p, 1, n, ctx);
	return true;
}

void escape__print(FILE *f, const char *s, enum escape_flavour flavour)
{
	if (!escape__needed(s, flavour)) {
		fputs(s, f);
		return;
	}
	walk(s, flavour, put_file, f);
}

struct buf {
	char *p;
	size_t size, len;	/* what fits, what was written */
	size_t need;		/* what the whole would take */
};

/* Whole pieces only: a name cut inside a character would be no UTF-8 at all. */
static bool put_buf(void *ctx, const char *p, size_t n)
{
	struct buf *b = ctx;

	if (b->len == b->need && b->len + n <= b->size) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
	b->need += n;
	return true;
}

size_t escape__format(char *buf, size_t size, const char *s, enum escape_flavour flavour)
{
	struct buf b = { buf, size ? size - 1 : 0, 0, 0 };

	walk(s, flavour, put_buf, &b);
	if (size)
		buf[b.len] = '\0';
	return b.need;
}

int escape__needed(const char *str, enum escape_flavour flavour)
{
	for (const unsigned char *s = (const unsigned char *)str; *s; s++)
		if (*s < 0x20 || *s >= 0x7f || replacement(flavour, *s))
			return 1;
	return 0;
}
