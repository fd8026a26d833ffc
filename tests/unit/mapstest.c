// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The maps line parser (common/procmaps.c) through tests/syms.bats: each
 * line of standard input as parsed, "start end x|- pgoff major:minor inode
 * deleted|- path" in hexadecimal but for the inode, or "invalid".
 */
#include <stdio.h>

#include "procmaps.h"

int main(void)
{
	char line[8192];
	struct maps_entry e;

	while (fgets(line, sizeof(line), stdin)) {
		if (procmaps__parse_line(line, &e)) {
			puts("invalid");
			continue;
		}
		printf("%llx %llx %c %llx %x:%x %llu %c %s\n", (unsigned long long)e.start,
		       (unsigned long long)e.end, e.exec ? 'x' : '-', (unsigned long long)e.pgoff,
		       e.dev_major, e.dev_minor, (unsigned long long)e.inode, e.deleted ? 'd' : '-',
		       e.path);
	}
	return 0;
}
