// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The /proc/PID/maps line parser. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"

/*
 * A number of a maps line in @base, which @sep must follow; past @sep, or
 * NULL. By hand: a process's maps are read at its exec, hundreds a second
 * on a busy machine, where sscanf() took a sixth of the reading.
 */
static char *number(char *s, int base, char sep, unsigned long long *v)
{
	char *end;

	if (!isxdigit((unsigned char)*s) || (base == 10 && !isdigit((unsigned char)*s)))
		return NULL;
	*v = strtoull(s, &end, base);
	return *end == sep ? end + 1 : NULL;
}

int procmaps__parse_line(char *line, struct maps_entry *e)
{
	unsigned long long start, end, pgoff, major, minor, inode;
	char *p = line, *perms;
	size_t len;

	memset(e, 0, sizeof(*e));
	if (!(p = number(p, 16, '-', &start)) || !(p = number(p, 16, ' ', &end)) || end < start)
		return -EINVAL;
	perms = p;
	if (strnlen(perms, 5) < 5 || perms[4] != ' ')
		return -EINVAL;
	if (!(p = number(perms + 5, 16, ' ', &pgoff)) || !(p = number(p, 16, ':', &major)) ||
	    !(p = number(p, 16, ' ', &minor)) || major > ~0U || minor > ~0U ||
	    !isdigit((unsigned char)*p))
		return -EINVAL;
	/* Then the inode, and a space and the name (padded), or the line's end. */
	inode = strtoull(p, &p, 10);
	if (*p && *p != ' ' && *p != '\n')
		return -EINVAL;
	*e = (struct maps_entry){ start, end, pgoff, major, minor, inode, perms[2] == 'x' };
	p += strspn(p, " ");
	len = strcspn(p, "\n");
	p[len] = '\0';
	if (len >= 10 && !strcmp(p + len - 10, " (deleted)")) {
		e->deleted = true;
		p[len - 10] = '\0';
	}
	e->path = p;
	return 0;
}
