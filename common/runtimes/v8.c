// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* V8 in a binary (Node.js: node, libnode.so), found by its postmortem symbols, and JavaScript frames named from process memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elffile.h"
#include "runtimes/names.h"
#include "runtimes/remote.h"
#include "runtimes/runtime.h"
#include "runtimes/seam.h"
#include "tool.h"

/*
 * What the walk and the names need, from the binary's v8dbg_* symbols
 * (V8's postmortem metadata, which node exports), each an int.
 */
enum v8_sym {
	MAJOR, MINOR, SMI_SHIFT, TAGGED_SIZE, FP_FUNCTION, FP_CONTEXT,
	MAP_TYPE, TYPE_FUNCTION, TYPE_SHARED, TYPE_SCOPE_INFO, TYPE_SCRIPT, FIRST_NONSTRING,
	FUNCTION_SHARED, SHARED_NAME, SHARED_SCRIPT, SHARED_DATA,
	SCRIPT_SOURCE, SCRIPT_NAME, SCRIPT_LINE_ENDS,
	STRING_LENGTH, SEQ_CHARS, CONS_FIRST, CONS_SECOND, THIN_ACTUAL, SLICED_PARENT,
	SLICED_OFFSET, FIXED_LENGTH, FIXED_DATA, TYPE_FIXED_ARRAY,
	TYPE_UNCOMPILED_FIRST, TYPE_UNCOMPILED_LAST, UNCOMPILED_START,
	NREQUIRED,
	/* Typed frames' types, where arm64's JSEntry frame is stepped out of. */
	FRAME_ENTRY = NREQUIRED, FRAME_CONSTRUCT_ENTRY,
	/* For compiled code only: types, then what some versions say of Code. */
	TYPE_CODE, TYPE_BYTE_ARRAY, TYPE_WEAK_FIXED_ARRAY, CODE_KIND_BASELINE,
	CODE_DEOPT, CODE_POSITIONS, CODE_START, CODE_FLAGS, CODE_SIZE,
	DEOPT_INLINED, DEOPT_LITERALS, DEOPT_SHARED, DEOPT_INLINING,
	NSYMS
};

static const char *const sym_names[NSYMS] = {
	[MAJOR] = "_ZN2v88internal7Version6major_E",
	[MINOR] = "_ZN2v88internal7Version6minor_E",
	[SMI_SHIFT] = "v8dbg_SmiShiftSize",
	[TAGGED_SIZE] = "v8dbg_TaggedSize",
	[FP_FUNCTION] = "v8dbg_off_fp_function",
	[FP_CONTEXT] = "v8dbg_off_fp_context",
	[MAP_TYPE] = "v8dbg_class_Map__instance_type__uint16_t",
	[TYPE_FUNCTION] = "v8dbg_type_JSFunction__JS_FUNCTION_TYPE",
	[TYPE_SHARED] = "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE",
	[TYPE_SCOPE_INFO] = "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE",
	[TYPE_SCRIPT] = "v8dbg_type_Script__SCRIPT_TYPE",
	[FIRST_NONSTRING] = "v8dbg_FirstNonstringType",
	[FUNCTION_SHARED] = "v8dbg_class_JSFunction__shared__SharedFunctionInfo",
	[SHARED_NAME] = "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object",
	[SHARED_SCRIPT] = "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
	[SHARED_DATA] = "v8dbg_class_SharedFunctionInfo__function_data__Object",
	[SCRIPT_SOURCE] = "v8dbg_class_Script__source__Object",
	[SCRIPT_NAME] = "v8dbg_class_Script__name__Object",
	[SCRIPT_LINE_ENDS] = "v8dbg_class_Script__line_ends__Object",
	[STRING_LENGTH] = "v8dbg_class_String__length__int32_t",
	[SEQ_CHARS] = "v8dbg_class_SeqOneByteString__chars__char",
	[CONS_FIRST] = "v8dbg_class_ConsString__first__String",
	[CONS_SECOND] = "v8dbg_class_ConsString__second__String",
	[THIN_ACTUAL] = "v8dbg_class_ThinString__actual__String",
	[SLICED_PARENT] = "v8dbg_class_SlicedString__parent__String",
	[SLICED_OFFSET] = "v8dbg_class_SlicedString__offset__SMI",
	[FIXED_LENGTH] = "v8dbg_class_FixedArrayBase__length__SMI",
	[FIXED_DATA] = "v8dbg_class_FixedArray__data__uintptr_t",
	[TYPE_FIXED_ARRAY] = "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE",
	/* The four UncompiledData types, in this order. */
	[TYPE_UNCOMPILED_FIRST] = "v8dbg_type_UncompiledDataWithPreparseData__UNCOMPILED_DATA_WITH_PREPARSE_DATA_TYPE",
	[TYPE_UNCOMPILED_LAST] = "v8dbg_type_UncompiledDataWithoutPreparseDataWithJob__UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_WITH_JOB_TYPE",
	[UNCOMPILED_START] = "v8dbg_class_UncompiledData__start_position__int32_t",
	[FRAME_ENTRY] = "v8dbg_frametype_EntryFrame",
	[FRAME_CONSTRUCT_ENTRY] = "v8dbg_frametype_ConstructEntryFrame",
	[TYPE_CODE] = "v8dbg_type_Code__CODE_TYPE",
	[TYPE_BYTE_ARRAY] = "v8dbg_type_ByteArray__BYTE_ARRAY_TYPE",
	[TYPE_WEAK_FIXED_ARRAY] = "v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE",
	[CODE_KIND_BASELINE] = "v8dbg_CodeKindBaseline",
	[CODE_DEOPT] = "v8dbg_class_Code__deoptimization_data__FixedArray",
	[CODE_POSITIONS] = "v8dbg_class_Code__source_position_table__ByteArray",
	[CODE_START] = "v8dbg_class_Code__instruction_start__uintptr_t",
	[CODE_FLAGS] = "v8dbg_class_Code__flags__uint32_t",
	[CODE_SIZE] = "v8dbg_class_Code__instruction_size__int",
	[DEOPT_INLINED] = "v8dbg_DeoptimizationDataInlinedFunctionCountIndex",
	[DEOPT_LITERALS] = "v8dbg_DeoptimizationDataLiteralArrayIndex",
	[DEOPT_SHARED] = "v8dbg_DeoptimizationDataSharedFunctionInfoIndex",
	[DEOPT_INLINING] = "v8dbg_DeoptimizationDataInliningPositionsIndex",
};

