/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Writing a stack set as a gzipped pprof profile (profile.proto) for go tool pprof, Pyroscope, Parca. */
#ifndef BPFSCOPE_PPROF_H
#define BPFSCOPE_PPROF_H

#include <stdint.h>
#include <stdio.h>

struct stackset;

struct pprof_opts {
	/* Sample types: the stack's value is in the first; the second, when
	 * named, is the value times @scale (profile: samples -> cpu nanoseconds). */
	const char *type, *unit;		/* "samples", "count" */
	const char *type2, *unit2;		/* "cpu", "nanoseconds"; or NULL */
	uint64_t scale;
	uint64_t scale1;			/* the first value times this; 0: as counted */
	/* Named: the second value only for stacks through a frame of this name (profile --wall). */
	const char *type2_frame;
	const char *default_type;		/* the type a viewer shows first; NULL: the last */
	const char *period_type, *period_unit;	/* "cpu", "nanoseconds" */
	int64_t period;
	int64_t time_nanos;			/* start, since the epoch */
	int64_t duration_nanos;
	/*
	 * A stack's container frame (FRAME_CONTAINER) is its sample's labels,
	 * "container" and "cgroup"; and also its root location when this is
	 * true (--containers).
	 */
	bool container_frames;
};

/* Writes the gzipped profile to @f; 0, or negative errno. */
int pprof__write(const struct stackset *set, FILE *f, const struct pprof_opts *opts);

#endif
