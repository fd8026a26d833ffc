// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for readdirlat: lists a directory SCANS times with getdents64
 * and a buffer of BUFSZ bytes, the way readdir() implementations do, and
 * prints what it saw, for the test to compare with the tool's table.
 * usage: lsdir DIR BUFSZ SCANS
 * Prints "pid P calls C entries E bytes B" (totals over all scans).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long calls = 0, entries = 0, bytes = 0, bufsz, scans;
	char *buf;

	if (argc != 4)
		return 2;
	bufsz = atol(argv[2]);
	scans = atol(argv[3]);
	buf = malloc(bufsz);
	if (!buf)
		return 1;
	for (long s = 0; s < scans; s++) {
		int fd = open(argv[1], O_RDONLY | O_DIRECTORY);
		long n;

		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		do {
			n = syscall(SYS_getdents64, fd, buf, bufsz);
			calls++;
			if (n < 0) {
				perror("getdents64");
				return 1;
			}
			bytes += n;
			/* d_reclen: after the 8-byte inode and 8-byte offset */
			for (long off = 0; off < n; off += *(unsigned short *)(buf + off + 16))
				entries++;
		} while (n > 0);
		close(fd);
	}
	printf("pid %d calls %ld entries %ld bytes %ld\n", getpid(), calls, entries, bytes);
	return 0;
}
