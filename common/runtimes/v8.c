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
};

/*
 * The V8 versions whose layouts are known here beyond what v8dbg says:
 * node 18's 10.2 and node 20's 11.3. Their JSFunction types (JSFunction,
 * then its kinds down to class constructors, V8's instance-type.h) are 16.
 */
static const struct {
	int major, minor;
	int function_types;
} versions[] = {
	{ 10, 2, 16 },
	{ 11, 3, 16 },
};

/* What v8.c knows of one V8 binary. */
struct v8_binary {
	char version[16];	/* "11.3" */
	int v[NSYMS];
	struct v8_layout l;
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

		if (!syms[i].st_value || elffile__read(elf, fd, syms[i].st_value, &v, sizeof(v)))
			goto unknown;
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
	if (b->l.function_shared > V8_OBJECT_READ - 8 || b->l.shared_name > V8_OBJECT_READ - 8 ||
	    b->l.shared_script > V8_OBJECT_READ - 8)
		goto unknown;
	pr_debug("%s: V8 %s: JavaScript frames named by their functions", path, b->version);
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
 * Reads frame @v's SharedFunctionInfo in process @p: its function's name,
 * its script's and its first line, if it is still the function the frame
 * was taken from (its type, its check the same).
 */
static int read_name(void *ctx, struct frame_name *out)
{
	const struct runtime_read *r = ctx;
	const struct v8_binary *b = r->binary;
	const struct heap h = { r->p->tgid, b };
	const int *v = b->v;
	uint64_t shared = V8_FRAME_SHARED(r->v) + V8_HEAP_TAG, name_or_si, script, name = 0, data;
	char func[4 * V8_NAME_MAX + 4] = "", file[4 * V8_FILE_MAX + 4] = "";
	int64_t start = -1;
	uint32_t line = 0;
	int type;

	type = type_of(&h, shared);
	if (type < 0)
		return -EFAULT;
	if (type != v[TYPE_SHARED] || word(&h, shared, v[SHARED_NAME], &name_or_si) ||
	    word(&h, shared, v[SHARED_SCRIPT], &script) ||
	    v8_frame_check(name_or_si, script) != V8_FRAME_CHECK(r->v))
		return -ESTALE;
	type = type_of(&h, name_or_si);
	if (type == v[TYPE_SCOPE_INFO])
		scope_info(&h, name_or_si, &name, &start);
	else if (type >= 0 && type < v[FIRST_NONSTRING] && length_of(&h, name_or_si) > 0)
		name = name_or_si;
	/* Not compiled, or its bytecode flushed: where it starts is kept beside its name. */
	if (start < 0 && !word(&h, shared, v[SHARED_DATA], &data)) {
		type = type_of(&h, data);
		if (type >= v[TYPE_UNCOMPILED_FIRST] && type <= v[TYPE_UNCOMPILED_LAST]) {
			int32_t s;

			if (!remote__read(h.pid, data - V8_HEAP_TAG + v[UNCOMPILED_START], &s, sizeof(s)))
				start = s;
		}
	}
	/* As V8's own stack traces call them. */
	if (!name || string(&h, name, func, sizeof(func), V8_NAME_MAX))
		snprintf(func, sizeof(func), "<anonymous>");
	if (type_of(&h, script) == v[TYPE_SCRIPT]) {
		uint64_t sname;

		if (word(&h, script, v[SCRIPT_NAME], &sname) ||
		    string(&h, sname, file, sizeof(file), V8_FILE_MAX))
			snprintf(file, sizeof(file), "<anonymous>");
		if (start >= 0) {
			const struct lines *l = script_lines(&h, r->p, script);

			if (l && l->n)
				line = line_of(l, start);
		}
	} else {
		snprintf(file, sizeof(file), "<native>");
	}
	return frame_name__make(out, func, file, line);
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
};
