// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* readdirlat: getdents64/getdents latency per directory and process, from the syscall tracepoints. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "readdirlat.h"

/* Syscall numbers for the raw_syscalls fallback. */
#if defined(__TARGET_ARCH_x86)
#define NR_GETDENTS64 217
#define NR_GETDENTS 78
#elif defined(__TARGET_ARCH_arm64)
#define NR_GETDENTS64 61
#define NR_GETDENTS -1
#else
#error "readdirlat: add this architecture's getdents syscall numbers"
#endif

#define MAX_ENTRIES_WALKED 4096

const volatile enum rdl_group group = RDL_GROUP_NONE;
const volatile bool summary;		/* -S */
const volatile bool events;		/* --min-us */
const volatile __u64 min_ns;
const volatile __u64 unit_ns = 1000;
const volatile pid_t target_tgid;
const volatile char target_comm[TASK_COMM_LEN];

__u64 lost_calls, lost_rows, lost_events, lost_dirs, entries_capped;

struct call {
	__u64 ts;
	__u64 dirent;
	__u32 fd;
	__u32 count;
};

/*
 * The call in flight, kept with the thread itself: cheaper than a hash
 * insert and delete per call, and it goes away with the thread. Kernels
 * before 5.12 have no task storage for tracing programs: the legacy BPF
 * side keeps it in a hash by thread id (user space sizes the map not used
 * down to nothing).
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct call);
} calls_tid SEC(".maps");

/* The current thread's call in flight, made if @create. */
static __always_inline struct call *call_of(bool create)
{
#ifdef BPFSCOPE_LEGACY
	__u32 tid = bpf_get_current_pid_tgid();

	if (create) {
		static const struct call zero;

		bpf_map_update_elem(&calls_tid, &tid, &zero, BPF_NOEXIST);
	}
	return bpf_map_lookup_elem(&calls_tid, &tid);
#else
	return bpf_task_storage_get(&calls, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
#endif
}

/* The call has returned: a thread's hash entry goes, task storage stays. */
static __always_inline void call_done(struct call *c)
{
	c->ts = 0;
#ifdef BPFSCOPE_LEGACY
	__u32 tid = bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&calls_tid, &tid);
#endif
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct dir_key);
	__type(value, struct dir_path);
} dirs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} hist_all SEC(".maps");

SWAPPED_HASH(hist_by, struct rdl_hist_key, struct rdl_hist, 4096);

SWAPPED_HASH(summaries, struct rdl_hist_key, struct rdl_summary, 4096);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} slow SEC(".maps");

/* Scratch space: a struct dir_path does not fit the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dir_path);
} scratch SEC(".maps");

static const struct rdl_hist empty_hist;
static const struct rdl_summary empty_summary;

static __always_inline bool wanted(void)
{
	char comm[TASK_COMM_LEN];

	if (target_tgid && (bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return false;
	if (target_comm[0]) {
		bpf_get_current_comm(comm, sizeof(comm));
		for (int i = 0; i < TASK_COMM_LEN; i++) {
			if (comm[i] != target_comm[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	return true;
}

static __always_inline int on_enter(__u32 fd, __u64 dirent, __u32 count)
{
	struct call *c;

	if (!wanted())
		return 0;
	c = call_of(true);
	if (!c) {
		__sync_fetch_and_add(&lost_calls, 1);
		return 0;
	}
	c->dirent = dirent;
	c->fd = fd;
	c->count = count;
	c->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline struct file *fd_file(__u32 fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	struct file *file = NULL;

	if (fd >= BPF_CORE_READ(task, files, fdt, max_fds))
		return NULL;
	bpf_core_read(&file, sizeof(file), &fds[fd]);
	return file;
}

/*
 * Names the directory by walking its dentries up to "/", crossing mount
 * points the way d_path() does, so /proc reads as "/proc" and not "/".
 * Names are kept whole, so that two directories whose names share a long
 * prefix never read alike. How deep and how far the walk has got is kept
 * in @p, a map value, not in locals: the verifier then sees the same
 * unknown numbers at every turn of the loop and prunes, where with
 * locals it followed every combination of turns (6.12's gave up at a
 * million instructions).
 */
