// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for offcputime and offwaketime, built with frame pointers.
 * usage: offcpu sleep N MS  -- offcpu_sleeper() sleeps MS ms, N times
 *        offcpu pipe N MS   -- offcpu_reader() blocks reading a pipe that
 *                              offcpu_waker() writes to MS ms later, N times
 *        offcpu twins N MS  -- offcpu_left() and offcpu_right() take turns,
 *                              five calls each, N in all, to have offcpu_nap()
 *                              sleep MS and 2 x MS ms: its registers in the
 *                              sleep are the same from both, its return
 *                              address not
 * Prints "pid PID", waits for SIGUSR1, does the work, prints "done OFF
 * WALL": the microseconds the sleeps, or the reads of the pipe, took, by
 * its own clocks, less its thread's CPU time meanwhile (OFF) and in all
 * (WALL). A slowed machine stretches them as it does the tool's. A guest
 * whose emulator the host stops now and then counts the stops now as CPU
 * time, now as time asleep, as the thread happened to be: what the tool
 * sees lies between the two.
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
static long long blocked_ns, wall_ns;

static long long ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Times one blocking call: its wall time, and that less the thread's CPU
 * time. A macro: the tests expect the call's caller to be main() or the
 * thread's function, and an inlined function would show as a frame.
 */
#define TIMED(call)								\
	do {									\
		long long w_ = ns(CLOCK_MONOTONIC), c_ = ns(CLOCK_THREAD_CPUTIME_ID); \
										\
		call;								\
		w_ = ns(CLOCK_MONOTONIC) - w_;					\
		wall_ns += w_;							\
		blocked_ns += w_ - (ns(CLOCK_THREAD_CPUTIME_ID) - c_);		\
	} while (0)

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

__attribute__((noinline)) void offcpu_nap(int nap_ms)
{
	struct timespec ts = { nap_ms / 1000, (nap_ms % 1000) * 1000000L };

	sys3(SYS_nanosleep, (long)&ts, 0, 0);
}

/* Not tail calls: each stays on the stack below offcpu_nap(), in a frame of the same size. */
static volatile int naps;

__attribute__((noinline)) void offcpu_left(void)
{
	offcpu_nap(ms);
	naps++;
}

__attribute__((noinline)) void offcpu_right(void)
{
	offcpu_nap(2 * ms);
	naps++;
}

static void (*const twins[2])(void) = { offcpu_left, offcpu_right };

static void *reader_thread(void *arg)
{
	for (int i = 0; i < n; i++)
		TIMED(offcpu_reader());
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
		for (int i = 0; i < n; i++)
			TIMED(offcpu_sleeper());
	} else if (!strcmp(argv[1], "twins")) {
		for (int i = 0; i < n; i++)
			TIMED(twins[i / 5 & 1]());
	} else {
		pthread_create(&r, NULL, reader_thread, NULL);
		pthread_create(&w, NULL, waker_thread, NULL);
		pthread_join(r, NULL);
		pthread_join(w, NULL);
	}
	printf("done %lld %lld\n", blocked_ns / 1000, wall_ns / 1000);
	return 0;
}
