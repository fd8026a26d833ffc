/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* How long a test workload runs: a number of seconds, or until the test stops it, never past the test. */
#ifndef BPFSCOPE_LIFETIME_H
#define BPFSCOPE_LIFETIME_H

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#define LIFETIME_MAX 600

/*
 * A workload's SECONDS argument. 0 is until the test stops it: a tool
 * whose start takes seconds on a loaded machine, or a test that runs it
 * several times, must not outlive what it traces. Such a workload ends
 * with the process that started it (the test), however the test ends, and
 * after ten minutes at most: a test that fails before it stops its
 * workload must not leave it spinning, nor bats waiting for the output
 * descriptors it inherited, to the end of CI.
 */
static inline double lifetime(const char *arg)
{
	double s = atof(arg);

	if (s > 0)
		return s;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	alarm(LIFETIME_MAX);
	return INFINITY;
}

#endif