/*
 * The V8 versions whose layouts are known here beyond what v8dbg says:
 * node 18's 10.2 and node 20's 11.3. Their JSFunction types (JSFunction,
 * then its kinds down to class constructors, V8's instance-type.h) are 16.
 * Their Code (code.h): its deoptimization data and source positions (both
 * in 10.2's v8dbg and 11.3's), then where its instructions are: after a
 * header of 128 bytes (10.2), or where a field points (11.3: into an
 * InstructionStream, whose two words before them are its map and its
 * Code), its flags (the kind in the low 4 bits) and its instructions'
 * size. Its deoptimization data, a FixedArray, holds at 1 how many
 * functions it inlined, at 2 the literals they lead (their
 * SharedFunctionInfos first), at 6 its own SharedFunctionInfo and at 7
 * where each inlined call was.
 */
static const struct v8_version {
	int major, minor;
	int function_types;
	int code[DEOPT_INLINING - CODE_DEOPT + 1];	/* CODE_DEOPT...; CODE_START -1: a pointer */
} versions[] = {
	{ 10, 2, 16, { 16, 24, 128, 48, 40, 1, 2, 6, 7 } },
	{ 11, 3, 16, { 16, 24, -1, 48, 56, 1, 2, 6, 7 } },
};

/* 11.3's Code: where the pointer to its instructions is. */
#define V8_CODE_START_AT	40

/* What v8.c knows of one V8 binary. */
struct v8_binary {
	char version[16];	/* "11.3" */
	int v[NSYMS];
	struct v8_layout l;
	bool code;		/* compiled code read for the calls it inlined */
};

/* Strings: their representation in the low 3 bits of their type, and their width. */
#define V8_STRING_SEQ		0
#define V8_STRING_CONS		1
#define V8_STRING_EXTERNAL	2
#define V8_STRING_SLICED	3
#define V8_STRING_THIN		5
#define V8_STRING_ONE_BYTE	8
#define V8_STRING_UNCACHED	0x10
/* A cached external string's characters (V8's string.tq: resource_data). */
#define V8_EXTERNAL_DATA	24
/* How deep a string's parts are followed (a cons of conses...). */
#define V8_STRING_DEPTH		16

/* A name's characters kept at most, a file's; a source read to count its lines. */
#define V8_NAME_MAX		256
#define V8_FILE_MAX		1024
#define V8_SOURCE_MAX		(16 << 20)

/* Says once for each version that its frames stay native. */
static void say_unknown(const char *path, const char *version)
{
	static char said[8][16];

	for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		if (!strcmp(said[i], version))
			break;
		if (!said[i][0]) {
			snprintf(said[i], sizeof(said[i]), "%s", version);
			pr_warn("%s: V8 %s, whose structures are not known here: its JavaScript "
				"frames are not named", path, version);
			return;
		}
	}
	pr_debug("%s: V8 %s, whose structures are not known here: its JavaScript frames are "
		 "not named", path, version);
}

/*
 * Takes version @ver's Code layout where the binary's v8dbg says the same
 * (or nothing), and has the types it needs: true. A build that differs is
 * not guessed at: its compiled frames are named by their functions alone.
 */
