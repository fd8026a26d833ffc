// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for cachestat: reads a file from its start TIMES times with
 * one read() of BUFSIZE bytes each, so the page-cache lookups a read asks
 * for (whole buffers, past the end of small files) can be told from the
 * pages it gets.
 *
 * usage: reread FILE TIMES BUFSIZE
 * Prints "read N bytes in T calls" when done.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long times, bufsize, total = 0;
	char *buf;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: reread FILE TIMES BUFSIZE\n");
		return 2;
	}
	times = atol(argv[2]);
	bufsize = atol(argv[3]);
	buf = malloc(bufsize);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || !buf) {
		perror(argv[1]);
		return 1;
	}
	for (long i = 0; i < times; i++) {
		ssize_t n = pread(fd, buf, bufsize, 0);

		if (n < 0) {
			perror("pread");
			return 1;
		}
		total += n;
	}
	printf("read %ld bytes in %ld calls\n", total, times);
	return 0;
}
