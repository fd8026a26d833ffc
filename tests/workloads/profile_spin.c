// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for profile: a thread that burns CPU in two functions with
 * distinctive names, exactly 3:1 in work (loop iterations, so that neither
 * a busy machine nor a coarse clock changes the ratio), and, on
 * request, a thread spinning in a third function and one that spends its
 * time in the kernel reading /dev/zero.
 *
 * usage: profile_spin [-g] [-s SECONDS] [-t] [-k] [-P CPU]
 *   -g  print "pid PID" and wait for SIGUSR1 before starting (tracer first)
 *   -s  run this long (default 30), then exit; 0: until stopped (lifetime.h)
 *   -t  add a thread spinning in bpfscope_spin_gamma; prints "gamma TID"
 *   -k  add a thread reading /dev/zero in bpfscope_read_zero; prints "reader TID"
 *   -P  pin every thread to this CPU
 *   -b  benchmark mode: every online CPU spins for SECONDS, then it prints
 *       "rate N/s", loop iterations per second, and exits
 * Without -g it prints "pid PID" once the threads run.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lifetime.h"

static volatile int stop;
static volatile unsigned long sink;

/*
 * Spins @units times 20,000 iterations (about 40 us here). Not for a time
 * read from the thread's CPU clock: in the kernel matrix's emulated arm64
 * and 6.12 guests, turns of 3 and 1 timed by it came out 1:1 now and then
 * (most likely that clock jumping while the host had the vCPU off its CPU).
 */
static __attribute__((noinline)) void unit_done(void)
{
	sink++;
}

/*
 * It calls out once a unit so that it is no leaf: the compiler gives a
 * leaf no frame even with -fno-omit-frame-pointer, and the kernel's
 * frame-pointer walk (5.10) then skips its caller, alpha or beta.
 */
static __attribute__((noinline)) void burn(long units)
{
	for (long u = 0; u < units; u++) {
		for (int i = 0; i < 20000; i++)
			sink += i;
		unit_done();
	}
}

__attribute__((noinline)) void bpfscope_spin_alpha(long units)
{
	burn(3 * units);
}

__attribute__((noinline)) void bpfscope_spin_beta(long units)
{
	burn(units);
}

__attribute__((noinline)) void bpfscope_spin_gamma(void)
{
	while (!stop)
		sink++;
}

__attribute__((noinline)) void bpfscope_read_zero(int fd)
{
	static char buf[1 << 20];

	while (!stop)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
}

static volatile unsigned long done_loops;

static void *bench_thread(void *arg)
{
	unsigned long n = 0;

	while (!stop) {
		for (int i = 0; i < 1000; i++)
			sink += i;
		n++;
	}
	__sync_fetch_and_add(&done_loops, n);
	return NULL;
}

/* The throughput a profiler's sampling takes away from: all CPUs busy. */
static int bench(int seconds)
{
	int n = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t[256];
	struct timespec a, b;

	if (n > 256)
		n = 256;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, bench_thread, NULL);
	sleep(seconds);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("rate %.0f/s\n", done_loops / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
	return 0;
}

/*
 * 3:1 in turns of a varying length (25 to 75 units of beta, about 1 to 3
 * ms here): a fixed 4 ms cycle can lock in phase with a sampling
 * timer, and once gave profile 198 samples of alpha and none of beta.
 */
static void *ratio_thread(void *arg)
{
	unsigned int r = 1;

	while (!stop) {
		long units;

		r = r * 1103515245 + 12345;
		units = 25 + (r >> 16) % 51;
		bpfscope_spin_alpha(units);
		bpfscope_spin_beta(units);
	}
	return NULL;
}

static void *gamma_thread(void *arg)
{
	printf("gamma %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	bpfscope_spin_gamma();
	return NULL;
}

static void *reader_thread(void *arg)
{
	int fd = open("/dev/zero", O_RDONLY);

	printf("reader %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	if (fd >= 0)
		bpfscope_read_zero(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	int gate = 0, gamma = 0, reader = 0, cpu = -1, opt, sig;
	double seconds = 30;
	pthread_t threads[3];
	int n = 0;
	sigset_t set;

	while ((opt = getopt(argc, argv, "gs:tkP:b:")) != -1) {
		switch (opt) {
		case 'g': gate = 1; break;
		case 's': seconds = lifetime(optarg); break;
		case 't': gamma = 1; break;
		case 'k': reader = 1; break;
		case 'P': cpu = atoi(optarg); break;
		case 'b': return bench(atoi(optarg));
		default: return 2;
		}
	}
	if (cpu >= 0) {
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(cpu, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
			perror("sched_setaffinity");
			return 1;
		}
	}
	if (gate) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("pid %d\n", getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	pthread_create(&threads[n++], NULL, ratio_thread, NULL);
	if (gamma)
		pthread_create(&threads[n++], NULL, gamma_thread, NULL);
	if (reader)
		pthread_create(&threads[n++], NULL, reader_thread, NULL);
	if (!gate) {
		printf("pid %d\n", getpid());
		fflush(stdout);
	}
	if (isinf(seconds))
		for (;;)
			pause();
	sleep(seconds);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
