// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test workload for the CFI unwinder, built like most of a distribution:
 * -O2 without frame pointers. Chains of distinctively named functions,
 * each calling the next (none inlined, none a tail call).
 * usage: nofp spin SECONDS    -- main, nofp_level1..3, nofp_leaf burns CPU
 *        nofp lib SECONDS     -- main, nofp_to_lib, then nofplib_outer, _inner
 *                                and _leaf in libnofplib.so
 *        nofp dlopen LIB SECONDS -- nofp_level1's chain until SIGUSR1, then
 *                                dlopen()s LIB (a copy of libnofplib.so),
 *                                prints "loaded" and calls its nofplib_outer
 *                                from nofp_dlopened
 *        nofp many LIB DIR N MS [wait] -- copies LIB (libpadlib.so) to DIR/libI.so
 *                                for I < N, then forks N + N / 10 processes
 *                                in turn, process I to dlopen() lib I % N,
 *                                call its nofplib_outer from nofp_dlopened
 *                                until it has had MS ms of CPU time (its
 *                                thread's clock: as many samples each, however
 *                                busy the machine; 5 MS for those run again)
 *                                and exit; prints "lib I pid PID" for each;
 *                                N / 10 of them from the middle run again
 *                                (with "wait": once it has printed "again?"
 *                                and had SIGUSR1); removes the copies, then
 *                                prints "done"
 *        nofp swap LIB1 LIB2 SECONDS -- the same with LIB1 for SECONDS, which
 *                                it then dlclose()s, then LIB2 (libswaplib.so,
 *                                swaplib_outer...) for SECONDS; prints each
 *                                outer function's address as it starts.
 *                                SECONDS 0: LIB1 until SIGUSR1, LIB2 until
 *                                stopped
 *        nofp signal SECONDS  -- nofp_waiter spins; a SIGALRM handler every
 *                                20 ms burns 10 ms in nofp_handler_leaf
 *        nofp pipe N MS       -- after SIGUSR1: a reader blocks N times in
 *                                nofp_reader_leaf's read(), a writer wakes it
 *                                from nofp_writer_leaf after MS ms; "done"
 *        nofp nap N MS        -- sleeps N times MS ms in nofp_nap_leaf, under
 *                                nofp_level1 (short-lived processes, offcputime)
 *        nofp inline SECONDS  -- nofp_inline_host, into which nofp_inl_a and
 *                                nofp_inl_b are inlined; the latter spins,
 *                                half itself, half in nofp_leaf
 *        nofp deep N SECONDS  -- nofp_deep recursing N frames deep (N >= 1),
 *                                then nofp_leaf
 *        nofp fp SECONDS      -- nofp_fp_top, then nofp_fp_outer and
 *                                nofp_fp_inner (fpcode.c: frame pointers, no
 *                                CFI), then nofp_leaf
 *        nofp nocfi SECONDS zero|stack -- nofp_nocfi_top, nofp_nocfi_mid
 *                                (nocfi.c: no CFI, no frame pointer; its
 *                                frame-pointer register zero, or pointing at a
 *                                fake frame record on the stack), then
 *                                nofp_nocfi_leaf spins
 *        nofp plt SECONDS     -- nofp_plt_loop calls libnofplib's nofplib_tick
 *                                through the PLT, over and over
 *        nofp maps N SECONDS  -- maps N executable pages apart (N mappings,
 *                                below the libraries, as JIT code is), then
 *                                spins as nofp spin
 *        nofp realign SECONDS -- nofp_realign_top, nofp_realigned (a frame
 *                                GCC realigns, its CFA kept in the frame),
 *                                then nofp_leaf
 *        nofp crypto SECONDS  -- nofp_crypto_loop calls AES_encrypt of the
 *                                system's libcrypto.so.3 (OpenSSL's assembly,
 *                                its CFA kept in the frame too), dlopen()ed;
 *                                exits 3 when there is none
 * Prints "pid PID" first (SIGUSR1 is caught by then). SECONDS 0 is until
 * the test stops it (lifetime.h).
 */
#include <alloca.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../workloads/lifetime.h"