static __always_inline void name_dir(struct file *file, struct dir_path *p)
{
	struct vfsmount *vfsmnt = BPF_CORE_READ(file, f_path.mnt);
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);
	struct mount *mnt = container_of(vfsmnt, struct mount, mnt);

	p->cut = 1;
	p->long_names = 0;
	p->depth = 0;
	p->used = 0;
	for (int i = 0; i < DIR_DEPTH * 2; i++) {
		struct dentry *parent = BPF_CORE_READ(d, d_parent);
		long n;

		if (d == BPF_CORE_READ(vfsmnt, mnt_root) || d == parent) {
			struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

			if (up == mnt) {
				p->cut = 0;
				break;
			}
			d = BPF_CORE_READ(mnt, mnt_mountpoint);
			mnt = up;
			vfsmnt = &up->mnt;
			continue;
		}
		if (p->depth >= DIR_DEPTH || p->used >= DIR_NAMES_MAX)
			break;
		/* The mask only tells the verifier what the test above did. */
		n = bpf_probe_read_kernel_str(&p->names[p->used & (DIR_NAMES_MAX - 1)],
					      DIR_NAME_LEN, BPF_CORE_READ(d, d_name.name));
		if (n <= 0) {
			p->names[p->used & (DIR_NAMES_MAX - 1)] = '\0';
			n = 1;
		}
		if (BPF_CORE_READ(d, d_name.len) >= DIR_NAME_LEN)
			p->long_names |= 1U << (p->depth & 31);
		p->used += n;
		p->depth++;
		d = parent;
	}
}

static __always_inline bool dir_of(__u32 fd, struct dir_key *key)
{
	struct file *file = fd_file(fd);
	struct inode *inode;
	struct dir_path *p;
	__u32 zero = 0;

	if (!file)
		return false;
	inode = BPF_CORE_READ(file, f_inode);
	key->ino = BPF_CORE_READ(inode, i_ino);
	key->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key->pad = 0;
	if (bpf_map_lookup_elem(&dirs, key))
		return true;
	p = bpf_map_lookup_elem(&scratch, &zero);
	if (!p)
		return true;
	name_dir(file, p);
	/* E2BIG: full, so the directory will read [unknown]; say so at exit. */
	if (bpf_map_update_elem(&dirs, key, p, BPF_NOEXIST) == -7)
		__sync_fetch_and_add(&lost_dirs, 1);
	return true;
}

/* Records are read from user memory this much at a time, not one by one. */
#define WALK_CHUNK 4096

struct walk {
	__u64 dirent;
	__u64 bytes;
	__u64 off;		/* of the next record, from dirent */
	__u64 base;		/* what buf holds: [base, base + len) */
	__u64 len;
	__u64 n;
	__u8 buf[WALK_CHUNK];
};

/*
 * The walk's state lives in a map value, not on the stack: the verifier then
 * sees unknown numbers rather than 0, 1, 2..., and its check of the loop
 * converges instead of following every iteration; and buf does not fit the
 * stack anyway.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk);
} walks SEC(".maps");

#ifndef BPFSCOPE_LEGACY
/* d_reclen sits at the same offset in linux_dirent and linux_dirent64. */
#define RECLEN_OFF 16

static long walk_one(__u32 i, void *ctx)
{
	struct walk *w = *(struct walk **)ctx;
	__u64 at, len;
	__u16 reclen;

	if (w->off >= w->bytes)
		return 1;
	/*
	 * One bpf_probe_read_user() per chunk instead of one per record: a
	 * 32 KiB listing of short names is ~1300 records but 8 reads.
	 */
	if (w->off + RECLEN_OFF + sizeof(reclen) > w->base + w->len) {
		len = w->bytes - w->off;
		if (len > WALK_CHUNK)
			len = WALK_CHUNK;
		if (len < RECLEN_OFF + sizeof(reclen) ||
		    bpf_probe_read_user(w->buf, len, (void *)(w->dirent + w->off)))
			return 1;
		w->base = w->off;
		w->len = len;
	}
	at = w->off - w->base + RECLEN_OFF;
	if (at > WALK_CHUNK - sizeof(reclen))
		return 1;
	reclen = *(__u16 *)&w->buf[at];
	if (!reclen)
		return 1;
	w->off += reclen;
	w->n++;
	return 0;
}

/*
 * Entries in what getdents returned: its records, walked by d_reclen. A
 * bpf_loop (5.17+), since a plain loop this long exceeds the verifier's
 * jump history; the legacy BPF side counts none, and user space says so.
 */
static __always_inline __u64 count_entries(__u64 dirent, __s64 bytes)
{
	__u32 zero = 0;
	struct walk *w = bpf_map_lookup_elem(&walks, &zero);

	if (!w)
		return 0;
	w->dirent = dirent;
	w->bytes = bytes;
	w->off = 0;
	w->base = 0;
	w->len = 0;
	w->n = 0;
	bpf_loop(MAX_ENTRIES_WALKED, walk_one, &w, 0);
	if (w->off < w->bytes && w->n == MAX_ENTRIES_WALKED)
		__sync_fetch_and_add(&entries_capped, 1);
	return w->n;
}
#endif