static bool code_known(struct v8_binary *b, const struct v8_version *ver)
{
	for (int i = TYPE_CODE; i < CODE_DEOPT; i++)
		if (b->v[i] < 0)
			return false;
	for (int i = CODE_DEOPT; i < NSYMS; i++) {
		int known = ver->code[i - CODE_DEOPT];

		if (b->v[i] >= 0 && b->v[i] != known)
			return false;
		b->v[i] = known;
	}
	return true;
}

static void *probe(int fd, Elf *elf, const char *path)
{
	GElf_Sym syms[NSYMS];
	struct v8_binary *b;
	int known = -1;

	if (elffile__lookup(elf, sym_names, NSYMS, syms) <= 0 || !syms[MAJOR].st_value ||
	    !syms[TYPE_SHARED].st_value)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	for (int i = 0; i < NSYMS; i++) {
		int32_t v;

		if (!syms[i].st_value || elffile__read(elf, fd, syms[i].st_value, &v, sizeof(v))) {
			if (i < NREQUIRED)
				goto unknown;
			v = -1;
		}
		b->v[i] = v;
	}
	snprintf(b->version, sizeof(b->version), "%d.%d", b->v[MAJOR], b->v[MINOR]);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].major == b->v[MAJOR] && versions[i].minor == b->v[MINOR])
			known = i;
	/* 64-bit tagged values, small integers in the upper half: no pointer compression. */
	if (known < 0 || b->v[SMI_SHIFT] != 31 || b->v[TAGGED_SIZE] != 8 ||
	    b->v[FP_FUNCTION] != -(V8_FRAME_LOW - V8_AT_FUNCTION) ||
	    b->v[FP_CONTEXT] != -(V8_FRAME_LOW - V8_AT_CONTEXT))
		goto unknown;
	b->l = (struct v8_layout){
		.map_instance_type = b->v[MAP_TYPE],
		.type_function_first = b->v[TYPE_FUNCTION],
		.type_function_last = b->v[TYPE_FUNCTION] + versions[known].function_types - 1,
		.type_shared = b->v[TYPE_SHARED],
		.function_shared = b->v[FUNCTION_SHARED],
		.shared_name = b->v[SHARED_NAME],
		.shared_script = b->v[SHARED_SCRIPT],
	};
	if (b->v[FRAME_ENTRY] > 0 && b->v[FRAME_ENTRY] < 64 && b->v[FRAME_CONSTRUCT_ENTRY] > 0 &&
	    b->v[FRAME_CONSTRUCT_ENTRY] < 64) {
		b->l.entry_type = b->v[FRAME_ENTRY];
		b->l.construct_entry_type = b->v[FRAME_CONSTRUCT_ENTRY];
	}
	if (b->l.function_shared > V8_OBJECT_READ - 8 || b->l.shared_name > V8_OBJECT_READ - 8 ||
	    b->l.shared_script > V8_OBJECT_READ - 8)
		goto unknown;
	b->code = code_known(b, &versions[known]);
	pr_debug("%s: V8 %s: JavaScript frames named by their functions%s", path, b->version,
		 b->code ? ", optimized code's by the calls it inlined too" : "");
	return b;
unknown:
	if (syms[MAJOR].st_value && syms[MINOR].st_value &&
	    !elffile__read(elf, fd, syms[MAJOR].st_value, &b->v[MAJOR], sizeof(int)) &&
	    !elffile__read(elf, fd, syms[MINOR].st_value, &b->v[MINOR], sizeof(int)))
		snprintf(b->version, sizeof(b->version), "%d.%d", b->v[MAJOR], b->v[MINOR]);
	else
		snprintf(b->version, sizeof(b->version), "?");
	say_unknown(path, b->version);
	free(b);
	return NULL;
}

static void binary_free(void *b)
{
	free(b);
}

static int bpf_proc(const void *binary, pid_t pid, uint64_t bias, uint32_t id,
		    struct runtime_proc *out)
{
	const struct v8_binary *b = binary;

	out->v8.l = b->l;
	return 0;
}

/* Reading one process's heap: what the frame's naming reads through. */
struct heap {
	pid_t pid;
	const struct v8_binary *b;
};

static bool is_heap(uint64_t v)
{
	return (v & V8_TAG_MASK) == V8_HEAP_TAG && v < V8_OBJECT_MAX;
}

static int word(const struct heap *h, uint64_t tagged, int off, uint64_t *out)
{
	return remote__read(h->pid, tagged - V8_HEAP_TAG + off, out, sizeof(*out));
}

static int smi(const struct heap *h, uint64_t tagged, int off, int64_t *out)
{
	uint64_t v;

	if (word(h, tagged, off, &v) || (v & 1))
		return -EFAULT;
	*out = (int64_t)v >> 32;
	return 0;
}

/* Heap object @tagged's instance type; -1 when it is none, or cannot be read. */
static int type_of(const struct heap *h, uint64_t tagged)
{
	uint64_t map;
	uint16_t type;

	if (!is_heap(tagged) || word(h, tagged, 0, &map) || !is_heap(map) ||
	    remote__read(h->pid, map - V8_HEAP_TAG + h->b->v[MAP_TYPE], &type, sizeof(type)))
		return -1;
	return type;
}

