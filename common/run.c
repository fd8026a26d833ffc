// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Interval, count and duration handling, and stop signals that still print a report. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"

static volatile sig_atomic_t stopping;
static sigset_t stop_signals;

static void on_signal(int sig)
{
	stopping = 1;
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
	};
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
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
 * Before the banner, which invites Ctrl-C: a background job of a shell
 * script starts with SIGINT ignored, so a signal sent on seeing the banner
 * would otherwise be lost and the tool run on forever.
 */
void run__catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void run__banner(const struct cli *cli, const char *fmt, ...)
{
	FILE *f = cli->json ? stderr : stdout;
	va_list ap;

	run__catch_signals();
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}

#define POLL_SLICE_MS 250

/* Waits until @deadline_ms (monotonic) or a stop signal, serving poll/tick. */
static int wait_until(const struct run *r, long long deadline_ms, long long *next_tick)
{
	long long now;
	int err;

	while (!stopping && (now = now_ms()) < deadline_ms) {
		long long until = deadline_ms;

		if (r->tick && *next_tick <= now) {
			err = r->tick(r->ctx);
			if (err)
				return err;
			*next_tick = now + (r->tick_ms ? r->tick_ms : 1000);
		}
		if (r->tick && *next_tick < until)
			until = *next_tick;
		if (r->poll) {
			/*
			 * A stop signal that lands between the check above and
			 * the callback's epoll_wait() does not interrupt it:
			 * short waits bound how long such a signal goes unseen.
			 */
			err = r->poll(r->ctx, until - now < POLL_SLICE_MS ? until - now : POLL_SLICE_MS);
			if (err < 0 && err != -EINTR)
				return err;
		} else {
			struct timespec ts = {
				.tv_sec = (until - now) / 1000,
				.tv_nsec = (until - now) % 1000 * 1000000,
			};
			sigset_t orig;

			/*
			 * Checked with the stop signals blocked, and unblocked
			 * only inside ppoll(): one that arrives in between
			 * cannot leave us asleep until the deadline.
			 */
			sigprocmask(SIG_BLOCK, &stop_signals, &orig);
			if (!stopping)
				ppoll(NULL, 0, &ts, &orig);
			sigprocmask(SIG_SETMASK, &orig, NULL);
		}
	}
	return 0;
}

int run__loop(const struct run *r)
{
	long long start = now_ms(), end = -1, next_tick = start, deadline;
	struct report_info info = {};
	int err;

	run__catch_signals();

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
		if (err)
			return err;

		info.seq++;
		info.when = time(NULL);
		info.last = stopping || (r->count && info.seq >= r->count) ||
			    (end >= 0 && now_ms() >= end);
		err = r->report(r->ctx, &info);
		fflush(stdout);
		if (err || info.last)
			return err;
	}
}
