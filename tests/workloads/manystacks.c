// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload with up to 131,072 distinct call stacks: path P runs
 * main -> run_path -> ms17_x -> ... -> ms1_x -> the leaf, each x (a or b)
 * chosen by one bit of P, so every path is a different stack.
 * usage: manystacks spin PATHS SECONDS  -- burns CPU in every path in turn (0:
 *                                         until stopped)
 *        manystacks sleep PATHS [ROUNDS] -- each path sleeps 50 us, once; with
 *                                           ROUNDS, the next PATHS paths at
 *                                           each SIGUSR1 after the first, each
 *                                           round ending in "round N"
 *        manystacks pipe PATHS           -- a reader blocks in each path on
 *                                           a pipe; a writer, in the same
 *                                           path, wakes it
 * Prints "pid PID"; sleep and pipe then wait for SIGUSR1, do the work and
 * print "done".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lifetime.h"
#include "rawsys.h"

static volatile unsigned long sink;
static volatile unsigned int reader_at = ~0u;	/* the path the reader is blocking in */
static pid_t reader_tid;
static int fds[2];
static __thread void (*leaf)(unsigned int path);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void manystacks_burn(unsigned int path)
{
	double until = now() + 0.0002;

	while (now() < until)
		sink++;
}

static unsigned int unslept;

/* Voluntary switches of the calling thread so far. */
static long voluntary_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

/*
 * A sleep whose timer fires before the thread gets to schedule() (its vCPU
 * stolen by the host for the 50 us between) returns without leaving the
 * CPU: no off-CPU period to trace, so it is counted, for the tests.
 */
__attribute__((noinline)) void manystacks_sleep(unsigned int path)
{
	struct timespec ts = { 0, 50000 };
	long before = voluntary_switches();

	sys3(SYS_nanosleep, (long)&ts, 0, 0);
	if (voluntary_switches() == before)
		unslept++;
}

/*
 * The writer writes once it sees the reader asleep in /proc, which the
 * reader is from the moment it sets its state, before it reaches
 * schedule(): a write then (its vCPU stolen meanwhile, or the writer
 * quick) wakes it before it left its CPU, and its read returns without a
 * blocked period to trace. Counted as unslept, as manystacks_sleep's.
 */
__attribute__((noinline)) void manystacks_read(unsigned int path)
{
	long before = voluntary_switches();
	char c;

	reader_at = path;
	if (sys3(SYS_read, fds[0], (long)&c, 1) != 1)
		exit(1);
	if (voluntary_switches() == before)
		unslept++;
}

/* Is the reader asleep (in its read)? */
static int reader_sleeps(void)
{
	char path[64], buf[512], *p;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", reader_tid);
	f = fopen(path, "r");
	n = f ? (int)fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/*
 * Waits, spinning rather than sleeping (its own waits would double the
 * stacks), until the reader blocks in the same path, then wakes it.
 */
__attribute__((noinline)) void manystacks_write(unsigned int path)
{
	char c = 'x';

	while (reader_at != path || !reader_sleeps())
		sink++;
	if (sys3(SYS_write, fds[1], (long)&c, 1) != 1)
		exit(1);
}

/* The work after each call keeps the compiler from turning calls into jumps. */
#define PAIR(n, call) \
	__attribute__((noinline)) void ms##n##_a(unsigned int p) { call; sink++; } \
	__attribute__((noinline)) void ms##n##_b(unsigned int p) { call; sink++; }

PAIR(1, leaf(p))
PAIR(2, (p & 1 ? ms1_b : ms1_a)(p))
PAIR(3, (p >> 1 & 1 ? ms2_b : ms2_a)(p))
PAIR(4, (p >> 2 & 1 ? ms3_b : ms3_a)(p))
PAIR(5, (p >> 3 & 1 ? ms4_b : ms4_a)(p))
PAIR(6, (p >> 4 & 1 ? ms5_b : ms5_a)(p))
PAIR(7, (p >> 5 & 1 ? ms6_b : ms6_a)(p))
PAIR(8, (p >> 6 & 1 ? ms7_b : ms7_a)(p))
PAIR(9, (p >> 7 & 1 ? ms8_b : ms8_a)(p))
PAIR(10, (p >> 8 & 1 ? ms9_b : ms9_a)(p))
PAIR(11, (p >> 9 & 1 ? ms10_b : ms10_a)(p))
PAIR(12, (p >> 10 & 1 ? ms11_b : ms11_a)(p))
PAIR(13, (p >> 11 & 1 ? ms12_b : ms12_a)(p))
PAIR(14, (p >> 12 & 1 ? ms13_b : ms13_a)(p))
PAIR(15, (p >> 13 & 1 ? ms14_b : ms14_a)(p))
PAIR(16, (p >> 14 & 1 ? ms15_b : ms15_a)(p))
PAIR(17, (p >> 15 & 1 ? ms16_b : ms16_a)(p))

#define MAX_PATHS (1u << 17)

static __attribute__((noinline)) void run_path(unsigned int p)
{
	(p >> 16 & 1 ? ms17_b : ms17_a)(p);
	sink++;
}

static unsigned int paths;

static void *writer(void *arg)
{
	leaf = manystacks_write;
	for (unsigned int p = 0; p < paths; p++)
		run_path(p);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w;
	sigset_t set;
	int sig;

	if (argc < 3)
		return 2;
	paths = atoi(argv[2]);
	if (!paths || paths > MAX_PATHS)
		return 2;
	if (!strcmp(argv[1], "spin")) {
		double end = now() + (argc > 3 ? lifetime(argv[3]) : 3);

		printf("pid %d\n", getpid());
		fflush(stdout);
		leaf = manystacks_burn;
		while (now() < end)
			for (unsigned int p = 0; p < paths; p++)
				run_path(p);
		return 0;
	}
	if (pipe(fds))
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("pid %d\n", getpid());
	fflush(stdout);
	sigwait(&set, &sig);
	if (!strcmp(argv[1], "sleep")) {
		unsigned int rounds = argc > 3 ? atoi(argv[3]) : 1;

		if (!rounds || rounds * paths > MAX_PATHS)
			return 2;
		leaf = manystacks_sleep;
		for (unsigned int r = 0; r < rounds; r++) {
			if (r)
				sigwait(&set, &sig);
			for (unsigned int p = r * paths; p < (r + 1) * paths; p++)
				run_path(p);
			printf("round %u\n", r + 1);
			fflush(stdout);
		}
	} else {
		leaf = manystacks_read;
		reader_tid = syscall(SYS_gettid);
		pthread_create(&w, NULL, writer, NULL);
		for (unsigned int p = 0; p < paths; p++)
			run_path(p);
		pthread_join(w, NULL);
	}
	printf("done\nunslept %u\n", unslept);
	return 0;
}
