// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for profile --wall, built with frame pointers: its main
 * thread, named wall-worker, spends about MS ms in each state a wall-clock
 * profile tells apart, each in a function of its own; another thread,
 * wall-sleeper, is asleep from before the release to the end.
 * usage: wallclock MS [DEVICE]
 * Prints "pid PID", waits for SIGUSR1, then:
 *   wall_spin()      on CPU (a real-time thread, where it may be)
 *   wall_sleep()     asleep in nanosleep
 *   wall_pipe()      blocked reading a pipe that a thread writes MS ms later
 *   wall_runnable()  runnable: a SCHED_FIFO thread (wall-hog) spins MS ms on its CPU
 *   wall_vfork()     uninterruptible: its vfork child sleeps MS ms, then exits
 *   wall_fault()     blocked in a page fault, in no system call: userfaultfd
 *                    holds the page until a thread fills it MS ms later
 *   wall_disk()      with DEVICE, uninterruptible: O_DIRECT reads of it for
 *                    MS ms (the test makes it slow)
 * and prints, in microseconds by its own clocks: "spin" its CPU time,
 * "sleep", "pipe", "vfork", "fault" and "disk" the blocking's time less its CPU time, and
 * "runnable" the time the kernel says it waited for a CPU (schedstat),
 * "sleeper_runnable" the same of wall-sleeper once woken to exit; then "done".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawsys.h"

static int ms, wake[2], idle[2], uffd;
static volatile int hog_done;
static volatile unsigned long sink;
static long long sleeper_runnable;

static long long ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The time this thread has waited on a run queue (schedstat's second field), in ns. */
static long long run_delay(void)
{
	long long on, delay = -1;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f || fscanf(f, "%lld %lld", &on, &delay) != 2) {
		fprintf(stderr, "wallclock: cannot read /proc/thread-self/schedstat\n");
		exit(1);
	}
	fclose(f);
	return delay;
}

/* A blocking call's time, less the thread's CPU time meanwhile, in us. A macro: no frame of its own. */
#define OFF_US(call)								\
	({									\
		long long w_ = ns(CLOCK_MONOTONIC), c_ = ns(CLOCK_THREAD_CPUTIME_ID); \
		call;								\
		((ns(CLOCK_MONOTONIC) - w_) - (ns(CLOCK_THREAD_CPUTIME_ID) - c_)) / 1000; \
	})

/*
 * On CPU as a real-time thread where it may be: the tool samples each CPU
 * at its rate, so of a thread a loaded machine slices among its other work
 * it counts a draw, not the thread's time (at half a CPU, 99 samples
 * +-10%); a thread that keeps its CPU is counted its time. (The kernel
 * keeps 5% of each second from it: that wait is runnable, and timed.)
 */
__attribute__((noinline)) long long wall_spin(void)
{
	struct sched_param rt = { .sched_priority = 1 }, other = { 0 };
	int fifo = !sched_setscheduler(0, SCHED_FIFO, &rt);
	long long c = ns(CLOCK_THREAD_CPUTIME_ID), until = ns(CLOCK_MONOTONIC) + ms * 1000000LL;

	while (ns(CLOCK_MONOTONIC) < until)
		sink++;
	c = (ns(CLOCK_THREAD_CPUTIME_ID) - c) / 1000;
	if (fifo)
		sched_setscheduler(0, SCHED_OTHER, &other);
	return c;
}

__attribute__((noinline)) long long wall_sleep(void)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return OFF_US(sys3(SYS_nanosleep, (long)&ts, 0, 0));
}

static void *writer(void *arg)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	(void)arg;
	prctl(PR_SET_NAME, "wall-writer");
	nanosleep(&ts, NULL);
	if (write(wake[1], "x", 1) != 1)
		exit(1);
	return NULL;
}

__attribute__((noinline)) long long wall_pipe(void)
{
	char c;
	long long us;
	pthread_t t;

	pthread_create(&t, NULL, writer, NULL);
	us = OFF_US(sys3(SYS_read, wake[0], (long)&c, 1));
	pthread_join(t, NULL);
	return us;
}

static void *hog(void *arg)
{
	long long until = ns(CLOCK_MONOTONIC) + ms * 1000000LL;

	(void)arg;
	prctl(PR_SET_NAME, "wall-hog");
	while (ns(CLOCK_MONOTONIC) < until)
		sink++;
	hog_done = 1;
	return NULL;
}

