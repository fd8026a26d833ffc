// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that only looks like V8 (its postmortem symbols, 11.3's
 * values), whose "JavaScript frames" hold what another user planted: a
 * function whose name is terminal escapes, a script whose source is a
 * string made of itself, a scope claiming a million locals, maps that are
 * their own maps, pointers to nowhere. With "jit", the frames run code in
 * memory of no file, as V8's compiled code does: once under a Code object
 * that claims all memory after it, whose inlined calls go round in a
 * circle; once under a page of decoy headers whose Code says its code is
 * elsewhere. With "jitlost", the first of those inlined calls is a
 * function nowhere. The stack tools must stay bounded, escape what they
 * print and misname nothing.
 *
 * usage: fakev8 SECONDS [jit|jitlost] -- prints "pid PID", spins under its
 *                                fake frames for SECONDS (0: until killed or
 *                                its parent, the test, is gone)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
V8DBG(v8dbg_type_Code__CODE_TYPE, 245);
V8DBG(v8dbg_type_ByteArray__BYTE_ARRAY_TYPE, 190);
V8DBG(v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE, 240);
V8DBG(v8dbg_CodeKindBaseline, 11);
V8DBG(v8dbg_class_Code__deoptimization_data__FixedArray, 16);
V8DBG(v8dbg_class_Code__source_position_table__ByteArray, 24);

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

enum { MAP_FN = 1, MAP_SFI, MAP_SCOPE, MAP_SCRIPT, MAP_STR, MAP_CONS, MAP_CODE, MAP_FARRAY,
       MAP_WARRAY, MAP_BARRAY, FN = 16, SFI, SCOPE, SCRIPT, NAME, FILENAME, CONS, FN2, SFI2, SCOPE2,
       CODE, DEOPT, LITERALS, INLINING, POSITIONS };

static void string(int i, const char *s)
{
	int32_t len = strlen(s);

	object(i, MAP_STR, 40);		/* a sequential one-byte string */
	memcpy(heap[i] + 12, &len, sizeof(len));
	memcpy(heap[i] + 16, s, len < 112 ? len : 112);
}

/*
 * x86-64's code of a JavaScript frame, as V8 compiles it: a frame pointer,
 * the context and the function under it, a call (of @leaf, in rdx).
 */
static const uint8_t jit_frame[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0x56,			/* push %rsi: fp - 8, the context */
	0x57,			/* push %rdi: fp - 16, the function */
	0xff, 0xd2,		/* call *%rdx */
	0xc9,			/* leave */
	0xc3,			/* ret */
};

typedef void (*jit_fn)(uint64_t function, uint64_t context, void (*leaf)(void));

/*
 * Memory of no file, four pages, the first and third not to be read: in
 * the fourth jit_frame at 11.3's place for compiled code, after its
 * InstructionStream's map and Code, which lies about all after it; in the
 * second jit_frame again, under decoys. The two copies in @f. @lost: the
 * innermost inlined call's function is nowhere.
 */
static int jit(jit_fn f[2], bool lost)
{
	uint8_t *page = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *code, *decoyed;
	uint64_t w;
	uint32_t u;

	if (page == MAP_FAILED || mprotect(page, 4096, PROT_NONE) ||
	    mprotect(page + 2 * 4096, 4096, PROT_NONE))
		return -1;
	code = page + 3 * 4096 + 256;
	memcpy(code, jit_frame, sizeof(jit_frame));
	w = tag(MAP_CODE);
	memcpy(code - 16, &w, 8);
	w = tag(CODE);
	memcpy(code - 8, &w, 8);
	/* Decoys, down to their page's start: headers whose Code says its code is elsewhere. */
	decoyed = page + 4096 + 2048;
	memcpy(decoyed, jit_frame, sizeof(jit_frame));
	for (uint8_t *d = decoyed; d >= page + 4096 + 16; d -= 8)
		memcpy(d - 16, &w, 8);
	/* Its Code: optimized (13), its size all memory, its tables planted. */
	object(CODE, MAP_CODE, 245);
	put(CODE, 16, tag(DEOPT));
	put(CODE, 24, tag(POSITIONS));
	put(CODE, 40, (uint64_t)(uintptr_t)code);
	u = 13;
	memcpy(heap[CODE] + 48, &u, 4);
	u = 0x7fffffff;
	memcpy(heap[CODE] + 56, &u, 4);
	/* Its source positions: one at 0 in inlined call 2, then a number that never ends. */
	object(POSITIONS, MAP_BARRAY, 190);
	put(POSITIONS, 8, smi(100));
	{
		const uint8_t table[] = { 0x00, 0x80, 0x80, 0x80, 0x80, 0x20 };

		memcpy(heap[POSITIONS] + 16, table, sizeof(table));
		memset(heap[POSITIONS] + 16 + sizeof(table), 0xff, 100 - sizeof(table));
	}
	/* Its deoptimization data, claiming two billion entries, a million inlined. */
	object(DEOPT, MAP_FARRAY, 175);
	put(DEOPT, 8, smi(0x7fffffff));
	put(DEOPT, 16 + 8 * 1, smi(1000000));
	put(DEOPT, 16 + 8 * 2, tag(LITERALS));
	put(DEOPT, 16 + 8 * 6, tag(SFI));
	put(DEOPT, 16 + 8 * 7, tag(INLINING));
	/* The inlined functions: weak references, one to a million locals, one to the escapes. */
	object(LITERALS, MAP_WARRAY, 240);
	put(LITERALS, 8, smi(0x7fffffff));
	put(LITERALS, 16, (lost ? 0x10000001 : tag(SFI2)) | 2);
	put(LITERALS, 24, tag(SFI) | 2);
	/* Call 2 in call 1, call 1 in call 2: round and round, were it followed. */
	object(INLINING, MAP_BARRAY, 190);
	put(INLINING, 8, smi(48));
	put(INLINING, 16, 2ULL << 31);
	put(INLINING, 24, 1);
	put(INLINING, 32, 1ULL << 31);
	put(INLINING, 40, 0);
	put(INLINING, 48, 1ULL << 31);
	put(INLINING, 56, 1000000);
	f[0] = (jit_fn)code;
	f[1] = (jit_fn)decoyed;
	return 0;
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
	if (argc > 2 && !strncmp(argv[2], "jit", 3)) {
		jit_fn f[2];

#if defined(__x86_64__)
		if (jit(f, !strcmp(argv[2], "jitlost")))
#endif
		{
			fprintf(stderr, "fakev8: no x86-64 code of its own to run here\n");
			return 1;
		}
		printf("pid %d\n", getpid());
		fflush(stdout);
		for (;;) {
			f[0](tag(FN), tag(FN), fakev8_leaf);
			f[1](tag(FN), tag(FN), fakev8_leaf);
		}
	}
	printf("pid %d\n", getpid());
	fflush(stdout);
	for (;;) {
		/* The outer frames' function is nowhere; the inner ones' planted. */
		fakev8_frame(0x10000001, 0x10000001, 1);
		fakev8_frame(tag(FN2), tag(FN2), 1);
		fakev8_frame(tag(FN), tag(FN), 3);
	}
}
