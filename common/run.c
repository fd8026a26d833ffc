// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Interval, count and duration handling, and stop signals that still print a report. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cli.h"
#include "prom.h"
#include "run.h"
#include "tool.h"

static volatile sig_atomic_t stopping;
static bool stdout_failed;	/* and said so */
static sigset_t stop_signals;

static struct timespec first_signal;

/*
 * The first stop signal asks for a report; another, a second or more
 * later (an impatient Ctrl-C while the report hangs), ends us at once.
 * Sooner, it is the same Ctrl-C again: timeout(1) forwards the terminal's
 * SIGINT to the process group its child is also in.
 */
static void on_signal(int sig)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!stopping) {
		first_signal = now;
		stopping = 1;
		return;
	}
	if ((now.tv_sec - first_signal.tv_sec) * 1000000000LL + now.tv_nsec -
	    first_signal.tv_nsec >= 1000000000LL) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

bool run__stopping(void)
{
	return stopping;
}

void run__init(struct run *r, const struct cli *cli)
{
	*r = (struct run){
		.interval = cli->interval,
		.count = cli->count,
		.duration = cli->duration,
		.prometheus = cli->prometheus,
	};
}

unsigned long long run__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static long long now_ms(void)
{
	return run__now_ns() / 1000000;
}

void run__print_time(FILE *f, time_t when)
{
	char buf[16];
	struct tm tm;

	localtime_r(&when, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	fputs(buf, f);
}

/*
 * Exit's last flush of the standard output must succeed too: a report that
 * never reached its reader is a failure, not exit status 0.
 */
static void check_stdout(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (!stdout_failed)
			pr_err("cannot write to the standard output: %s",
			       strerror(errno ? errno : EIO));
		_exit(EXIT_RUNTIME);
	}
}

void run__catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/*
	 * With descriptor 1 closed, the next file we open would become our
	 * "standard output". Say so now rather than trace for nothing.
	 */
	if (fcntl(STDOUT_FILENO, F_GETFD) < 0) {
		pr_err("the standard output is closed: nowhere to print the report");
		exit(EXIT_RUNTIME);
	}
	atexit(check_stdout);
}

void run__banner(const struct cli *cli, const char *fmt, ...)
{
	FILE *f = cli->json ? stderr : stdout;
	va_list ap;

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}

/*
 * The signal mask before run__loop(). The stop signals are blocked in the
 * loop, but for its sleeps in ppoll() and its reports and ticks (where a
 * second Ctrl-C may have to end a report that hangs): one that landed
 * between the check of the stop flag and the sleep would leave the loop
 * asleep until its deadline. Blocking them around each sleep alone took
 * two system calls per wakeup, and a busy machine's exec notes wake the
 * loop a hundred times a second.
 */
static sigset_t unblocked;

static void let_signals_in(bool in)
{
	sigprocmask(in ? SIG_SETMASK : SIG_BLOCK, in ? &unblocked : &stop_signals, NULL);
}

/* Sleeps up to @ms, or until a stop signal or ring-buffer events, and handles the events. */
static int wait_events(const struct run *r, long long ms)
{
	struct pollfd pfd = {
		.fd = r->events ? ring_buffer__epoll_fd(r->events) : -1,	/* -1: ignored */
		.events = POLLIN,
	};
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };
	int n = 0;

	if (!stopping)
		n = ppoll(&pfd, 1, &ts, &unblocked);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n > 0 && r->events) {
		n = ring_buffer__consume(r->events);
		if (n < 0)
			return n;
		fflush(stdout);	/* lines printed per event leave a batch at a time */
	}
	return 0;
}

/* Waits until @deadline_ms (monotonic) or a stop signal, serving events and tick. */
static int wait_until(const struct run *r, long long deadline_ms, long long *next_tick)
{
	long long now;
	int err;

	while (!stopping && (now = now_ms()) < deadline_ms) {
		long long until = deadline_ms;

		if (r->tick && *next_tick <= now) {
			let_signals_in(true);
			err = r->tick(r->ctx);
			let_signals_in(false);
			if (err)
				return err;
			*next_tick = now + (r->tick_ms ? r->tick_ms : 1000);
		}
		if (r->tick && *next_tick < until)
			until = *next_tick;
		err = wait_events(r, until - now);
		if (err)
			return err;
	}
	return 0;
}

static int loop(const struct run *r);

int run__loop(const struct run *r)
{
	struct run collect;
	int err;

	err = tool__target_gone();
	if (err)
		return err;
	sigprocmask(SIG_BLOCK, &stop_signals, &unblocked);
	if (!r->prometheus) {
		err = loop(r);
	} else {
		/* Each second: what the maps hold moves into the exposition's series (prom__start()ed). */
		collect = *r;
		collect.interval = 1;
		collect.count = 0;
		err = loop(&collect);
		prom__stop();
	}
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
	tool__report_missed();
	return err;
}

static int loop(const struct run *r)
{
	long long start = now_ms(), end = -1, next_tick = start, deadline;
	struct report_info info = {};
	int err;

	if (r->duration)
		end = start + r->duration * 1000LL;

	for (;;) {
		/* From the start, not from the last report: no drift. */
		if (r->interval)
			deadline = start + (info.seq + 1) * r->interval * 1000LL;
		else
			deadline = LLONG_MAX;
		if (end >= 0 && deadline > end)
			deadline = end;

		err = wait_until(r, deadline, &next_tick);
		if (err) {
			pr_err("cannot wait for events: %s", strerror(-err));
			return err;
		}

		/*
		 * What the programs noted before the report is in it: a loop
		 * that stopped at once, or was held up (a stopped or starved
		 * tool), may have left notes unread (an exec, whose image
		 * before it the report must not name by the one after).
		 */
		if (r->events) {
			err = ring_buffer__consume(r->events);
			if (err < 0) {
				pr_err("cannot read events: %s", strerror(-err));
				return err;
			}
		}
		info.seq++;
		info.when = time(NULL);
		info.last = stopping || (r->count && info.seq >= r->count) ||
			    (end >= 0 && now_ms() >= end);
		let_signals_in(true);
		err = r->report(r->ctx, &info);
		let_signals_in(false);
		/* An exporter never exits to say them (tool__report_missed). */
		if (r->prometheus)
			prom__lost("events_untraced_program_already_running", tool__missed());
		if (err && r->reads)
			pr_err("cannot read %s: %s", r->reads, strerror(-err));
		/* A write that failed earlier leaves nothing to flush, nor its errno: the report's then. */
		errno = 0;
		if (fflush(stdout) || ferror(stdout)) {
			int werr = errno ? errno : err < 0 ? -err : EIO;

			err = err ?: -werr;
			pr_err("cannot write to the standard output: %s", strerror(werr));
			stdout_failed = true;
		}
		if (err || info.last)
			return err;
	}
}
