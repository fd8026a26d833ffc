// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for runqlat: CPU-bound threads and one periodic sleeper, all
 * pinned to CPU 0, so each wakeup of the sleeper waits behind spinners and
 * spinners wait behind each other for milliseconds.
 *
 * usage: runq_contend [-g] [-M] [-s SPINNERS] [-n SLEEPS] [-m SLEEP_MS]
 *        runq_contend -F [-g] [-M] [-n ROUNDS]
 *   -g  print "pid PID" and wait for SIGUSR1 before starting (tracer first)
 *   -M  at the end, a thread of its own (new to a tracer) sleeps 1 ms three
 *       times and ends; prints "marker TID": once a tracer has counted it,
 *       it has counted all that came before
 *   -F  on CPU 0, a SCHED_FIFO 1 spinner and a SCHED_FIFO 2 hog, which
 *       spins 10 ms (by the clock) then sleeps 5 ms, ROUNDS times (default
 *       266, 4 s): each round takes the CPU from the spinner, which waits
 *       10 ms runnable. Only the kernel's threads of higher priority and
 *       its share for normal tasks (the fair server, or RT throttling:
 *       sched_rt_runtime_us, 50 ms a second) take CPU 0 from them. The
 *       main thread runs on the other CPUs. Prints "hog TID rounds R" and "spinner TID ten N near8
 *       A near16 B merged M": N of the spinner's own waits took
 *       8.192-16.384 ms by its count (runqlat's 8-16 ms bucket), A and B
 *       of them within NEAR_NS above either bound, where the tracer's
 *       reading (from the switch out to the switch in, a few microseconds
 *       inside the spinner's) may fall in the bucket below; M waits a
 *       tracer counts on their own were one gap to the spinner's clock
 *       (preempted again before it got back to reading it).
 * Prints "sleeper TID sleeps N blocked B preempted P" when done: B of the N
 * sleeps put the thread off its CPU, and P times a spinner took it from the
 * thread (each a wait in the run queue a tracer counts too). A sleep whose timer fires before the thread got to
 * schedule() (its CPU taken away between arming the timer and sleeping, for
 * longer than the sleep) returns without a wakeup to wait for. Then "long
 * L": the spinners' waits and the sleeper's sleeps that took 512 ms or more
 * by their own clocks (a machine that held them off their CPU that long).
 *
 * A spinner's waits are the gaps in its own reading of the clock with a
 * preemption (its thread's involuntary context switches) in them: a gap
 * without one is an interrupt, or the hypervisor running another guest,
 * which no run queue saw. Each is as long as the scheduler says the thread
 * waited in it (schedstat), where the kernel has that.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LONG_NS		(512 * 1000000LL)
#define TEN_LOW_NS	(8192 * 1000LL)
#define TEN_HIGH_NS	(16384 * 1000LL)
#define NEAR_NS		(200 * 1000LL)

static volatile int stop;
static int sleep_ms = 10, nsleeps = 100;
static pid_t sleeper_tid;
static long sleeper_blocked, sleeper_preempted, sleeper_long;

/*
 * The time the scheduler says the calling thread waited runnable (its
 * schedstat's second field, ns), or -1. A gap in a spinner's clock is longer
 * than the wait in it by what else held the CPU before the switch (an
 * interrupt, the hypervisor): this is the wait alone, as a tracer of
 * switches reads it.
 */
static long long run_delay(int fd)
{
	char buf[96];
	long long run, delay;
	ssize_t n;

	if (fd < 0 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return -1;
	buf[n] = 0;
	return sscanf(buf, "%lld %lld", &run, &delay) == 2 ? delay : -1;
}

/* A thread's own count of its waits (see the spinners' below). */
struct waits {
	pid_t tid;
	long ten, near8, near16, lng, merged;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long preemptions(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

static void count_wait(struct waits *w, long long ns)
{
	if (ns >= LONG_NS)
		w->lng++;
	if (ns >= TEN_LOW_NS && ns < TEN_HIGH_NS) {
		w->ten++;
		w->near8 += ns < TEN_LOW_NS + NEAR_NS;
	}
	w->near16 += ns >= TEN_HIGH_NS && ns < TEN_HIGH_NS + NEAR_NS;
}

/* Spins until told to stop, counting its waits (struct waits *arg). */
static void *spin(void *arg)
{
	struct waits *w = arg;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY);
	long long prev, t, delay;
	long seen;

	seen = preemptions();
	delay = run_delay(fd);
	__atomic_store_n(&w->tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	prev = now_ns();
	while (!stop) {
		t = now_ns();
		/* Off its CPU, or an interrupt: a context switch tells. */
		if (t - prev >= 5000) {
			long n = preemptions();

			if (n != seen) {
				long long d = run_delay(fd);

				count_wait(w, d >= 0 ? d - delay : t - prev);
				delay = d;
			}
			/*
			 * Preempted again before it read the clock (switched
			 * in and out within a return to user space): two or
			 * more waits to a tracer, one gap to this clock.
			 */
			if (n - seen > 1)
				w->merged += n - seen - 1;
			seen = n;
		}
		prev = t;
	}
	close(fd);
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, sleep_ms * 1000000L };
	struct rusage before, after;

	sleeper_tid = syscall(SYS_gettid);
	for (int i = 0; i < nsleeps; i++) {
		long long t = now_ns();

		getrusage(RUSAGE_THREAD, &before);
		nanosleep(&ts, NULL);
		getrusage(RUSAGE_THREAD, &after);
		sleeper_blocked += after.ru_nvcsw != before.ru_nvcsw;
		sleeper_long += now_ns() - t >= LONG_NS;
	}
	sleeper_preempted = preemptions();
	return NULL;
}

static int rounds = 266;
static pid_t hog_tid;

/* -F: ROUNDS of 10 ms on CPU 0, 5 ms apart; then the spinner stops. */
static void *hog(void *arg)
{
	struct timespec gap = { 0, 5 * 1000000L };

	hog_tid = syscall(SYS_gettid);
	for (int i = 0; i < rounds; i++) {
		long long end = now_ns() + 10 * 1000000LL;

		while (now_ns() < end)
			;
		nanosleep(&gap, NULL);
	}
	stop = 1;
	return NULL;
}

static void *marker(void *arg)
{
	struct timespec ts = { 0, 1000000L };

	*(pid_t *)arg = syscall(SYS_gettid);
	for (int i = 0; i < 3; i++)
		nanosleep(&ts, NULL);
	return NULL;
}

/* A thread on CPU 0 at SCHED_FIFO @prio. */
static int start_fifo(pthread_t *t, int prio, void *(*fn)(void *), void *arg)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t attr;
	cpu_set_t cpus;
	int err;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (err)
		fprintf(stderr, "runq_contend: cannot start a SCHED_FIFO %d thread (root?)\n", prio);
	return err;
}

/* -F: the spinner and the hog on CPU 0, the main thread on the others. */
static int fifo_rounds(void)
{
	struct waits w = {};
	pthread_t s, h;

	if (start_fifo(&s, 1, spin, &w))
		return 1;
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	if (start_fifo(&h, 2, hog, NULL)) {
		stop = 1;
		pthread_join(s, NULL);
		return 1;
	}
	pthread_join(h, NULL);
	pthread_join(s, NULL);
	printf("hog %d rounds %d\n", hog_tid, rounds);
	printf("spinner %d ten %ld near8 %ld near16 %ld merged %ld\n", w.tid, w.ten, w.near8,
	       w.near16, w.merged);
	return 0;
}

int main(int argc, char **argv)
{
	int nspin = 3, gate = 0, fifo = 0, mark = 0, opt, sig, err = 0;
	struct waits spun[64] = {};
	pthread_t spinners[64], s;
	cpu_set_t cpus;
	sigset_t set;
	long lng;

	while ((opt = getopt(argc, argv, "gMFs:n:m:")) != -1) {
		switch (opt) {
		case 'g': gate = 1; break;
		case 'M': mark = 1; break;
		case 'F': fifo = 1; break;
		case 's': nspin = atoi(optarg); break;
		case 'n': nsleeps = rounds = atoi(optarg); break;
		case 'm': sleep_ms = atoi(optarg); break;
		default: return 2;
		}
	}
	if (nspin > 64)
		nspin = 64;

	/* -F: CPU 0 is the FIFO threads'; else everything is on it. */
	if (fifo) {
		if (sched_getaffinity(0, sizeof(cpus), &cpus)) {
			perror("sched_getaffinity");
			return 1;
		}
		CPU_CLR(0, &cpus);
		if (!CPU_COUNT(&cpus)) {
			fprintf(stderr, "runq_contend: -F needs a CPU besides CPU 0\n");
			return 1;
		}
	} else {
		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
	}
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
	if (fifo) {
		err = fifo_rounds();
	} else {
		for (int i = 0; i < nspin; i++)
			pthread_create(&spinners[i], NULL, spin, &spun[i]);
		pthread_create(&s, NULL, sleeper, NULL);
		pthread_join(s, NULL);
		stop = 1;
		lng = sleeper_long;
		for (int i = 0; i < nspin; i++) {
			pthread_join(spinners[i], NULL);
			lng += spun[i].lng;
		}
		printf("sleeper %d sleeps %d blocked %ld preempted %ld\n", sleeper_tid, nsleeps,
		       sleeper_blocked, sleeper_preempted);
		printf("long %ld\n", lng);
	}
	if (!err && mark) {
		pid_t tid = 0;

		pthread_create(&s, NULL, marker, &tid);
		pthread_join(s, NULL);
		printf("marker %d\n", tid);
	}
	return err;
}