/*
 * Characters [@from, @from + @n) of string @tagged into @out, as UTF-16
 * code units: through its parts (cons, sliced, thin), as it is laid out.
 */
static int chars(const struct heap *h, uint64_t tagged, uint32_t from, uint32_t n,
		 uint16_t *out, int depth)
{
	const int *v = h->b->v;
	int type = type_of(h, tagged);
	int32_t len;
	uint64_t at, first;
	int64_t off;

	if (type < 0 || type >= v[FIRST_NONSTRING] || !depth ||
	    remote__read(h->pid, tagged - V8_HEAP_TAG + v[STRING_LENGTH], &len, sizeof(len)) ||
	    len < 0 || from > (uint32_t)len || n > (uint32_t)len - from)
		return -EFAULT;
	if (!n)
		return 0;
	switch (type & 7) {
	case V8_STRING_SEQ:
		at = tagged - V8_HEAP_TAG + v[SEQ_CHARS];
		break;
	case V8_STRING_EXTERNAL:
		if ((type & V8_STRING_UNCACHED) || word(h, tagged, V8_EXTERNAL_DATA, &at))
			return -EFAULT;
		break;
	case V8_STRING_CONS: {
		int32_t flen;

		if (word(h, tagged, v[CONS_FIRST], &first) ||
		    remote__read(h->pid, first - V8_HEAP_TAG + v[STRING_LENGTH], &flen, sizeof(flen)) ||
		    flen < 0 || flen > len)
			return -EFAULT;
		if (from < (uint32_t)flen) {
			uint32_t k = n < (uint32_t)flen - from ? n : (uint32_t)flen - from;

			if (chars(h, first, from, k, out, depth - 1))
				return -EFAULT;
			from += k, n -= k, out += k;
		}
		if (!n)
			return 0;
		if (word(h, tagged, v[CONS_SECOND], &at))
			return -EFAULT;
		return chars(h, at, from - flen, n, out, depth - 1);
	}
	case V8_STRING_SLICED:
		if (word(h, tagged, v[SLICED_PARENT], &at) || smi(h, tagged, v[SLICED_OFFSET], &off) ||
		    off < 0 || off > INT32_MAX)
			return -EFAULT;
		return chars(h, at, from + off, n, out, depth - 1);
	case V8_STRING_THIN:
		if (word(h, tagged, v[THIN_ACTUAL], &at))
			return -EFAULT;
		return chars(h, at, from, n, out, depth - 1);
	default:
		return -EFAULT;
	}
	if (type & V8_STRING_ONE_BYTE) {
		uint8_t *raw = (uint8_t *)out + n;

		/* Read into the buffer's upper half, widened from the front. */
		if (remote__read(h->pid, at + from, raw, n))
			return -EFAULT;
		for (uint32_t i = 0; i < n; i++)
			out[i] = raw[i];
		return 0;
	}
	return remote__read(h->pid, at + 2 * (uint64_t)from, out, 2 * (size_t)n);
}

/* String @tagged's length; -1 if it is no string. */
static int64_t length_of(const struct heap *h, uint64_t tagged)
{
	int type = type_of(h, tagged);
	int32_t len;

	if (type < 0 || type >= h->b->v[FIRST_NONSTRING] ||
	    remote__read(h->pid, tagged - V8_HEAP_TAG + h->b->v[STRING_LENGTH], &len, sizeof(len)) ||
	    len < 0)
		return -1;
	return len;
}

/*
 * String @tagged as UTF-8 into @out (@size bytes), at most @max
 * characters and "..." after those cut; an empty string is "".
 */
static int string(const struct heap *h, uint64_t tagged, char *out, size_t size, size_t max)
{
	uint16_t buf[V8_FILE_MAX];
	int64_t len = length_of(h, tagged);
	size_t n, o = 0;

	if (len < 0)
		return -EFAULT;
	if (max > V8_FILE_MAX)
		max = V8_FILE_MAX;
	n = (uint64_t)len < max ? (size_t)len : max;
	if (chars(h, tagged, 0, n, buf, V8_STRING_DEPTH))
		return -EFAULT;
	for (size_t i = 0; i < n && o + 4 < size; i++) {
		uint32_t c = buf[i];
		size_t w;

		/* A surrogate pair is one character; a lone one is said as V8 would, U+FFFD. */
		if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && buf[i + 1] >= 0xdc00 && buf[i + 1] < 0xe000)
			c = 0x10000 + ((c - 0xd800) << 10) + (buf[++i] - 0xdc00);
		else if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd;
		w = c ? utf8__put(out + o, size - o - 1, c) :
			o + 5 < size ? (memcpy(out + o, "\\x00", 4), 4) : 0;
		if (!w)
			break;
		o += w;
	}
	if ((uint64_t)len > n && o + 3 < size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return 0;
}

