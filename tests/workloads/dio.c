// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for biolatency: a known number of O_DIRECT reads or writes of
 * a known size, one at a time, so each is exactly one block request.
 * usage: dio PATH read|write COUNT SIZE [GAP_MS]
 * GAP_MS: a pause after each, and a line "done SECONDS" for each request
 * when it completed (CLOCK_REALTIME, as Prometheus's time): what rate the
 * requests came at, by the workload's own clock, over any span of its run.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int writing, fd;
	long count, size, gap_ms;
	void *buf;

	if (argc != 5 && argc != 6)
		return 2;
	gap_ms = argc == 6 ? atol(argv[5]) : 0;
	writing = !strcmp(argv[2], "write");
	count = atol(argv[3]);
	size = atol(argv[4]);
	fd = open(argv[1], (writing ? O_WRONLY | O_CREAT : O_RDONLY) | O_DIRECT, 0600);
	if (fd < 0 || posix_memalign(&buf, 4096, size)) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 0x5a, size);
	for (long i = 0; i < count; i++) {
		ssize_t n = writing ? pwrite(fd, buf, size, i * size) : pread(fd, buf, size, i * size);

		if (n != size) {
			perror(writing ? "pwrite" : "pread");
			return 1;
		}
		if (argc == 6) {
			struct timespec ts = { gap_ms / 1000, gap_ms % 1000 * 1000000L }, now;

			clock_gettime(CLOCK_REALTIME, &now);
			printf("done %ld.%09ld\n", (long)now.tv_sec, now.tv_nsec);
			nanosleep(&ts, NULL);
		}
	}
	close(fd);
	return 0;
}
