// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for tests/hostile.bats: what an unprivileged user can make a
 * traced process do to a root tool. Each mode prints "pid PID" first.
 * usage: hostile jit SECONDS            -- spins in anonymous executable code
 *                                          ("jit ADDR SIZE": where it is)
 *        hostile lib LIB SECONDS        -- spins in LIB's symlib_spin(), then exits
 *        hostile mapexec FILE           -- maps FILE executable ("addr ADDR"), waits
 *        hostile comm NAME SECONDS      -- renames itself NAME (before "pid"), spins
 *        hostile exec PROG ARG...       -- spins until SIGUSR1, then becomes PROG
 *        hostile forks N MS             -- N processes in turn, each spinning MS ms
 *        hostile execs PROG ARG...      -- runs PROG ARG... (its output to
 *                                          /dev/null) again and again, one
 *                                          at a time, until stopped: execs
 *                                          as fast as the machine allows
 *        hostile maplibs N LIB DIR      -- loads N copies of LIB made in DIR
 *                                          ("lib I ADDR": each one's symlib_gamma)
 *        hostile randoms N               -- the first N values of glibc's random()
 *                                          unseeded, one a line: what a program
 *                                          that never seeds it draws
 * SECONDS 0 is until the test stops it (lifetime.h).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lifetime.h"

static volatile unsigned long sink;
static volatile sig_atomic_t go_on;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void hostile_named(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		sink++;
}

static void on_usr1(int sig)
{
	go_on = 1;
}

/* Until the test says to exec: a loaded machine may take seconds to start its tool. */
__attribute__((noinline)) void hostile_before_exec(void)
{
	double end = now() + LIFETIME_MAX;

	while (!go_on && now() < end)
		sink++;
}

__attribute__((noinline)) void hostile_child(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		sink++;
}

static int jit(double seconds)
{
#if defined(__x86_64__)
	/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
	static const unsigned char code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*fn)(unsigned long);
	double end = now() + seconds;

	if (page == MAP_FAILED)
		return 1;
	memcpy(page, code, sizeof(code));
	fn = (void (*)(unsigned long))page;
	printf("jit %lx %zx\n", (unsigned long)page, sizeof(code));
	fflush(stdout);
	while (now() < end)
		fn(1000000);
	return 0;
#else
	fprintf(stderr, "hostile jit: x86-64 code only\n");
	return 2;
#endif
}

static int copy(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	struct stat st;
	int ok = in >= 0 && out >= 0 && !fstat(in, &st) &&
		 sendfile(out, in, NULL, st.st_size) == st.st_size;

	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	/* Before "pid": a test may signal as soon as it reads it, or trace it by its name. */
	signal(SIGUSR1, on_usr1);
	if (!strcmp(mode, "comm") && argc == 4)
		prctl(PR_SET_NAME, argv[2]);
	printf("pid %d\n", getpid());
	fflush(stdout);
	if (!strcmp(mode, "jit") && argc == 3)
		return jit(lifetime(argv[2]));
	if (!strcmp(mode, "lib") && argc == 4) {
		void *h = dlopen(argv[2], RTLD_NOW);
		void (*spin)(double) = h ? (void (*)(double))dlsym(h, "symlib_spin") : NULL;

		if (!spin)
			return 1;
		spin(lifetime(argv[3]));
		return 0;
	}
	if (!strcmp(mode, "mapexec") && argc == 3) {
		int fd = open(argv[2], O_RDONLY);
		struct stat st;
		void *p;

		if (fd < 0 || fstat(fd, &st))
			return 1;
		p = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return 1;
		printf("addr %lx\n", (unsigned long)p + 64);
		fflush(stdout);
		pause();
		return 0;
	}
	if (!strcmp(mode, "randoms") && argc == 3) {
		for (int i = atoi(argv[2]); i > 0; i--)
			printf("%lx\n", (unsigned long)random());
		return 0;
	}
	if (!strcmp(mode, "comm") && argc == 4) {
		hostile_named(lifetime(argv[3]));
		return 0;
	}
	if (!strcmp(mode, "exec") && argc >= 3) {
		hostile_before_exec();
		if (!go_on)
			return 1;
		execv(argv[2], argv + 2);
		return 1;
	}
	if (!strcmp(mode, "forks") && argc == 4) {
		int n = atoi(argv[2]);

		for (int i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid == 0) {
				hostile_child(atof(argv[3]) / 1000);
				_exit(0);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				return 1;
		}
		printf("done\n");
		return 0;
	}
	if (!strcmp(mode, "execs") && argc >= 3) {
		int null = open("/dev/null", O_WRONLY);

		lifetime("0");
		if (null < 0)
			return 1;
		for (;;) {
			pid_t pid = fork();

			if (pid == 0) {
				dup2(null, STDOUT_FILENO);
				execv(argv[2], argv + 2);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				return 1;
		}
	}
	if (!strcmp(mode, "maplibs") && argc == 5) {
		int n = atoi(argv[2]);

		for (int i = 0; i < n; i++) {
			char path[4096];
			void *h, *f;

			snprintf(path, sizeof(path), "%s/libcopy%d.so", argv[4], i);
			if (copy(argv[3], path) || !(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) ||
			    !(f = dlsym(h, "symlib_gamma")))
				return 1;
			printf("lib %d %lx\n", i, (unsigned long)f);
		}
		printf("ready\n");
		fflush(stdout);
		pause();
		return 0;
	}
	fprintf(stderr, "hostile: unknown mode or arguments\n");
	return 2;
}