/*
 * A ScopeInfo's function name (or the name V8 inferred for an anonymous
 * function, obj.method) and where the function starts in its script (V8's
 * scope-info.tq, the same in 10.2 and 11.3).
 */
static void scope_info(const struct heap *h, uint64_t si, uint64_t *name, int64_t *start)
{
	int64_t flags, locals, type;
	uint64_t slot = 8, fname = 0, inferred = 0;

	*name = 0;
	if (smi(h, si, 8, &flags) || smi(h, si, 24, &locals) || locals < 0 || locals > 1 << 20)
		return;
	slot += 8 * (3 + (locals < 75 ? locals : 1) + locals);
	if (flags >> 10 & 1)		/* a saved class variable */
		slot += 8;
	if (flags >> 12 & 3) {		/* the function variable: its name, its slot */
		word(h, si, slot, &fname);
		slot += 16;
	}
	if (flags >> 14 & 1) {		/* an inferred name */
		word(h, si, slot, &inferred);
		slot += 8;
	}
	type = flags & 15;
	/* Function, script, eval, module and shadow realm scopes, and classes', keep their place. */
	if (type == 1 || type == 2 || type == 3 || type == 4 || type == 8 ||
	    (type == 0 && !(flags >> 29 & 1)))
		smi(h, si, slot, start);
	*name = length_of(h, fname) > 0 ? fname : length_of(h, inferred) > 0 ? inferred : 0;
}

/*
 * The line of offset @pos in script @script: by its line ends where V8
 * made them (Error.stack does), else counted in its source, whose ends
 * are kept for the script's next function.
 */
struct lines {
	struct proc_key proc;
	uint64_t script;
	uint32_t *ends;		/* each line's end, ascending */
	uint32_t n;
};

#define LINES_CACHED 32

static struct lines lines_cache[LINES_CACHED];
static unsigned int lines_next;

static const struct lines *script_lines(const struct heap *h, const struct proc_key *p,
					uint64_t script)
{
	const int *v = h->b->v;
	struct lines *l;
	uint64_t ends, source;
	uint16_t *buf;
	int64_t len, n;
	uint32_t *e;
	size_t cap = 1024, k = 0;

	for (int i = 0; i < LINES_CACHED; i++)
		if (lines_cache[i].script == script && lines_cache[i].proc.tgid == p->tgid &&
		    lines_cache[i].proc.start_ns == p->start_ns)
			return &lines_cache[i];
	if (word(h, script, v[SCRIPT_LINE_ENDS], &ends))
		return NULL;
	e = malloc(cap * sizeof(*e));
	if (!e)
		return NULL;
	if (type_of(h, ends) == v[TYPE_FIXED_ARRAY] && !smi(h, ends, v[FIXED_LENGTH], &n) &&
	    n > 0 && n < 1 << 24) {
		for (int64_t i = 0; i < n; i++) {
			uint32_t *bigger = k < cap ? e : reallocarray(e, cap *= 2, sizeof(*e));
			int64_t end;

			if (!bigger)
				break;
			e = bigger;
			if (smi(h, ends, v[FIXED_DATA] + 8 * i, &end))
				break;
			e[k++] = end;
		}
	} else if (!word(h, script, v[SCRIPT_SOURCE], &source) &&
		   (len = length_of(h, source)) >= 0 && len <= V8_SOURCE_MAX) {
		enum { CHUNK = 65536 };

		buf = malloc(CHUNK * sizeof(*buf));
		for (int64_t at = 0; buf && at < len; at += CHUNK) {
			uint32_t m = len - at < CHUNK ? len - at : CHUNK;

			if (chars(h, source, at, m, buf, V8_STRING_DEPTH))
				break;
			for (uint32_t i = 0; i < m; i++) {
				/* V8's line terminators: \n, \r not before \n, U+2028, U+2029. */
				bool end = buf[i] == '\n' || buf[i] == 0x2028 || buf[i] == 0x2029 ||
					   (buf[i] == '\r' && !(i + 1 < m && buf[i + 1] == '\n'));

				if (!end)
					continue;
				if (k == cap) {
					uint32_t *bigger = reallocarray(e, cap *= 2, sizeof(*e));

					if (!bigger)
						goto done;
					e = bigger;
				}
				e[k++] = at + i;
			}
		}
done:
		free(buf);
	}
	l = &lines_cache[lines_next++ % LINES_CACHED];
	free(l->ends);
	*l = (struct lines){ *p, script, e, k };
	return l;
}

