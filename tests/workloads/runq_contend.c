// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for runqlat: CPU-bound threads and one periodic sleeper, all
 * pinned to CPU 0, so each wakeup of the sleeper waits behind spinners and
 * spinners wait behind each other for milliseconds.
 *
 * usage: runq_contend [-g] [-s SPINNERS] [-n SLEEPS] [-m SLEEP_MS]
 *   -g  print "pid PID" and wait for SIGUSR1 before starting (tracer first)
 * Prints "sleeper TID sleeps N blocked B" when done: B of the N sleeps put
 * the thread off its CPU. A sleep whose timer fires before the thread got to
 * schedule() (its CPU taken away between arming the timer and sleeping, for
 * longer than the sleep) returns without a wakeup to wait for.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static int sleep_ms = 10, nsleeps = 100;
static pid_t sleeper_tid;
static long sleeper_blocked;

static void *spin(void *arg)
{
	while (!stop)
		;
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, sleep_ms * 1000000L };
	struct rusage before, after;

	sleeper_tid = syscall(SYS_gettid);
	for (int i = 0; i < nsleeps; i++) {
		getrusage(RUSAGE_THREAD, &before);
		nanosleep(&ts, NULL);
		getrusage(RUSAGE_THREAD, &after);
		sleeper_blocked += after.ru_nvcsw != before.ru_nvcsw;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nspin = 3, gate = 0, opt, sig;
	pthread_t spinners[64], s;
	cpu_set_t cpus;
	sigset_t set;

	while ((opt = getopt(argc, argv, "gs:n:m:")) != -1) {
		switch (opt) {
		case 'g': gate = 1; break;
		case 's': nspin = atoi(optarg); break;
		case 'n': nsleeps = atoi(optarg); break;
		case 'm': sleep_ms = atoi(optarg); break;
		default: return 2;
		}
	}
	if (nspin > 64)
		nspin = 64;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		perror("sched_setaffinity");
		return 1;
	}
	if (gate) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("pid %d\n", getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	for (int i = 0; i < nspin; i++)
		pthread_create(&spinners[i], NULL, spin, NULL);
	pthread_create(&s, NULL, sleeper, NULL);
	pthread_join(s, NULL);
	stop = 1;
	for (int i = 0; i < nspin; i++)
		pthread_join(spinners[i], NULL);
	printf("sleeper %d sleeps %d blocked %ld\n", sleeper_tid, nsleeps, sleeper_blocked);
	return 0;
}
