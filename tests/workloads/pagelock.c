// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for cachestat: keeps a file's pages in the page cache by
 * mapping and locking them, so that proactive reclaim (DAMON on this VM's
 * host) cannot turn a warm read into a cold one. Prints "locked", then waits
 * to be killed, or for the test that started it to end (tests/workloads/lifetime.h).
 * usage: pagelock FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lifetime.h"

int main(int argc, char **argv)
{
	struct stat st;
	void *p;
	int fd;

	if (argc != 2)
		return 2;
	lifetime("0");
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || mlock(p, st.st_size)) {
		perror("mmap/mlock");
		return 1;
	}
	printf("locked\n");
	fflush(stdout);
	pause();
	return 0;
}