static uint32_t line_of(const struct lines *l, int64_t pos)
{
	uint32_t lo = 0, hi = l->n;

	/* The first end at or after @pos: its line. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (l->ends[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1;
}

/*
 * Names SharedFunctionInfo @shared in process @p: its function's name, its
 * script's and its first line, if it is still the function a frame was
 * taken from (its type, and the low @bits of its check @check; -1: known
 * to be).
 */
static int function_name(const struct heap *h, const struct proc_key *p, uint64_t shared,
			 int check, int bits, struct frame_name *out)
{
	const int *v = h->b->v;
	uint64_t name_or_si, script, name = 0, data;
	char func[4 * V8_NAME_MAX + 4] = "", file[4 * V8_FILE_MAX + 4] = "";
	int64_t start = -1;
	uint32_t line = 0;
	int type;

	type = type_of(h, shared);
	if (type < 0)
		return -EFAULT;
	if (type != v[TYPE_SHARED] || word(h, shared, v[SHARED_NAME], &name_or_si) ||
	    word(h, shared, v[SHARED_SCRIPT], &script) ||
	    (check >= 0 && (v8_frame_check(name_or_si, script) & ((1U << bits) - 1)) != (uint32_t)check))
		return -ESTALE;
	type = type_of(h, name_or_si);
	if (type == v[TYPE_SCOPE_INFO])
		scope_info(h, name_or_si, &name, &start);
	else if (type >= 0 && type < v[FIRST_NONSTRING] && length_of(h, name_or_si) > 0)
		name = name_or_si;
	/* Not compiled, or its bytecode flushed: where it starts is kept beside its name. */
	if (start < 0 && !word(h, shared, v[SHARED_DATA], &data)) {
		type = type_of(h, data);
		if (type >= v[TYPE_UNCOMPILED_FIRST] && type <= v[TYPE_UNCOMPILED_LAST]) {
			int32_t s;

			if (!remote__read(h->pid, data - V8_HEAP_TAG + v[UNCOMPILED_START], &s, sizeof(s)))
				start = s;
		}
	}
	/* As V8's own stack traces call them. */
	if (!name || string(h, name, func, sizeof(func), V8_NAME_MAX))
		snprintf(func, sizeof(func), "<anonymous>");
	if (type_of(h, script) == v[TYPE_SCRIPT]) {
		uint64_t sname;

		if (word(h, script, v[SCRIPT_NAME], &sname) ||
		    string(h, sname, file, sizeof(file), V8_FILE_MAX))
			snprintf(file, sizeof(file), "<anonymous>");
		if (start >= 0) {
			const struct lines *l = script_lines(h, p, script);

			if (l && l->n)
				line = line_of(l, start);
		}
	} else {
		snprintf(file, sizeof(file), "<native>");
	}
	return frame_name__make(out, func, file, line);
}

/* Code V8 compiled: where its instructions are, and what they are. */
struct v8_code {
	uint64_t code;		/* the Code, tagged */
	uint64_t start, end;	/* its instructions */
	int kind;
};

/* How far before an address the start of its code is looked for; how much is read at once. */
#define V8_CODE_SCAN		(1 << 20)
#define V8_CODE_CHUNK		4096
/* Code starts 32-byte aligned at least (kCodeAlignment), on every 64-bit target. */
#define V8_CODE_ALIGN		32

/* Is @s the start of a Code's instructions, which run past @pc? Then *@out is it. */
static bool code_starts(const struct heap *h, uint64_t s, uint64_t pc, uint64_t tagged,
			struct v8_code *out)
{
	const int *v = h->b->v;
	uint64_t start = s;
	uint32_t flags, size;

	if (type_of(h, tagged) != v[TYPE_CODE] ||
	    (v[CODE_START] < 0 && (word(h, tagged, V8_CODE_START_AT, &start) || start != s)) ||
	    remote__read(h->pid, tagged - V8_HEAP_TAG + v[CODE_FLAGS], &flags, sizeof(flags)) ||
	    remote__read(h->pid, tagged - V8_HEAP_TAG + v[CODE_SIZE], &size, sizeof(size)) ||
	    pc - s >= size)
		return false;
	*out = (struct v8_code){ tagged, s, s + size, flags & 15 };
	return true;
}

/*
 * The Code whose instructions hold @pc, found by looking back from it for
 * a start its Code (by its type, and its own account of where its
 * instructions are and how long) confirms: 0, or -ENOENT.
 */
static int code_scan(const struct heap *h, uint64_t pc, struct v8_code *out)
{
	const int *v = h->b->v;
	/* What is read before a start: its Code's header, or its InstructionStream's. */
	uint64_t before = v[CODE_START] > 0 ? v[CODE_START] : 16, chunk[V8_CODE_CHUNK / 8];
	uint64_t s = pc & ~(uint64_t)(V8_CODE_ALIGN - 1);

	for (uint64_t lo, hi; s + V8_CODE_SCAN > pc && s >= before; ) {
		/* Words [lo, hi): every start down to lo + before; a mapping's first page at least. */
		hi = s + 8;
		lo = hi < sizeof(chunk) ? 0 : hi - sizeof(chunk);
		if (remote__read(h->pid, lo, chunk, hi - lo)) {
			uint64_t page = (s - before) & ~(uint64_t)(V8_CODE_CHUNK - 1);

			if (page <= lo || remote__read(h->pid, page, chunk, hi - page))
				return -ENOENT;
			lo = page;
		}
		for (; s >= lo + before; s -= V8_CODE_ALIGN) {
			uint64_t first = chunk[(s - before - lo) / 8], tagged;

			/* Its map first; in an InstructionStream, its Code after it. */
			if (!is_heap(first))
				continue;
			tagged = v[CODE_START] > 0 ? s - before + V8_HEAP_TAG : chunk[(s - 8 - lo) / 8];
			if (is_heap(tagged) && code_starts(h, s, pc, tagged, out))
				return 0;
			if (s < V8_CODE_ALIGN)
				return -ENOENT;
		}
	}
	return -ENOENT;
}

/*
 * Code found lately, to be confirmed again rather than looked for: a big
 * function's addresses are named one by one, each a scan of up to its size.
 */
#define CODES_SEEN 64

static struct {
	struct proc_key p;
	struct v8_code code;
} codes_seen[CODES_SEEN];
static unsigned int codes_next;

static int code_at(const struct heap *h, const struct proc_key *p, uint64_t pc,
		   struct v8_code *out)
{
	for (int i = 0; i < CODES_SEEN; i++) {
		const struct v8_code *c = &codes_seen[i].code;

		if (codes_seen[i].p.tgid == p->tgid && codes_seen[i].p.start_ns == p->start_ns &&
		    pc >= c->start && pc < c->end && code_starts(h, c->start, pc, c->code, out))
			return 0;
	}
	if (code_scan(h, pc, out))
		return -ENOENT;
	codes_seen[codes_next % CODES_SEEN].p = *p;
	codes_seen[codes_next++ % CODES_SEEN].code = *out;
	return 0;
}

/* Element @i of FixedArray (or WeakFixedArray) @array, of type @type: 0, or -EFAULT. */
static int element(const struct heap *h, uint64_t array, int type, int64_t i, uint64_t *out)
{
	const int *v = h->b->v;
	int64_t n;

	if (type_of(h, array) != type || smi(h, array, v[FIXED_LENGTH], &n) || i < 0 || i >= n)
		return -EFAULT;
	return word(h, array, v[FIXED_DATA] + 8 * i, out);
}

/* ByteArray @array's bytes (at most @max): malloc'd into *@out, their count; -EFAULT. */
static int64_t bytes(const struct heap *h, uint64_t array, int64_t max, uint8_t **out)
{
	const int *v = h->b->v;
	int64_t n;

	if (type_of(h, array) != v[TYPE_BYTE_ARRAY] || smi(h, array, v[FIXED_LENGTH], &n) ||
	    n < 0 || n > max || !(*out = malloc(n ? n : 1)))
		return -EFAULT;
	if (remote__read(h->pid, array - V8_HEAP_TAG + v[FIXED_DATA], *out, n)) {
		free(*out);
		return -EFAULT;
	}
	return n;
}

/* A source position table's signed numbers: base-128, least significant first, zigzag. */
static bool vlq(const uint8_t *b, int64_t n, int64_t *at, int64_t *out)
{
	uint64_t u = 0;

	for (int shift = 0; *at < n && shift < 64; shift += 7) {
		uint8_t c = b[(*at)++];

		u |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
			return true;
		}
	}
	return false;
}

