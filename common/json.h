/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A minimal streaming JSON writer: one object per line on a FILE. */
#ifndef BPFSCOPE_JSON_H
#define BPFSCOPE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
};

/* Starts a top-level object on @f; json__end_line() closes it with "}\n". */
void json__begin_line(struct json *j, FILE *f);
void json__end_line(struct json *j);

/* @key is NULL inside arrays. */
void json__begin_object(struct json *j, const char *key);
void json__end_object(struct json *j);
void json__begin_array(struct json *j, const char *key);
void json__end_array(struct json *j);

void json__str(struct json *j, const char *key, const char *val);
void json__u64(struct json *j, const char *key, uint64_t val);
void json__i64(struct json *j, const char *key, int64_t val);
void json__double(struct json *j, const char *key, double val);
void json__null(struct json *j, const char *key);	/* a value not known */
void json__bool(struct json *j, const char *key, bool val);

/* Writes @s as a quoted JSON string, escaping what JSON requires. */
void json__print_string(FILE *f, const char *s);

#endif
