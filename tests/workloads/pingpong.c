// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark workload: two threads bounce a byte over a pair of pipes, so
 * every round trip is two wakeups and two context switches.
 * usage: pingpong ROUNDS   -- prints "rounds N secs S rate R/s"
 * ROUNDS 0: until the test stops it (tests/workloads/lifetime.h), as a
 * tool's slow start beside it needs; it then prints nothing.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>

#include "lifetime.h"

static int ping[2], pong[2];
static long rounds = 100000;

static void *echo(void *arg)
{
	char c;

	for (long i = 0; i < rounds; i++) {
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	pthread_t t;
	double secs;
	char c = 'x';

	if (argc > 1)
		rounds = atol(argv[1]);
	if (rounds <= 0) {
		lifetime("0");
		rounds = LONG_MAX;
	}
	if (pipe(ping) || pipe(pong))
		return 1;
	pthread_create(&t, NULL, echo, NULL);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < rounds; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	pthread_join(t, NULL);
	secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("rounds %ld secs %.3f rate %.0f/s\n", rounds, secs, rounds / secs);
	return 0;
}