/*
 * The source position of offset @off in @code: its table's last entry at or
 * before @off. Pairs of deltas from (-1, 0): the code offset's (negative
 * for a place not a statement's: -delta - 1), and the position's. A
 * position's bits 31-46 are the inlined call it is in (0: none).
 */
static int position_at(const struct heap *h, const struct v8_code *code, uint64_t off,
		       uint64_t *out)
{
	int64_t n, at = 0, code_off = -1, d;
	uint64_t table, pos = 0;
	uint8_t *b;
	bool found = false;

	if (word(h, code->code, h->b->v[CODE_POSITIONS], &table) ||
	    (n = bytes(h, table, 1 << 20, &b)) < 0)
		return -EFAULT;
	while (at < n) {
		/* Code offsets fit an int; a delta that does not is no table's. */
		if (!vlq(b, n, &at, &d) || d > INT32_MAX || d < INT32_MIN)
			break;
		code_off += d >= 0 ? d : -d - 1;
		if (code_off > (int64_t)off)
			break;
		if (!vlq(b, n, &at, &d))
			break;
		pos += (uint64_t)d;
		found = true;
	}
	free(b);
	if (!found)
		return -ENOENT;
	*out = pos;
	return 0;
}

#define V8_INLINE_MAX		32
#define V8_INLINING_ID(pos)	((uint32_t)((pos) >> 31) & 0xffff)

