// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for offcputime and offwaketime, built with frame pointers.
 * usage: offcpu sleep N MS  -- offcpu_sleeper() sleeps MS ms, N times
 *        offcpu pipe N MS   -- offcpu_reader() blocks reading a pipe that
 *                              offcpu_waker() writes to MS ms later, N times
 * Prints "pid PID", waits for SIGUSR1, does the work, prints "done US":
 * the microseconds it spent off its CPU in the sleeps, or blocked on the
 * pipe, by its own clocks: the time they took less its thread's CPU time
 * meanwhile. A slowed machine stretches them as it does the tool's; a guest
 * whose emulator the host stops for a while has its thread on its CPU all
 * that while, as the guest's kernel (and the tool) sees it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rawsys.h"

static int n, ms, fds[2];
static long long blocked_ns;

/* Wall time less the calling thread's CPU time, in ns: its time off the CPU. */
static long long off_ns(void)
{
	struct timespec ts, cpu;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	return (ts.tv_sec - cpu.tv_sec) * 1000000000LL + ts.tv_nsec - cpu.tv_nsec;
}

__attribute__((noinline)) void offcpu_sleeper(void)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	sys3(SYS_nanosleep, (long)&ts, 0, 0);
}

__attribute__((noinline)) void offcpu_reader(void)
{
	char c;

	if (sys3(SYS_read, fds[0], (long)&c, 1) != 1)
		exit(1);
}

__attribute__((noinline)) void offcpu_waker(void)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	char c = 'x';

	nanosleep(&ts, NULL);
	if (sys3(SYS_write, fds[1], (long)&c, 1) != 1)
		exit(1);
}

static void *reader_thread(void *arg)
{
	for (int i = 0; i < n; i++) {
		long long t0 = off_ns();

		offcpu_reader();
		blocked_ns += off_ns() - t0;
	}
	return NULL;
}

static void *waker_thread(void *arg)
{
	for (int i = 0; i < n; i++)
		offcpu_waker();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t r, w;
	sigset_t set;
	int sig;

	if (argc != 4)
		return 2;
	n = atoi(argv[2]);
	ms = atoi(argv[3]);
	if (pipe(fds))
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("pid %d\n", getpid());
	fflush(stdout);
	sigwait(&set, &sig);

	if (!strcmp(argv[1], "sleep")) {
		for (int i = 0; i < n; i++) {
			long long t0 = off_ns();

			offcpu_sleeper();
			blocked_ns += off_ns() - t0;
		}
	} else {
		pthread_create(&r, NULL, reader_thread, NULL);
		pthread_create(&w, NULL, waker_thread, NULL);
		pthread_join(r, NULL);
		pthread_join(w, NULL);
	}
	printf("done %lld\n", blocked_ns / 1000);
	return 0;
}
