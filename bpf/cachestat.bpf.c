// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cachestat: page-cache lookups, insertions and dirtyings, from tracepoints or functions. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "cachestat.h"

/* Whether the fentry/kprobe insertion and dirtying targets take a folio or a page. */
const volatile bool added_folio;
const volatile bool dirtied_folio;
/* Argument position of the folio/page in the insertion function. */
const volatile int added_arg;
const volatile int page_shift = 12;
const volatile bool per_process;	/* -P */
const volatile __u32 target_tgid;	/* -p */

/* Events of processes beyond the -P map's capacity; reported at exit. */
__u64 lost_procs;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cachestat_counts);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct cachestat_proc);
} procs SEC(".maps");

static const struct cachestat_proc empty_proc;

/* The last mm_filemap_get_pages range each task looked up. */
struct lookup {
	__u64 mapping;
	__u64 index;
	__u64 last;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lookup);
} lookups SEC(".maps");

/*
 * folio::_folio_nr_pages became _nr_pages in 6.16: both spelled out here,
 * so that the build does not depend on which one vmlinux.h has.
 */
struct folio___nr_old {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

struct folio___nr_new {
	unsigned int _nr_pages;
} __attribute__((preserve_access_index));

static __always_inline __u64 folio_pages(void *folio)
{
	struct folio___nr_old *old = folio;
	struct folio___nr_new *f = folio;
	unsigned long flags;

	/* A page's or folio's flags are its first word, whatever the struct calls them. */
	if (bpf_probe_read_kernel(&flags, sizeof(flags), folio))
		return 1;
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(f->_nr_pages))
		return BPF_CORE_READ(f, _nr_pages);
	if (bpf_core_field_exists(old->_folio_nr_pages))
		return BPF_CORE_READ(old, _folio_nr_pages);
	return 1;
}

enum what { ACCESSED, ADDED, DIRTIED };

static __always_inline __u64 *field(struct cachestat_counts *c, enum what w)
{
	return w == ACCESSED ? &c->accessed : w == ADDED ? &c->added : &c->dirtied;
}

/* Counts @n pages of event @w for the current process. */
static __always_inline void account(enum what w, __u64 n)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	struct cachestat_counts *c;
	struct cachestat_proc *p;
	char comm[TASK_COMM_LEN];

	if (!n || (target_tgid && tgid != target_tgid))
		return;
	if (!per_process) {
		c = bpf_map_lookup_elem(&counts, &zero);
		if (c)
			*field(c, w) += n;	/* per CPU: no atomics */
		return;
	}
	p = map_lookup_or_init(&procs, &tgid, &empty_proc);
	if (!p) {
		__sync_fetch_and_add(&lost_procs, 1);
		return;
	}
	bpf_get_current_comm(comm, sizeof(comm));
	comm_keep(p->comm, comm);
	__sync_fetch_and_add(field(&p->c, w), n);
}

/*
 * Pages @index..@last of @mapping that lie before its end of file: a read
 * asks for a whole buffer, but only pages the file has are looked up.
 */
static __always_inline __u64 pages_in_file(loff_t size, __u64 index, __u64 last)
{
	__u64 eof;

	if (size <= 0)
		return 0;
	eof = (size - 1) >> page_shift;
	if (last > eof)
		last = eof;
	return last >= index ? last - index + 1 : 0;
}