void nofplib_outer(double until);
unsigned long nofplib_tick(void);
void nofp_fp_outer(double until);
void nofp_nocfi_mid(double until, unsigned long junk);

static volatile unsigned long sink;
static volatile sig_atomic_t released;
static int fds[2], rounds, ms;

static void on_usr1(int sig)
{
	released = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The calling thread's CPU time, in seconds. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define NOFP __attribute__((noinline, noclone))

NOFP void nofp_leaf(double until)
{
	while (now() < until)
		sink++;
}

/* until < 0: sleeps -until times ms ms instead of spinning. */
NOFP void nofp_nap_leaf(double until)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	for (int i = 0; i < -until; i++)
		nanosleep(&ts, NULL);
	sink++;
}

NOFP void nofp_level3(double until)
{
	if (until < 0)
		nofp_nap_leaf(until);
	else
		nofp_leaf(until);
	sink++;
}

NOFP void nofp_level2(double until)
{
	nofp_level3(until);
	sink++;
}

NOFP void nofp_level1(double until)
{
	nofp_level2(until);
	sink++;
}

/* Always inlined: only DWARF (the build's -g) knows these calls. */
static inline __attribute__((always_inline)) void nofp_inl_b(double until)
{
	while (now() < until) {
		double half = now() + 0.001;

		nofp_leaf(half);
		half += 0.001;
		while (now() < half)
			sink++;
	}
}

static inline __attribute__((always_inline)) void nofp_inl_a(double until)
{
	nofp_inl_b(until);
	sink++;
}

NOFP void nofp_inline_host(double until)
{
	nofp_inl_a(until);
	sink++;
}

/* Returns its depth, checked by main: the recursion is real, not folded away. */
NOFP unsigned long nofp_deep(unsigned long n, double until)
{
	unsigned long d;

	if (n <= 1) {
		nofp_leaf(until);
		d = 1;
	} else {
		d = nofp_deep(n - 1, until) + 1;
	}
	sink++;
	return d;
}

NOFP void nofp_fp_top(double until)
{
	nofp_fp_outer(until);
	sink++;
}

NOFP void nofp_nocfi_leaf(double until)
{
	while (now() < until)
		sink++;
}

NOFP void nofp_nocfi_top(double until, unsigned long junk)
{
	nofp_nocfi_mid(until, junk);
	sink++;
}

NOFP void nofp_plt_loop(double until)
{
	while (now() < until)
		for (int i = 0; i < 1000; i++)
			nofplib_tick();
	sink++;
}

NOFP void nofp_to_lib(double until)
{
	nofplib_outer(until);
	sink++;
}

NOFP void nofp_dlopened(void (*outer)(double), double until)
{
	outer(until);
	sink++;
}

/*
 * A 64-byte aligned local beside one of variable size: GCC realigns the
 * frame through another register and describes the CFA as a word saved in
 * the frame, *(rbp - 8) (x86-64; other targets keep a plain frame).
 */
NOFP void nofp_realigned(double until, int n)
{
	volatile unsigned long wide[8] __attribute__((aligned(64)));
	volatile unsigned long *v = alloca(n);

	wide[0] = n;
	v[0] = wide[0];
	nofp_leaf(until);
	sink += v[0] + wide[0];
}

NOFP void nofp_realign_top(double until, int n)
{
	nofp_realigned(until, n);
	sink++;
}

typedef void aes_fn(const unsigned char *in, unsigned char *out, const void *key);

NOFP void nofp_crypto_loop(double until, aes_fn *encrypt, const void *key)
{
	unsigned char block[16] = { 0 };

	while (now() < until)
		for (int i = 0; i < 1000; i++)
			encrypt(block, block, key);
	sink += block[0];
}

NOFP void nofp_handler_leaf(double until)
{
	while (now() < until)
		sink++;
}

NOFP void nofp_handler(int sig)
{
	nofp_handler_leaf(now() + 0.010);
	sink++;
}

NOFP void nofp_waiter(double until)
{
	while (now() < until)
		sink++;
}

NOFP void nofp_reader_leaf(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		exit(1);
	sink++;
}

