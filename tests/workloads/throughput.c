// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark workload: a fixed amount of one kind of work, and how fast it
 * went, for tests/bench/overhead to compare bare and traced.
 *   pool N     a pool of 8 threads takes N tasks from a queue, each woken
 *              on a condition variable (a futex) by the one that posts it
 *   syscalls N N system calls (getppid), nothing else
 *   cpu N      N rounds of arithmetic in one thread, no system call
 * usage: throughput pool|syscalls|cpu N   -- prints "KIND N secs S rate R/s"
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t posted = PTHREAD_COND_INITIALIZER, taken = PTHREAD_COND_INITIALIZER;
static long queued, done, total;
static volatile unsigned long sink;

static void *worker(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&lock);
		while (!queued && done < total)
			pthread_cond_wait(&posted, &lock);
		if (done >= total) {
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		queued--;
		done++;
		if (done >= total)
			pthread_cond_broadcast(&posted);
		pthread_cond_signal(&taken);
		pthread_mutex_unlock(&lock);
		for (int i = 0; i < 200; i++)
			sink += i * 7;
	}
}

/* One task at a time: each post wakes a sleeping worker. */
static void pool(long n)
{
	pthread_t t[WORKERS];

	total = n;
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		while (queued)
			pthread_cond_wait(&taken, &lock);
		queued++;
		pthread_cond_signal(&posted);
		pthread_mutex_unlock(&lock);
	}
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
}

static void syscalls(long n)
{
	for (long i = 0; i < n; i++)
		sink += syscall(SYS_getppid);
}

static void cpu(long n)
{
	unsigned long x = 1;

	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	double secs;
	long n;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: throughput pool|syscalls|cpu N\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (!strcmp(argv[1], "pool"))
		pool(n);
	else if (!strcmp(argv[1], "syscalls"))
		syscalls(n);
	else if (!strcmp(argv[1], "cpu"))
		cpu(n);
	else
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%s %ld secs %.3f rate %.0f/s\n", argv[1], n, secs, n / secs);
	return 0;
}
