// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that only looks like V8 (its postmortem symbols, 11.3's
 * values), whose "JavaScript frames" hold what another user planted: a
 * function whose name is terminal escapes, a script whose source is a
 * string made of itself, a scope claiming a million locals, maps that are
 * their own maps, pointers to nowhere. The stack tools must stay bounded,
 * escape what they print and misname nothing.
 *
 * usage: fakev8   -- prints "pid PID", spins under its fake frames until
 *                    killed or its parent (the test) is gone
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/lifetime.h"

/* V8 11.3's metadata, under the names node exports it by. */
#define V8DBG(name, value) const int name##_ __asm__(#name) __attribute__((used)) = value
V8DBG(_ZN2v88internal7Version6major_E, 11);
V8DBG(_ZN2v88internal7Version6minor_E, 3);
V8DBG(v8dbg_SmiShiftSize, 31);
V8DBG(v8dbg_TaggedSize, 8);
V8DBG(v8dbg_off_fp_function, -16);
V8DBG(v8dbg_off_fp_context, -8);
V8DBG(v8dbg_class_Map__instance_type__uint16_t, 12);
V8DBG(v8dbg_type_JSFunction__JS_FUNCTION_TYPE, 2066);
V8DBG(v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE, 262);
V8DBG(v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE, 261);
V8DBG(v8dbg_type_Script__SCRIPT_TYPE, 167);
V8DBG(v8dbg_FirstNonstringType, 128);
V8DBG(v8dbg_class_JSFunction__shared__SharedFunctionInfo, 24);
V8DBG(v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object, 16);
V8DBG(v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject, 32);
V8DBG(v8dbg_class_SharedFunctionInfo__function_data__Object, 8);
V8DBG(v8dbg_class_Script__source__Object, 8);
V8DBG(v8dbg_class_Script__name__Object, 16);
V8DBG(v8dbg_class_Script__line_ends__Object, 56);
V8DBG(v8dbg_class_String__length__int32_t, 12);
V8DBG(v8dbg_class_SeqOneByteString__chars__char, 16);
V8DBG(v8dbg_class_ConsString__first__String, 16);
V8DBG(v8dbg_class_ConsString__second__String, 24);
V8DBG(v8dbg_class_ThinString__actual__String, 16);
V8DBG(v8dbg_class_SlicedString__parent__String, 16);
V8DBG(v8dbg_class_SlicedString__offset__SMI, 24);
V8DBG(v8dbg_class_FixedArrayBase__length__SMI, 8);
V8DBG(v8dbg_class_FixedArray__data__uintptr_t, 16);
V8DBG(v8dbg_type_FixedArray__FIXED_ARRAY_TYPE, 175);
V8DBG(v8dbg_type_UncompiledDataWithPreparseData__UNCOMPILED_DATA_WITH_PREPARSE_DATA_TYPE, 220);
V8DBG(v8dbg_type_UncompiledDataWithoutPreparseDataWithJob__UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_WITH_JOB_TYPE, 223);
V8DBG(v8dbg_class_UncompiledData__start_position__int32_t, 16);

void fakev8_frame(uint64_t function, uint64_t context, int depth);

static volatile unsigned long sink;
static double seconds;

void fakev8_leaf(void)
{
	for (unsigned long i = 0; i < 100000000UL; i++)
		sink += i;
}

/* The fake heap: objects of 128 bytes, 8-aligned, tagged (+1) where referred to. */
static uint8_t heap[64][128] __attribute__((aligned(16)));

static uint64_t tag(int i)
{
	return (uint64_t)(uintptr_t)heap[i] + 1;
}

static void put(int i, int off, uint64_t v)
{
	memcpy(heap[i] + off, &v, sizeof(v));
}

static uint64_t smi(int64_t v)
{
	return (uint64_t)v << 32;
}

/* Object @i of instance type @type: its map is object @map, made so. */
static void object(int i, int map, uint16_t type)
{
	put(i, 0, tag(map));
	put(map, 0, tag(map));	/* a map that is its own map */
	memcpy(heap[map] + 12, &type, sizeof(type));
}

enum { MAP_FN = 1, MAP_SFI, MAP_SCOPE, MAP_SCRIPT, MAP_STR, MAP_CONS, FN = 10, SFI, SCOPE, SCRIPT,
       NAME, FILENAME, CONS, FN2, SFI2, SCOPE2 };

static void string(int i, const char *s)
{
	int32_t len = strlen(s);

	object(i, MAP_STR, 40);		/* a sequential one-byte string */
	memcpy(heap[i] + 12, &len, sizeof(len));
	memcpy(heap[i] + 16, s, len < 112 ? len : 112);
}

int main(int argc, char **argv)
{
	int32_t huge = 0x7fffffff;

	/* A function, its shared info, its scope: its name escapes, its script's source itself. */
	object(FN, MAP_FN, 2066);
	put(FN, 24, tag(SFI));
	object(SFI, MAP_SFI, 262);
	put(SFI, 16, tag(SCOPE));
	put(SFI, 32, tag(SCRIPT));
	object(SCOPE, MAP_SCOPE, 261);
	put(SCOPE, 8, smi(2 | 1 << 12));	/* a function scope with a function variable */
	put(SCOPE, 24, smi(0));			/* no locals: the name is the 4th slot */
	put(SCOPE, 32, tag(NAME));
	put(SCOPE, 48, smi(0));			/* where it starts */
	string(NAME, "\x1b[2J\x1b]0;pwned\x07" "evil\nname;x");
	object(SCRIPT, MAP_SCRIPT, 167);
	put(SCRIPT, 8, tag(CONS));
	put(SCRIPT, 16, tag(FILENAME));
	put(SCRIPT, 56, 0);			/* no line ends: counted in the source */
	string(FILENAME, "/tmp/\x1b[31mred.js");
	object(CONS, MAP_CONS, 41);		/* a cons string made of itself */
	memcpy(heap[CONS] + 12, &huge, sizeof(huge));
	put(CONS, 16, tag(CONS));
	put(CONS, 24, tag(CONS));
	/* Another: a million locals, a name 2 GiB long that is not there. */
	object(FN2, MAP_FN, 2066);
	put(FN2, 24, tag(SFI2));
	object(SFI2, MAP_SFI, 262);
	put(SFI2, 16, tag(SCOPE2));
	put(SFI2, 32, 0x10000001);		/* a script nowhere */
	object(SCOPE2, MAP_SCOPE, 261);
	put(SCOPE2, 8, smi(2 | 1 << 12 | 1 << 14));
	put(SCOPE2, 24, smi(1 << 20));

	seconds = lifetime(argc > 1 ? argv[1] : "0");
	printf("pid %d\n", getpid());
	fflush(stdout);
	for (;;) {
		/* The outer frames' function is nowhere; the inner ones' planted. */
		fakev8_frame(0x10000001, 0x10000001, 1);
		fakev8_frame(tag(FN2), tag(FN2), 1);
		fakev8_frame(tag(FN), tag(FN), 3);
	}
}
