// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The perf-PID.map reader: a checked open, a bounded read, a parse in place. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfmap.h"
#include "procfile.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A hex number at *@p, then blanks; false if there is none. */
static bool hex(char **p, uint64_t *v)
{
	char *end;

	if (!isxdigit((unsigned char)**p))
		return false;
	*v = strtoull(*p, &end, 16);
	if (end == *p || (*end != ' ' && *end != '\t'))
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	*p = end;
	return true;
}

int perfmap__parse(struct perfmap *m, char *text, size_t len)
{
	size_t cap = 0;
	char *line = text, *end = text + len;

	m->text = text;
	m->bytes = len;
	while (line < end) {
		char *nl = memchr(line, '\n', end - line), *p = line;
		uint64_t start, size;

		if (nl)
			*nl = '\0';
		else
			text[len] = '\0';	/* the caller's buffer has room for it */
		if (hex(&p, &start) && hex(&p, &size) && *p && size && start + size > start) {
			if (m->n == cap) {
				struct perfmap_sym *t;

				cap = cap ? cap * 2 : 256;
				t = realloc(m->syms, cap * sizeof(*t));
				if (!t)
					return -ENOMEM;
				m->syms = t;
				m->bytes += (cap - m->n) * sizeof(*t);
			}
			m->syms[m->n++] = (struct perfmap_sym){ start, size, p };
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (m->n)
		qsort(m->syms, m->n, sizeof(*m->syms), cmp_sym);
	return 0;
}

int perfmap__load(struct perfmap *m, int rootfd, pid_t nspid, uid_t owner)
{
	char path[64], *text;
	struct stat st;
	size_t len;
	int fd, err;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", nspid);
	fd = procfile__openat(rootfd, path, PROCFILE_NOFOLLOW, &st);
	if (fd < 0)
		return fd;
	/* As perf does: a map is the process's own (its uid) or root's, not a stranger's. */
	if (st.st_uid != owner && st.st_uid != 0) {
		close(fd);
		return -EPERM;
	}
	err = procfile__read(fd, PERFMAP_MAX_BYTES, &text, &len);
	close(fd);
	if (err < 0)
		return err;
	m->truncated = err;
	err = perfmap__parse(m, text, len);
	if (err)
		perfmap__free(m);
	return err;
}

const struct perfmap_sym *perfmap__find(const struct perfmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	if (!m->n || addr < m->syms[0].start)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return addr - m->syms[lo].start < m->syms[lo].size ? &m->syms[lo] : NULL;
}

void perfmap__free(struct perfmap *m)
{
	free(m->syms);
	free(m->text);
	memset(m, 0, sizeof(*m));
}