/*
 * The SharedFunctionInfos of the calls optimized @code inlined at @off,
 * innermost first: how many. Its deoptimization data says, for inlining
 * id i, where in its caller the call was (InliningPosition i - 1, 16
 * bytes: that position, the function's index in the literals).
 */
static int inlined_at(const struct heap *h, const struct v8_code *code, uint64_t off,
		      uint64_t shared[V8_INLINE_MAX])
{
	const int *v = h->b->v;
	uint64_t deopt, count, literals, inlining, pos;
	int64_t ninl;
	uint8_t *b = NULL;
	int n = 0;

	if (position_at(h, code, off, &pos) || !V8_INLINING_ID(pos) ||
	    word(h, code->code, v[CODE_DEOPT], &deopt) ||
	    element(h, deopt, v[TYPE_FIXED_ARRAY], v[DEOPT_INLINED], &count) || (count & 1) ||
	    (int64_t)count <= 0 ||
	    element(h, deopt, v[TYPE_FIXED_ARRAY], v[DEOPT_LITERALS], &literals) ||
	    element(h, deopt, v[TYPE_FIXED_ARRAY], v[DEOPT_INLINING], &inlining) ||
	    (ninl = bytes(h, inlining, 16 * 4096, &b)) < 0)
		return 0;
	for (uint32_t id = V8_INLINING_ID(pos), last = UINT32_MAX; id && n < V8_INLINE_MAX;
	     last = id, id = V8_INLINING_ID(pos)) {
		int32_t fn;

		/* Ever outward: a caller's call was inlined before its callee's. */
		if (id >= last || 16 * (int64_t)id > ninl)
			break;
		memcpy(&pos, b + 16 * (id - 1), 8);
		memcpy(&fn, b + 16 * (id - 1) + 8, 4);
		/* Its literals are weak references: a heap object's tag with bit 1 set. */
		if (fn < 0 || fn >= (int64_t)count >> 32 ||
		    element(h, literals, v[TYPE_WEAK_FIXED_ARRAY], fn, &shared[n]))
			break;
		shared[n] &= ~(uint64_t)2;
		n++;
	}
	free(b);
	return n;
}

/*
 * A frame in code V8 compiled, at @pc: optimized code's function and the
 * calls it inlined there, innermost first, if the code holds @pc and is
 * its function's; else its function alone, by the SharedFunctionInfo the
 * walk saw (@shared, 0 if it did not tell).
 */
static int code_frame_name(const struct heap *h, const struct runtime_read *r, uint64_t shared,
			   struct frame_name *out)
{
	const int *v = h->b->v;
	int check = V8_FRAME_CHECK(r->v), n = 0, err;
	uint64_t pc = V8_FRAME_PC(r->v), inlined[V8_INLINE_MAX], deopt, own;
	struct v8_code code;

	if (h->b->code && !code_at(h, r->p, pc, &code) && code.kind > v[CODE_KIND_BASELINE] &&
	    !word(h, code.code, v[CODE_DEOPT], &deopt) &&
	    !element(h, deopt, v[TYPE_FIXED_ARRAY], v[DEOPT_SHARED], &own) &&
	    (!shared || own == shared)) {
		shared = own;
		n = inlined_at(h, &code, pc - code.start, inlined);
	}
	if (!shared)
		return -ESTALE;
	err = function_name(h, r->p, shared, check, V8_CODE_CHECK_BITS, out);
	if (err || !n)
		return err;
	out->inlined = calloc(n, sizeof(*out->inlined));
	if (!out->inlined)
		return FRAME_NAME_PARTIAL;
	for (int i = 0; i < n; i++) {
		if (function_name(h, r->p, inlined[i], -1, 0, &out->inlined[out->ninlined]))
			return frame_name__drop_inlined(out);
		out->ninlined++;
	}
	return 0;
}

/* Names frame @r->v of process @r->p, if it is still the function the frame was taken from. */
static int read_name(void *ctx, struct frame_name *out)
{
	const struct runtime_read *r = ctx;
	const struct heap h = { r->p->tgid, r->binary };

	if (V8_FRAME_AT_CODE(r->v))
		return code_frame_name(&h, r, r->data ? r->data + V8_HEAP_TAG : 0, out);
	return function_name(&h, r->p, V8_FRAME_SHARED(r->v) + V8_HEAP_TAG, V8_FRAME_CHECK(r->v),
			     V8_CHECK_BITS, out);
}

static const struct frame_names_words words = {
	.runtime = "JavaScript",
	.unknown = "[unknown js]",
	.changed = "their function was moved or freed by V8's collector",
};

const struct runtime_ops v8_runtime = {
	.name = "v8",
	.id = RUNTIME_V8,
	.probe = probe,
	.binary_free = binary_free,
	.bpf_proc = bpf_proc,
	.frame_kind = FRAME_JS,
	.words = &words,
	.read_name = read_name,
	/* A frame in compiled code is its address: the function the walk saw of it is its data. */
	.named_by_frame = true,
};
