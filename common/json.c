// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The streaming JSON writer behind every tool's --json. */
#include <inttypes.h>
#include <math.h>

#include "escape.h"
#include "json.h"

/*
 * JSON strings must be UTF-8: a byte that is not (a Latin-1 process name,
 * a corrupt symbol) is written as the text "\\xHH", as the text outputs
 * show it, so the line stays valid and the byte stays visible.
 */
void json__print_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t len = escape__utf8_len(p);

		if (!len) {
			fprintf(f, "\\\\x%02x", *p++);
			continue;
		}
		if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			fprintf(f, "\\u%04x", p[1]);	/* C1 controls */
			p += 2;
			continue;
		}
		if (len > 1) {
			fwrite(p, 1, len, f);
			p += len;
			continue;
		}
		switch (*p) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
		p++;
	}
	fputc('"', f);
}

static void member(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key) {
		json__print_string(j->f, key);
		fputc(':', j->f);
	}
}

static void open_scope(struct json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_scope(struct json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

void json__begin_line(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
	open_scope(j, NULL, '{');
}

void json__end_line(struct json *j)
{
	close_scope(j, '}');
	fputc('\n', j->f);
}

void json__begin_object(struct json *j, const char *key) { open_scope(j, key, '{'); }
void json__end_object(struct json *j) { close_scope(j, '}'); }
void json__begin_array(struct json *j, const char *key) { open_scope(j, key, '['); }
void json__end_array(struct json *j) { close_scope(j, ']'); }

void json__str(struct json *j, const char *key, const char *val)
{
	member(j, key);
	json__print_string(j->f, val ? val : "");
}

void json__u64(struct json *j, const char *key, uint64_t val)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

void json__null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void json__i64(struct json *j, const char *key, int64_t val)
{
	member(j, key);
	fprintf(j->f, "%" PRId64, val);
}

void json__double(struct json *j, const char *key, double val)
{
	member(j, key);
	if (isfinite(val))
		fprintf(j->f, "%.6g", val);
	else
		fputs("null", j->f);
}

void json__bool(struct json *j, const char *key, bool val)
{
	member(j, key);
	fputs(val ? "true" : "false", j->f);
}
