// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What the runtimes read of a live process's memory, and how they spell what they read. */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "runtimes/remote.h"

int remote__read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

size_t utf8__put(char *out, size_t room, uint32_t c)
{
	char b[4];
	size_t len;

	if (c < 0x80) {
		b[0] = c, len = 1;
	} else if (c < 0x800) {
		b[0] = 0xc0 | c >> 6, b[1] = 0x80 | (c & 0x3f), len = 2;
	} else if (c < 0x10000) {
		b[0] = 0xe0 | c >> 12, b[1] = 0x80 | (c >> 6 & 0x3f), b[2] = 0x80 | (c & 0x3f);
		len = 3;
	} else if (c < 0x110000) {
		b[0] = 0xf0 | c >> 18, b[1] = 0x80 | (c >> 12 & 0x3f);
		b[2] = 0x80 | (c >> 6 & 0x3f), b[3] = 0x80 | (c & 0x3f), len = 4;
	} else {
		b[0] = '?', len = 1;
	}
	if (len > room)
		return 0;
	memcpy(out, b, len);
	return len;
}
