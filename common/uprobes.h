/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Finding user-space functions to probe: libraries by short name, symbols, file offsets. */
#ifndef BPFSCOPE_UPROBES_H
#define BPFSCOPE_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <regex.h>
#include <stdint.h>
#include <sys/types.h>

struct uprobe_func {
	char *name;
	uint64_t offset;	/* in the file, what uprobes attach by */
	uint64_t *rets;		/* Go functions: the file offsets of their returns */
	size_t nrets;
};

/*
 * Finds @lib as bcc does and opens it: a path; or a library by short name
 * ("c", "pthread") or soname ("libc.so.6"), through the maps of process
 * @pid when given, else /etc/ld.so.cache and then the usual directories; a
 * relative path is taken from the current directory.
 * With @pid, paths mean what they mean to that process (its container's
 * root), and symlinks never lead out of that root. The file is a regular
 * file, opened read-only; attach uprobes through /proc/self/fd/FD so that
 * they land on this very file. Its path, for messages, goes to @path.
 * A descriptor, or -ENOENT.
 */
int uprobes__open(const char *lib, pid_t pid, char *path, size_t size);

/*
 * Each path glibc's ld.so.cache (@map, @len bytes, anyone's in a
 * container) gives for library @lib, to @found until it says that is the
 * one: whether one was.
 */
bool uprobes__ldcache_each(const char *map, size_t len, const char *lib,
			   bool (*found)(const char *path, void *ctx), void *ctx);

/*
 * Compiles @pattern as bcc matches its -r patterns (Python's re.match): an
 * extended regular expression anchored at the start of the name only, so
 * "vfs_" matches vfs_read and "read$" matches read but not pread. 0 or
 * -EINVAL.
 */
int uprobes__regcomp(regex_t *re, const char *pattern);

/*
 * The functions of the ELF file on @fd whose names match @pattern (a shell
 * wildcard, or a regular expression as uprobes__regcomp() if @regex):
 * defined, not indirect (IFUNC resolvers would be timed instead of the
 * function), one per address. At most @max; -E2BIG beyond, -ENOENT for
 * none, -ENOEXEC when it is not ELF.
 */
ssize_t uprobes__find(int fd, const char *pattern, bool regex, size_t max,
		      struct uprobe_func **out);
void uprobes__free(struct uprobe_func *funcs, size_t n);

/* Was the file on @fd built by Go? Its goroutine stacks move, which uretprobes cannot survive. */
bool uprobes__is_go(int fd);

/*
 * As uprobes__find(), for a Go binary: its functions from Go's own table
 * (stripped binaries too), each with its return instructions, to be timed
 * without uretprobes. -ENOTSUP for Go before 1.18 or another machine than
 * x86-64 and arm64, or without capstone (@why says which), -EILSEQ when a matching function
 * could not be disassembled whole (its name in @why), -EBADMSG for a
 * malformed table.
 */
ssize_t uprobes__find_go(int fd, const char *pattern, bool regex, size_t max,
			 struct uprobe_func **out, const char **why);

#endif
