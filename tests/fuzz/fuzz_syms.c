// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for what the symbolizer parses from files any user can
 * write: ELF binaries (symbols, segments, through libdwfl and libelf), maps
 * lines and kallsyms/modules text. The first byte picks the parser.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ksyms.h"
#include "procmaps.h"
#include "syms.h"
#include "uprobes.h"

static void fuzz_elf(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	struct uprobe_func *funcs;
	struct sym_info si;
	struct syms *s;
	char path[64];
	ssize_t n;

	if (fd < 0)
		return;
	if (write(fd, data, size) == (ssize_t)size) {
		s = syms__new();
		for (uint64_t off = 0; s && off < size + 64; off += 1 + size / 16)
			syms__file(s, fd, off, &si);
		syms__free(s);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = uprobes__find(path, "*", false, 1000, &funcs);
		if (n > 0)
			uprobes__free(funcs, n);
		uprobes__is_go(path);
	}
	close(fd);
}

static void fuzz_maps(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct maps_entry e;

	if (!line)
		return;
	memcpy(line, data, size);
	line[size] = '\0';
	procmaps__parse_line(line, &e);
	free(line);
}

static void fuzz_kallsyms(const uint8_t *data, size_t size)
{
	size_t half = size / 2;
	FILE *ks = fmemopen((void *)data, half ? half : 1, "r");
	FILE *mods = fmemopen((void *)(data + half), size - half ? size - half : 1, "r");
	const char *module;
	struct ksyms *k;
	uint64_t start;

	k = ksyms__parse(ks, mods);
	if (k) {
		for (uint64_t a = 0; a < 64; a++)
			ksyms__find(k, a * 0x1000 + (size ? data[0] : 0), &start, &module);
		ksyms__find(k, UINT64_MAX, &start, &module);
		ksyms__free(k);
	}
	if (ks)
		fclose(ks);
	if (mods)
		fclose(mods);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_elf(data + 1, size - 1);
		break;
	case 1:
		fuzz_maps(data + 1, size - 1);
		break;
	case 2:
		fuzz_kallsyms(data + 1, size - 1);
		break;
	}
	return 0;
}
