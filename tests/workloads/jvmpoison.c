// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that loads a real libjvm.so, starts no JVM, and puts garbage
 * where the JVM's tables (gHotSpotVMStructs and the layout of its entries)
 * are: tests/jvm.bats's planted case. The tool must read nothing of it
 * into how it reads a real JVM of the same libjvm.
 *
 * usage: jvmpoison LIBJVM   (prints "pid PID", then spins until killed)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static uint64_t garbage[4096];

__attribute__((noinline)) void jvmpoison_leaf(void)
{
	for (volatile int i = 0; i < 1000000; i++)
		;
}

int main(int argc, char **argv)
{
	/* The entries' layout as a JVM sets it, then tables of random words. */
	static const struct {
		const char *name;
		uint64_t value;
	} layout[] = {
		{ "gHotSpotVMStructEntryTypeNameOffset", 0 },
		{ "gHotSpotVMStructEntryFieldNameOffset", 8 },
		{ "gHotSpotVMStructEntryTypeStringOffset", 16 },
		{ "gHotSpotVMStructEntryIsStaticOffset", 24 },
		{ "gHotSpotVMStructEntryOffsetOffset", 32 },
		{ "gHotSpotVMStructEntryAddressOffset", 40 },
		{ "gHotSpotVMStructEntryArrayStride", 48 },
		{ "gHotSpotVMTypeEntryTypeNameOffset", 0 },
		{ "gHotSpotVMTypeEntrySizeOffset", 32 },
		{ "gHotSpotVMTypeEntryArrayStride", 40 },
	};
	void *h, **structs, **types;

	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "jvmpoison: %s\n", argc < 2 ? "no libjvm given" : dlerror());
		return 1;
	}
	srandom(getpid());
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++)
		garbage[i] = (uint64_t)random() << 32 | random() | 1;
	for (size_t i = 0; i < sizeof(layout) / sizeof(layout[0]); i++) {
		uint64_t *v = dlsym(h, layout[i].name);

		if (!v)
			return 1;
		*v = layout[i].value;
	}
	structs = dlsym(h, "gHotSpotVMStructs");
	types = dlsym(h, "gHotSpotVMTypes");
	if (!structs || !types)
		return 1;
	*structs = garbage;
	*types = garbage + 2048;
	printf("pid %d\n", getpid());
	fflush(stdout);
	for (;;)
		jvmpoison_leaf();
}
