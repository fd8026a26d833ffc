// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that says it is a HotSpot JVM (it exports the tables' symbols
 * libjvm.so does) whose tables hold garbage: random entries, or (mode
 * "fields") every field the tools look for, at random offsets and
 * addresses. tests/jvm.bats's planted case: the tool must say it cannot
 * read it and walk its native frames as they are.
 *
 * usage: fakejvm random|fields   (prints "pid PID", then spins until killed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The layout of an entry, as a JVM sets it: plausible, so the tables are read. */
uint64_t gHotSpotVMStructEntryTypeNameOffset = 0;
uint64_t gHotSpotVMStructEntryFieldNameOffset = 8;
uint64_t gHotSpotVMStructEntryIsStaticOffset = 24;
uint64_t gHotSpotVMStructEntryOffsetOffset = 32;
uint64_t gHotSpotVMStructEntryAddressOffset = 40;
uint64_t gHotSpotVMStructEntryArrayStride = 48;
uint64_t gHotSpotVMTypeEntryTypeNameOffset = 0;
uint64_t gHotSpotVMTypeEntrySizeOffset = 32;
uint64_t gHotSpotVMTypeEntryArrayStride = 40;
void *gHotSpotVMStructs, *gHotSpotVMTypes;

#define ENTRIES 512
static uint64_t structs[ENTRIES + 1][6], types[ENTRIES + 1][5];
static unsigned char junk[1 << 16];

static const char *const wanted[][2] = {
	{ "CodeCache", "_heaps" }, { "CodeCache", "_low_bound" }, { "CodeCache", "_high_bound" },
	{ "AbstractInterpreter", "_code" }, { "Abstract_VM_Version", "_vm_major_version" },
	{ "GrowableArrayBase", "_len" }, { "GrowableArray<int>", "_data" },
	{ "CodeHeap", "_memory" }, { "CodeHeap", "_segmap" }, { "CodeHeap", "_log2_segment_size" },
	{ "VirtualSpace", "_low_boundary" }, { "VirtualSpace", "_high_boundary" },
	{ "StubQueue", "_stub_buffer" }, { "StubQueue", "_buffer_limit" },
	{ "CodeBlob", "_frame_complete_offset" }, { "CodeBlob", "_frame_size" },
	{ "CodeBlob", "_code_begin" }, { "CodeBlob", "_code_end" }, { "CodeBlob", "_name" },
	{ "CompiledMethod", "_method" }, { "CompiledMethod", "_scopes_data_begin" },
	{ "nmethod", "_compile_id" }, { "nmethod", "_metadata_offset" },
	{ "nmethod", "_scopes_pcs_offset" }, { "nmethod", "_dependencies_offset" },
	{ "PcDesc", "_pc_offset" }, { "PcDesc", "_scope_decode_offset" },
	{ "Method", "_constMethod" }, { "ConstMethod", "_constants" }, { "ConstMethod", "_flags" },
	{ "ConstMethod", "_code_size" }, { "ConstMethod", "_name_index" },
	{ "ConstMethod", "_signature_index" }, { "ConstantPool", "_pool_holder" },
	{ "ConstantPool", "_source_file_name_index" }, { "Klass", "_name" },
	{ "Symbol", "_length" }, { "Symbol", "_body" },
};
static const char *const type_names[] = { "HeapBlock", "ConstMethod", "ConstantPool", "PcDesc" };

static uint64_t any(void)
{
	uint64_t v = (uint64_t)random() << 33 ^ (uint64_t)random() << 11 ^ random();

	/* Now an address in its own memory, now a small number, now anything. */
	switch (v % 3) {
	case 0:
		return (uint64_t)(uintptr_t)&junk[v % sizeof(junk)];
	case 1:
		return v % 512;
	}
	return v;
}

__attribute__((noinline)) void fakejvm_leaf(void)
{
	for (volatile int i = 0; i < 1000000; i++)
		;
}

__attribute__((noinline)) void fakejvm_outer(void)
{
	fakejvm_leaf();
}

int main(int argc, char **argv)
{
	int fields = argc > 1 && !strcmp(argv[1], "fields");

	srandom(getpid());
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = random();
	for (int i = 0; i < ENTRIES; i++) {
		for (int j = 0; j < 6; j++)
			structs[i][j] = any();
		for (int j = 0; j < 5; j++)
			types[i][j] = any();
		/* A pointer for a name: none may be 0, which ends a table. */
		structs[i][0] |= 1;
		types[i][0] |= 1;
	}
	if (fields) {
		int n = sizeof(wanted) / sizeof(wanted[0]);

		for (int i = 0; i < n; i++) {
			structs[i][0] = (uintptr_t)wanted[i][0];
			structs[i][1] = (uintptr_t)wanted[i][1];
			structs[i][3] = random() & 1;
			/* Within reach: an offset in an object, a static in its memory. */
			structs[i][4] = random() % 512;
			structs[i][5] = (uintptr_t)&junk[random() % (sizeof(junk) - 64)];
		}
		for (int i = 0; i < 4; i++) {
			types[i][0] = (uintptr_t)type_names[i];
			types[i][4] = 1 + random() % 512;
		}
	}
	gHotSpotVMStructs = structs;
	gHotSpotVMTypes = types;
	printf("pid %d\n", getpid());
	fflush(stdout);
	for (;;)
		fakejvm_outer();
}
