/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the BPF unwinder needs to walk a HotSpot JVM's Java frames, shared with user space. */
#ifndef BPFSCOPE_HOTSPOT_H
#define BPFSCOPE_HOTSPOT_H

#include "unwind.h"

/*
 * The code cache's heaps (non-profiled, profiled, non-nmethods: the
 * segmented cache of a tiered JVM; one heap without it), each with its
 * segment map: a byte per segment, 0 where a block starts, 0xff where
 * nothing was ever put, else how many segments back to look again.
 */
#define HOTSPOT_HEAPS		4
#define HOTSPOT_SEG_FREE	0xff
/* Hops through a segment map: blocks longer than 254 segments take one each 254. */
#define HOTSPOT_SEG_HOPS	16

struct hotspot_heap {
	__u64 lo, hi;		/* the heap's reserved code: [lo, hi) */
	__u64 segmap;		/* its segment map */
};

/*
 * Where HotSpot keeps what the walk reads, in bytes (from the JVM's own
 * gHotSpotVMStructs, read in the process): a blob's, from its start; a
 * block's header before it.
 */
struct hotspot_layout {
	__u16 block_header;	/* sizeof(HeapBlock): the blob follows it */
	__u16 blob_frame_complete;	/* CodeBlob::_frame_complete_offset (int) */
	__u16 blob_frame_size;	/* CodeBlob::_frame_size (int, in words) */
	__u16 blob_code_begin;	/* CodeBlob::_code_begin (address) */
	__u16 blob_code_end;	/* CodeBlob::_code_end (address) */
	__u16 blob_name;	/* CodeBlob::_name (const char *) */
	__u16 nm_compile_id;	/* nmethod::_compile_id (int) */
	__u16 method_const;	/* Method::_constMethod */
	__u16 const_size;	/* sizeof(ConstMethod): its bytecodes follow it */
	__u8 log2_segment;	/* CodeHeap::_log2_segment_size, the same in every heap */
	__u8 nheaps;
};

/* The interpreter's frame, in words from its frame pointer (x86-64; arm64 keeps bcp at -9). */
#define HOTSPOT_INTERP_SENDER_SP	(-1)
#define HOTSPOT_INTERP_METHOD		(-3)
#if defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
#define HOTSPOT_INTERP_BCP		(-9)
#else
#define HOTSPOT_INTERP_BCP		(-8)
#endif
/* What the walk reads of it: from the bcp slot to the return address. */
#define HOTSPOT_INTERP_LOW		(-HOTSPOT_INTERP_BCP * 8)
#define HOTSPOT_INTERP_READ		(HOTSPOT_INTERP_LOW + 16)

/* One JVM process (struct runtime_proc's). */
struct hotspot_proc {
	struct hotspot_heap heap[HOTSPOT_HEAPS];
	__u64 lo, hi;			/* all the heaps: CodeCache::_low_bound, _high_bound */
	__u64 interp_lo, interp_hi;	/* the interpreter's code */
	struct hotspot_layout l;	/* l.nheaps 0: a JVM not ready yet, read again when asked */
	__u64 asked_ns;			/* when the walk last asked (bpf_ktime_get_ns) */
};

/* How often the walk asks for a JVM not ready yet to be read again. */
#define HOTSPOT_ASK_NS		(100 * 1000 * 1000ULL)

/* What the walk reads of a blob: past the furthest field it needs. */
#define HOTSPOT_BLOB_READ	320

/*
 * A Java frame, one slot of the stack:
 * - interpreted: its Method (8-aligned, below 2^48: arm64 maps metaspace
 *   above 2^47) and its bytecode index, HOTSPOT_BCI_NONE past what the
 *   slot holds, or not known;
 * - compiled (an nmethod's code, the methods inlined there too) and a
 *   stub's: HOTSPOT_AT_CODE and its kind, the address in its code, as its
 *   offset from the code cache's low bound (arm64 maps code above 2^47 as
 *   well), and the low bits of the nmethod's compile id, for user space to
 *   tell it from code the JVM put where it was once it freed it.
 */
enum hotspot_kind {
	HOTSPOT_INTERPRETED = 0,
	HOTSPOT_COMPILED = 2,
	HOTSPOT_STUB = 3,
};

#define HOTSPOT_KIND_SHIFT	56
#define HOTSPOT_AT_CODE		(1ULL << 57)
#define HOTSPOT_BCI_BITS	12
#define HOTSPOT_BCI_NONE	((1 << HOTSPOT_BCI_BITS) - 1)
#define HOTSPOT_CHECK_BITS	9

#define HOTSPOT_INTERP_FRAME(method, bci)						\
	RUNTIME_FRAME(RUNTIME_HOTSPOT, ((method) >> 3) << HOTSPOT_BCI_BITS |		\
		      ((bci) & HOTSPOT_BCI_NONE))
#define HOTSPOT_CODE_FRAME(kind, off, check)						\
	RUNTIME_FRAME(RUNTIME_HOTSPOT, (__u64)(kind) << HOTSPOT_KIND_SHIFT |		\
		      ((off) & ((1ULL << 47) - 1)) << HOTSPOT_CHECK_BITS |		\
		      ((check) & ((1 << HOTSPOT_CHECK_BITS) - 1)))

#define HOTSPOT_FRAME_KIND(v)								\
	(RUNTIME_FRAME_PAYLOAD(v) & HOTSPOT_AT_CODE ?					\
	 RUNTIME_FRAME_PAYLOAD(v) >> HOTSPOT_KIND_SHIFT : HOTSPOT_INTERPRETED)
#define HOTSPOT_FRAME_METHOD(v)							\
	(((RUNTIME_FRAME_PAYLOAD(v) & (HOTSPOT_AT_CODE - 1)) >> HOTSPOT_BCI_BITS) << 3)
#define HOTSPOT_FRAME_BCI(v)	((v) & HOTSPOT_BCI_NONE)
#define HOTSPOT_FRAME_OFF(v)							\
	((RUNTIME_FRAME_PAYLOAD(v) & ((1ULL << HOTSPOT_KIND_SHIFT) - 1)) >> HOTSPOT_CHECK_BITS)
#define HOTSPOT_FRAME_CHECK(v)	((v) & ((1 << HOTSPOT_CHECK_BITS) - 1))

#endif