/* Runnable behind a real-time thread on its own CPU: the time the kernel says it waited. */
__attribute__((noinline)) long long wall_runnable(void)
{
	struct sched_param prio = { .sched_priority = 1 };
	cpu_set_t one, all;
	pthread_attr_t a;
	long long before;
	pthread_t t;
	int err;

	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	pthread_attr_init(&a);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_FIFO);
	pthread_attr_setschedparam(&a, &prio);
	pthread_attr_setaffinity_np(&a, sizeof(one), &one);
	before = run_delay();
	err = pthread_create(&t, &a, hog, NULL);
	if (err) {
		fprintf(stderr, "wallclock: cannot start a SCHED_FIFO thread: %s\n", strerror(err));
		exit(1);
	}
	while (!hog_done)
		sink++;
	before = (run_delay() - before) / 1000;
	pthread_join(t, NULL);
	sched_setaffinity(0, sizeof(all), &all);
	return before;
}

__attribute__((noinline)) long long wall_vfork(void)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	long long us;
	long child;

	/*
	 * The parent waits uninterruptibly until its child exits. The system
	 * call made here, not by libc's vfork, which keeps its return address
	 * in a register the unwinder does not follow (issue: __vfork's CFI);
	 * the child makes only system calls, on the stack it shares.
	 */
#ifdef SYS_vfork
	us = OFF_US(child = sys3(SYS_vfork, 0, 0, 0);
		    if (!child) {
			    sys3(SYS_nanosleep, (long)&ts, 0, 0);
			    sys3(SYS_exit, 0, 0, 0);
		    });
#else
	us = OFF_US(child = vfork();
		    if (!child) {
			    nanosleep(&ts, NULL);
			    _exit(0);
		    });
#endif
	waitpid(child, NULL, 0);
	return us;
}

static void *filler(void *arg)
{
	struct uffdio_zeropage *z = arg;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	prctl(PR_SET_NAME, "wall-filler");
	nanosleep(&ts, NULL);
	/* Fills the page and wakes the thread faulting on it. */
	if (ioctl(uffd, UFFDIO_ZEROPAGE, z))
		exit(1);
	return NULL;
}

/*
 * A fault's registers hold its error code where a system call's hold the
 * number (x86's orig_ax) until the kernel takes it: a read of a missing
 * page is 4, stat(2)'s number. The tool must not name a system call here.
 */
__attribute__((noinline)) long long wall_fault(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage z;
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p;
	long long us;
	pthread_t t;

	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (p == MAP_FAILED || uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("wallclock: userfaultfd");
		exit(1);
	}
	reg.range = (struct uffdio_range){ (unsigned long)p, page };
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("wallclock: UFFDIO_REGISTER");
		exit(1);
	}
	z = (struct uffdio_zeropage){ .range = reg.range };
	pthread_create(&t, NULL, filler, &z);
	us = OFF_US((void)p[0]);
	pthread_join(t, NULL);
	close(uffd);
	munmap((void *)p, page);
	return us;
}

__attribute__((noinline)) long long wall_disk(const char *dev)
{
	long long until = ns(CLOCK_MONOTONIC) + ms * 1000000LL, us = 0;
	void *buf;
	long n;
	int fd;

	fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		perror(dev);
		exit(1);
	}
	while (ns(CLOCK_MONOTONIC) < until) {
		us += OFF_US(n = sys3(SYS_read, fd, (long)buf, 4096));
		if (n == 0)
			lseek(fd, 0, SEEK_SET);
		else if (n != 4096)
			exit(1);
	}
	free(buf);
	close(fd);
	return us;
}

/*
 * Asleep in read() until main is done; then it waits for a CPU to exit, which
 * on a busy machine can take longer than a sample: that wait is measured.
 */
static void *sleeper(void *arg)
{
	long long before;
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "wall-sleeper");
	before = run_delay();
	if (sys3(SYS_read, idle[0], (long)&c, 1) != 1)
		return NULL;
	sleeper_runnable = (run_delay() - before) / 1000;
	return NULL;
}

int main(int argc, char **argv)
{
	long long spin, slept, piped, runnable, vforked, faulted, disk = 0;
	pthread_t s;
	sigset_t set;
	int sig;

	if (argc < 2 || argc > 3 || (ms = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: wallclock MS [DEVICE]\n");
		return 2;
	}
	prctl(PR_SET_NAME, "wall-worker");
	if (pipe(wake) || pipe(idle))
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pthread_create(&s, NULL, sleeper, NULL);
	printf("pid %d\n", getpid());
	fflush(stdout);
	sigwait(&set, &sig);

	spin = wall_spin();
	slept = wall_sleep();
	piped = wall_pipe();
	runnable = wall_runnable();
	vforked = wall_vfork();
	faulted = wall_fault();
	if (argc == 3)
		disk = wall_disk(argv[2]);
	if (write(idle[1], "x", 1) != 1)
		return 1;
	pthread_join(s, NULL);
	printf("spin %lld\nsleep %lld\npipe %lld\nrunnable %lld\nvfork %lld\nfault %lld\n",
	       spin, slept, piped, runnable, vforked, faulted);
	if (argc == 3)
		printf("disk %lld\n", disk);
	printf("sleeper_runnable %lld\n", sleeper_runnable);
	puts("done");
	return 0;
}
