/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --pprof-dir: a gzipped pprof file per interval, named by its start, the oldest removed. */
#ifndef BPFSCOPE_PPROFDIR_H
#define BPFSCOPE_PPROFDIR_H

#include "pprof.h"

struct stackset;

/* Before tracing: is @dir a directory new files can be written in? Says why not; 0 or -errno. */
int pprofdir__check(const char *dir);

/*
 * Writes @set as TOOL-YYYYmmddTHHMMSS.mmmZ.pb.gz (its start, UTC) in @dir, a
 * profile from @opts->time_nanos to now, which becomes the next one's
 * start: the files cover the run with no gap and no overlap. Then removes
 * the oldest such files (regular, this user's) beyond @keep. 0 or -errno,
 * said on stderr.
 */
int pprofdir__write(const char *dir, const struct stackset *set, struct pprof_opts *opts,
		    unsigned int keep);

#endif
