/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Output files written whole or not at all, never through a symlink another user planted. */
#ifndef BPFSCOPE_OUTFILE_H
#define BPFSCOPE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile;

/* Is @path the standard output ("-")? */
bool outfile__is_stdout(const char *path);

/*
 * Before tracing: can @path be written? "-" always can; otherwise its
 * directory must take a new file and @path must not be a directory. Says
 * what is wrong on stderr; 0 or negative errno.
 */
int outfile__check(const char *path);

/*
 * The directory @path's file would go to, opened the way outfile__open()
 * opens it (another user's link on the way not followed), for a caller
 * that writes several files there; a descriptor or negative errno.
 */
int outfile__open_dir(const char *path);

/*
 * Opens @path for writing: a new, unnamed (or hidden temporary) file in
 * its directory, which outfile__commit() puts in place; the standard
 * output for "-". NULL, after saying why, on failure.
 */
struct outfile *outfile__open(const char *path);

/*
 * A hidden name for a temporary file beside @base: ".BASE.RANDOM", with 64
 * bits from getrandom(): names nobody can guess and plant ahead of it.
 */
void outfile__tmp_name(char *buf, size_t size, const char *base);
FILE *outfile__stream(struct outfile *o);

/*
 * Finishes @o: the file replaces whatever @path named (a symlink there is
 * replaced, not followed) and gets the usual 0666 & ~umask mode. Any write
 * error since outfile__open() fails it and leaves @path as it was. Frees
 * @o; 0 or negative errno, said on stderr.
 */
int outfile__commit(struct outfile *o);

/* Drops what was written; @path stays as it was. Frees @o. */
void outfile__discard(struct outfile *o);

#endif