NOFP void nofp_reader_mid(void)
{
	nofp_reader_leaf();
	sink++;
}

NOFP void nofp_writer_leaf(void)
{
	char c = 'x';

	usleep(ms * 1000);
	if (write(fds[1], &c, 1) != 1)
		exit(1);
	sink++;
}

NOFP void nofp_writer_mid(void)
{
	nofp_writer_leaf();
	sink++;
}

static void *reader(void *arg)
{
	for (int i = 0; i < rounds; i++)
		nofp_reader_mid();
	return NULL;
}

static void *writer(void *arg)
{
	for (int i = 0; i < rounds; i++)
		nofp_writer_mid();
	return NULL;
}

/* Copies file @from to a new file @to. */
static int copy(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wbx");
	size_t n;
	int err = !in || !out;

	while (!err && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		err = fwrite(buf, 1, n, out) != n;
	if (in)
		fclose(in);
	if (out && fclose(out))
		err = 1;
	return err;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	/* The modes whose SECONDS is their first argument. */
	static const char *const timed[] = { "spin", "inline", "lib", "fp", "nocfi", "realign",
					     "crypto", "plt", "signal" };
	double secs = 3;

	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++)
		if (!strcmp(mode, timed[i]) && argc > 2)
			secs = lifetime(argv[2]);
	/* Before "pid": a test may signal as soon as it reads it. */
	if (!strcmp(mode, "pipe")) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
	} else {
		signal(SIGUSR1, on_usr1);
	}
	printf("pid %d\n", getpid());
	fflush(stdout);
	if (!strcmp(mode, "maps") && argc == 4) {
		long page = sysconf(_SC_PAGESIZE), n = atol(argv[2]);
		/* A page apart: neighbours with the same rights would be one mapping. */
		char *area = mmap(NULL, 2 * n * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (area == MAP_FAILED)
			return 1;
		for (long i = 0; i < n; i++)
			if (mmap(area + 2 * i * page, page, PROT_READ | PROT_EXEC,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
				return 1;
		printf("mapped %ld\n", n);
		fflush(stdout);
		nofp_level1(now() + lifetime(argv[3]));
	} else if (!strcmp(mode, "spin")) {
		nofp_level1(now() + secs);
	} else if (!strcmp(mode, "inline")) {
		nofp_inline_host(now() + secs);
	} else if (!strcmp(mode, "lib")) {
		nofp_to_lib(now() + secs);
	} else if (!strcmp(mode, "dlopen") && argc == 4) {
		void *h;
		void (*outer)(double);

		/* Until the test, its tool tracing, says to: a loaded machine may take seconds to start it. */
		while (!released)
			nofp_level1(now() + 0.01);
		h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		outer = h ? (void (*)(double))dlsym(h, "nofplib_outer") : NULL;
		if (!outer)
			return 1;
		printf("loaded\n");
		fflush(stdout);
		nofp_dlopened(outer, now() + lifetime(argv[3]));
	} else if (!strcmp(mode, "many") && (argc == 6 || (argc == 7 && !strcmp(argv[6], "wait")))) {
		long n = atol(argv[4]);
		double ms = atof(argv[5]);
		char path[4096];
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		for (long i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/lib%ld.so", argv[3], i);
			if (copy(argv[2], path))
				return 1;
		}
		for (long i = 0; i < n + n / 10; i++) {
			int status;
			pid_t pid;

			if (i == n && argc == 7) {
				printf("again?\n");
				fflush(stdout);
				sigwait(&set, &sig);
			}
			/* Those run again from the middle: a tool has settled by then. */
			snprintf(path, sizeof(path), "%s/lib%ld.so", argv[3],
				 i < n ? i : n / 2 + i - n);
			pid = fork();
			if (pid == 0) {
				void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
				void (*outer)(double) = h ? (void (*)(double))dlsym(h, "nofplib_outer") : NULL;

				if (!outer)
					_exit(1);
				/*
				 * A millisecond at a time, until MS ms of its CPU
				 * time; five times as long when run again, for a
				 * tool the machine's load slows to see it live.
				 */
				double mine = i < n ? ms : 5 * ms;

				for (double end = cpu_now() + mine / 1000; cpu_now() < end;)
					nofp_dlopened(outer, now() + 0.001);
				_exit(0);
			}
			if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
				return 1;
			printf("lib %ld pid %d\n", i, pid);
		}
		for (long i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/lib%ld.so", argv[3], i);
			unlink(path);
		}
		printf("done\n");
	} else if (!strcmp(mode, "swap") && argc == 5) {
		const char *outers[] = { "nofplib_outer", "swaplib_outer" };
		double each = lifetime(argv[4]);

		for (int i = 0; i < 2; i++) {
			void *h = dlopen(argv[2 + i], RTLD_NOW | RTLD_LOCAL);
			void (*outer)(double) = h ? (void (*)(double))dlsym(h, outers[i]) : NULL;

			if (!outer)
				return 1;
			printf("%s %p\n", outers[i], (void *)outer);
			fflush(stdout);
			if (i == 0 && isinf(each)) {
				/* Until the test says to swap: in slices, so that SIGUSR1 ends them. */
				while (!released)
					nofp_dlopened(outer, now() + 0.01);
			} else {
				nofp_dlopened(outer, now() + each);
			}
			dlclose(h);
		}
	} else if (!strcmp(mode, "deep") && argc == 4) {
		unsigned long n = strtoul(argv[2], NULL, 10);

		if (!n || nofp_deep(n, now() + lifetime(argv[3])) != n)
			return 1;
	} else if (!strcmp(mode, "fp")) {
		nofp_fp_top(now() + secs);
	} else if (!strcmp(mode, "nocfi") && argc == 4) {
		/*
		 * A fake frame record above the callee's frames: a "caller's
		 * frame pointer" further up, and a "return address" that is
		 * data, not code.
		 */
		static unsigned long data;
		unsigned long fake[4] __attribute__((aligned(16)));

		fake[0] = (unsigned long)&fake[2];
		fake[1] = (unsigned long)&data;
		fake[2] = 0;
		fake[3] = (unsigned long)&data;
		nofp_nocfi_top(now() + secs, strcmp(argv[3], "stack") ? 0 : (unsigned long)fake);
		sink += fake[1];
	} else if (!strcmp(mode, "realign")) {
		nofp_realign_top(now() + secs, 8 + (argc > 3));
	} else if (!strcmp(mode, "crypto")) {
		/* AES_KEY: 60 round keys and their count. */
		static unsigned int key[64] __attribute__((aligned(16)));
		static const unsigned char user_key[16] = "nofp-crypto-key";
		void *h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
		int (*set_key)(const unsigned char *, int, void *) = h ? dlsym(h, "AES_set_encrypt_key") : NULL;
		aes_fn *encrypt = h ? (aes_fn *)dlsym(h, "AES_encrypt") : NULL;

		if (!set_key || !encrypt || set_key(user_key, 128, key))
			return 3;
		nofp_crypto_loop(now() + secs, encrypt, key);
	} else if (!strcmp(mode, "plt")) {
		nofp_plt_loop(now() + secs);
	} else if (!strcmp(mode, "nap") && argc == 4) {
		ms = atoi(argv[3]);
		nofp_level1(-atoi(argv[2]));
	} else if (!strcmp(mode, "signal")) {
		struct itimerval it = { { 0, 20000 }, { 0, 20000 } };

		signal(SIGALRM, nofp_handler);
		setitimer(ITIMER_REAL, &it, NULL);
		nofp_waiter(now() + secs);
	} else if (!strcmp(mode, "pipe") && argc == 4) {
		pthread_t r, w;
		sigset_t set;
		int sig;

		rounds = atoi(argv[2]);
		ms = atoi(argv[3]);
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		if (pipe(fds))
			return 1;
		sigwait(&set, &sig);
		pthread_create(&r, NULL, reader, NULL);
		pthread_create(&w, NULL, writer, NULL);
		pthread_join(r, NULL);
		pthread_join(w, NULL);
		printf("done\n");
	} else {
		fprintf(stderr, "nofp: unknown mode\n");
		return 2;
	}
	sink++;
	return 0;
}
