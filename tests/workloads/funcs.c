// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for funclatency: functions whose latencies are known.
 * usage: funcs   -- prints "pid PID", waits for SIGUSR1, then calls
 *   slow_func() 20 times (sleeps 10 ms), fast_func() 1000 times (returns at
 *   once), recurse(4) 10 times (5 nested calls, 1 ms sleep at the bottom),
 *   jumpy() 40 times leaving it by longjmp() and 20 times returning from
 *   it after 1 ms, reads a pipe 100 times, and locks and unlocks a pthread
 *   mutex 200 times; prints "slow US" for each slow_func() call as timed
 *   here (a starved machine oversleeps), "fast N" for the fast_func() calls
 *   that took 2^20 ns or more timed here (a preemption inside the call),
 *   "slept US" for its 50 nanosleep() calls' time together, each timed
 *   around its call, and "done".
 * funcs deep -- once released, descend(40): 41 nested calls; the innermost
 *   prints "bottom" and waits until the test kills it (or its parent ends),
 *   so none returns.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "lifetime.h"

__attribute__((noinline)) void slow_func(void)
{
	struct timespec ts = { 0, 10 * 1000000L };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) int fast_func(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

__attribute__((noinline)) int recurse(int n)
{
	struct timespec ts = { 0, 1000000L };

	if (n == 0) {
		nanosleep(&ts, NULL);
		return 0;
	}
	return recurse(n - 1) + 1;
}

/* Calls itself @n deep, and says so at the bottom, where it waits to be killed. */
__attribute__((noinline)) int descend(int n)
{
	if (n == 0) {
		printf("bottom\n");
		fflush(stdout);
		return pause();	/* no handler: only a signal that kills it ends this */
	}
	return descend(n - 1) + 1;
}

static jmp_buf out;

/* Leaves by longjmp() when told to: an entry with no return, as C++ exceptions make too. */
__attribute__((noinline)) void jumpy(int bail)
{
	struct timespec ts = { 0, 1000000L };

	if (bail)
		longjmp(out, 1);
	nanosleep(&ts, NULL);
}

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	int fds[2], sig, sum = 0;
	sigset_t set;
	char c = 'x';

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (pipe(fds))
		return 1;
	printf("pid %d\n", getpid());
	fflush(stdout);
	sigwait(&set, &sig);
	if (argc > 1) {
		lifetime("0");	/* until stopped */
		return descend(40);
	}

	long slow_us[20], slept_us = 0, fast_slow = 0;
	struct timespec a, b;

	for (int i = 0; i < 20; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		slow_func();
		clock_gettime(CLOCK_MONOTONIC, &b);
		slow_us[i] = (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
		slept_us += slow_us[i];
	}
	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		sum = fast_func(sum);
		clock_gettime(CLOCK_MONOTONIC, &b);
		fast_slow += (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) >= 1L << 20;
	}
	for (int i = 0; i < 10; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		sum += recurse(4);
		clock_gettime(CLOCK_MONOTONIC, &b);
		slept_us += (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
	}
	for (int i = 0; i < 40; i++)
		if (!setjmp(out))
			jumpy(1);
	for (int i = 0; i < 20; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		jumpy(0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		slept_us += (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
	}
	for (int i = 0; i < 100; i++)
		if (write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1)
			return 1;
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
	}
	for (int i = 0; i < 20; i++)
		printf("slow %ld\n", slow_us[i]);
	printf("fast %ld\n", fast_slow);
	printf("slept %ld\n", slept_us);
	printf("done %d\n", sum);
	return 0;
}