/*
 * filemap_get_pages() reports the whole range a read still wants each time
 * it fills a batch, so one large read() reports its tail again and again.
 * A range that continues the task's previous one (same file, same end,
 * later start) was already counted.
 */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(cachestat_get_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last)
{
	struct lookup *l;

	l = bpf_task_storage_get(&lookups, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (l && l->mapping == (__u64)mapping && l->last == last && index > l->index) {
		l->index = index;
		return 0;
	}
	/* A tp_btf argument is a trusted pointer: plain loads, no probe reads. */
	account(ACCESSED, pages_in_file(mapping->host->i_size, index, last));
	if (l) {
		l->mapping = (__u64)mapping;
		l->index = index;
		l->last = last;
	}
	return 0;
}

/*
 * A fault-around window, clipped at the end of file; the kernel fires this
 * only when at least one of its pages is cached and up to date.
 */
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(cachestat_map_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last)
{
	account(ACCESSED, last >= index ? last - index + 1 : 0);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(cachestat_fault)
{
	account(ACCESSED, 1);
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(cachestat_add, struct folio *folio)
{
	account(ADDED, folio_pages(folio));
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(cachestat_dirty, struct folio *folio)
{
	account(DIRTIED, folio_pages(folio));
	return 0;
}

/* -P: a process counted before its exec (loading the binary) is renamed. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(cachestat_exec)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct cachestat_proc *p = bpf_map_lookup_elem(&procs, &tgid);

	if (p)
		bpf_get_current_comm(p->comm, sizeof(p->comm));
	return 0;
}

/*
 * fentry and kprobe count the same events at the functions that fire the
 * tracepoints above, so that every method gives the same verdicts. Lookups
 * are not folio_mark_accessed() calls, as in bcc: since 5.11 a read marks
 * only the first folio of each batch, up to 31 folios, as accessed.
 */
static __always_inline void on_read(struct kiocb *iocb, struct iov_iter *iter)
{
	loff_t pos = BPF_CORE_READ(iocb, ki_pos);
	__u64 count = BPF_CORE_READ(iter, count);

	if (!count || pos < 0)
		return;
	account(ACCESSED, pages_in_file(BPF_CORE_READ(iocb, ki_filp, f_mapping, host, i_size),
					pos >> page_shift, (pos + count - 1) >> page_shift));
}

static __always_inline void on_map_pages(struct vm_fault *vmf, __u64 start, __u64 end)
{
	account(ACCESSED, pages_in_file(BPF_CORE_READ(vmf, vma, vm_file, f_mapping, host, i_size),
					start, end));
}

static __always_inline __u64 pages_of(void *folio_or_page, bool is_folio)
{
	return is_folio ? folio_pages(folio_or_page) : 1;
}

SEC("fentry")
int cachestat_fentry_read(__u64 *ctx)
{
	on_read((struct kiocb *)ctx[0], (struct iov_iter *)ctx[1]);
	return 0;
}

SEC("fentry")
int cachestat_fentry_fault(__u64 *ctx)
{
	account(ACCESSED, 1);
	return 0;
}

SEC("fentry")
int cachestat_fentry_map_pages(__u64 *ctx)
{
	on_map_pages((struct vm_fault *)ctx[0], ctx[1], ctx[2]);
	return 0;
}

SEC("fentry")
int cachestat_fentry_added(__u64 *ctx)
{
	void *arg0 = (void *)ctx[0], *arg1 = (void *)ctx[1];

	/*
	 * Both loads at constant offsets, kept apart so that clang does not
	 * fold them into one load at a computed offset, which the verifier
	 * refuses for a tracing context.
	 */
	barrier_var(arg0);
	barrier_var(arg1);
	account(ADDED, pages_of(added_arg ? arg1 : arg0, added_folio));
	return 0;
}

SEC("fentry")
int cachestat_fentry_dirtied(__u64 *ctx)
{
	account(DIRTIED, pages_of((void *)ctx[0], dirtied_folio));
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cachestat_kprobe_read, struct kiocb *iocb, struct iov_iter *iter)
{
	on_read(iocb, iter);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cachestat_kprobe_fault)
{
	account(ACCESSED, 1);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cachestat_kprobe_map_pages, struct vm_fault *vmf, unsigned long start,
	       unsigned long end)
{
	on_map_pages(vmf, start, end);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cachestat_kprobe_added, void *arg0, void *arg1)
{
	account(ADDED, pages_of(added_arg ? arg1 : arg0, added_folio));
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cachestat_kprobe_dirtied, void *arg0)
{
	account(DIRTIED, pages_of(arg0, dirtied_folio));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
