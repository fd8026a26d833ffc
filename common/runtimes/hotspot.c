// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The HotSpot JVM (libjvm.so), found by the structures it describes to debuggers (gHotSpotVMStructs), and Java frames named from process memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "elffile.h"
#include "procfile.h"
#include "runtimes/names.h"
#include "runtimes/remote.h"
#include "runtimes/runtime.h"
#include "runtimes/seam.h"
#include "tool.h"

/*
 * The symbols libjvm exports for its serviceability agent: a table of its
 * structures' fields (gHotSpotVMStructs) and one of its types, each entry's
 * own layout in variables beside them, all filled in as the JVM starts.
 */
enum hs_sym {
	STRUCTS, S_TYPE, S_FIELD, S_STATIC, S_OFFSET, S_ADDRESS, S_STRIDE,
	TYPES, T_TYPE, T_SIZE, T_STRIDE,
	NSYMS
};

static const char *const sym_names[NSYMS] = {
	[STRUCTS] = "gHotSpotVMStructs",
	[S_TYPE] = "gHotSpotVMStructEntryTypeNameOffset",
	[S_FIELD] = "gHotSpotVMStructEntryFieldNameOffset",
	[S_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[S_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[S_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[S_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[TYPES] = "gHotSpotVMTypes",
	[T_TYPE] = "gHotSpotVMTypeEntryTypeNameOffset",
	[T_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
	[T_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
};

/* What the walk and the names read, each a field's offset (a static's address less the bias). */
enum hs_field {
	CC_HEAPS, CC_LOW, CC_HIGH, INTERP_CODE, VM_MAJOR,
	GA_LEN, GA_DATA, HEAP_MEMORY, HEAP_SEGMAP, HEAP_LOG2, VS_LOW, VS_HIGH,
	SQ_BUFFER, SQ_LIMIT,
	BLOB_COMPLETE, BLOB_FRAME_SIZE, BLOB_BEGIN, BLOB_END, BLOB_NAME,
	NM_METHOD, NM_SCOPES_DATA, NM_COMPILE_ID, NM_METADATA, NM_SCOPES_PCS, NM_DEPENDENCIES,
	PC_OFFSET, PC_SCOPE,
	M_CONST, CM_CONSTANTS, CM_FLAGS, CM_CODE_SIZE, CM_NAME, CM_SIGNATURE,
	CP_HOLDER, CP_SOURCE, K_NAME, SYM_LENGTH, SYM_BODY,
	NFIELDS
};

static const struct {
	const char *type, *field, *alt;	/* alt: the field's name in later JDKs */
} fields[NFIELDS] = {
	[CC_HEAPS] = { "CodeCache", "_heaps" },
	[CC_LOW] = { "CodeCache", "_low_bound" },
	[CC_HIGH] = { "CodeCache", "_high_bound" },
	[INTERP_CODE] = { "AbstractInterpreter", "_code" },
	[VM_MAJOR] = { "Abstract_VM_Version", "_vm_major_version" },
	[GA_LEN] = { "GrowableArrayBase", "_len" },
	[GA_DATA] = { "GrowableArray<int>", "_data" },
	[HEAP_MEMORY] = { "CodeHeap", "_memory" },
	[HEAP_SEGMAP] = { "CodeHeap", "_segmap" },
	[HEAP_LOG2] = { "CodeHeap", "_log2_segment_size" },
	[VS_LOW] = { "VirtualSpace", "_low_boundary" },
	[VS_HIGH] = { "VirtualSpace", "_high_boundary" },
	[SQ_BUFFER] = { "StubQueue", "_stub_buffer" },
	[SQ_LIMIT] = { "StubQueue", "_buffer_limit" },
	[BLOB_COMPLETE] = { "CodeBlob", "_frame_complete_offset" },
	[BLOB_FRAME_SIZE] = { "CodeBlob", "_frame_size" },
	[BLOB_BEGIN] = { "CodeBlob", "_code_begin" },
	[BLOB_END] = { "CodeBlob", "_code_end" },
	[BLOB_NAME] = { "CodeBlob", "_name" },
	[NM_METHOD] = { "CompiledMethod", "_method" },
	[NM_SCOPES_DATA] = { "CompiledMethod", "_scopes_data_begin" },
	[NM_COMPILE_ID] = { "nmethod", "_compile_id" },
	[NM_METADATA] = { "nmethod", "_metadata_offset" },
	[NM_SCOPES_PCS] = { "nmethod", "_scopes_pcs_offset" },
	[NM_DEPENDENCIES] = { "nmethod", "_dependencies_offset" },
	[PC_OFFSET] = { "PcDesc", "_pc_offset" },
	[PC_SCOPE] = { "PcDesc", "_scope_decode_offset" },
	[M_CONST] = { "Method", "_constMethod" },
	[CM_CONSTANTS] = { "ConstMethod", "_constants" },
	[CM_FLAGS] = { "ConstMethod", "_flags", "_flags._flags" },
	[CM_CODE_SIZE] = { "ConstMethod", "_code_size" },
	[CM_NAME] = { "ConstMethod", "_name_index" },
	[CM_SIGNATURE] = { "ConstMethod", "_signature_index" },
	[CP_HOLDER] = { "ConstantPool", "_pool_holder" },
	[CP_SOURCE] = { "ConstantPool", "_source_file_name_index" },
	[K_NAME] = { "Klass", "_name" },
	[SYM_LENGTH] = { "Symbol", "_length" },
	[SYM_BODY] = { "Symbol", "_body" },
};

/* The sizes of types whose data follows them. */
enum hs_type { T_HEAP_BLOCK, T_CONST_METHOD, T_CONSTANT_POOL, T_PC_DESC, NTYPES };

static const char *const type_names[NTYPES] = {
	[T_HEAP_BLOCK] = "HeapBlock",
	[T_CONST_METHOD] = "ConstMethod",
	[T_CONSTANT_POOL] = "ConstantPool",
	[T_PC_DESC] = "PcDesc",
};

/* ConstMethod's flags: a line number table follows its bytecodes. */
#define HS_HAS_LINES		1
/* Entries of the tables read at most; names and lengths kept. */
#define HS_TABLE_MAX		8192
#define HS_NAME_MAX		1024
#define HS_INLINE_MAX		32
/*
 * Readings of a JVM that failed are tried again, each after twice as long
 * from 0.2 s: one caught while its libjvm is still being mapped, or its
 * tables filled in, reads as garbage does. A process younger than
 * HS_YOUNG_NS is said only once it has failed them all.
 */
#define HS_TRIES		6
#define HS_YOUNG_NS		2000000000ULL

/* JVM processes remembered, for walking and naming their frames. */
#define HS_PROCS		256

/*
 * What a JVM said of itself (its tables are filled in as it starts):
 * offsets of fields, statics less the load bias, types' sizes.
 */
struct hs_vm {
	int64_t f[NFIELDS];
	int64_t size[NTYPES];
	int major;
};

/*
 * A JVM process: what it said of itself, and its code cache. Each its own,
 * read in it: a process that maps a real libjvm and writes garbage where
 * its tables are (any user's can) misleads the tool about itself only.
 */
struct hs_proc {
	pid_t pid;
	unsigned long long start;	/* its start, in clock ticks: pids are reused */
	bool read, said;
	uint8_t fails;			/* readings that failed, HS_TRIES at most */
	uint64_t retry_ns;		/* when to try again (CLOCK_BOOTTIME) */
	struct hs_vm vm;
	struct hotspot_heap heap[HOTSPOT_HEAPS];
	uint64_t lo;			/* CodeCache::_low_bound: code frames are kept from it */
	uint8_t nheaps, log2;
};

/* The processes that run one libjvm, the oldest entry taken again. */
struct hs_procs {
	struct hs_proc p[HS_PROCS];
	unsigned int next;
};

struct hotspot_binary {
	GElf_Sym syms[NSYMS];
	struct hs_procs *procs;
};

static void *probe(int fd, Elf *elf, const char *path)
{
	struct hotspot_binary *b;

	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	if (elffile__lookup(elf, sym_names, NSYMS, b->syms) <= 0 || !b->syms[STRUCTS].st_value ||
	    !b->syms[TYPES].st_value) {
		free(b);
		return NULL;
	}
	for (int i = 0; i < NSYMS; i++)
		if (!b->syms[i].st_value) {
			pr_warn("%s: a JVM without %s: its Java frames are not walked", path,
				sym_names[i]);
			free(b);
			return NULL;
		}
	b->procs = calloc(1, sizeof(*b->procs));
	if (!b->procs) {
		free(b);
		return NULL;
	}
	pr_debug("%s: a HotSpot JVM: Java frames walked by its code cache", path);
	return b;
}

static void binary_free(void *binary)
{
	struct hotspot_binary *b = binary;

	if (b)
		free(b->procs);
	free(b);
}

static int rd(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return addr ? remote__read(pid, addr, buf, len) : -EFAULT;
}

/* A word, into a uint64_t or the BPF side's __u64 alike. */
static int rd64(pid_t pid, uint64_t addr, void *v)
{
	return rd(pid, addr, v, 8);
}

static int rd32(pid_t pid, uint64_t addr, int32_t *v)
{
	return rd(pid, addr, v, sizeof(*v));
}

static int rd16(pid_t pid, uint64_t addr, uint16_t *v)
{
	return rd(pid, addr, v, sizeof(*v));
}

/* A C string of the JVM's own (its tables' names) into @buf: 0, or -EFAULT. */
static int rdstr(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	struct iovec local = { buf, size - 1 }, remote = { (void *)(uintptr_t)addr, size - 1 };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	/* A short read: the string ends where its mapping does. */
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n <= 0)
		return -EFAULT;
	buf[n] = 0;
	return 0;
}

/* The entry layout variables: filled in as the JVM starts, so read from the process. */
static int layout(pid_t pid, const struct hotspot_binary *b, uint64_t bias, enum hs_sym s,
		  uint64_t *v)
{
	return rd64(pid, bias + b->syms[s].st_value, v);
}

/* Reads the fields and types wanted from the JVM's tables in process @pid. */
static int read_vm(const struct hotspot_binary *b, pid_t pid, uint64_t bias, struct hs_vm *vm)
{
	uint64_t table, off[NSYMS], prev_type = 0;
	bool wanted_type = false;
	char name[128], field[128];
	int32_t major;

	for (int i = 0; i < NSYMS; i++)
		if (i != STRUCTS && i != TYPES && layout(pid, b, bias, i, &off[i]))
			return -EFAULT;
	/* Not filled in yet: a JVM still starting (they are zero until it does). */
	if (!off[S_STRIDE] || !off[T_STRIDE])
		return -EAGAIN;
	if (off[S_STRIDE] < 48 || off[S_STRIDE] > 256 || off[T_STRIDE] < 40 ||
	    off[T_STRIDE] > 256) {
		pr_debug("pid %d: the JVM's tables' entries are %llu and %llu bytes", pid,
			 (unsigned long long)off[S_STRIDE], (unsigned long long)off[T_STRIDE]);
		return -EINVAL;
	}
	for (int i = S_TYPE; i < S_STRIDE; i++)
		if (off[i] > off[S_STRIDE] - 8) {
			pr_debug("pid %d: %s is %llu", pid, sym_names[i], (unsigned long long)off[i]);
			return -EINVAL;
		}
	for (int i = T_TYPE; i < T_STRIDE; i++)
		if (off[i] > off[T_STRIDE] - 8) {
			pr_debug("pid %d: %s is %llu", pid, sym_names[i], (unsigned long long)off[i]);
			return -EINVAL;
		}
	for (int i = 0; i < NFIELDS; i++)
		vm->f[i] = -1;
	for (int i = 0; i < NTYPES; i++)
		vm->size[i] = -1;
	if (layout(pid, b, bias, STRUCTS, &table) || !table)
		return -EAGAIN;
	for (int n = 0; n < HS_TABLE_MAX; n++, table += off[S_STRIDE]) {
		uint8_t e[256];
		uint64_t type, fname, value;
		int32_t is_static;

		if (rd(pid, table, e, off[S_STRIDE]))
			return -EFAULT;
		memcpy(&type, e + off[S_TYPE], 8);
		if (!type)
			break;
		/* Entries of one type are together, and share their type's name. */
		if (type != prev_type) {
			prev_type = type;
			wanted_type = false;
			if (rdstr(pid, type, name, sizeof(name)))
				continue;
			for (int i = 0; i < NFIELDS && !wanted_type; i++)
				wanted_type = !strcmp(name, fields[i].type);
		}
		if (!wanted_type)
			continue;
		memcpy(&fname, e + off[S_FIELD], 8);
		memcpy(&is_static, e + off[S_STATIC], 4);
		memcpy(&value, e + (is_static ? off[S_ADDRESS] : off[S_OFFSET]), 8);
		if (rdstr(pid, fname, field, sizeof(field)))
			continue;
		for (int i = 0; i < NFIELDS; i++)
			if (!strcmp(name, fields[i].type) &&
			    (!strcmp(field, fields[i].field) ||
			     (fields[i].alt && !strcmp(field, fields[i].alt))))
				vm->f[i] = is_static ? (int64_t)(value - bias) : (int64_t)value;
	}
	if (layout(pid, b, bias, TYPES, &table) || !table)
		return -EAGAIN;
	for (int n = 0; n < HS_TABLE_MAX; n++, table += off[T_STRIDE]) {
		uint8_t e[256];
		uint64_t type, size;

		if (rd(pid, table, e, off[T_STRIDE]))
			return -EFAULT;
		memcpy(&type, e + off[T_TYPE], 8);
		if (!type)
			break;
		memcpy(&size, e + off[T_SIZE], 8);
		if (rdstr(pid, type, name, sizeof(name)))
			continue;
		for (int i = 0; i < NTYPES; i++)
			if (!strcmp(name, type_names[i]))
				vm->size[i] = size;
	}
	for (int i = 0; i < NFIELDS; i++)
		if (vm->f[i] < 0) {
			pr_debug("pid %d: the JVM does not describe %s::%s", pid, fields[i].type,
				 fields[i].field);
			return -ENOENT;
		}
	for (int i = 0; i < NTYPES; i++)
		if (vm->size[i] <= 0)
			return -ENOENT;
	if (rd32(pid, bias + vm->f[VM_MAJOR], &major))
		return -EFAULT;
	vm->major = major;
	return 0;
}

/* The layout the walk needs, as the BPF side keeps it: 0, or -ERANGE where a field lies too far. */
static int bpf_layout(const struct hs_vm *vm, struct hotspot_layout *l)
{
	const int64_t in_blob[] = { vm->f[BLOB_COMPLETE], vm->f[BLOB_FRAME_SIZE],
				    vm->f[BLOB_BEGIN], vm->f[BLOB_END], vm->f[BLOB_NAME],
				    vm->f[NM_COMPILE_ID] };

	for (size_t i = 0; i < sizeof(in_blob) / sizeof(in_blob[0]); i++)
		if (in_blob[i] > HOTSPOT_BLOB_READ - 8)
			return -ERANGE;
	*l = (struct hotspot_layout){
		.block_header = vm->size[T_HEAP_BLOCK],
		.blob_frame_complete = vm->f[BLOB_COMPLETE],
		.blob_frame_size = vm->f[BLOB_FRAME_SIZE],
		.blob_code_begin = vm->f[BLOB_BEGIN],
		.blob_code_end = vm->f[BLOB_END],
		.blob_name = vm->f[BLOB_NAME],
		.nm_compile_id = vm->f[NM_COMPILE_ID],
		.method_const = vm->f[M_CONST],
		.const_size = vm->size[T_CONST_METHOD],
	};
	return 0;
}

/* Process @pid's code cache: its heaps (-EAGAIN: not made yet). */
static int read_heaps(const struct hs_vm *vm, pid_t pid, uint64_t bias, struct hs_proc *out)
{
	uint64_t heaps, data, heap[HOTSPOT_HEAPS];
	int32_t len, log2 = -1;

	out->nheaps = 0;
	if (rd64(pid, bias + vm->f[CC_HEAPS], &heaps))
		return -EFAULT;
	if (!heaps || rd32(pid, heaps + vm->f[GA_LEN], &len) ||
	    rd64(pid, heaps + vm->f[GA_DATA], &data) || len <= 0)
		return -EAGAIN;
	if (len > HOTSPOT_HEAPS || rd(pid, data, heap, len * sizeof(heap[0])))
		return -ERANGE;
	for (int i = 0; i < len; i++) {
		struct hotspot_heap *h = &out->heap[i];
		int32_t l;

		if (rd64(pid, heap[i] + vm->f[HEAP_MEMORY] + vm->f[VS_LOW], &h->lo) ||
		    rd64(pid, heap[i] + vm->f[HEAP_MEMORY] + vm->f[VS_HIGH], &h->hi) ||
		    rd64(pid, heap[i] + vm->f[HEAP_SEGMAP] + vm->f[VS_LOW], &h->segmap) ||
		    rd32(pid, heap[i] + vm->f[HEAP_LOG2], &l))
			return -EFAULT;
		/* The walk takes one segment size for all. */
		if (l < 0 || l > 16 || (log2 >= 0 && l != log2) || h->lo >= h->hi || !h->segmap)
			return -ERANGE;
		log2 = l;
	}
	out->nheaps = len;
	out->log2 = log2;
	return 0;
}

/*
 * Says why process @pid's Java frames stay native: once for it (its entry
 * remembers), and of the first few only, as a host may run many alike.
 */
static void say_unread(pid_t pid, int err)
{
	static unsigned int said;

	if (said++ < 4)
		pr_warn("pid %d: its JVM could not be read (%s): its Java frames are not walked",
			pid, err == -ENOENT ? "a HotSpot whose structures are not known here" :
			strerror(-err));
	else
		pr_debug("pid %d: its JVM could not be read (%s)", pid, strerror(-err));
}

/*
 * An entry for a new process: one never used, or a process's that is gone;
 * else the oldest taken again, its JVM's frames no longer named (said once).
 */
static struct hs_proc *free_entry(struct hs_procs *procs)
{
	static bool said;
	unsigned long long start;
	uid_t uid;

	for (int i = 0; i < HS_PROCS; i++) {
		struct hs_proc *p = &procs->p[i];

		if (!p->pid || procfile__identity(p->pid, &uid, &start) || start != p->start)
			return p;
	}
	if (!said) {
		said = true;
		pr_warn("more than %d JVMs run one libjvm: the Java frames of those read first are "
			"[unknown java] once others take their place", HS_PROCS);
	}
	return &procs->p[procs->next++ % HS_PROCS];
}

/* Process @pid's entry, made anew if it is not the process it was: NULL if it is gone. */
static struct hs_proc *proc_entry(struct hs_procs *procs, pid_t pid)
{
	unsigned long long start;
	struct hs_proc *p;
	uid_t uid;

	if (procfile__identity(pid, &uid, &start))
		return NULL;
	for (int i = 0; i < HS_PROCS; i++) {
		p = &procs->p[i];
		if (p->pid == pid && p->start == start)
			return p;
	}
	p = free_entry(procs);
	*p = (struct hs_proc){ .pid = pid, .start = start };
	return p;
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Process @p could not be read (@err): tried again later, said once it is no longer starting. */
static int unread(struct hs_proc *p, int err)
{
	uint64_t now = boottime_ns(), start = p->start * (1000000000ULL / sysconf(_SC_CLK_TCK));

	p->read = false;
	if (p->fails < HS_TRIES)
		p->fails++;
	p->retry_ns = now + (100000000ULL << p->fails);
	if (!p->said && (p->fails == HS_TRIES || now - start >= HS_YOUNG_NS)) {
		p->said = true;
		say_unread(p->pid, err);
	}
	return err;
}

static int bpf_proc(const void *binary, pid_t pid, uint64_t bias, uint32_t id,
		    struct runtime_proc *out)
{
	const struct hotspot_binary *b = binary;
	struct hotspot_proc *hp = &out->hotspot;
	struct hs_proc *p = proc_entry(b->procs, pid);
	uint64_t queue, buffer;
	int32_t limit;
	int err;

	if (!p)
		return -ESRCH;
	if (p->fails && (p->fails == HS_TRIES || boottime_ns() < p->retry_ns))
		return -ENOENT;
	if (!p->read) {
		err = read_vm(b, pid, bias, &p->vm);
		if (err == -EAGAIN)
			return err;
		if (err)
			return unread(p, err);
		p->read = true;
		pr_debug("pid %d: HotSpot %d: Java frames walked by its code cache", pid, p->vm.major);
	}
	err = bpf_layout(&p->vm, &hp->l);
	if (!err)
		err = read_heaps(&p->vm, pid, bias, p);
	if (err == -EAGAIN)
		return err;
	if (err)
		return unread(p, err);
	if (rd64(pid, bias + p->vm.f[CC_LOW], &hp->lo) ||
	    rd64(pid, bias + p->vm.f[CC_HIGH], &hp->hi) ||
	    rd64(pid, bias + p->vm.f[INTERP_CODE], &queue) || !queue ||
	    rd64(pid, queue + p->vm.f[SQ_BUFFER], &buffer) ||
	    rd32(pid, queue + p->vm.f[SQ_LIMIT], &limit) || limit <= 0)
		return -EAGAIN;
	p->lo = hp->lo;
	hp->interp_lo = buffer;
	hp->interp_hi = buffer + limit;
	memcpy(hp->heap, p->heap, sizeof(hp->heap));
	hp->l.nheaps = p->nheaps;
	hp->l.log2_segment = p->log2;
	return 0;
}

/* Reading one JVM's memory: what naming its frames reads through. */
struct jvm {
	pid_t pid;
	const struct hs_vm *vm;
	const struct hs_proc *p;
};

/* Symbol @sym's characters into @out, '/' as '.' if @dots: 0, or -EFAULT. */
static int symbol(const struct jvm *j, uint64_t sym, char *out, size_t size, bool dots)
{
	uint16_t len;

	if (!sym || (sym & 7) || rd16(j->pid, sym + j->vm->f[SYM_LENGTH], &len) || !len ||
	    len >= size || len > HS_NAME_MAX ||
	    rd(j->pid, sym + j->vm->f[SYM_BODY], out, len))
		return -EFAULT;
	out[len] = 0;
	for (int i = 0; i < len; i++) {
		/* The JVM's names: modified UTF-8, never a control character. */
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			return -EFAULT;
		if (dots && out[i] == '/')
			out[i] = '.';
	}
	return 0;
}

/* Constant pool @cp's entry @i, a Symbol (its low bit a tag). */
static int pool_symbol(const struct jvm *j, uint64_t cp, uint16_t i, char *out, size_t size)
{
	uint64_t sym;

	if (!i || rd64(j->pid, cp + j->vm->size[T_CONSTANT_POOL] + 8ULL * i, &sym))
		return -EFAULT;
	return symbol(j, sym & ~1ULL, out, size, false);
}

/*
 * A hidden class's name without what differs from run to run: the address
 * after its '/', and a lambda's number or address ("Cheese$$Lambda$14/0x0000000800c03000"
 * in 17, "Cheese$$Lambda+0x00007f1d04000c08" in 21, are "Cheese$$Lambda").
 */
static void hidden_class(char *name)
{
	char *slash = strstr(name, "/0x"), *lambda = strstr(name, "$$Lambda");

	if (slash)
		*slash = 0;
	if (lambda)
		lambda[strlen("$$Lambda")] = 0;
}

/* Reads unsigned ints as HotSpot's CompressedReadStream writes them (UNSIGNED5 from JDK 20). */
struct stream {
	const struct jvm *j;
	uint64_t at, end;
	uint8_t buf[256];
	uint64_t buf_at;
	uint32_t buf_len;
};

static int next_byte(struct stream *s, uint8_t *b)
{
	if (s->at >= s->end)
		return -EFAULT;
	if (s->at < s->buf_at || s->at >= s->buf_at + s->buf_len) {
		uint32_t n = s->end - s->at < sizeof(s->buf) ? s->end - s->at : sizeof(s->buf);

		if (rd(s->j->pid, s->at, s->buf, n))
			return -EFAULT;
		s->buf_at = s->at;
		s->buf_len = n;
	}
	*b = s->buf[s->at++ - s->buf_at];
	return 0;
}

static int read_uint(struct stream *s, uint32_t *v)
{
	/*
	 * Bytes below 192 end a number, each byte after the first worth 64
	 * times more; from JDK 20 every byte is one more, so none is 0.
	 */
	const uint32_t x = s->j->vm->major >= 20;
	uint32_t sum = 0;
	uint8_t b;

	for (int i = 0, shift = 0; i < 5; i++, shift += 6) {
		if (next_byte(s, &b) || b < x)
			return -EFAULT;
		sum += (uint32_t)(b - x) << shift;
		if (b < 192)
			break;
	}
	*v = sum;
	return 0;
}

static int read_sint(struct stream *s, int32_t *v)
{
	uint32_t u;

	if (read_uint(s, &u))
		return -EFAULT;
	*v = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
	return 0;
}

/* The source line of bytecode @bci of ConstMethod @cm: 0 if it has no line table. */
static uint32_t line_of(const struct jvm *j, uint64_t cm, uint32_t bci)
{
	struct stream s = { .j = j };
	uint16_t flags16, size;
	uint32_t flags = 0, best_bci = 0, best = 0, at_bci = 0;
	int32_t line = 0;

	if (rd16(j->pid, cm + j->vm->f[CM_FLAGS], &flags16) ||
	    rd16(j->pid, cm + j->vm->f[CM_CODE_SIZE], &size))
		return 0;
	flags = flags16;
	if (!(flags & HS_HAS_LINES))
		return 0;
	s.at = cm + j->vm->size[T_CONST_METHOD] + size;
	s.end = s.at + 65536;
	/* (bci, line) pairs: a byte with both deltas, or 0xff and two numbers; 0 ends them. */
	for (int n = 0; n < 65536; n++) {
		uint8_t b;

		if (next_byte(&s, &b) || !b)
			break;
		if (b == 0xff) {
			int32_t db, dl;

			if (read_sint(&s, &db) || read_sint(&s, &dl))
				break;
			at_bci += db;
			line += dl;
		} else {
			at_bci += b >> 3;
			line += b & 7;
		}
		if (at_bci == bci)
			return line > 0 ? line : 0;
		if (at_bci < bci && at_bci >= best_bci) {
			best_bci = at_bci;
			best = line;
		}
	}
	return best;
}

/* Method @m's class, name and file: 0, or -EFAULT. */
static int method_names(const struct jvm *j, uint64_t m, uint64_t *cm, char *func, size_t size,
			char *file, size_t fsize)
{
	uint64_t cp, holder, kname;
	uint16_t name_i, source_i;
	char cls[HS_NAME_MAX + 1], name[HS_NAME_MAX + 1];

	if (!m || (m & 7) || rd64(j->pid, m + j->vm->f[M_CONST], cm) ||
	    rd64(j->pid, *cm + j->vm->f[CM_CONSTANTS], &cp) ||
	    rd64(j->pid, cp + j->vm->f[CP_HOLDER], &holder) ||
	    rd64(j->pid, holder + j->vm->f[K_NAME], &kname) ||
	    symbol(j, kname, cls, sizeof(cls), true) ||
	    rd16(j->pid, *cm + j->vm->f[CM_NAME], &name_i) ||
	    pool_symbol(j, cp, name_i, name, sizeof(name)))
		return -EFAULT;
	hidden_class(cls);
	snprintf(func, size, "%s.%s", cls, name);
	if (rd16(j->pid, cp + j->vm->f[CP_SOURCE], &source_i) ||
	    pool_symbol(j, cp, source_i, file, fsize))
		snprintf(file, fsize, "Unknown Source");
	return 0;
}

/* Method @m at bytecode @bci (HOTSPOT_BCI_NONE: not known) as the reports name it. */
static int method_frame(const struct jvm *j, uint64_t m, uint32_t bci, struct frame_name *out)
{
	char func[2 * HS_NAME_MAX + 2], file[HS_NAME_MAX + 1];
	uint64_t cm;

	if (method_names(j, m, &cm, func, sizeof(func), file, sizeof(file)))
		return -EFAULT;
	return frame_name__make(out, func, file,
				bci == HOTSPOT_BCI_NONE ? 0 : line_of(j, cm, bci));
}

/*
 * A stub's frame (the call stub from C++ into Java, adapters, runtime
 * stubs), by its blob's name in brackets as other frames without a
 * function are: "[StubRoutines (1)]".
 */
static int stub_frame(const char *blob, struct frame_name *out)
{
	char *name, *func = strdup(blob), *file = strdup("");

	if (asprintf(&name, "[%s]", blob) < 0)
		name = NULL;
	if (!name || !func || !file) {
		free(name);
		free(func);
		free(file);
		return -ENOMEM;
	}
	*out = (struct frame_name){ name, func, file, 0 };
	return 0;
}

/* The blob whose code holds @pc in process @p's code cache, by its segment map: 0 if none. */
static uint64_t blob_of(const struct jvm *j, const struct hs_proc *p, uint64_t pc)
{
	for (int i = 0; i < p->nheaps; i++) {
		const struct hotspot_heap *h = &p->heap[i];
		uint64_t seg;

		if (pc < h->lo || pc >= h->hi)
			continue;
		seg = (pc - h->lo) >> p->log2;
		for (int hops = 0; hops < 64; hops++) {
			uint8_t hop;

			if (rd(j->pid, h->segmap + seg, &hop, 1) || hop == HOTSPOT_SEG_FREE ||
			    hop > seg)
				return 0;
			if (!hop)
				return h->lo + (seg << p->log2) + j->vm->size[T_HEAP_BLOCK];
			seg -= hop;
		}
	}
	return 0;
}

/*
 * The methods at @pc_off of nmethod @nm, innermost first, each with its
 * bytecode index: from its debug information (the PcDesc at or after the
 * offset, then its scopes). How many, or 0.
 */
static int scopes_at(const struct jvm *j, uint64_t nm, uint32_t pc_off, uint64_t *methods,
		     uint32_t *bcis)
{
	const struct hs_vm *vm = j->vm;
	int32_t pcs_off, deps_off, meta_off, desc[2] = { 0, 0 };
	uint64_t data, at, best_scope = 0;
	int32_t best_pc = -1;
	int n = 0;

	if (rd32(j->pid, nm + vm->f[NM_SCOPES_PCS], &pcs_off) ||
	    rd32(j->pid, nm + vm->f[NM_DEPENDENCIES], &deps_off) ||
	    rd32(j->pid, nm + vm->f[NM_METADATA], &meta_off) ||
	    rd64(j->pid, nm + vm->f[NM_SCOPES_DATA], &data) || pcs_off <= 0 ||
	    deps_off <= pcs_off || deps_off - pcs_off > (1 << 20))
		return 0;
	/*
	 * Sorted by offset, read a page at a time: an exact match is a call's
	 * return, else the next place with debug information.
	 */
	for (at = nm + pcs_off; best_pc < 0 && at < nm + (uint64_t)deps_off;) {
		uint8_t page[4096];
		size_t n = nm + deps_off - at < sizeof(page) ? nm + deps_off - at : sizeof(page);
		size_t size = vm->size[T_PC_DESC];

		if (size < 8 || vm->f[PC_OFFSET] > (int64_t)size - 4 ||
		    vm->f[PC_SCOPE] > (int64_t)size - 4 || rd(j->pid, at, page, n))
			return 0;
		for (size_t k = 0; k + size <= n; k += size) {
			memcpy(&desc[0], page + k + vm->f[PC_OFFSET], 4);
			memcpy(&desc[1], page + k + vm->f[PC_SCOPE], 4);
			if (desc[0] >= 0 && (uint32_t)desc[0] >= pc_off) {
				best_pc = desc[0];
				best_scope = desc[1];
				break;
			}
		}
		at += n - n % size;
		if (n < size)
			break;
	}
	if (best_pc < 0 || desc[1] <= 0)
		return 0;
	/* Each scope: its sender's offset (0: none), its method's index in the metadata, bci + 1. */
	for (uint64_t off = best_scope; off && n < HS_INLINE_MAX;) {
		struct stream s = { .j = j, .at = data + off, .end = data + off + 32 };
		uint32_t sender, index, bci1;

		if (read_uint(&s, &sender) || read_uint(&s, &index) || read_uint(&s, &bci1) ||
		    !index || sender >= off ||
		    rd64(j->pid, nm + meta_off + 8ULL * (index - 1), &methods[n]))
			return 0;
		bcis[n++] = bci1 ? bci1 - 1 : HOTSPOT_BCI_NONE;
		off = sender;
	}
	return n;
}

/* The frame's process, as bpf_proc() read it: NULL if it was not. */
static const struct hs_proc *proc_of(const struct hs_procs *procs, pid_t pid)
{
	for (int i = 0; i < HS_PROCS; i++)
		if (procs->p[i].pid == pid && procs->p[i].read && procs->p[i].nheaps)
			return &procs->p[i];
	return NULL;
}

static int read_code_frame(const struct jvm *j, uint64_t v, struct frame_name *out)
{
	const struct hs_vm *vm = j->vm;
	const struct hs_proc *p = j->p;
	uint64_t pc = p->lo + HOTSPOT_FRAME_OFF(v), nm, begin, name_at, methods[HS_INLINE_MAX];
	uint32_t bcis[HS_INLINE_MAX];
	char name[64];
	int32_t id;
	int n, err;

	if (!(nm = blob_of(j, p, pc)) || rd64(j->pid, nm + vm->f[BLOB_NAME], &name_at) ||
	    rdstr(j->pid, name_at, name, sizeof(name)) || rd64(j->pid, nm + vm->f[BLOB_BEGIN], &begin) ||
	    pc < begin)
		return -ESTALE;
	if (HOTSPOT_FRAME_KIND(v) == HOTSPOT_STUB)
		return stub_frame(name, out);
	if (strcmp(name, "nmethod") && strcmp(name, "native nmethod"))
		return -ESTALE;
	if (rd32(j->pid, nm + vm->f[NM_COMPILE_ID], &id) ||
	    (id & ((1 << HOTSPOT_CHECK_BITS) - 1)) != HOTSPOT_FRAME_CHECK(v))
		return -ESTALE;
	n = scopes_at(j, nm, pc - begin, methods, bcis);
	if (!n) {
		uint64_t m;

		if (rd64(j->pid, nm + vm->f[NM_METHOD], &m))
			return -EFAULT;
		return method_frame(j, m, HOTSPOT_BCI_NONE, out);
	}
	/* The outermost is the frame's; the ones it inlined, innermost first, go with it. */
	err = method_frame(j, methods[n - 1], bcis[n - 1], out);
	if (err || n == 1)
		return err;
	out->inlined = calloc(n - 1, sizeof(*out->inlined));
	if (!out->inlined)
		return FRAME_NAME_PARTIAL;
	for (int i = 0; i < n - 1; i++) {
		if (method_frame(j, methods[i], bcis[i], &out->inlined[out->ninlined]))
			return frame_name__drop_inlined(out);
		out->ninlined++;
	}
	return 0;
}

static int read_name(void *ctx, struct frame_name *out)
{
	const struct runtime_read *r = ctx;
	const struct hotspot_binary *b = r->binary;
	const struct hs_proc *p = proc_of(b->procs, r->p->tgid);
	const struct jvm j = { r->p->tgid, p ? &p->vm : NULL, p };

	if (!p)
		return -EFAULT;
	if (HOTSPOT_FRAME_KIND(r->v) == HOTSPOT_INTERPRETED)
		return method_frame(&j, HOTSPOT_FRAME_METHOD(r->v), HOTSPOT_FRAME_BCI(r->v), out);
	return read_code_frame(&j, r->v, out);
}

static const struct frame_names_words words = {
	.runtime = "Java",
	.unknown = "[unknown java]",
	.changed = "their compiled code was freed and its memory reused by the JVM",
};

const struct runtime_ops hotspot_runtime = {
	.name = "hotspot",
	.id = RUNTIME_HOTSPOT,
	.probe = probe,
	.binary_free = binary_free,
	.bpf_proc = bpf_proc,
	.frame_kind = FRAME_JAVA,
	.words = &words,
	.read_name = read_name,
};