static __always_inline int on_exit(__s64 ret)
{
	__u64 id = bpf_get_current_pid_tgid(), lat;
	struct rdl_hist_key key = { .tgid = id >> 32 };
	__u32 tid = (__u32)id, zero = 0;
	struct rdl_summary *s;
	struct rdl_hist *h;
	struct hist *all;
	struct call *c;
	bool have_dir = false;
	char comm[TASK_COMM_LEN];

	c = call_of(false);
	if (!c || !c->ts)
		return 0;
	lat = bpf_ktime_get_ns() - c->ts;
	if (group != RDL_GROUP_NONE || summary)
		bpf_get_current_comm(comm, sizeof(comm));
	if (group == RDL_GROUP_DIR || summary || events)
		have_dir = dir_of(c->fd, &key.dir);

	if (group == RDL_GROUP_NONE) {
		all = bpf_map_lookup_elem(&hist_all, &zero);
		if (all)
			hist_add_local(all, lat / unit_ns);
	} else {
		struct rdl_hist_key hkey = {};

		if (group == RDL_GROUP_PROCESS)
			hkey.tgid = key.tgid;
		else
			hkey.dir = key.dir;
		h = swapped_lookup_or_init(&hist_by, &hkey, &empty_hist);
		if (h) {
			comm_keep(h->comm, comm);
			hist_add_shared(&h->hist, lat / unit_ns);
		} else {
			__sync_fetch_and_add(&lost_rows, 1);
		}
	}

	if (summary) {
		s = swapped_lookup_or_init(&summaries, &key, &empty_summary);
		if (s) {
			__sync_fetch_and_add(&s->calls, 1);
			if (ret == 0)
				__sync_fetch_and_add(&s->scans, 1);
			else if (ret < 0)
				__sync_fetch_and_add(&s->errors, 1);
			else {
				__sync_fetch_and_add(&s->bytes, ret);
#ifndef BPFSCOPE_LEGACY
				__sync_fetch_and_add(&s->entries, count_entries(c->dirent, ret));
#endif
			}
			__sync_fetch_and_add(&s->lat_sum_ns, lat);
			if (lat > s->lat_max_ns)
				s->lat_max_ns = lat;	/* racy across CPUs: a max, not a sum */
			s->bufsz = c->count;
			comm_keep(s->comm, comm);
		} else {
			__sync_fetch_and_add(&lost_rows, 1);
		}
	}

	if (events && lat >= min_ns) {
		struct rdl_event *e = bpf_ringbuf_reserve(&slow, sizeof(*e), 0);

		if (e) {
			e->lat_ns = lat;
			e->ret = ret;
			e->dir = key.dir;
			if (!have_dir)
				e->dir.ino = 0;
			e->pid = tid;
			e->tgid = key.tgid;
			e->bufsz = c->count;
			bpf_get_current_comm(e->comm, sizeof(e->comm));
			bpf_ringbuf_submit(e, 0);
		} else {
			__sync_fetch_and_add(&lost_events, 1);
		}
	}
	call_done(c);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_getdents64")
int readdirlat_enter64(struct trace_event_raw_sys_enter *ctx)
{
	return on_enter(ctx->args[0], ctx->args[1], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_exit_getdents64")
int readdirlat_exit64(struct trace_event_raw_sys_exit *ctx)
{
	return on_exit(ctx->ret);
}

SEC("tracepoint/syscalls/sys_enter_getdents")
int readdirlat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return on_enter(ctx->args[0], ctx->args[1], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_exit_getdents")
int readdirlat_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_exit(ctx->ret);
}

/* Fallback without per-syscall tracepoints: every syscall, filtered by number. */
SEC("raw_tp/sys_enter")
int BPF_PROG(readdirlat_raw_enter, struct pt_regs *regs, long id)
{
	if (id != NR_GETDENTS64 && id != NR_GETDENTS)
		return 0;
	return on_enter(PT_REGS_PARM1_CORE_SYSCALL(regs), PT_REGS_PARM2_CORE_SYSCALL(regs),
			PT_REGS_PARM3_CORE_SYSCALL(regs));
}

SEC("raw_tp/sys_exit")
int BPF_PROG(readdirlat_raw_exit, struct pt_regs *regs, long ret)
{
	struct call *c = call_of(false);

	/* Only calls on_enter() recorded are in flight; the rest leave at once. */
	if (!c || !c->ts)
		return 0;
	return on_exit(ret);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
