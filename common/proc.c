// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Process existence and names from /proc. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

bool proc__exists(pid_t pid)
{
	char path[64];

	/* /proc/PID covers thread ids too, which kill(pid, 0) would also accept. */
	snprintf(path, sizeof(path), "/proc/%d", pid);
	return access(path, F_OK) == 0;
}

void proc__comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, size, f)) {
		snprintf(buf, size, "[unknown]");
	} else {
		buf[strcspn(buf, "\n")] = '\0';
	}
	if (f)
		fclose(f);
}
