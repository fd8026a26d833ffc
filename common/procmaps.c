// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The /proc/PID/maps line parser. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "procmaps.h"

int procmaps__parse_line(char *line, struct maps_entry *e)
{
	char perms[8];
	int path_at = -1;
	size_t len;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &e->start, &e->end, perms, &e->pgoff,
		   &e->dev_major, &e->dev_minor, &e->inode, &path_at) < 7 || path_at < 0 ||
	    e->end < e->start || strlen(perms) != 4)
		return -EINVAL;
	e->exec = perms[2] == 'x';
	e->path = line + path_at;
	len = strcspn(e->path, "\n");
	line[path_at + len] = '\0';
	if (len >= 10 && !strcmp(e->path + len - 10, " (deleted)")) {
		e->deleted = true;
		line[path_at + len - 10] = '\0';
	}
	return 0;
}
